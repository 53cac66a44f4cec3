"""The long-context model class (``hf-book-cache``), measured side by side in one process.

    python bench/bench_long_context.py [--words 2000] [--questions 8] [--max-gen-toks 16]
                                       [--keep end,start] [--plain] [--main DIR]
                                       [--data sample|local:DIR] [--books 1] [--repeats 2]
                                       [--threads N] [--device cpu] [--out FILE]

Runs the same generation requests (Figure 4 prompts: one book, several questions, OE and
MC) on the embedded SmolLM2-135M-Instruct from the HF cache through several *engines*,
rounds alternating their order so that none profits from a warm cache:

* ``new:<side>`` — this tree's model class, keeping the window's ``<side>`` (``--keep``);
* ``plain:<side>`` (``--plain``) — the same without shared prefills: each prompt whole
  through ``generate``, lm-eval's own way (the reference the answers must equal);
* ``main`` (``--main DIR``) — the model class of another checkout (e.g. ``git archive main |
  tar -x -C DIR``), loaded from ``DIR/backend/tracks/long_context/lm.py`` without
  registering it with lm-eval: the baseline the ratios are taken against.

Prints per engine the prefill tokens, prefix prefills and best wall time, the ratios
against ``main`` (or ``plain``), and whether engines that read the same tokens gave the
same answers (they must, under greedy decoding: ``new:start`` and ``main`` always;
``new:end`` and ``main`` when no prompt was cut to the window; ``new:X`` and ``plain:X``).
A short warm-up comes first.

By default the book is generated (``--words`` words of Italian prose); ``--data`` reads
books and questions from the bundled sample or a folder in the paper's §3.5 schema.
Writes JSON to ``artifacts/bench_long_context_<timestamp>.json`` (gitignored).
"""

from __future__ import annotations

import argparse
import importlib.util
import json
import logging
import sys
import time
from datetime import UTC, datetime
from pathlib import Path
from types import ModuleType, SimpleNamespace
from typing import Any
from unittest import mock

from _common import REPO_ROOT

log = logging.getLogger("bench")

QUESTIONS = (
    ("Dove abitava Giacometta?", None),
    ("Dove partiva ogni mattina il marchese?", None),
    ("Chi raccontava storie strane agli ospiti?", None),
    ("Chi era Carla per Zeno?", ["A. Un'amica", "B. La sua amante", "C. Una parente", "D. La cameriera"]),
    ("Come viaggiava il marchese?", None),
    ("Dove viveva Carla?", ["A. In una villa", "B. A Bologna", "C. In una piccola stanza", "D. Al mare"]),
    ("Che cosa raccontava la zia Adalgisa?", None),
    ("Di che colore era la casa di Giacometta?", None),
)


def generated_requests(words: int, questions: int, max_gen_toks: int) -> list[Any]:
    from leaderboard.tracks.long_context.definition import render_prompt
    from tests.long_context.books import book_text

    book = book_text(words)
    chosen = [QUESTIONS[i % len(QUESTIONS)] for i in range(questions)]
    return [_request(render_prompt(book, q, c), max_gen_toks, i) for i, (q, c) in enumerate(chosen)]


def data_requests(spec: str, books: int, questions: int, max_gen_toks: int) -> list[Any]:
    from backend.tracks.long_context.data import read_books
    from leaderboard.core.datasource import DataSource
    from leaderboard.tracks.long_context.definition import render_prompt

    requests = []
    for book in read_books(DataSource.parse(spec))[:books]:
        items = [q for qs in book.questions.values() for q in qs][:questions]
        for item in items:
            prompt = render_prompt(book.text, item.question, item.choices)
            requests.append(_request(prompt, max_gen_toks, len(requests)))
    return requests


