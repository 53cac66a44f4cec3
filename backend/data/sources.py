"""Data sources for the harness: the upstream hub datasets, or local JSONL under the same task names.

How the override works (lm-eval 0.4.13)
---------------------------------------
``TaskManager(include_path=...)`` indexes the built-in task folders first and the
include path last; a task name found in both is taken from the include path ("Task
'x' from … overrides existing task from …").  We therefore write, for every task YAML
of the built-in ``evalita_llm`` folder, one small YAML with the *same* task name::

    include: <site-packages>/lm_eval/tasks/evalita_llm/_evalita-mp_te_p1.yaml
    dataset_path: json
    dataset_kwargs: {data_files: {test: /abs/te/test.jsonl, dev: /abs/te/dev.jsonl}}

The ``include`` brings in the upstream config verbatim (prompt, choices, target,
metrics, ``!function`` hooks resolved next to the upstream file, tag, metadata); only
the three data keys are replaced.  Because *tasks* are overridden (not groups), the
upstream groups and tags (``evalita-mp``, ``evalita-mp_te``, ``evalita-mp_ner_group`` …)
resolve to the overridden tasks, and so does loading a single task by name.  Every task
of the folder is overridden: tags are re-registered from the include path, so
overriding only some tasks of a tag would silently drop the others from it.

(Overriding a *group* YAML with ``dataset_path: json`` instead keeps the task names too,
but only while the tasks are reached through that group: a task loaded by name, or through
another group, still reads the hub — and NER needs one file set per domain.)
"""

from __future__ import annotations

import logging
import shutil
from collections.abc import Mapping
from dataclasses import dataclass, field
from enum import StrEnum
from importlib.util import find_spec
from pathlib import Path
from types import MappingProxyType
from typing import Any

import yaml

from eval_queue.errors import EvalitaError

log = logging.getLogger(__name__)

#: The folder of this package's data layout file and of the bundled sample data.
_PACKAGE_DIR = Path(__file__).resolve().parent
LAYOUT_FILE = _PACKAGE_DIR / "layout.yaml"
SAMPLE_DATA_DIR = _PACKAGE_DIR.parent / "sample_data"
#: Name of the folder created inside ``workdir`` to hold the generated task YAMLs.
INCLUDE_DIR_NAME = "lm_eval_data_override"

# Config keys naming a split the harness reads.
_SPLIT_KEYS = ("test_split", "fewshot_split", "validation_split", "training_split")


class DataSourceError(EvalitaError):
    """A data source spec is invalid, or its files do not match the harness configs."""


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
                valid = ", ".join(["hub", "sample", "local:<dir>"])
                raise DataSourceError(f"Unknown data source {spec!r}. Valid: {valid}.")

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

    ``include_path`` goes to ``lm_eval.tasks.TaskManager(include_path=...)`` (``None`` for
    the hub: no override).  ``data_files`` maps every overridden upstream task name to
    ``{split: file}`` as written into its YAML.
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
        """Keyword arguments for ``TaskManager``: ``{"include_path": "..."}`` or ``{}``."""
        return {"include_path": str(self.include_path)} if self.include_path else {}


@dataclass(frozen=True)
class UpstreamTask:
    """What this module needs to know about one harness task config."""

    name: str
    yaml_path: Path
    dataset_path: str
    dataset_name: str | None
    splits: tuple[str, ...]


@dataclass(frozen=True)
class LayoutEntry:
    task: str
    dataset_path: str
    dataset_name: str | None
    splits: Mapping[str, str]


def upstream_tasks_dir() -> Path:
    """The installed harness's ``lm_eval/tasks/evalita_llm`` folder (found without importing lm_eval)."""
    spec = find_spec("lm_eval")
    if spec is None or not spec.submodule_search_locations:
        raise DataSourceError("lm-eval is not installed; install requirements-backend.txt")
    folder = Path(next(iter(spec.submodule_search_locations))) / "tasks" / "evalita_llm"
    if not folder.is_dir():
        raise DataSourceError(f"{folder} not found: this lm-eval has no evalita_llm tasks")
    return folder


def load_layout(path: Path = LAYOUT_FILE) -> tuple[LayoutEntry, ...]:
    """The data layout (``layout.yaml``): upstream dataset → split → file relative to a data root."""
    raw = yaml.safe_load(path.read_text(encoding="utf-8"))
    if raw.get("schema") != "evalita-data-layout/1":
        raise DataSourceError(f"{path}: unknown layout schema {raw.get('schema')!r}")
    return tuple(
        LayoutEntry(
            task=item["task"],
            dataset_path=item["dataset_path"],
            dataset_name=item.get("dataset_name"),
            splits=MappingProxyType(dict(item["splits"])),
        )
        for item in raw["datasets"]
    )


