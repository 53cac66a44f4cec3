"""``python -m backend.tracks.judge.pins EXAMPLES.jsonl local:DIR > PINS.json``: a maintainer's pins.

Prints the JSON that ``python -m backend --judge-paper-pins PINS.json`` reads: the SHA-256 of the
examples file's bytes and of the annotated set's items, computed on the maintainer's copies of the
paper's data (which the project cannot ship: no-derivatives licence).  Only judge runs on exactly
these bytes are labelled *comparable with Table 1*.  Exit 2 when a file cannot be read.
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence

from leaderboard.tracks.judge.data import JudgeDataError, paper_pins_of


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m backend.tracks.judge.pins",
        description="Print the pins (SHA-256 digests) of the paper's judge examples and annotated set.",
    )
    parser.add_argument("examples", help="the paper's few-shot examples file (JSONL)")
    parser.add_argument("annotated", help="the paper's annotated set: local:<dir> (or sample)")
    args = parser.parse_args(argv)
    try:
        pins = paper_pins_of(args.examples, args.annotated)
    except JudgeDataError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    print(pins.model_dump_json(indent=2))
    return 0


if __name__ == "__main__":
    sys.exit(main())
