"""The file layout of a data root (``layout.yaml``) and the checks a data file must pass."""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from types import MappingProxyType

import yaml

from backend.tracks.evalita.data.errors import DataSourceError
from backend.tracks.evalita.data.upstream import UpstreamTask

LAYOUT_FILE = Path(__file__).resolve().parent / "layout.yaml"
_MAX_PROBLEMS = 5


@dataclass(frozen=True)
class LayoutEntry:
    """One upstream dataset (and config): the fields the harness reads, and a file per split."""

    task: str
    dataset_path: str
    dataset_name: str | None
    fields: tuple[str, ...]
    splits: Mapping[str, str]

    def matches(self, task: UpstreamTask) -> bool:
        return self.dataset_path == task.dataset_path and self.dataset_name in (None, task.dataset_name)


def load_layout(path: Path = LAYOUT_FILE) -> tuple[LayoutEntry, ...]:
    """The data layout: upstream dataset → split → file relative to a data root."""
    raw = yaml.safe_load(path.read_text(encoding="utf-8"))
    if raw.get("schema") != "evalita-data-layout/1":
        raise DataSourceError(f"{path}: unknown layout schema {raw.get('schema')!r}")
    return tuple(
        LayoutEntry(
            task=item["task"],
            dataset_path=item["dataset_path"],
            dataset_name=item.get("dataset_name"),
            fields=tuple(item["fields"]),
            splits=MappingProxyType(dict(item["splits"])),
        )
        for item in raw["datasets"]
    )


def layout_entry(task: UpstreamTask, layout: tuple[LayoutEntry, ...]) -> LayoutEntry:
    """The layout entry of a task's dataset; a dataset the layout does not know is an error."""
    for entry in layout:
        if entry.matches(task):
            return entry
    raise DataSourceError(
        f"task {task.name!r} reads dataset {task.dataset_path!r} (config {task.dataset_name!r}), "
        f"which {LAYOUT_FILE.name} does not map to local files; add it there"
    )


@dataclass(frozen=True)
class MissingFile:
    """A split a task reads whose file is not in the data root."""

    task: str  # the layout's task id (wic, sa, ner …)
    split: str
    path: Path
    fewshot: bool  # the task's few-shot split: read even for a zero-shot run

    def describe(self) -> str:
        why = "; the few-shot split, which lm-eval reads even for a zero-shot run" if self.fewshot else ""
        return f"{self.path} (task {self.task}, split {self.split!r}{why})"


def split_files(
    task: UpstreamTask, root: Path, layout: tuple[LayoutEntry, ...]
) -> tuple[dict[str, Path], list[MissingFile]]:
    """``({split: file}, missing)`` for one task under ``root``: every split the config reads needs a file."""
    entry = layout_entry(task, layout)
    files: dict[str, Path] = {}
    missing: list[MissingFile] = []
    for split in task.splits:
        path = root / entry.splits[split] if split in entry.splits else root / entry.task / f"{split}.jsonl"
        if split in entry.splits and path.is_file():
            files[split] = path
        else:
            missing.append(MissingFile(entry.task, split, path, split == task.fewshot_split))
    # Splits the layout lists beyond what this task reads are passed on when present.
    for split, rel in entry.splits.items():
        if split not in files and split not in task.splits and (root / rel).is_file():
            files[split] = root / rel
    return files, missing


def missing_files_error(root: Path, missing: list[MissingFile]) -> DataSourceError:
    """One error naming every missing file once (several prompts of a task share them)."""
    unique = list(dict.fromkeys(m.describe() for m in missing))
    return DataSourceError(
        f"data source {root} lacks {len(unique)} file(s): "
        + "; ".join(unique)
        + ". Add them (layout: leaderboard/tracks/evalita/sample_data/README.md) or run fewer tasks (--tasks)."
    )


def check_jsonl(path: Path, fields: tuple[str, ...]) -> None:
    """Raise :class:`DataSourceError` unless ``path`` is UTF-8 JSONL whose objects all have ``fields``."""
    try:
        lines = path.read_text(encoding="utf-8").splitlines()
    except UnicodeDecodeError as err:
        raise DataSourceError(f"{path}: not UTF-8 ({err.reason} at byte {err.start})") from None
    problems: list[str] = []
    rows = 0
    for number, line in enumerate(lines, start=1):
        if not line.strip():
            continue
        rows += 1
        try:
            row = json.loads(line)
        except json.JSONDecodeError as err:
            problems.append(f"line {number}: invalid JSON ({err.msg})")
            continue
        if not isinstance(row, dict):
            problems.append(f"line {number}: not a JSON object")
        elif missing := [f for f in fields if f not in row]:
            problems.append(f"line {number}: missing field(s) {', '.join(missing)}")
        if len(problems) >= _MAX_PROBLEMS:
            break
    if not rows:
        problems.append("no rows")
    if problems:
        raise DataSourceError(f"{path}: " + "; ".join(problems))
