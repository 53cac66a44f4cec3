"""``python -m backend prefetch MODEL[@REVISION]...``: fill the Hugging Face caches.

Run it on a machine that can reach the hub (a login node), then run the worker on an
offline node that shares ``HF_HOME`` (``HF_HUB_OFFLINE=1 HF_DATASETS_OFFLINE=1``):

* every model's snapshot (weights, config, tokenizer, model card) at the revision asked
  for, into the hub cache (``HF_HUB_CACHE``), printed with the sha it resolved to — submit
  that sha so the worker loads exactly those files;
* every dataset a track reads with ``--data hub`` (each track's ``TrackSpec.hub_datasets``, with
  their configs), into the datasets cache, which the worker then reads offline;
* the datasets named by a track's own prefetch options (``TrackSpec.prefetch_options``: e.g. an
  annotated set named on the command line, which the worker then reads from the same cache).

Gated models and datasets use ``HF_TOKEN`` from the environment (never printed).
Exit codes: 0 all fetched; 1 something could not be fetched (listed); 2 bad usage.
"""

from __future__ import annotations

import argparse
import logging
import os
import sys
from collections.abc import Sequence

from eval_queue.tracks import track_registry

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


def all_datasets() -> list[tuple[str, str | None]]:
    """Every track's hub datasets, in registry order, without duplicates."""
    pairs: list[tuple[str, str | None]] = []
    for spec in track_registry():
        pairs.extend(pair for pair in spec.hub_datasets if pair not in pairs)
    return pairs


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
    extra_options = [option for spec in track_registry() for option in spec.prefetch_options]
    for option in extra_options:
        parser.add_argument(
            option.flag, action="append", default=[], metavar=option.metavar, help=option.help
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
    named = [(option.parse(value), None) for option in extra_options for value in getattr(args, option.dest)]
    if not args.no_datasets:
        for path, name in [*all_datasets(), *named]:
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
