"""Data layer of the backend: which data the harness reads, under the upstream task names.

API for the runner (``backend/runner.py``)::

    from backend.data import prepare_include_path, DataSourceError

    override = prepare_include_path(source, workdir)   # source: "hub" | "sample" | "local:<dir>"
    tm = lm_eval.tasks.TaskManager(**override.task_manager_kwargs())
    # == TaskManager(include_path=str(override.include_path)), or TaskManager() for "hub"
    lm_eval.simple_evaluate(..., tasks=[...upstream names...], task_manager=tm)
    results["run"]["data"] = override.label             # "hub" | "sample" | "local:<dir name>"

* ``prepare_include_path(source: str | DataSource, workdir: Path, *, upstream_dir=None) -> DataOverride``
  writes ``<workdir>/lm_eval_data_override/<task>.yaml`` (recreated on every call) and returns
  ``DataOverride(source, include_path: Path | None, data_files: {task: {split: Path}})``
  with ``.label``, ``.tasks`` and ``.task_manager_kwargs()``.  For ``hub`` nothing is
  written and ``include_path`` is ``None`` (offline, this needs a pre-filled HF datasets cache).
* Every task of the installed ``lm_eval/tasks/evalita_llm`` folder keeps its name, prompt,
  choices, target and metrics; only ``dataset_path``/``dataset_kwargs`` change (how: see
  :mod:`backend.data.sources`).  So the suite's harness names (``evalita-mp_te_prompt-1``,
  ``evalita-mp_ner_adg_p1``, ``evalita-sp_sum_task_fp_p1`` …) and the upstream groups
  (``evalita-mp``, ``evalita-mp_ner_group`` …) work unchanged.
* ``DataSource.parse(spec)`` validates a spec; ``DataSourceError`` (an ``EvalitaError``) says
  what is wrong: unknown spec, missing directory, or a split file missing for a task.
* ``local:<dir>``: ``<dir>`` has the layout of ``backend/sample_data`` (see ``layout.yaml``):
  ``<task>/<split>.jsonl`` (``wic te sa hs faq at ls re sum``) and ``ner/<adg|fic|wn>/<split>.jsonl``,
  in the upstream schemas (``backend/sample_data/README.md``).
* Summarization needs the ROUGE metric offline: call ``backend.metrics.install_offline_rouge()``
  before lm-eval imports the SUM task hooks (see :mod:`backend.metrics`).
* Run with ``HF_HUB_OFFLINE=1 HF_DATASETS_OFFLINE=1 HF_EVALUATE_OFFLINE=1`` where the hub
  is unreachable.  This package does not import lm-eval.
"""

from backend.data.sources import (
    INCLUDE_DIR_NAME,
    LAYOUT_FILE,
    SAMPLE_DATA_DIR,
    DataOverride,
    DataSource,
    DataSourceError,
    DataSourceKind,
    UpstreamTask,
    load_layout,
    prepare_include_path,
    read_upstream_tasks,
    upstream_tasks_dir,
)

__all__ = [
    "INCLUDE_DIR_NAME",
    "LAYOUT_FILE",
    "SAMPLE_DATA_DIR",
    "DataOverride",
    "DataSource",
    "DataSourceError",
    "DataSourceKind",
    "UpstreamTask",
    "load_layout",
    "prepare_include_path",
    "read_upstream_tasks",
    "upstream_tasks_dir",
]
