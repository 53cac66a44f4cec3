"""One results snapshot with its tables computed once (:class:`Board`): what every view reads."""

from __future__ import annotations

import threading
from collections import OrderedDict
from collections.abc import Callable, Hashable
from dataclasses import dataclass, field
from typing import Any, Protocol, TypeVar

import pandas as pd

from eval_queue.vocabulary import RunRef
from leaderboard.store import StoreResults
from leaderboard.tracks.evalita.app import tables
from leaderboard.tracks.evalita.app.records import LoadedResults, evalita_results
from leaderboard.tracks.evalita.app.tables import RANK_COLUMN
from leaderboard.tracks.evalita.definition import SUITE, TRACK
from leaderboard.tracks.evalita.metric_sets import DEFAULT_METRIC_SET, MetricSet
from leaderboard.tracks.evalita.vocabulary import FEWSHOT_SETTINGS

T = TypeVar("T")
#: Views a snapshot keeps (the oldest computed is dropped first).
MEMO_SIZE = 128
#: Groups of views a snapshot keeps apart from :data:`MEMO_SIZE`'s, the latest asked (the oldest
#: asked is dropped whole).  A custom average's task set is one group: its setting rows and views
#: (~10 MB at 10,000 runs) serve the few visitors who pick that set, while the standard views most
#: visitors share stay in the main memo; a dropped set is computed again if asked (~0.6 s).
MEMO_GROUPS = 2


