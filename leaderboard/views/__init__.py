"""Pure shaping of the leaderboard's tables for display: filter, rank, label, format.

Every number shown comes from :mod:`leaderboard.tables` (which uses
:mod:`leaderboard.scoring`); this module only selects rows and columns, joins run
metadata, orders, ranks by the already computed average CPS and turns values into the
strings or links the UI shows.  No gradio here: the UI renders what these return.

The views are split by tab: :mod:`~leaderboard.views.common` (labels, escaping, the run
lookup), :mod:`~leaderboard.views.ranking` (the snapshot, the ranking, the plots' data),
:mod:`~leaderboard.views.task`, :mod:`~leaderboard.views.model` and
:mod:`~leaderboard.views.queue`; every public name is re-exported here (``views.ranking_view``).
"""

from __future__ import annotations

from leaderboard.views.common import (
    AVG,
    KEY,
    META_COLUMNS,
    METRIC_LABELS,
    MODEL,
    NOTE,
    PARAMS,
    PRECISION,
    RANK,
    REVISION,
    SETTING_LABELS,
    SIZE_BUCKETS,
    TYPE,
    RankingFilters,
    RankingView,
    SizeBucket,
    html_text,
    md_text,
    model_link,
    parse_run_key,
    run_key,
    task_label,
)
from leaderboard.views.model import (
    RUN_FIELDS,
    details_path_of,
    details_view,
    model_header_markdown,
    model_prompt_scores,
    model_settings_view,
    model_vs_field,
    run_metadata_view,
)
from leaderboard.views.queue import (
    QueueView,
    queue_view,
    rejected_markdown,
    submitted_markdown,
)
from leaderboard.views.ranking import (
    Board,
    all_model_types,
    all_precisions,
    apply_filters,
    datatypes,
    linked,
    pick_runs,
    radar_data,
    ranking_view,
    run_choices,
    run_of_row,
    sensitivity_data,
    setting_rows,
    to_csv,
    top_runs,
)
from leaderboard.views.task import (
    prompt_side_view,
    prompts_html,
    task_info_markdown,
    task_models_view,
)

__all__ = [
    "AVG",
    "KEY",
    "META_COLUMNS",
    "METRIC_LABELS",
    "MODEL",
    "NOTE",
    "PARAMS",
    "PRECISION",
    "RANK",
    "REVISION",
    "RUN_FIELDS",
    "SETTING_LABELS",
    "SIZE_BUCKETS",
    "TYPE",
    "Board",
    "QueueView",
    "RankingFilters",
    "RankingView",
    "SizeBucket",
    "all_model_types",
    "all_precisions",
    "apply_filters",
    "datatypes",
    "details_path_of",
    "details_view",
    "html_text",
    "linked",
    "md_text",
    "model_header_markdown",
    "model_link",
    "model_prompt_scores",
    "model_settings_view",
    "model_vs_field",
    "parse_run_key",
    "pick_runs",
    "prompt_side_view",
    "prompts_html",
    "queue_view",
    "radar_data",
    "ranking_view",
    "rejected_markdown",
    "run_choices",
    "run_key",
    "run_metadata_view",
    "run_of_row",
    "sensitivity_data",
    "setting_rows",
    "submitted_markdown",
    "task_info_markdown",
    "task_label",
    "task_models_view",
    "to_csv",
    "top_runs",
]
