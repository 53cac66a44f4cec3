"""Data layer of the backend: which data the harness reads, under the upstream task names.

API for the runner (``backend/runner.py``)::

    from backend.tracks.evalita.data import DataSourceError, prepare_include_path
    from backend.tracks.evalita.offline_rouge import install_offline_rouge

    install_offline_rouge()                            # before lm-eval builds the SUM tasks
    override = prepare_include_path(source, workdir)   # source: "hub" | "sample" | "local:<dir>"
    tm = lm_eval.tasks.TaskManager(**override.task_manager_kwargs())
    #   sample/local: TaskManager(include_path=str(override.include_path), include_defaults=False)
    #   hub:          TaskManager()
    lm_eval.simple_evaluate(..., tasks=[...upstream names...], task_manager=tm)
    run_info.data = override.label                     # "hub" | "sample" | "local:<dir name>"

* ``check_data_source(source, tasks=None) -> {task: {split: Path}}`` checks the files of ``tasks``
  (upstream names; None: all) without writing anything; every missing file is named at once.
* ``prepare_include_path(source: str | DataSource, workdir: Path, *, tasks=None, upstream_dir=None) -> DataOverride``
  checks the data files, then writes ``<workdir>/lm_eval_data_override/`` (deleted and
  recreated on every call, so give each run its own ``workdir``): one YAML per upstream
  task (same name, local data) and one per upstream group (unchanged).  For ``hub``
  nothing is written and ``include_path`` is ``None`` (offline, that needs a pre-filled
  HF datasets cache).
* ``DataOverride``: ``source``, ``include_path: Path | None``, ``data_files: {task: {split: Path}}``,
  ``.label``, ``.tasks`` (overridden names), ``.task_manager_kwargs()``.
  ``TaskManager(include_path=str(override.include_path))`` (built-in tasks kept) works too,
  only slower, and logs one "overrides existing task" warning per task.
* Every task of the installed ``lm_eval/tasks/evalita_llm`` folder keeps its name, prompt,
  choices, target and metrics; only ``dataset_path``/``dataset_kwargs`` change (how and why:
  :mod:`backend.tracks.evalita.data.sources`).  So the suite's harness names (``evalita-mp_te_prompt-1``,
  ``evalita-mp_ner_adg_p1``, ``evalita-sp_sum_task_fp_p1`` …) and the upstream groups
  (``evalita-mp``, ``evalita-mp_ner_group`` …) work unchanged.  (Upstream's own
  ``evalita-mp_ner-v2_fic_p1`` config is broken in 0.4.13 — it names a missing function —
  and stays so; it is not in the suite.)
* ``DataSourceError`` (an ``EvalitaError``) says what is wrong: unknown spec, missing
  directory, a split file missing for a task, a file that is not UTF-8 JSONL or lacks a
  field the harness reads (file and line named).
* ``local:<dir>``: ``<dir>`` has the layout of ``leaderboard/tracks/evalita/sample_data`` (``layout.yaml``):
  ``<task>/<split>.jsonl`` (``wic te sa hs faq at ls re sum``) and ``ner/<adg|fic|wn>/<split>.jsonl``,
  in the upstream schemas (``leaderboard/tracks/evalita/sample_data/README.md``); extra fields are allowed.
* Run with ``HF_HUB_OFFLINE=1 HF_DATASETS_OFFLINE=1 HF_EVALUATE_OFFLINE=1`` where the hub
  is unreachable.  This package does not import lm-eval.
"""

from backend.tracks.evalita.data.layout import LAYOUT_FILE, LayoutEntry, check_jsonl, load_layout
from backend.tracks.evalita.data.sources import (
    INCLUDE_DIR_NAME,
    DataOverride,
    check_data_source,
    prepare_include_path,
)
from backend.tracks.evalita.data.upstream import (
    UpstreamConfigs,
    UpstreamGroup,
    UpstreamTask,
    read_upstream_configs,
    read_upstream_tasks,
    upstream_tasks_dir,
)
from leaderboard.core.datasource import DataSource, DataSourceError, DataSourceKind
from leaderboard.tracks.evalita.definition import SAMPLE_DATA_DIR

__all__ = [
    "INCLUDE_DIR_NAME",
    "LAYOUT_FILE",
    "SAMPLE_DATA_DIR",
    "DataOverride",
    "DataSource",
    "DataSourceError",
    "DataSourceKind",
    "LayoutEntry",
    "UpstreamConfigs",
    "UpstreamGroup",
    "UpstreamTask",
    "check_data_source",
    "check_jsonl",
    "load_layout",
    "prepare_include_path",
    "read_upstream_configs",
    "read_upstream_tasks",
    "upstream_tasks_dir",
]
