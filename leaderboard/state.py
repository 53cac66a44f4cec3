"""The page state: one typed value for everything a shared link restores.

``PageState.from_query`` reads the query parameters the browser sent.  A value no control
accepts (a stale or hand-edited link: an unknown task, setting, sort, filter or tab) falls
back to the default and is reported as a :class:`Notice` the page shows; it is never an
error.  ``PageState.to_query`` writes the state back, leaving out what equals the default,
so a plain address stays plain.  ``with_value`` applies one control's new value.

The run keys in ``model`` and ``models`` can only be checked against the loaded results:
the tabs that show them do that, with the same kind of notice.
"""

from __future__ import annotations

from collections.abc import Callable, Collection, Mapping, Sequence
from dataclasses import dataclass, fields, replace
from urllib.parse import urlencode

from eval_queue.requests import ModelType, Precision
from eval_queue.vocabulary import RANKING_AGGREGATES, RUN_SETTINGS, Aggregate, Setting
from leaderboard.tracks.evalita.app.views.labels import SIZE_BUCKETS
from leaderboard.tracks.evalita.app.views.ranking import DEFAULT_SORT, RANKING_SORTS
from leaderboard.tracks.evalita.app.views.subsets import MODEL_KINDS
from leaderboard.tracks.evalita.definition import SUITE, TASK_IDS, TASKS
from leaderboard.tracks.evalita.metric_sets import DEFAULT_METRIC_SET, MetricSet
from leaderboard.views.common import md_text

DEFAULT_TAB = "ranking"
MAX_CHOSEN_MODELS = 6
MAX_SEARCH = 200
#: How much of an unusable link value a notice repeats (a link can carry anything, at any length).
MAX_ECHO = 80


@dataclass(frozen=True)
class Notice:
    """A value of a link that was not used, and what is shown instead (plain text; escaped when shown)."""

    field: str
    given: str
    used: str

    @property
    def text(self) -> str:
        given = self.given if len(self.given) <= MAX_ECHO else self.given[: MAX_ECHO - 1] + "…"
        return f"The link's {self.field} “{given}” is unknown: showing {self.used} instead."


@dataclass(frozen=True)
class UrlField:
    """A link field a tab owns beyond :class:`PageState`'s own (e.g. a track's context setting).

    ``choices=None``: the values come from the data (a run key, the data sets a
    track's runs used), so any printable text (at most :data:`MAX_SEARCH` characters) is kept and the tab
    checks it against what it shows when it renders, with a notice of its own.
    """

    default: str
    choices: tuple[str, ...] | None

    def accepts(self, raw: str) -> bool:
        if self.choices is None:
            return len(raw) <= MAX_SEARCH and raw.isprintable()
        return raw in self.choices


def _values(*items: object) -> tuple[str, ...]:
    return tuple(str(getattr(item, "value", item)) for item in items)


#: The values each choice field accepts (the query and the controls share them).
_CHOICES: Mapping[str, Callable[[], Collection[str]]] = {
    "setting": lambda: _values(*Setting),
    "shots": lambda: _values(*RUN_SETTINGS),
    "task": lambda: TASK_IDS,
    "answers_task": lambda: TASK_IDS,
    "sort": lambda: tuple(RANKING_SORTS),
    "types": lambda: _values(*ModelType),
    "sizes": lambda: tuple(bucket.label for bucket in SIZE_BUCKETS),
    "precisions": lambda: _values(*Precision),
    "columns": lambda: _values(*RANKING_AGGREGATES),
    "metrics": lambda: _values(*MetricSet),
    "avg_tasks": lambda: TASK_IDS,
    "kinds": lambda: MODEL_KINDS,
}


