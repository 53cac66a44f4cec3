"""The contamination track's log-likelihoods: ``hf`` (lm-eval's reference) against ``hf-fast``, side by side.

    python bench/bench_contamination_speed.py [--set te] [--shards 2] [--items-codec 12]
                                              [--permutations N] [--backends hf,hf-fast]

Builds one set's documents exactly as a run does (``backend.tracks.contamination.data``: the order
test's shard × order texts, scored by ``loglikelihood_rolling``; CoDeC's item alone / after its
context, scored by ``loglikelihood``), keeps the first ``--shards`` shards and ``--items-codec``
items, and scores them with each backend on the embedded SmolLM2-135M-Instruct (CPU, float32, the
worker's CPU batch size).  Prints tokens, seconds and tokens/s per backend and request type, the
ratios (wall and process CPU time: on a loaded machine the CPU seconds are the fairer
comparison), and the largest |Δ| between the backends' log-likelihoods (they must agree to float
tolerance).  Timings on a shared machine are loaded timings: compare the ratio, not the seconds.
"""

from __future__ import annotations

import argparse
import json
import time
from dataclasses import replace
from typing import Any

import _common  # noqa: F401  (repository on sys.path, offline hub)

MODEL = "HuggingFaceTB/SmolLM2-135M-Instruct"


def _documents(
    set_id: str, shards: int, items_codec: int, permutations: int | None
) -> tuple[list[str], list[tuple[str, str]]]:
    from backend.tracks.contamination.data import codec_rows, order_rows, plan_set, read_sets
    from leaderboard.core.datasource import DataSource
    from leaderboard.tracks.contamination.definition import DEFAULT_ORDER

    (items,), _ = read_sets(DataSource.parse("sample"), [set_id])
    plan = plan_set(items, replace(DEFAULT_ORDER, permutations=permutations or DEFAULT_ORDER.permutations))
    texts = [row["text"] for row in order_rows(plan) if row["shard"] < shards]
    pairs = [(row["context"], row["continuation"]) for row in codec_rows(plan) if row["item"] < items_codec]
    return texts, pairs


def _instances(kind: str, arguments: list[tuple[str, ...]]) -> list[Any]:
    from lm_eval.api.instance import Instance

    return [Instance(kind, {}, args, i) for i, args in enumerate(arguments)]


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--set", default="te")
    parser.add_argument("--shards", type=int, default=2)
    parser.add_argument("--items-codec", type=int, default=12)
    parser.add_argument(
        "--permutations", type=int, default=None, help="orders per shard (default: the track's)"
    )
    parser.add_argument("--backends", default="hf,hf-fast")
    args = parser.parse_args()

    import torch
    from lm_eval.api.registry import get_model

    import backend.fastpath.model  # noqa: F401  (registers hf-fast)
    from backend.options import CPU_BATCH_SIZE

    texts, pairs = _documents(args.set, args.shards, args.items_codec, args.permutations)
    report: dict[str, Any] = {"set": args.set, "order_texts": len(texts), "codec_requests": len(pairs)}
    values: dict[str, dict[str, list[float]]] = {}
    for name in args.backends.split(","):
        lm = get_model(name)(pretrained=MODEL, device="cpu", dtype="float32", batch_size=CPU_BATCH_SIZE)
        tokens_order = sum(len(lm.tok_encode(t)) for t in texts)
        tokens_codec = sum(len(lm.tok_encode(c + x)) for c, x in pairs)
        torch.manual_seed(0)
        t0, c0 = time.perf_counter(), time.process_time()
        rolling = lm.loglikelihood_rolling(_instances("loglikelihood_rolling", [(t,) for t in texts]), True)
        t1, c1 = time.perf_counter(), time.process_time()
        single = lm.loglikelihood(_instances("loglikelihood", pairs), True)
        t2, c2 = time.perf_counter(), time.process_time()
        values[name] = {"order": list(rolling), "codec": [ll for ll, _ in single]}
        report[name] = {
            "order_tokens": tokens_order,
            "order_s": round(t1 - t0, 2),
            "order_tokens_per_s": round(tokens_order / (t1 - t0), 1),
            "order_cpu_s": round(c1 - c0, 2),
            "codec_tokens": tokens_codec,
            "codec_s": round(t2 - t1, 2),
            "codec_tokens_per_s": round(tokens_codec / (t2 - t1), 1),
            "codec_cpu_s": round(c2 - c1, 2),
        }
        print(name, json.dumps(report[name]), flush=True)
        del lm
    names = list(values)
    if len(names) == 2:
        a, b = (values[n] for n in names)
        report["max_abs_diff"] = {
            kind: max(abs(x - y) for x, y in zip(a[kind], b[kind], strict=True))
            for kind in ("order", "codec")
        }
        report["speedup_wall"] = {
            kind: round(report[names[0]][f"{kind}_s"] / report[names[1]][f"{kind}_s"], 2)
            for kind in ("order", "codec")
        }
        report["speedup_cpu"] = {
            kind: round(report[names[0]][f"{kind}_cpu_s"] / report[names[1]][f"{kind}_cpu_s"], 2)
            for kind in ("order", "codec")
        }
    print(json.dumps(report, indent=1))


if __name__ == "__main__":
    main()
