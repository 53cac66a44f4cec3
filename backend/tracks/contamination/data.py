"""The public test sets a contamination run reads, and the harness documents it scores.

Sets (:func:`leaderboard.tracks.contamination.suite.suite_sets`) are read from the worker's
``--data`` exactly where the Evalita harness reads them:

* ``sample`` — the bundled files (``leaderboard/tracks/evalita/sample_data``, through the Evalita
  data layout: the file of each task's test split) and the bundled INDAQA2 sample;
* ``local:<dir>`` — the same layout under ``<dir>`` (INDAQA2 from ``<dir>/indaqa2/`` if present);
* ``hub`` — each task's dataset and test split through ``datasets`` (offline: its cache, filled
  by ``python -m backend prefetch``); INDAQA2 where it is in the cache.

An item is the row as the harness's data holds it, one JSON object (keys in file order): the
text a model trained on the published file would have seen.  Items keep the file's order — the
canonical order the order test is about.

:func:`prepare_contamination` writes, per set, two harness tasks into the run's work folder::

    <workdir>/contamination/docs/order_<set>.jsonl    one row per shard × order (canonical first)
    <workdir>/contamination/docs/codec_<set>.jsonl    two rows per item: alone, then after its context
    <workdir>/contamination/tasks/<task>.yaml         includes leaderboard/tracks/contamination/harness/
"""

from __future__ import annotations

import json
import logging
import shutil
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import yaml

from leaderboard.core.datasource import DataSource, DataSourceError, DataSourceKind
from leaderboard.tracks.contamination.definition import (
    DEFAULT_CODEC,
    DEFAULT_ORDER,
    SEPARATOR,
    CodecDesign,
    OrderDesign,
    TestSet,
)
from leaderboard.tracks.contamination.metrics import Shard, codec_contexts, order_plan
from leaderboard.tracks.contamination.suite import INDAQA2, suite_sets

log = logging.getLogger(__name__)

HARNESS_DIR = Path(__file__).resolve().parents[3] / "leaderboard" / "tracks" / "contamination" / "harness"
WORK_DIR_NAME = "contamination"
ORDER = "order"
CODEC = "codec"


@dataclass(frozen=True)
class SetItems:
    """One set as read: its items' texts in canonical order."""

    set: TestSet
    items: tuple[str, ...]


@dataclass(frozen=True)
class SetPlan:
    """What the harness scores for one set: the order test's shards and CoDeC's contexts."""

    items: SetItems
    shards: tuple[Shard, ...]
    contexts: tuple[tuple[int, ...], ...]

    @property
    def set_id(self) -> str:
        return self.items.set.id

    def task_name(self, kind: str) -> str:
        return f"contamination_{kind}_{self.set_id.replace('-', '_')}"


@dataclass(frozen=True)
class ContaminationData:
    """A prepared work folder: the harness tasks of every set read, and the sets skipped (why)."""

    source: DataSource
    include_path: Path
    plans: tuple[SetPlan, ...]
    skipped: Mapping[str, str] = field(default_factory=dict)
    longest_sequence_chars: int = 0

    @property
    def label(self) -> str:
        return self.source.label

    @property
    def task_names(self) -> list[str]:
        return [plan.task_name(kind) for plan in self.plans for kind in (ORDER, CODEC) if _has(plan, kind)]


def _has(plan: SetPlan, kind: str) -> bool:
    return bool(plan.shards) if kind == ORDER else bool(plan.contexts)


# --------------------------------------------------------------------------- reading


def _render(row: Mapping[str, Any]) -> str:
    # default=str: a hub row may hold values JSON has no type for (dates); their text is what is shown.
    return json.dumps(row, ensure_ascii=False, default=str)


def _read_jsonl(path: Path) -> tuple[str, ...]:
    items = []
    for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), start=1):
        if not line.strip():
            continue
        try:
            row = json.loads(line)
        except json.JSONDecodeError as exc:
            raise DataSourceError(f"{path} line {number}: invalid JSON ({exc.msg})") from None
        if not isinstance(row, dict):
            raise DataSourceError(f"{path} line {number}: not a JSON object")
        items.append(_render(row))
    return tuple(items)