@dataclass(frozen=True)
class PageState:
    """Everything a shared link restores: tab, settings, task, chosen models, filters, sort, page."""

    tab: str = DEFAULT_TAB
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
    #: Fields owned by tabs beyond these (:class:`UrlField`), as sorted (name, value) pairs.
    extra: tuple[tuple[str, str], ...] = ()

    # -- reading a link -------------------------------------------------------------------

    @classmethod
    def from_query(
        cls,
        params: Mapping[str, str],
        *,
        tabs: Collection[str] = (DEFAULT_TAB,),
        extra_fields: Mapping[str, UrlField] | None = None,
    ) -> tuple[PageState, list[Notice]]:
        """The state a link asks for, and a notice for every value that could not be used."""
        notices: list[Notice] = []
        state = cls()
        changes: dict[str, object] = {}
        for f in fields(cls):
            raw = params.get(f.name)
            if raw is None or f.name == "extra":
                continue
            value, rejected = _parse(f.name, getattr(state, f.name), raw, tabs)
            changes[f.name] = value
            if rejected:
                used = _describe(f.name, getattr(state, f.name))
                notices.append(Notice(f.name, ", ".join(rejected), used))
        extra = []
        for name, spec in (extra_fields or {}).items():
            raw = params.get(name)
            if raw is None:
                continue
            if spec.accepts(raw):
                extra.append((name, raw))
            else:
                notices.append(Notice(name, raw, spec.default))
        state = replace(state, **changes, extra=tuple(sorted(extra)))  # type: ignore[arg-type]
        return state.normalised(), notices

    def normalised(self) -> PageState:
        """Keep the dependent fields consistent (the answers' prompt belongs to the answers' task)."""
        task = TASKS[self.answers_task]
        prompt = self.answers_prompt if self.answers_prompt in task.prompt_ids else task.prompt_ids[0]
        return replace(self, answers_prompt=prompt, models=self.models[:MAX_CHOSEN_MODELS])

    # -- a control's new value ----------------------------------------------------------------

    def with_value(self, name: str, raw: object) -> PageState:
        """This state with one field set from a control's value (a value no control offers is
        ignored: controls only offer valid ones).  The page number returns to 1 when the rows change."""
        if name in {f.name for f in fields(self)}:
            value, _ = _parse(name, getattr(self, name), raw, (self.tab,))
            changed = replace(self, **{name: value})
        else:  # a tab's field; an emptied control (None, "") leaves it unset
            extra = {k: v for k, v in self.extra if k != name}
            if raw is not None and str(raw) != "":
                extra[name] = str(raw)
            changed = replace(self, extra=tuple(sorted(extra.items())))
        if name in _RESETS_PAGE:
            changed = replace(changed, ranking_page=1)
        if name in _RESETS_TASK_PAGE:
            changed = replace(changed, task_page=1)
        return changed.normalised()

    def get(self, name: str) -> object:
        """A field's value (its own fields, or a tab's :class:`UrlField` as a string, ``None`` if unset)."""
        if name in {f.name for f in fields(self)}:
            return getattr(self, name)
        return dict(self.extra).get(name)

    def control_value(self, name: str) -> object:
        """What the control bound to ``name`` shows for this state (lists for tuples, strings for enums)."""
        value = self.get(name)
        if isinstance(value, tuple):
            return [str(getattr(item, "value", item)) for item in value]
        if isinstance(value, Setting):
            return value.value
        return value

    # -- writing a link -------------------------------------------------------------------

    def to_query(self) -> str:
        default = PageState()
        pairs: list[tuple[str, str]] = []
        for f in fields(self):
            value = getattr(self, f.name)
            if f.name == "extra" or value == getattr(default, f.name):
                continue
            if isinstance(value, bool):
                pairs.append((f.name, "1" if value else "0"))
            elif isinstance(value, tuple):
                pairs.append((f.name, ",".join(str(getattr(v, "value", v)) for v in value)))
            else:
                pairs.append((f.name, str(getattr(value, "value", value))))
        pairs.extend(self.extra)
        return urlencode(pairs, safe=",/|")


# Changing these changes which rows the ranking (or the task table) lists: back to page 1.
_RESETS_PAGE = frozenset(
    {
        "setting",
        "types",
        "sizes",
        "precisions",
        "search",
        "all_runs",
        "sort",
        "avg_tasks",
        "complete",
        "kinds",
        "org_best",
    }
)
_RESETS_TASK_PAGE = frozenset({"task", "shots", "all_runs"})


def _split(value: object) -> tuple[str, ...]:
    if isinstance(value, list | tuple):
        return tuple(str(part) for part in value)
    return tuple(part for part in str(value).split(",") if part)


def _parse(name: str, default: object, raw: object, tabs: Collection[str]) -> tuple[object, list[str]]:
    """``raw`` (a query string or a control's value) as the type of ``default``, and what was rejected."""
    if isinstance(default, bool):
        return (raw if isinstance(raw, bool) else str(raw).lower() in {"1", "true", "yes"}), []
    if isinstance(default, int):
        try:
            return max(1, int(str(raw))), []
        except ValueError:
            return default, [str(raw)]
    allowed = tabs if name == "tab" else (_CHOICES[name]() if name in _CHOICES else None)
    if isinstance(default, tuple):
        parts = _split(raw)
        if allowed is None:
            return parts, []
        kept = tuple(part for part in parts if part in allowed)
        rejected = [part for part in parts if part not in allowed]
        if name == "columns":
            return (tuple(Aggregate(part) for part in kept) or default), rejected
        if name == "avg_tasks":  # suite order, each once: one state per set of tasks
            return tuple(str(t) for t in TASK_IDS if t in kept), rejected
        return kept, rejected
    text = str(raw if raw is not None else "").strip()
    if allowed is not None and text not in allowed:
        return default, [text]
    if isinstance(default, Setting):
        return Setting(text), []
    return (text[:MAX_SEARCH] if name == "search" else text), []


def _describe(name: str, default: object) -> str:
    if isinstance(default, Setting):
        return default.label
    if name in ("task", "answers_task"):
        return TASKS[str(default)].abbrev
    if name == "sort":
        return RANKING_SORTS[str(default)]
    if name == "metrics":
        return MetricSet(str(default)).label
    if name == "avg_tasks":
        return "the other tasks picked (none: no custom average)"
    if isinstance(default, tuple):
        return ", ".join(str(getattr(v, "value", v)) for v in default) or "all"
    return str(default)


def notices_markdown(notices: Sequence[Notice]) -> str:
    """The notices as one escaped Markdown line (empty when there is none)."""
    return " ".join(f"⚠️ {md_text(notice.text)}" for notice in notices)
