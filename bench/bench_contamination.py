"""Calibration of the contamination track on CPU: a clean SmolLM2 and deliberately contaminated copies.

    python bench/bench_contamination.py [--train-set te] [--epochs 1,3,10] [--eval-sets wic,sa]
                                        [--items N] [--permutations 10] [--lr 1e-4] [--block 256]
                                        [--train-items N] [--clean-sets te,wic] [--pseudo-items N]
                                        [--pseudo-sets IDS] [--no-clean]
                                        [--no-pseudo] [--out FILE]

The JSON report is rewritten after each stage, so a run stopped early keeps what it measured:

1. **Contaminated** (first: the figures that matter most): the embedded SmolLM2-135M-Instruct
   (HF cache) fine-tuned with a plain ``transformers`` loop (AdamW, causal LM loss, blocks of
   ``--block`` tokens in file order) on one test file *as published* (its lines in canonical
   order), copies saved after each of ``--epochs``; each copy tested through the track's own runner
   (``backend.tracks.contamination.run.run_contamination``: the worker's code path) on the trained
   set and on ``--eval-sets`` it never saw.
2. **Clean**: the same model, untrained, on every set of the bundled sample (or ``--clean-sets``).
3. **Clean on permuted pseudo-sets**: each sample test file shuffled with a fixed seed, so that its
   "canonical" order is one no model can have seen.  The clean model's false flags at 1 % (raw p and
   Holm-adjusted) over stages 2 and 3 estimate the order test's false-positive rate.

Prints a table (p-value, Holm p, CoDeC with its interval, tokens per test, minutes per run) and
writes JSON to ``artifacts/bench_contamination_<timestamp>.json`` (gitignored).  Not part of the
test suite (minutes to an hour on CPU); the README gives the figures of a run.
"""

from __future__ import annotations

import argparse
import json
import logging
import random
import shutil
import sys
import tempfile
import time
from collections.abc import Iterator
from datetime import UTC, datetime
from pathlib import Path
from types import SimpleNamespace
from typing import Any

from _common import ARTIFACTS

log = logging.getLogger("bench")

MODEL = "HuggingFaceTB/SmolLM2-135M-Instruct"


def _request(model: str) -> Any:
    """What ``run_contamination`` reads of a request: the model, its revision and precision."""
    from eval_queue.requests import Precision

    return SimpleNamespace(model=model, revision="main", precision=Precision.FLOAT32, variant=None)


def _run(
    model: str, data: str, workdir: Path, args: argparse.Namespace, sets: list[str] | None, items: int | None
) -> dict[str, Any]:
    from dataclasses import replace

    from backend.options import RunOptions
    from backend.tracks.contamination.run import run_contamination
    from leaderboard.tracks.contamination.definition import DEFAULT_ORDER

    started = time.perf_counter()
    evaluation = run_contamination(
        _request(model),
        data,
        workdir,
        RunOptions(device=args.device, limit=items),
        set_ids=sets,
        order=replace(DEFAULT_ORDER, permutations=args.permutations or DEFAULT_ORDER.permutations),
    )
    minutes = (time.perf_counter() - started) / 60
    rows = {}
    for set_id, result in evaluation.body["sets"].items():
        rows[set_id] = {
            "items": result.n_items,
            "p": result.order.p_value if result.order else None,
            "p_holm": result.order.p_holm if result.order else None,
            "shards": result.order.shards if result.order else None,
            "codec": result.codec.score if result.codec else None,
            "codec_low": result.codec.low if result.codec else None,
            "codec_high": result.codec.high if result.codec else None,
            "order_tokens": result.order.tokens if result.order else None,
            "codec_tokens": result.codec.tokens if result.codec else None,
        }
    return {"data": data, "minutes": round(minutes, 2), "sets": rows}