def _request(prompt: str, max_gen_toks: int, doc_id: int) -> Any:
    gen = {
        "until": ["\n\n", "\nDomanda: "],
        "max_gen_toks": max_gen_toks,
        "do_sample": False,
        "temperature": 0.0,
    }
    return SimpleNamespace(args=(prompt, gen), task_name="bench", doc_id=doc_id)


def load_other_model_class(tree: Path) -> type:
    """``BookCacheHFLM`` of another checkout, imported under another name and not registered."""
    from lm_eval.api import registry

    path = tree / "backend" / "tracks" / "long_context" / "lm.py"
    spec = importlib.util.spec_from_file_location("bench_other_book_cache", path)
    if spec is None or spec.loader is None:
        raise SystemExit(f"no model class at {path}")
    module: ModuleType = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module  # its dataclasses look their module up
    with mock.patch.object(registry, "register_model", lambda *names: lambda cls: cls):
        spec.loader.exec_module(module)
    return module.BookCacheHFLM


class Engine:
    """One way of answering: a model instance and the switches it runs with."""

    def __init__(self, name: str, lm: Any, *, reuse: bool, keep: str | None) -> None:
        self.name, self.lm, self.reuse, self.keep = name, lm, reuse, keep
        self.runs: list[dict[str, Any]] = []

    def measure(self, requests: list[Any]) -> dict[str, Any]:
        from leaderboard.tracks.long_context.definition import KeptSide

        self.lm.reuse_prefix = self.reuse
        if self.keep is not None:
            self.lm.keep = KeptSide(self.keep)
        self.lm.stats = type(self.lm.stats)()
        start = time.perf_counter()
        answers = self.lm.generate_until(requests)
        wall = time.perf_counter() - start
        report = self.lm.run_report()
        windows = report.get("windows", [])
        return {
            "wall_s": wall,
            "prefill_tokens": report["prefill_tokens"],
            "prefix_prefills": report.get("prefix_prefills", report.get("groups")),
            "cut": sum(w["seen_tokens"] < w["prefix_tokens"] for w in windows),
            "answers": answers,
        }


