"""Data sources for the harness: the upstream hub datasets, or local JSONL under the same task names.

How the override works (lm-eval 0.4.13)
---------------------------------------
``TaskManager(include_path=...)`` indexes the built-in task folders first and the
include path last; a name found in both is taken from the include path ("Task 'x' from
… overrides existing task from …").  For every task YAML of the built-in
``evalita_llm`` folder we write one small YAML with the *same* task name::

    include: <site-packages>/lm_eval/tasks/evalita_llm/_evalita-mp_te_p1.yaml
    dataset_path: json
    dataset_kwargs: {data_files: {test: /abs/te/test.jsonl, dev: /abs/te/dev.jsonl}}

The ``include`` brings in the upstream config verbatim (prompt, choices, target,
metrics, ``!function`` hooks resolved next to the upstream file, tag, metadata); only the
two data keys are replaced.  Because *tasks* are overridden, the upstream groups and tags
(``evalita-mp``, ``evalita-mp_te``, ``evalita-mp_ner_group`` …) resolve to the overridden
tasks, and so does loading a single task by name.  Every task of the folder is overridden:
tags are re-registered from the include path, so overriding only some tasks of a tag would
silently drop the others from it.

Each upstream group YAML is mirrored too (a file that only ``include``s it), so the
folder is self-contained: ``TaskManager(include_path=…, include_defaults=False)`` — what
:meth:`DataOverride.task_manager_kwargs` returns — knows every Evalita task and group,
indexes in seconds instead of scanning all built-in tasks, logs no override warnings, and
can never fall back to the hub for a task we missed: such a task would be unknown.

(Overriding a *group* YAML with ``dataset_path: json`` instead also keeps the task names,
but only while the tasks are reached through that group: a task loaded by name or through
another group still reads the hub, and NER needs a different file set per domain.)
"""

from __future__ import annotations

import logging
import shutil
from collections.abc import Collection, Mapping
from dataclasses import dataclass, field
from enum import StrEnum
from pathlib import Path
from types import MappingProxyType
from typing import Any

import yaml

from backend.tracks.evalita.data.errors import DataSourceError
from backend.tracks.evalita.data.layout import (
    MissingFile,
    check_jsonl,
    layout_entry,
    load_layout,
    missing_files_error,
    split_files,
)
from backend.tracks.evalita.data.upstream import (
    UpstreamConfigs,
    UpstreamGroup,
    UpstreamTask,
    read_upstream_configs,
)

log = logging.getLogger(__name__)

SAMPLE_DATA_DIR = Path(__file__).resolve().parents[4] / "leaderboard" / "tracks" / "evalita" / "sample_data"
#: Name of the folder created inside ``workdir`` to hold the generated task YAMLs.
INCLUDE_DIR_NAME = "lm_eval_data_override"


class DataSourceKind(StrEnum):
    HUB = "hub"
    SAMPLE = "sample"
    LOCAL = "local"


@dataclass(frozen=True)
class DataSource:
    """Where the harness reads task data: ``hub``, ``sample`` or ``local:<dir>``."""

    kind: DataSourceKind
    root: Path | None = None

    @classmethod
    def parse(cls, spec: str) -> DataSource:
        """Parse ``hub`` | ``sample`` | ``local:<dir>`` (the directory must exist)."""
        kind, sep, rest = spec.strip().partition(":")
        match kind:
            case DataSourceKind.HUB if not sep:
                return cls(DataSourceKind.HUB)
            case DataSourceKind.SAMPLE if not sep:
                return cls(DataSourceKind.SAMPLE, SAMPLE_DATA_DIR)
            case DataSourceKind.LOCAL if rest:
                root = Path(rest).expanduser().resolve()
                if not root.is_dir():
                    raise DataSourceError(f"local data directory {root} does not exist")
                return cls(DataSourceKind.LOCAL, root)
            case _:
                raise DataSourceError(f"Unknown data source {spec!r}. Valid: hub, sample, local:<dir>.")

    @property
    def label(self) -> str:
        """The value of ``run.data`` in a results file: ``hub``, ``sample`` or ``local:<dir name>``."""
        if self.kind is DataSourceKind.LOCAL:
            assert self.root is not None
            return f"local:{self.root.name}"
        return self.kind.value


@dataclass(frozen=True)
class DataOverride:
    """What to pass to the harness for one data source.

    ``include_path`` is for ``lm_eval.tasks.TaskManager`` (``None`` for the hub: no
    override).  ``data_files`` maps every overridden upstream task name to ``{split: file}``
    as written into its YAML.
    """

    source: DataSource
    include_path: Path | None
    data_files: Mapping[str, Mapping[str, Path]] = field(default_factory=dict)

    @property
    def label(self) -> str:
        return self.source.label

    @property
    def tasks(self) -> tuple[str, ...]:
        """The upstream task names whose data comes from local files (sorted)."""
        return tuple(sorted(self.data_files))

    def task_manager_kwargs(self) -> dict[str, Any]:
        """Keyword arguments for ``TaskManager``: the include folder alone, or nothing for the hub."""
        if self.include_path is None:
            return {}
        return {"include_path": str(self.include_path), "include_defaults": False}