def pseudo_root(folder: Path, seed: int) -> Path:
    """A copy of the sample's Evalita files with each test file's lines shuffled (a fresh canonical order)."""
    from backend.tracks.contamination.data import evalita_file
    from leaderboard.tracks.contamination.suite import suite_sets
    from leaderboard.tracks.evalita.definition import SAMPLE_DATA_DIR

    for test_set in suite_sets():
        if test_set.optional:
            continue
        source = evalita_file(test_set, SAMPLE_DATA_DIR)
        target = evalita_file(test_set, folder)
        target.parent.mkdir(parents=True, exist_ok=True)
        lines = [line for line in source.read_text(encoding="utf-8").splitlines() if line.strip()]
        random.Random(f"{seed}:{test_set.id}").shuffle(lines)
        target.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return folder


def fine_tune(
    train_text: str, epochs: list[int], out: Path, args: argparse.Namespace
) -> Iterator[tuple[int, Path]]:
    """Train on ``train_text`` (the file as published) in file order; yields a copy after each epoch in
    ``epochs`` (the caller tests it before training goes on, so a run stopped early keeps it)."""
    import torch
    from transformers import AutoModelForCausalLM, AutoTokenizer

    torch.manual_seed(0)
    tokenizer = AutoTokenizer.from_pretrained(MODEL)
    model = AutoModelForCausalLM.from_pretrained(MODEL, torch_dtype=torch.float32)
    model.train()
    ids = tokenizer(train_text)["input_ids"]
    blocks = [ids[i : i + args.block] for i in range(0, len(ids), args.block)]
    optimiser = torch.optim.AdamW(model.parameters(), lr=args.lr)
    trained_s = 0.0  # training time only (the caller's tests run while this generator waits)
    for epoch in range(1, max(epochs) + 1):
        total = 0.0
        started = time.perf_counter()
        for block in blocks:  # file order: the canonical order is what the model is taught
            batch = torch.tensor([block])
            loss = model(input_ids=batch, labels=batch).loss
            loss.backward()
            optimiser.step()
            optimiser.zero_grad()
            total += float(loss.detach())
        trained_s += time.perf_counter() - started
        log.info(
            "epoch %d: mean loss %.3f (%d blocks of %d tokens, %.1f min of training so far)",
            epoch,
            total / len(blocks),
            len(blocks),
            args.block,
            trained_s / 60,
        )
        args.train_minutes = round(trained_s / 60, 2)
        if epoch in epochs:
            folder = out / f"epochs-{epoch}"
            model.save_pretrained(folder)
            tokenizer.save_pretrained(folder)
            yield epoch, folder


def _table(report: dict[str, Any]) -> str:
    lines = [
        "| model | data | set | items | p | p (Holm) | CoDeC [95 % CI] | tokens order / CoDeC | run min |",
        "| --- | --- | --- | --- | --- | --- | --- | --- | --- |",
    ]
    for name, run in report["runs"].items():
        for set_id, r in run["sets"].items():
            p = "—" if r["p"] is None else f"{r['p']:.3g}"
            holm = "—" if r["p_holm"] is None else f"{r['p_holm']:.3g}"
            codec = f"{r['codec'] * 100:.0f} [{r['codec_low'] * 100:.0f}, {r['codec_high'] * 100:.0f}]"
            lines.append(
                f"| {name} | {run['data']} | {set_id} | {r['items']} | {p} | {holm} | {codec} | "
                f"{r['order_tokens']} / {r['codec_tokens']} | {run['minutes']} |"
            )
    return "\n".join(lines)


