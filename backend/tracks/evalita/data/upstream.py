"""What the installed harness's ``evalita_llm`` configs say, read without importing lm-eval."""

from __future__ import annotations

from dataclasses import dataclass
from importlib.util import find_spec
from pathlib import Path
from typing import Any

import yaml

from leaderboard.core.datasource import DataSourceError

# Config keys naming a split the harness reads.
_SPLIT_KEYS = ("test_split", "fewshot_split", "validation_split", "training_split")


@dataclass(frozen=True)
class UpstreamTask:
    """One harness task: its config file, its dataset and the splits it reads."""

    name: str
    yaml_path: Path
    dataset_path: str
    dataset_name: str | None
    splits: tuple[str, ...]
    #: The split few-shot examples come from: lm-eval 0.4.13 reads it even zero-shot.
    fewshot_split: str | None = None


@dataclass(frozen=True)
class UpstreamGroup:
    """One harness group (``evalita-mp``, ``evalita-mp_te`` …) and its config file."""

    name: str
    yaml_path: Path


@dataclass(frozen=True)
class UpstreamConfigs:
    tasks: tuple[UpstreamTask, ...]
    groups: tuple[UpstreamGroup, ...]


def upstream_tasks_dir() -> Path:
    """The installed harness's ``lm_eval/tasks/evalita_llm`` folder (found without importing lm_eval)."""
    spec = find_spec("lm_eval")
    if spec is None or not spec.submodule_search_locations:
        raise DataSourceError("lm-eval is not installed; install requirements-backend.txt")
    folder = Path(next(iter(spec.submodule_search_locations))) / "tasks" / "evalita_llm"
    if not folder.is_dir():
        raise DataSourceError(f"{folder} not found: this lm-eval has no evalita_llm tasks")
    return folder


class _ConfigLoader(getattr(yaml, "CSafeLoader", yaml.SafeLoader)):
    """Reads harness YAML without running it: ``!function x.y`` stays the string ``x.y``.

    libyaml's safe loader where PyYAML has it: the same documents, a quarter of the CPU time
    (a run reads the evalita_llm configs, ~390 YAML loads with their includes, three times).
    """


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


def read_upstream_configs(folder: Path | None = None) -> UpstreamConfigs:
    """Every task and group defined by a ``*.yaml`` file of the harness's evalita_llm folder."""
    folder = folder or upstream_tasks_dir()
    tasks: dict[str, UpstreamTask] = {}
    groups: dict[str, UpstreamGroup] = {}
    for path in sorted(folder.rglob("*.yaml")):
        path = path.resolve()
        cfg = _read_config(path)
        if "group" in cfg:
            if cfg["group"] in groups:
                raise DataSourceError(
                    f"group {cfg['group']!r} defined twice: {groups[cfg['group']].yaml_path}, {path}"
                )
            groups[cfg["group"]] = UpstreamGroup(cfg["group"], path)
        elif isinstance(cfg.get("task"), str):
            name = cfg["task"]
            if name in tasks:
                raise DataSourceError(f"task {name!r} defined twice: {tasks[name].yaml_path}, {path}")
            splits = tuple(dict.fromkeys(cfg[k] for k in _SPLIT_KEYS if cfg.get(k)))
            tasks[name] = UpstreamTask(
                name, path, cfg["dataset_path"], cfg.get("dataset_name"), splits, cfg.get("fewshot_split")
            )
    if not tasks:
        raise DataSourceError(f"no task configs found in {folder}")
    return UpstreamConfigs(tuple(tasks.values()), tuple(groups.values()))


def read_upstream_tasks(folder: Path | None = None) -> tuple[UpstreamTask, ...]:
    """The tasks (not groups) of the harness's evalita_llm folder."""
    return read_upstream_configs(folder).tasks