def evalita_file(test_set: TestSet, root: Path) -> Path:
    """The file the Evalita harness reads for ``test_set`` under a data root (its data layout)."""
    from backend.tracks.evalita.data import load_layout

    for entry in load_layout():
        if (
            entry.dataset_path == test_set.dataset_path
            and entry.dataset_name
            in (
                None,
                test_set.dataset_config,
            )
            and test_set.split in entry.splits
        ):
            return root / entry.splits[test_set.split]
    raise DataSourceError(
        f"the Evalita data layout maps no file to {test_set.dataset_path} ({test_set.dataset_config}) "
        f"split {test_set.split!r}"
    )


def _read_hub(test_set: TestSet) -> tuple[str, ...]:
    import datasets

    try:
        rows = datasets.load_dataset(test_set.dataset_path, test_set.dataset_config, split=test_set.split)
    except (OSError, ValueError, datasets.exceptions.DatasetNotFoundError) as exc:
        raise DataSourceError(
            f"dataset {test_set.dataset_path} ({test_set.dataset_config}) split {test_set.split} could not be "
            f"loaded ({type(exc).__name__}: {str(exc).splitlines()[0] if str(exc) else ''}); offline it must be "
            "in the datasets cache: run `python -m backend prefetch` where the hub is reachable"
        ) from exc
    return tuple(_render(row) for row in rows)


def _read_indaqa2(source: DataSource) -> tuple[str, ...]:
    from backend.tracks.long_context.data import read_books

    if source.kind is DataSourceKind.LOCAL:
        assert source.root is not None
        folder = source.root / INDAQA2
        if not folder.is_dir():
            raise DataSourceError(f"no INDAQA2 data in this source ({folder} does not exist)")
        source = DataSource(DataSourceKind.LOCAL, root=folder)
    items = []
    for book in read_books(source):
        for questions in book.questions.values():
            items.extend(_render({"question": q.question, "answers": list(q.answers)}) for q in questions)
    return tuple(items)


def read_set(test_set: TestSet, source: DataSource) -> SetItems:
    """Read one set's items in canonical order; :class:`DataSourceError` naming the file when it cannot."""
    from leaderboard.tracks.evalita.definition import SAMPLE_DATA_DIR

    if test_set.id == INDAQA2:
        items = _read_indaqa2(source)
    elif source.kind is DataSourceKind.HUB:
        items = _read_hub(test_set)
    else:
        root = source.folder(SAMPLE_DATA_DIR)
        assert root is not None
        path = evalita_file(test_set, root)
        if not path.is_file():
            raise DataSourceError(f"data source {source.label} lacks {path} (the {test_set.label} test set)")
        items = _read_jsonl(path)
    if not items:
        raise DataSourceError(f"data source {source.label}: the {test_set.label} test set has no items")
    return SetItems(test_set, items)


def read_sets(
    source: DataSource, set_ids: Sequence[str] | None = None, limit: int | None = None
) -> tuple[list[SetItems], dict[str, str]]:
    """The sets ``set_ids`` (None: all) from ``source``, each cut to its first ``limit`` items.

    An optional set (INDAQA2) that cannot be read is skipped with its reason; any other set
    that cannot be read fails the run (:class:`DataSourceError`), before any model loads.
    """
    chosen = [s for s in suite_sets() if set_ids is None or s.id in set_ids]
    read: list[SetItems] = []
    skipped: dict[str, str] = {}
    for test_set in chosen:
        try:
            items = read_set(test_set, source)
        except DataSourceError as exc:
            if not test_set.optional:
                raise
            skipped[test_set.id] = str(exc)
            log.info("contamination: %s skipped: %s", test_set.id, exc)
            continue
        if limit is not None:
            items = SetItems(items.set, items.items[:limit])
        read.append(items)
    return read, skipped


