"""SUM's ROUGE: ``rouge_score`` (what the harness runs) against ``rouge_score_rs``, side by side.

    python bench/bench_rouge.py [--repeat 5] [--threads 1] [--out FILE]

1. Identity, to the last bit: every pair of ``tests/metrics/rouge_pairs.py`` (every summary of the
   bundled SUM and judge samples against every other, its article and the article's lead,
   perturbed copies, adversarial strings, very long texts) is scored by both packages with the
   project's settings (``backend/tracks/evalita/offline_rouge/rouge/rouge.py``: rouge1, rouge2, rougeL, rougeLsum, no
   stemming, the default tokenizer) and with the as-specified Italian tokenizer
   (``leaderboard.tracks.evalita.specified.ItalianTokenizer``); precision, recall and F-measure are
   compared by their IEEE-754 bits (``float.hex``).  Every difference is listed.
2. Timing, on the sample pairs (summary-sized texts, what a SUM run scores): ``--repeat`` rounds,
   the implementations interleaved in each round so that both meet the same load; the median.
   ``rouge1`` is what the leaderboard needs; "4 types" is what the harness's ``evaluate`` call
   computes per sample.  ``score_batch`` runs natively on ``--threads`` threads (RAYON_NUM_THREADS).

Prints a table and writes JSON to ``artifacts/bench_rouge_<timestamp>.json`` (gitignored).
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import statistics
import time
from collections.abc import Callable
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from _common import REPO_ROOT

TYPES = ["rouge1", "rouge2", "rougeL", "rougeLsum"]


def _bits(score: Any) -> tuple[str, str, str]:
    return (float(score.precision).hex(), float(score.recall).hex(), float(score.fmeasure).hex())


def identity(pairs: Any, tokenizer: Any | None) -> dict[str, Any]:
    """Score every pair with both packages; the differences, by pair and ROUGE type."""
    from rouge_score import rouge_scorer as reference_impl
    from rouge_score_rs import rouge_scorer as rust_impl

    ref = reference_impl.RougeScorer(TYPES, use_stemmer=False, tokenizer=tokenizer)
    rust = rust_impl.RougeScorer(TYPES, use_stemmer=False, tokenizer=tokenizer)
    batch = rust.score_batch([r for r, _ in pairs.pairs], [p for _, p in pairs.pairs])
    differences = []
    compared = 0
    for (reference, prediction), label, batched in zip(pairs.pairs, pairs.labels, batch, strict=True):
        want = ref.score(reference, prediction)
        got = rust.score(reference, prediction)
        for kind in TYPES:
            compared += 1
            for how, value in (("score", got[kind]), ("score_batch", batched[kind])):
                if _bits(value) != _bits(want[kind]):
                    differences.append(
                        {
                            "pair": label,
                            "type": kind,
                            "via": how,
                            "rouge_score": list(want[kind]),
                            "rs": list(value),
                        }
                    )
    return {"pairs": len(pairs), "values_compared": compared * 3, "differences": differences}


def _timed(func: Callable[[], Any]) -> float:
    start = time.perf_counter()
    func()
    return time.perf_counter() - start


def timings(pairs: Any, repeat: int) -> list[dict[str, Any]]:
    from rouge_score import rouge_scorer as reference_impl
    from rouge_score_rs import rouge_scorer as rust_impl

    from leaderboard.tracks.evalita.specified import ItalianTokenizer

    refs = [r for r, _ in pairs.pairs]
    preds = [p for _, p in pairs.pairs]

    def loop(scorer: Any) -> Callable[[], Any]:
        return lambda: [scorer.score(r, p) for r, p in pairs.pairs]

    cases: dict[str, dict[str, Callable[[], Any]]] = {}
    for name, types, tokenizer in (
        ("rouge1, default tokenizer (lm-eval column)", ["rouge1"], None),
        ("4 types, default tokenizer (harness call)", TYPES, None),
        ("rouge1, Italian tokenizer (as specified)", ["rouge1"], ItalianTokenizer()),
    ):
        reference = reference_impl.RougeScorer(types, use_stemmer=False, tokenizer=tokenizer)
        rust = rust_impl.RougeScorer(types, use_stemmer=False, tokenizer=tokenizer)
        cases[name] = {
            "rouge_score": loop(reference),
            "rouge_score_rs score()": loop(rust),
            "rouge_score_rs score_batch()": lambda rust=rust: rust.score_batch(refs, preds),
        }
    seconds: dict[tuple[str, str], list[float]] = {}
    for _ in range(repeat):
        for name, impls in cases.items():
            for impl, func in impls.items():
                seconds.setdefault((name, impl), []).append(_timed(func))
    rows = []
    for name, impls in cases.items():
        base = statistics.median(seconds[(name, "rouge_score")])
        for impl in impls:
            median = statistics.median(seconds[(name, impl)])
            rows.append(
                {
                    "case": name,
                    "implementation": impl,
                    "median_s": median,
                    "pairs_per_s": len(pairs) / median,
                    "speedup": base / median,
                    "runs_s": seconds[(name, impl)],
                }
            )
    return rows


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--repeat", type=int, default=5)
    parser.add_argument("--threads", type=int, default=1, help="RAYON_NUM_THREADS for score_batch")
    parser.add_argument("--out", type=Path)
    args = parser.parse_args(argv)
    os.environ["RAYON_NUM_THREADS"] = str(args.threads)  # read at the first parallel call

    from importlib.metadata import version

    from leaderboard.tracks.evalita.specified import ItalianTokenizer
    from tests.metrics.rouge_pairs import adversarial_pairs, all_pairs, sample_pairs

    every = all_pairs()
    started = time.perf_counter()
    checks = {
        "default tokenizer": identity(every, None),
        "Italian tokenizer": identity(every, ItalianTokenizer()),
    }
    identity_s = time.perf_counter() - started
    print(
        f"identity: {len(every)} pairs ({len(sample_pairs())} from the sample data, "
        f"{len(adversarial_pairs())} adversarial) × {len(TYPES)} ROUGE types × P/R/F, "
        f"score() and score_batch() [{identity_s:.0f} s]"
    )
    for name, check in checks.items():
        verdict = "bit-identical" if not check["differences"] else f"{len(check['differences'])} DIFFERENCES"
        print(f"  {name:18s} {check['values_compared']:7d} values: {verdict}")
        for diff in check["differences"][:20]:
            print(f"    {diff}")

    pairs = sample_pairs()
    rows = timings(pairs, args.repeat)
    print(
        f"\ntiming: {len(pairs)} sample pairs, median of {args.repeat} interleaved rounds, "
        f"score_batch on {args.threads} thread(s)"
    )
    print(f"  {'case':44s} {'implementation':30s} {'median s':>9s} {'pairs/s':>9s} {'speed-up':>9s}")
    for row in rows:
        print(
            f"  {row['case']:44s} {row['implementation']:30s} {row['median_s']:9.3f} "
            f"{row['pairs_per_s']:9.0f} {row['speedup']:8.1f}×"
        )

    report = {
        "when": datetime.now(UTC).isoformat(timespec="seconds"),
        "machine": {
            "python": platform.python_version(),
            "cpu_count": os.cpu_count(),
            "platform": platform.platform(),
        },
        "versions": {name: version(name) for name in ("rouge-score", "rouge-score-rs")},
        "settings": {
            "rouge_types": TYPES,
            "use_stemmer": False,
            "threads": args.threads,
            "repeat": args.repeat,
        },
        "identity": checks,
        "timing": {"pairs": len(pairs), "rows": rows},
    }
    out = args.out or REPO_ROOT / "artifacts" / f"bench_rouge_{datetime.now(UTC):%Y%m%dT%H%M%SZ}.json"
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(json.dumps(report, indent=2, ensure_ascii=False), encoding="utf-8")
    print(f"\nwrote {out}")
    return 0 if all(not c["differences"] for c in checks.values()) else 1


if __name__ == "__main__":
    raise SystemExit(main())