class _ConfigLoader(yaml.SafeLoader):
    """Reads harness YAML without running it: ``!function x.y`` stays the string ``x.y``."""


_ConfigLoader.add_constructor("!function", lambda loader, node: loader.construct_scalar(node))


def _read_config(path: Path, seen: frozenset[Path] = frozenset()) -> dict[str, Any]:
    """A harness config with its ``include`` chain merged (the including file wins)."""
    if path in seen:
        raise DataSourceError(f"include cycle at {path}")
    cfg = yaml.load(path.read_text(encoding="utf-8"), Loader=_ConfigLoader)  # a SafeLoader subclass
    if not isinstance(cfg, dict):
        raise DataSourceError(f"{path}: expected a mapping")
    includes = cfg.pop("include", None)
    if includes is None:
        return cfg
    merged: dict[str, Any] = {}
    for inc in includes if isinstance(includes, list) else [includes]:
        inc_path = Path(inc) if Path(inc).is_absolute() else path.parent / inc
        merged.update(_read_config(inc_path.resolve(), seen | {path}))
    merged.update(cfg)
    return merged


def read_upstream_tasks(folder: Path | None = None) -> tuple[UpstreamTask, ...]:
    """Every task (not group) defined by a ``*.yaml`` file of the harness's evalita_llm folder."""
    folder = folder or upstream_tasks_dir()
    tasks: dict[str, UpstreamTask] = {}
    for path in sorted(folder.rglob("*.yaml")):
        cfg = _read_config(path.resolve())
        if "group" in cfg or not isinstance(cfg.get("task"), str):
            continue
        name = cfg["task"]
        if name in tasks:
            raise DataSourceError(f"task {name!r} defined twice: {tasks[name].yaml_path} and {path}")
        splits = tuple(dict.fromkeys(cfg[k] for k in _SPLIT_KEYS if cfg.get(k)))
        tasks[name] = UpstreamTask(name, path.resolve(), cfg["dataset_path"], cfg.get("dataset_name"), splits)
    if not tasks:
        raise DataSourceError(f"no task configs found in {folder}")
    return tuple(tasks.values())


def _layout_entry(task: UpstreamTask, layout: tuple[LayoutEntry, ...]) -> LayoutEntry:
    for entry in layout:
        if entry.dataset_path == task.dataset_path and entry.dataset_name in (None, task.dataset_name):
            return entry
    raise DataSourceError(
        f"task {task.name!r} reads dataset {task.dataset_path!r} (config {task.dataset_name!r}), "
        f"which {LAYOUT_FILE.name} does not map to local files; add it there"
    )


def resolve_data_files(task: UpstreamTask, root: Path, layout: tuple[LayoutEntry, ...]) -> dict[str, Path]:
    """``{split: file}`` for one task under ``root``; every split the config reads must exist."""
    entry = _layout_entry(task, layout)
    files = {split: root / rel for split, rel in entry.splits.items() if (root / rel).is_file()}
    missing = [split for split in task.splits if split not in files]
    if missing:
        wanted = ", ".join(f"{s} → {root / entry.splits[s]}" if s in entry.splits else s for s in missing)
        raise DataSourceError(f"task {task.name!r}: no file for split(s) {wanted}")
    return files


def _task_yaml(task: UpstreamTask, files: Mapping[str, Path]) -> str:
    doc = {
        "include": str(task.yaml_path),
        "dataset_path": "json",
        "dataset_kwargs": {"data_files": {split: str(path) for split, path in files.items()}},
    }
    header = f"# Generated by backend.data: {task.name} with local data. Do not edit.\n"
    return header + yaml.safe_dump(doc, allow_unicode=True, sort_keys=False)


def prepare_include_path(
    source: str | DataSource, workdir: Path, *, upstream_dir: Path | None = None
) -> DataOverride:
    """Make the upstream task names read ``source``'s data; see the package docstring."""
    src = source if isinstance(source, DataSource) else DataSource.parse(source)
    if src.kind is DataSourceKind.HUB:
        return DataOverride(source=src, include_path=None)
    assert src.root is not None
    layout = load_layout()
    tasks = read_upstream_tasks(upstream_dir)
    data_files = {task.name: resolve_data_files(task, src.root, layout) for task in tasks}

    include = Path(workdir).resolve() / INCLUDE_DIR_NAME
    if include.exists():
        shutil.rmtree(include)
    include.mkdir(parents=True)
    for task in tasks:
        (include / f"{task.name}.yaml").write_text(_task_yaml(task, data_files[task.name]), encoding="utf-8")
    log.info("data source %s: %d task configs in %s", src.label, len(tasks), include)
    frozen = {name: MappingProxyType(files) for name, files in data_files.items()}
    return DataOverride(source=src, include_path=include, data_files=MappingProxyType(frozen))
