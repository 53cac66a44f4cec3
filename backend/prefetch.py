"""``python -m backend prefetch MODEL[@REVISION]...``: fill the Hugging Face caches.

Run it on a machine that can reach the hub (a login node), then run the worker on an
offline node that shares ``HF_HOME`` (``HF_HUB_OFFLINE=1 HF_DATASETS_OFFLINE=1``):

* every model's snapshot (weights, config, tokenizer, model card) at the revision asked
  for, into the hub cache (``HF_HUB_CACHE``), printed with the sha it resolved to — submit
  that sha so the worker loads exactly those files;
* with ``--judge-set ORG/NAME``, a judge track's annotated set (read by
  ``--judge-data hub:ORG/NAME`` through the same datasets cache);
* every upstream dataset the suite reads (``leaderboard.tracks.evalita.definition``: ``evalitahf/*`` and
  ``ARTeLab/fanpage``, each NER domain config) and the long-context track's INDAQA2
  (``sapienzanlp/INDAQA_CALAMITA``), into the datasets cache, which ``--data hub`` then
  reads offline.

Gated models and datasets use ``HF_TOKEN`` from the environment (never printed).
Exit codes: 0 all fetched; 1 something could not be fetched (listed); 2 bad usage.
"""

from __future__ import annotations

import argparse
import logging
import os
import sys
from collections.abc import Sequence

from leaderboard.tracks.evalita.definition import SUITE
from leaderboard.tracks.long_context.definition import HUB_DATASET, HUB_DATASET_CONFIG

log = logging.getLogger(__name__)

MODEL_PATTERNS = (
    "*.json",
    "*.safetensors",
    "*.model",
    "*.txt",
    "*.jinja",
    "*.tiktoken",
    "tokenizer*",
    "README.md",
)


def suite_datasets() -> list[tuple[str, str | None]]:
    """``(dataset path, config name)`` pairs the harness tasks read, without duplicates."""
    pairs: list[tuple[str, str | None]] = []
    for task in SUITE:
        for config in task.dataset.configs or (None,):
            pair = (task.dataset.path, config)
            if pair not in pairs:
                pairs.append(pair)
    return pairs


def all_datasets() -> list[tuple[str, str | None]]:
    """The suite's datasets, then every other track's (the long-context INDAQA2)."""
    return [*suite_datasets(), (HUB_DATASET, HUB_DATASET_CONFIG)]


def _offline_hint() -> str:
    flags = [
        name
        for name in ("HF_HUB_OFFLINE", "HF_DATASETS_OFFLINE")
        if os.environ.get(name, "").lower() in {"1", "true", "yes"}
    ]
    if flags:
        return f" ({' and '.join(flags)} set: prefetch needs the hub; run it on a connected machine without them)"
    return " (is the hub reachable from this machine? prefetch must run where it is)"


def prefetch_model(spec: str) -> str:
    """Download one ``MODEL[@REVISION]`` snapshot; returns the resolved sha."""
    from huggingface_hub import snapshot_download

    model_id, _, revision = spec.partition("@")
    path = snapshot_download(model_id, revision=revision or None, allow_patterns=list(MODEL_PATTERNS))
    sha = os.path.basename(path)
    print(f"model {model_id}@{revision or 'main'} -> {sha}\n  {path}")
    return sha


def prefetch_dataset(path: str, name: str | None) -> None:
    import datasets

    loaded = datasets.load_dataset(path, name)
    splits = ", ".join(f"{split} {len(rows)}" for split, rows in loaded.items())
    print(f"dataset {path}{'/' + name if name else ''}: {splits}")


def main(argv: Sequence[str]) -> int:
    parser = argparse.ArgumentParser(prog="python -m backend prefetch", description=__doc__.split("\n\n")[0])
    parser.add_argument("models", nargs="*", metavar="MODEL[@REVISION]")
    parser.add_argument("--no-datasets", action="store_true", help="only the models")
    parser.add_argument(
        "--judge-set",
        action="append",
        default=[],
        metavar="ORG/NAME",
        help="also an annotated set for the judge track (the worker's --judge-data hub:ORG/NAME)",
    )
    parser.add_argument("-v", "--verbose", action="store_true")
    args = parser.parse_args(argv)
    logging.basicConfig(level=logging.DEBUG if args.verbose else logging.INFO, stream=sys.stderr)
    if not args.models and args.no_datasets:
        parser.error("nothing to fetch: give models, or drop --no-datasets")
    failures: list[str] = []
    for spec in args.models:
        try:
            prefetch_model(spec)
        except Exception as exc:  # report every item, then exit 1
            failures.append(f"model {spec}: {type(exc).__name__}: {exc}")
    judge_sets: list[tuple[str, str | None]] = [(repo, None) for repo in args.judge_set]
    if not args.no_datasets:
        for path, name in [*all_datasets(), *judge_sets]:
            try:
                prefetch_dataset(path, name)
            except Exception as exc:
                failures.append(f"dataset {path}{'/' + name if name else ''}: {type(exc).__name__}: {exc}")
    if failures:
        print(f"could not fetch {len(failures)} item(s){_offline_hint()}:", file=sys.stderr)
        for failure in failures:
            print(f"  - {failure.splitlines()[0][:300]}", file=sys.stderr)
        return 1
    return 0
