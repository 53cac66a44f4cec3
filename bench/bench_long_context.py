"""Prefix (KV-cache) reuse for the long-context track, measured side by side.

    python bench/bench_long_context.py [--words 2000] [--questions 8] [--max-gen-toks 16]
                                       [--data sample|local:DIR] [--books 1] [--device cpu] [--out FILE]

Runs the same generation requests (Figure 4 prompts: one book, several questions, OE and
MC) through the track's model class twice in one process, on the embedded
SmolLM2-135M-Instruct from the HF cache: with prefix reuse (the book prefilled once,
each question continued from its cache) and without (each prompt run whole).  Prints
prefill tokens and wall time of both, their ratios, and whether the answers are equal
(they must be: greedy decoding from a cache continues exactly the same computation,
up to floating-point summation order).  A warm-up run comes first, and the two modes
run in alternating order over ``--repeats`` rounds so neither profits from a warm cache.

By default the book is generated (``--words`` words of Italian prose); ``--data`` reads
books and questions from the bundled sample or a folder in the paper's §3.5 schema.
Writes JSON to ``artifacts/bench_long_context_<timestamp>.json`` (gitignored).
"""

from __future__ import annotations

import argparse
import json
import logging
import os
import sys
import time
from datetime import UTC, datetime
from pathlib import Path
from types import SimpleNamespace
from typing import Any

REPO_ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO_ROOT))

for _name in ("HF_HUB_OFFLINE", "HF_DATASETS_OFFLINE", "HF_EVALUATE_OFFLINE"):
    os.environ.setdefault(_name, "1")
os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")

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


def measure(lm: Any, requests: list[Any], reuse: bool) -> dict[str, Any]:
    from backend.tracks.long_context.lm import ReuseStats

    lm.reuse_prefix = reuse
    lm.stats = ReuseStats()
    start = time.perf_counter()
    answers = lm.generate_until(requests)
    wall = time.perf_counter() - start
    return {"wall_s": wall, "prefill_tokens": lm.stats.prefill_tokens, "answers": answers}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--words", type=int, default=2000, help="words of the generated book")
    parser.add_argument("--questions", type=int, default=8, help="questions per book")
    parser.add_argument("--max-gen-toks", type=int, default=16)
    parser.add_argument("--data", help="sample | local:DIR (default: a generated book)")
    parser.add_argument("--books", type=int, default=1, help="books to take from --data")
    parser.add_argument(
        "--repeats", type=int, default=2, help="rounds of (reuse, plain) in alternating order"
    )
    parser.add_argument("--device", default="cpu")
    parser.add_argument("--threads", type=int, help="torch CPU threads (default: torch's choice)")
    parser.add_argument("--out", type=Path)
    args = parser.parse_args(argv)
    logging.basicConfig(level=logging.INFO, format="%(asctime)s %(levelname)s %(name)s: %(message)s")

    import torch

    from backend.embedded import EMBEDDED_MODEL_ID, install_embedded
    from backend.tracks.long_context.lm import BookCacheHFLM

    if args.threads:
        torch.set_num_threads(args.threads)

    installed = install_embedded()
    lm = BookCacheHFLM(
        pretrained=EMBEDDED_MODEL_ID,
        revision=installed.revision,
        device=args.device,
        dtype="float32",
        batch_size=1,
    )
    if args.data:
        requests = data_requests(args.data, args.books, args.questions, args.max_gen_toks)
    else:
        requests = generated_requests(args.words, args.questions, args.max_gen_toks)
    prompt_tokens = [len(lm.tok_encode(r.args[0])) for r in requests]
    log.info(
        "%d requests, prompts of %d–%d tokens (window %d)",
        len(requests),
        min(prompt_tokens),
        max(prompt_tokens),
        lm.max_length,
    )
    measure(lm, requests[:1], reuse=False)  # warm-up: allocator, kernels, tokenizer caches

    runs: dict[bool, list[dict[str, Any]]] = {True: [], False: []}
    for round_ in range(args.repeats):
        for reuse in (True, False) if round_ % 2 == 0 else (False, True):
            runs[reuse].append(measure(lm, requests, reuse))
    reuse_wall = min(r["wall_s"] for r in runs[True])
    plain_wall = min(r["wall_s"] for r in runs[False])
    reuse_prefill = runs[True][0]["prefill_tokens"]
    plain_prefill = runs[False][0]["prefill_tokens"]
    equal = all(r["answers"] == runs[False][0]["answers"] for r in runs[True] + runs[False])

    print(
        f"\nlong-context prefix reuse on {EMBEDDED_MODEL_ID} "
        f"({args.device}, float32, batch 1, {torch.get_num_threads()} torch threads)"
    )
    print(f"requests: {len(requests)}, prompt tokens {min(prompt_tokens)}–{max(prompt_tokens)}, "
          f"max_gen_toks {args.max_gen_toks}, best of {args.repeats}")  # fmt: skip
    print(f"{'mode':<14}{'prefill tokens':>16}{'wall s':>10}")
    print(f"{'plain':<14}{plain_prefill:>16,}{plain_wall:>10.2f}")
    print(f"{'prefix reuse':<14}{reuse_prefill:>16,}{reuse_wall:>10.2f}")
    print(
        f"ratio plain/reuse: prefill tokens {plain_prefill / reuse_prefill:.2f}x, wall time {plain_wall / reuse_wall:.2f}x"
    )
    print(f"answers identical: {equal}")

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
                "runs": {"reuse": [dict(r) for r in runs[True]], "plain": [dict(r) for r in runs[False]]},
                "ratio_prefill": plain_prefill / reuse_prefill,
                "ratio_wall": plain_wall / reuse_wall,
                "answers_identical": equal,
            },
            indent=2,
            ensure_ascii=False,
        )
    )
    print(f"written {out}")
    return 0 if equal else 1


if __name__ == "__main__":
    sys.exit(main())