def _task_yaml(task: UpstreamTask, files: Mapping[str, Path]) -> str:
    doc = {
        "include": str(task.yaml_path),
        "dataset_path": "json",
        "dataset_kwargs": {"data_files": {split: str(path) for split, path in files.items()}},
    }
    header = (
        f"# Generated by backend.tracks.evalita.data: task {task.name} reading local files. Do not edit.\n"
    )
    return header + yaml.safe_dump(doc, allow_unicode=True, sort_keys=False)


def _group_yaml(group: UpstreamGroup) -> str:
    header = (
        f"# Generated by backend.tracks.evalita.data: upstream group {group.name}, unchanged. Do not edit.\n"
    )
    return header + yaml.safe_dump({"include": str(group.yaml_path)}, allow_unicode=True)


def _selected(configs: UpstreamConfigs, tasks: Collection[str] | None) -> tuple[UpstreamTask, ...]:
    if tasks is None:
        return configs.tasks
    known = {task.name for task in configs.tasks}
    if unknown := sorted(set(tasks) - known):
        raise DataSourceError(
            f"unknown harness task(s) {', '.join(unknown)} (not in the installed evalita_llm)"
        )
    return tuple(task for task in configs.tasks if task.name in tasks)


def check_data_source(
    source: str | DataSource, tasks: Collection[str] | None = None, *, upstream_dir: Path | None = None
) -> dict[str, dict[str, Path]]:
    """Check every file ``tasks`` (upstream names; None: all) read from ``source``; writes nothing.

    Returns ``{task: {split: file}}``.  Raises :class:`DataSourceError` naming *every*
    missing file at once (and why a split is needed), else the first file that is not
    UTF-8 JSONL with the fields the harness reads.  ``hub`` is not checked here (the
    harness reads the HF datasets cache, or the hub).
    """
    src = source if isinstance(source, DataSource) else DataSource.parse(source)
    if src.kind is DataSourceKind.HUB:
        return {}
    assert src.root is not None
    layout = load_layout()
    selected = _selected(read_upstream_configs(upstream_dir), tasks)
    data_files: dict[str, dict[str, Path]] = {}
    missing: list[MissingFile] = []
    for task in selected:
        data_files[task.name], task_missing = split_files(task, src.root, layout)
        missing += task_missing
    if missing:
        raise missing_files_error(src.root, missing)
    checked: set[Path] = set()
    for task in selected:
        fields = layout_entry(task, layout).fields
        for path in data_files[task.name].values():
            if path not in checked:
                check_jsonl(path, fields)
                checked.add(path)
    return data_files


def prepare_include_path(
    source: str | DataSource,
    workdir: Path,
    *,
    tasks: Collection[str] | None = None,
    upstream_dir: Path | None = None,
) -> DataOverride:
    """Make the upstream task names read ``source``'s data; see the package docstring.

    For ``sample`` and ``local:<dir>``, every file is checked first
    (:func:`check_data_source`), before any model is loaded.  ``tasks`` (upstream names)
    limits the override to the tasks a run needs — a subset run on a folder holding only
    those tasks' files —; with ``include_defaults=False`` any other task is then unknown.
    """
    src = source if isinstance(source, DataSource) else DataSource.parse(source)
    if src.kind is DataSourceKind.HUB:
        return DataOverride(source=src, include_path=None)
    data_files = check_data_source(src, tasks, upstream_dir=upstream_dir)
    configs = read_upstream_configs(upstream_dir)
    selected = _selected(configs, tasks)

    include = Path(workdir).resolve() / INCLUDE_DIR_NAME
    if include.exists():
        shutil.rmtree(include)
    include.mkdir(parents=True)
    for task in selected:
        (include / f"{task.name}.yaml").write_text(_task_yaml(task, data_files[task.name]), encoding="utf-8")
    for group in configs.groups:
        (include / f"group--{group.name}.yaml").write_text(_group_yaml(group), encoding="utf-8")
    log.info(
        "data source %s: %d lm-eval tasks, %d groups, configs in %s",
        src.label,
        len(selected),
        len(configs.groups),
        include,
    )
    frozen = {name: MappingProxyType(files) for name, files in data_files.items()}
    return DataOverride(source=src, include_path=include, data_files=MappingProxyType(frozen))