@dataclass
class Board:
    """One snapshot of the results with its ranking tables computed once, on first use.

    The app keeps one per results version; every view of that version reuses its tables,
    so a filter change costs a filter, not a re-scoring.  A board shows one metric set (that of
    ``loaded``); :meth:`with_metrics` gives the same snapshot's board of another set, built
    once, through the same tables.
    """

    loaded: LoadedResults
    #: The boards of this snapshot by metric set, shared by all of them (this one included).
    _family: dict[MetricSet, Board] = field(default_factory=dict, repr=False)
    #: Tables computed once per snapshot (rankings, prompt tables, choices), by key.
    _tables: dict[tuple, object] = field(default_factory=dict, repr=False)
    #: Keys of ``_tables`` being computed: a second caller waits for the first's result.
    _computing: dict[tuple, threading.Event] = field(default_factory=dict, repr=False)
    _memo: dict[tuple, object] = field(default_factory=dict, repr=False)
    #: Views kept by group (:meth:`memo`'s ``group``), the latest asked group last.
    _grouped: OrderedDict[Hashable, dict[tuple, object]] = field(default_factory=OrderedDict, repr=False)
    #: Guards the dictionaries only: no computation runs under it (a visitor's lookup never
    #: waits for the warm-up's ranking of another setting).
    _lock: threading.Lock = field(default_factory=threading.Lock, repr=False)

    def __post_init__(self) -> None:
        self._family.setdefault(self.loaded.metric_set, self)

    @classmethod
    def of_store(cls, store: StoreResults) -> Board:
        """The Evalita board of one read of the results store (the track's ``snapshot``)."""
        return cls(evalita_results(store))

    @property
    def metrics(self) -> MetricSet:
        """The metric set of every score on this board."""
        return self.loaded.metric_set

    def with_metrics(self, metrics: MetricSet | str) -> Board:
        """This snapshot's board in metric set ``metrics`` (built on first use, then kept)."""
        metrics = MetricSet(metrics)
        with self._lock:
            board = self._family.get(metrics)
        if board is None:
            board = Board(self.loaded.for_metric_set(metrics), self._family)
            with self._lock:
                board = self._family.setdefault(metrics, board)
        return board

    @property
    def runs(self) -> pd.DataFrame:
        return self.loaded.runs

    @property
    def scores(self) -> pd.DataFrame:
        return self.loaded.scores

    @property
    def problems(self) -> list:
        return self.loaded.problems

    def rows(self, num_fewshot: int) -> pd.DataFrame:
        """Every run of one setting (comparable or not), with ``_rank`` among comparable runs.

        One :func:`tables.ranking_table` call: it ranks comparable runs only, so its rank is
        the rank of the comparable-only table (a sample or limited run never takes a place).
        """

        def compute() -> pd.DataFrame:
            rows = tables.ranking_table(self.loaded, num_fewshot, include_noncomparable=True)
            rows["comparable"] = (
                rows["comparable"].fillna(False).astype(bool)
            )  # a bool column even when empty
            return rows.rename(columns={RANK_COLUMN: "_rank"})

        return self._once(("rows", num_fewshot), compute)

    def prompt_rows(self, task_id: str, num_fewshot: int, include_noncomparable: bool) -> pd.DataFrame:
        """``tables.prompt_table`` of this snapshot, computed once per (task, setting, scope)."""
        return self._once(
            ("prompts", task_id, num_fewshot, include_noncomparable),
            lambda: tables.prompt_table(self.loaded, task_id, num_fewshot, include_noncomparable),
        )

    def choices(self) -> list[tuple[str, str]]:
        """:func:`run_choices`, computed once per snapshot."""
        return self._once(("choices",), lambda: _run_choices(self.runs))

    def _once(self, key: tuple, compute: Callable[[], T]) -> T:
        """``compute()`` once per snapshot and ``key``, outside the lock: a caller asking for a
        table being computed waits for that computation (one flight per key), a caller asking
        for another table does not wait at all."""
        while True:
            with self._lock:
                if key in self._tables:
                    return self._tables[key]  # type: ignore[return-value]
                running = self._computing.get(key)
                if running is None:
                    running = self._computing[key] = threading.Event()
                    break
            running.wait()  # then read its result (or compute it, if that computation failed)
        try:
            value = compute()
            with self._lock:
                self._tables[key] = value
            return value
        finally:
            with self._lock:
                del self._computing[key]
            running.set()

    def choice_keys(self) -> frozenset[str]:
        """The keys of :meth:`choices`, as a set (a link's run is checked against it)."""
        return self.memo(("choice keys",), lambda: frozenset(key for _, key in self.choices()))

    def memo(self, key: tuple, compute: Callable[[], T], group: Hashable | None = None) -> T:
        """``compute()`` once per snapshot and ``key`` (a view of this snapshot: it never changes).

        Computed outside the lock (two visitors may both compute it once; either result is the same).
        ``group``: the view is kept with its group's (a custom average's task set), and only the
        :data:`MEMO_GROUPS` latest asked groups are kept: a view of a dropped group is computed
        again, the same (the views most visitors share never leave for a rare one's sake).
        """
        with self._lock:
            memo = self._memo if group is None else self._grouped.get(group)
            if memo is not None:
                if group is not None:
                    self._grouped.move_to_end(group)
                if key in memo:
                    return memo[key]  # type: ignore[return-value]
        value = compute()
        with self._lock:
            if group is not None:
                memo = self._grouped.get(group)
                if memo is None:
                    memo = self._grouped[group] = {}
                    while len(self._grouped) > MEMO_GROUPS:
                        self._grouped.popitem(last=False)
                self._grouped.move_to_end(group)
                return memo.setdefault(key, value)  # type: ignore[return-value]
            while len(self._memo) >= MEMO_SIZE:  # searches as they are typed: keep the latest views
                del self._memo[next(iter(self._memo))]
            return self._memo.setdefault(key, value)  # type: ignore[return-value]

    def warm(self) -> None:
        """Compute the ranking tables of both settings now (off the request path), then the
        prompt side of every task as the task tab first shows it, then the tidy scores frame
        the task and model pages filter (built on first use), then the other metric set's rankings."""
        for num_fewshot in FEWSHOT_SETTINGS:
            self.rows(num_fewshot)
        for num_fewshot in FEWSHOT_SETTINGS:
            # As the task tab first shows it: non-comparable runs only when nothing else is there.
            include = not bool(self.rows(num_fewshot)["comparable"].any())
            for task in SUITE:
                self.prompt_rows(task.id, num_fewshot, include)
        self.choices()
        _ = self.scores
        for metrics in MetricSet:  # the other set's rankings too: the switch answers at once
            for num_fewshot in FEWSHOT_SETTINGS:
                self.with_metrics(metrics).rows(num_fewshot)


def _run_choices(runs: pd.DataFrame) -> list[tuple[str, str]]:
    if runs.empty:
        return []
    refs = runs[list(RunRef.COLUMNS)].drop_duplicates().sort_values(list(RunRef.COLUMNS))
    counts = refs["model"].value_counts()
    choices = []
    for model, revision, precision in refs.itertuples(index=False):
        ref = RunRef(str(model), str(revision), str(precision))
        label = ref.model if counts[model] == 1 else f"{ref.model} @ {ref.short_revision} · {ref.precision}"
        choices.append((label, ref.key))
    return choices


class _Snapshots(Protocol):
    def snapshot(self, track: str) -> Any: ...


def current_board(ctx: _Snapshots, metrics: MetricSet | str = DEFAULT_METRIC_SET) -> Board:
    """The Evalita board of the app's latest read of the store (``AppContext.snapshot``), in
    metric set ``metrics``."""
    board: Board = ctx.snapshot(TRACK)
    return board.with_metrics(metrics)