# --------------------------------------------------------------------------- writing


def plan_set(
    items: SetItems, order: OrderDesign = DEFAULT_ORDER, codec: CodecDesign = DEFAULT_CODEC
) -> SetPlan:
    n = len(items.items)
    return SetPlan(items, order_plan(n, order, items.set.id), codec_contexts(n, codec, items.set.id))


def order_rows(plan: SetPlan) -> list[dict[str, Any]]:
    """One document per shard and order (``order`` -1: the canonical one), its items joined."""
    texts = plan.items.items
    rows = []
    for k, shard in enumerate(plan.shards):
        for j, order in enumerate((shard.canonical, *shard.permutations)):
            rows.append({"shard": k, "order": j - 1, "text": SEPARATOR.join(texts[i] for i in order)})
    return rows


def codec_rows(plan: SetPlan) -> list[dict[str, Any]]:
    """Two documents per item, scoring the same continuation (separator + item): alone (the model's
    start-of-text token as context), then after its context items."""
    texts = plan.items.items
    rows = []
    for i, context in enumerate(plan.contexts):
        continuation = SEPARATOR + texts[i]
        rows.append({"item": i, "condition": "alone", "context": "", "continuation": continuation})
        rows.append(
            {
                "item": i,
                "condition": "context",
                "context": SEPARATOR.join(texts[c] for c in context),
                "continuation": continuation,
            }
        )
    return rows


def _task_yaml(name: str, kind: str, data_file: Path) -> str:
    doc = {
        "include": str(HARNESS_DIR / f"_{kind}.yaml"),
        "task": name,
        "dataset_kwargs": {"data_files": {"test": str(data_file)}},
    }
    return f"# Generated by backend.tracks.contamination.data: {name}. Do not edit.\n" + yaml.safe_dump(
        doc, allow_unicode=True, sort_keys=False
    )


def prepare_contamination(
    source: str | DataSource,
    workdir: Path,
    set_ids: Sequence[str] | None = None,
    *,
    limit: int | None = None,
    order: OrderDesign = DEFAULT_ORDER,
    codec: CodecDesign = DEFAULT_CODEC,
) -> ContaminationData:
    """Read the sets, plan both tests, write the documents and task configs of the run."""
    src = source if isinstance(source, DataSource) else DataSource.parse(source)
    read, skipped = read_sets(src, set_ids, limit)
    if not read:
        raise DataSourceError(f"data source {src.label}: none of the chosen sets could be read")
    root = Path(workdir).resolve() / WORK_DIR_NAME
    if root.exists():
        shutil.rmtree(root)
    for sub in ("docs", "tasks"):
        (root / sub).mkdir(parents=True)
    plans = []
    longest = 0
    for items in read:
        plan = plan_set(items, order, codec)
        if not plan.contexts:
            skipped[items.set.id] = f"{len(items.items)} item(s): too few to test"
            continue
        plans.append(plan)
        for kind, rows in ((ORDER, order_rows(plan)), (CODEC, codec_rows(plan))):
            if not rows:
                continue
            longest = max(
                [
                    longest,
                    *(
                        len(r.get("text", "")) + len(r.get("context", "")) + len(r.get("continuation", ""))
                        for r in rows
                    ),
                ]
            )
            path = root / "docs" / f"{kind}_{plan.set_id}.jsonl"
            path.write_text("".join(json.dumps(r, ensure_ascii=False) + "\n" for r in rows), encoding="utf-8")
            name = plan.task_name(kind)
            (root / "tasks" / f"{name}.yaml").write_text(_task_yaml(name, kind, path), encoding="utf-8")
    log.info(
        "contamination data %s: %d sets (%d items), %d skipped, work folder %s",
        src.label,
        len(plans),
        sum(len(p.items.items) for p in plans),
        len(skipped),
        root,
    )
    return ContaminationData(src, root / "tasks", tuple(plans), dict(skipped), longest)