def same_tokens(a: Engine, b: Engine, cut: bool) -> bool:
    """Whether two engines read the same tokens, so their answers must be equal."""
    side = {e.name: e.keep or "start" for e in (a, b)}  # ``main`` kept the start
    return side[a.name] == side[b.name] or not cut


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--words", type=int, default=2000, help="words of the generated book")
    parser.add_argument("--questions", type=int, default=8, help="questions per book")
    parser.add_argument("--max-gen-toks", type=int, default=16)
    parser.add_argument("--keep", default="end", help="the sides the new engines keep: end, start or both")
    parser.add_argument("--plain", action="store_true", help="also run each side without shared prefills")
    parser.add_argument("--main", type=Path, help="a checkout to compare with (its model class)")
    parser.add_argument("--data", help="sample | local:DIR (default: a generated book)")
    parser.add_argument("--books", type=int, default=1, help="books to take from --data")
    parser.add_argument("--repeats", type=int, default=2, help="rounds, in alternating order")
    parser.add_argument("--device", default="cpu")
    parser.add_argument("--threads", type=int, help="torch CPU threads (default: torch's choice)")
    parser.add_argument("--out", type=Path)
    args = parser.parse_args(argv)
    logging.basicConfig(level=logging.INFO, format="%(asctime)s %(levelname)s %(name)s: %(message)s")

    import torch

    from backend.embedded import EMBEDDED_MODEL_ID, install_embedded
    from backend.tracks.long_context.lm import BookCacheHFLM
    from leaderboard.tracks.long_context.definition import KeptSide

    if args.threads:
        torch.set_num_threads(args.threads)
    installed = install_embedded()
    model_args = {
        "pretrained": EMBEDDED_MODEL_ID,
        "revision": installed.revision,
        "device": args.device,
        "dtype": "float32",
        "batch_size": 1,
    }
    new_lm = BookCacheHFLM(**model_args)
    engines = []
    if args.main:
        other = load_other_model_class(args.main.resolve())(**model_args)
        other._model = new_lm._model  # the same weights, loaded once
        engines.append(Engine("main", other, reuse=True, keep=None))
    for side in (KeptSide.parse(s).value for s in args.keep.split(",")):
        engines.append(Engine(f"new:{side}", new_lm, reuse=True, keep=side))
        if args.plain:
            engines.append(Engine(f"plain:{side}", new_lm, reuse=False, keep=side))

    if args.data:
        requests = data_requests(args.data, args.books, args.questions, args.max_gen_toks)
    else:
        requests = generated_requests(args.words, args.questions, args.max_gen_toks)
    prompt_tokens = [len(new_lm.encode_prompt(r.args[0])[0]) for r in requests]
    log.info(
        "%d requests, prompts of %d–%d tokens (window %d)",
        len(requests),
        min(prompt_tokens),
        max(prompt_tokens),
        new_lm.max_length,
    )
    warm = [_request(requests[0].args[0][-2000:], 2, 0)]
    for engine in engines:
        engine.measure(warm)  # allocator, kernels, tokenizer caches

    for round_ in range(args.repeats):
        for engine in engines if round_ % 2 == 0 else engines[::-1]:
            engine.runs.append(engine.measure(requests))
            log.info("%s: %.1f s", engine.name, engine.runs[-1]["wall_s"])

    base = engines[0]
    best = {e.name: min(r["wall_s"] for r in e.runs) for e in engines}
    cut = any(r["cut"] for e in engines for r in e.runs)
    checks = {
        f"{a.name} = {b.name}": a.runs[0]["answers"] == b.runs[0]["answers"]
        for i, a in enumerate(engines)
        for b in engines[i + 1 :]
        if same_tokens(a, b, cut)
    }
    steady = all(r["answers"] == e.runs[0]["answers"] for e in engines for r in e.runs)

    print(
        f"\nlong-context model class on {EMBEDDED_MODEL_ID} "
        f"({args.device}, float32, batch 1, {torch.get_num_threads()} torch threads)"
    )
    print(f"requests: {len(requests)}, prompt tokens {min(prompt_tokens)}–{max(prompt_tokens)}, "
          f"window {new_lm.max_length}, max_gen_toks {args.max_gen_toks}, best of {args.repeats}")  # fmt: skip
    print(
        f"{'engine':<14}{'prefill tokens':>16}{'prefills':>10}{'cut':>6}{'wall s':>10}{'vs ' + base.name:>14}"
    )
    for e in engines:
        r = e.runs[0]
        print(
            f"{e.name:<14}{r['prefill_tokens']:>16,}{r['prefix_prefills'] or 0:>10}{r['cut']:>6}"
            f"{best[e.name]:>10.2f}{best[base.name] / best[e.name]:>13.2f}x"
        )
    for name, equal in checks.items():
        print(f"answers {name}: {'identical' if equal else 'DIFFERENT'}")
    print(f"answers the same in every round: {steady}")

    out = args.out or REPO_ROOT / "artifacts" / f"bench_long_context_{datetime.now(UTC):%Y%m%dT%H%M%SZ}.json"
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(
        json.dumps(
            {
                "model": EMBEDDED_MODEL_ID,
                "revision": installed.revision,
                "device": args.device,
                "threads": torch.get_num_threads(),
                "requests": len(requests),
                "prompt_tokens": prompt_tokens,
                "max_gen_toks": args.max_gen_toks,
                "window": new_lm.max_length,
                "engines": {e.name: e.runs for e in engines},
                "best_wall_s": best,
                "ratio_vs_" + base.name: {name: best[base.name] / wall for name, wall in best.items()},
                "answers_identical": checks,
                "answers_steady": steady,
            },
            indent=2,
            ensure_ascii=False,
        )
    )
    print(f"written {out}")
    return 0 if all(checks.values()) and steady else 1


if __name__ == "__main__":
    sys.exit(main())
