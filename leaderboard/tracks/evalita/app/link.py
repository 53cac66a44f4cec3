"""The Evalita tabs' link fields: what a shared link restores on them, declared once.

:class:`EvalitaLink` is the typed view a tab reads (``EvalitaLink.of(state).shots``);
:data:`URL_FIELDS` are the same fields as the page state knows them (each Evalita tab
declares them as its ``url_fields``): their defaults are the dataclass's, their accepted
values and notices below.  Other tracks' panels on the task and model pages read the task,
the model and the setting through the same view.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, fields
from types import MappingProxyType
from typing import Any

from eval_queue.requests import ModelType, Precision
from leaderboard.state import Getter, PageState, UrlField
from leaderboard.tracks.evalita.app.views.labels import SIZE_BUCKETS
from leaderboard.tracks.evalita.app.views.ranking import DEFAULT_SORT, RANKING_SORTS
from leaderboard.tracks.evalita.app.views.subsets import MODEL_KINDS
from leaderboard.tracks.evalita.definition import SUITE, TASK_IDS, TASKS
from leaderboard.tracks.evalita.metric_sets import DEFAULT_METRIC_SET, MetricSet
from leaderboard.tracks.evalita.vocabulary import RANKING_AGGREGATES, RUN_SETTINGS, Aggregate, Setting

#: How many runs the plots' radar compares at most.
MAX_CHOSEN_MODELS = 6


@dataclass(frozen=True)
class EvalitaLink:
    """The Evalita tabs' link fields, typed: settings, task, chosen models, filters, sort, pages."""

    setting: Setting = Setting.ZERO  # the ranking's: 0, 5 or both
    shots: Setting = Setting.ZERO  # the task, model and plots tabs': 0 or 5
    task: str = SUITE[0].id
    model: str = ""  # a RunRef key; empty: the best ranked run
    models: tuple[str, ...] = ()  # the plots' radar; empty: the three best
    types: tuple[str, ...] = ()
    sizes: tuple[str, ...] = ()
    precisions: tuple[str, ...] = ()
    search: str = ""
    columns: tuple[Aggregate, ...] = (Aggregate.CPS,)
    all_runs: bool = False
    sort: str = DEFAULT_SORT
    # The ranking's page.  Not ``page``: gradio reserves ``?page=`` for multipage apps, and a
    # link with ``page=2`` failed before the app saw it.
    ranking_page: int = 1
    task_page: int = 1  # the task's models × prompts page
    answers_task: str = SUITE[0].id  # the model page's answers
    answers_prompt: str = SUITE[0].prompts[0].id
    #: The metric set of every score shown: ``lm-eval`` (the paper's tables) or ``as-specified``.
    metrics: str = DEFAULT_METRIC_SET.value
    #: The ranking's custom average: the tasks it averages (suite order; empty: none).
    avg_tasks: tuple[str, ...] = ()
    #: The ranking shows only runs with a CPS on every task in view.
    complete: bool = False
    #: The ranking's model kinds (chat, base, unknown; empty: all).
    kinds: tuple[str, ...] = ()
    #: The ranking shows only each organisation's best run.
    org_best: bool = False

    @classmethod
    def of(cls, state: PageState) -> EvalitaLink:
        """The Evalita fields of ``state`` (their defaults where the link sets none)."""
        return cls(**{f.name: state.get(f.name) for f in fields(cls)})


def _values(*items: object) -> tuple[str, ...]:
    return tuple(str(getattr(item, "value", item)) for item in items)


def _answers_prompt(prompt: Any, get: Getter) -> str:
    """The answers' prompt belongs to the answers' task (else that task's first)."""
    task = TASKS[str(get("answers_task"))]
    return prompt if prompt in task.prompt_ids else task.prompt_ids[0]


def _suite_order(tasks: Any, get: Getter) -> tuple[str, ...]:
    """A custom average's tasks in suite order, each once: one state per set of tasks."""
    return tuple(t for t in TASK_IDS if t in set(tasks))


def _task_abbrev(task_id: Any) -> str:
    return TASKS[str(task_id)].abbrev


# Changing these changes which rows the ranking (or the task table) lists: back to page 1.
_RANKING_ROWS = ("ranking_page",)
_TASK_ROWS = ("task_page",)

#: How each field is checked and described beyond its default (fields absent: free text).
_SPECS: Mapping[str, dict[str, Any]] = {
    "setting": {
        "choices": _values(*Setting),
        "item": Setting,
        "describe": lambda s: s.label,
        "resets": _RANKING_ROWS,
    },
    "shots": {
        "choices": _values(*RUN_SETTINGS),
        "item": Setting,
        "describe": lambda s: s.label,
        "resets": _TASK_ROWS,
    },
    "task": {"choices": TASK_IDS, "describe": _task_abbrev, "resets": _TASK_ROWS},
    "models": {"normalise": lambda models, get: tuple(models)[:MAX_CHOSEN_MODELS]},
    "types": {"choices": _values(*ModelType), "resets": _RANKING_ROWS},
    "sizes": {"choices": tuple(bucket.label for bucket in SIZE_BUCKETS), "resets": _RANKING_ROWS},
    "precisions": {"choices": _values(*Precision), "resets": _RANKING_ROWS},
    "search": {"clip": True, "resets": _RANKING_ROWS},
    "columns": {"choices": _values(*RANKING_AGGREGATES), "item": Aggregate},
    "all_runs": {"resets": (*_RANKING_ROWS, *_TASK_ROWS)},
    "sort": {
        "choices": tuple(RANKING_SORTS),
        "describe": lambda sort: RANKING_SORTS[str(sort)],
        "resets": _RANKING_ROWS,
    },
    "answers_task": {"choices": TASK_IDS, "describe": _task_abbrev},
    "answers_prompt": {"normalise": _answers_prompt},
    "metrics": {"choices": _values(*MetricSet), "describe": lambda m: MetricSet(str(m)).label},
    "avg_tasks": {
        "choices": TASK_IDS,
        "normalise": _suite_order,
        "describe": lambda tasks: ", ".join(tasks) or "none (no custom average)",
        "resets": _RANKING_ROWS,
    },
    "complete": {"resets": _RANKING_ROWS},
    "kinds": {"choices": MODEL_KINDS, "resets": _RANKING_ROWS},
    "org_best": {"resets": _RANKING_ROWS},
}

#: The Evalita tabs' ``url_fields``, in the order a link writes them.
URL_FIELDS: Mapping[str, UrlField] = MappingProxyType(
    {f.name: UrlField(f.default, **_SPECS.get(f.name, {})) for f in fields(EvalitaLink)}
)