def false_flags(report: dict[str, Any]) -> dict[str, Any]:
    """The clean model's sets with raw p (and Holm p) below 1 %, over every clean run."""
    clean = [
        r for name, run in report["runs"].items() if name.startswith("clean") for r in run["sets"].values()
    ]
    tested = [r for r in clean if r["p"] is not None]
    return {
        "sets": len(tested),
        "raw_below_1pct": sum(r["p"] < 0.01 for r in tested),
        "holm_below_1pct": sum(r["p_holm"] < 0.01 for r in tested),
        "raw_below_5pct": sum(r["p"] < 0.05 for r in tested),
    }


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--train-set", default="te", help="the set the contaminated copies are trained on")
    parser.add_argument(
        "--epochs", default="1,3,10", help="copies saved after these epochs (0: no contaminated copy)"
    )
    parser.add_argument("--eval-sets", default="wic,sa", help="untrained sets the copies are also tested on")
    parser.add_argument("--items", type=int, default=None, help="first N items of each set (default: all)")
    parser.add_argument(
        "--permutations", type=int, default=None, help="orders per shard (order test; default: the track's)"
    )
    parser.add_argument("--lr", type=float, default=1e-4)
    parser.add_argument("--block", type=int, default=256, help="training block in tokens")
    parser.add_argument("--device", default="cpu")
    parser.add_argument("--clean-sets", default=None, help="sets the clean model is tested on (default: all)")
    parser.add_argument(
        "--pseudo-items", type=int, default=None, help="items per pseudo-set (default: --items)"
    )
    parser.add_argument(
        "--pseudo-sets", default=None, help="the pseudo-sets tested (default: every Evalita set)"
    )
    parser.add_argument("--train-items", type=int, default=None, help="train on the first N items only")
    parser.add_argument("--no-clean", action="store_true", help="skip the clean model on the sample")
    parser.add_argument(
        "--no-pseudo", action="store_true", help="skip the clean model on permuted pseudo-sets"
    )
    parser.add_argument("--out", type=Path, default=None)
    args = parser.parse_args(argv)
    logging.basicConfig(level=logging.INFO, format="%(asctime)s %(levelname)s %(name)s: %(message)s")
    from backend.tracks.contamination.data import evalita_file
    from leaderboard.tracks.contamination.suite import suite_sets
    from leaderboard.tracks.evalita.definition import SAMPLE_DATA_DIR

    epochs = sorted({int(e) for e in args.epochs.split(",") if int(e) > 0})  # 0: no contaminated copy
    eval_sets = [s for s in args.eval_sets.split(",") if s]
    report: dict[str, Any] = {"model": MODEL, "args": {k: str(v) for k, v in vars(args).items()}, "runs": {}}
    out = args.out or ARTIFACTS / f"bench_contamination_{datetime.now(UTC):%Y%m%dT%H%M%SZ}.json"
    out.parent.mkdir(parents=True, exist_ok=True)

    def save() -> None:  # after every stage: a long run stopped early keeps what it measured
        report["false_flags"] = false_flags(report)
        out.write_text(json.dumps(report, indent=2), encoding="utf-8")

    scratch = Path(tempfile.mkdtemp(prefix="bench-contamination-"))
    try:
        [train] = [s for s in suite_sets() if s.id == args.train_set]
        lines = [
            line
            for line in evalita_file(train, SAMPLE_DATA_DIR).read_text(encoding="utf-8").splitlines()
            if line
        ]
        lines = lines[: args.train_items] if args.train_items else lines
        report["train_items"] = len(lines)
        copies = fine_tune("\n".join(lines) + "\n", epochs, scratch / "copies", args) if epochs else iter(())
        for epoch, folder in copies:
            report["train_minutes"] = args.train_minutes
            report["runs"][f"contaminated {epoch} ep"] = _run(
                str(folder), "sample", scratch / f"w{epoch + 2}", args, [train.id, *eval_sets], args.items
            )
            save()
        if not args.no_clean:
            clean_sets = args.clean_sets.split(",") if args.clean_sets else None
            report["runs"]["clean"] = _run(MODEL, "sample", scratch / "w0", args, clean_sets, args.items)
            save()
        if not args.no_pseudo:
            root = pseudo_root(scratch / "pseudo", seed=1)
            pseudo_sets = args.pseudo_sets.split(",") if args.pseudo_sets else None
            report["runs"]["clean (pseudo-sets)"] = _run(
                MODEL, f"local:{root}", scratch / "w1", args, pseudo_sets, args.pseudo_items or args.items
            )
            save()
    finally:
        shutil.rmtree(scratch, ignore_errors=True)
    print(_table(report))
    print(
        f"clean model false flags: {json.dumps(report.get('false_flags'))}; "
        f"fine-tuning {report.get('train_minutes')} min"
    )
    save()
    print(f"wrote {out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
