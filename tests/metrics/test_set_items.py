"""The as-specified set's per-item statistics aggregate to exactly what its scorers compute.

Every task of the set (its six own metrics and the four it takes from lm-eval) has per-item
sufficient statistics (``TaskMetric.item_stats``) and a metric kind that aggregates their sums
(``leaderboard.tracks.evalita.uncertainty``).  Checked per task, through the bootstrap engine
itself: the observed items give the scorer's number bit for bit, and each resample gives the
scorer's number on the resampled records (to 1e-12: the engine sums non-integer statistics in
another order).  The records are a synthetic store's details (every prompt, three runs) and,
for NER, RE and LS, the corner cases the module defines.
"""

from __future__ import annotations

from collections.abc import Sequence
from functools import cache
from pathlib import Path

import numpy as np
import pytest

from leaderboard.core.items import NO_PART, ItemId, TaskItems
from leaderboard.core.uncertainty import BootstrapConfig, DrawCache, bootstrap_task
from leaderboard.tracks.evalita.definition import SUITE, TASKS
from leaderboard.tracks.evalita.metric_sets import METRIC_SETS, MetricSet, prompt_score
from leaderboard.tracks.evalita.schema import DetailRecord, details_file_name, parse_details
from leaderboard.tracks.evalita.uncertainty import EVALITA_KINDS
from tests.support.synthetic.details import write_synthetic_store

SPEC = METRIC_SETS[MetricSet.AS_SPECIFIED]
RESAMPLES = BootstrapConfig(n_resamples=6)


def _items(
    task_id: str, prompt_id: str, records: Sequence[DetailRecord]
) -> tuple[TaskItems, list[DetailRecord]]:
    """The records' per-item statistics as the engine's items, and the records in item order."""
    task, metric = TASKS[task_id], SPEC.metric_of(task_id)
    assert metric.item_stats is not None and metric.kind is not None, task_id
    harness = task.prompt(prompt_id).harness_tasks
    per_item, by_id = {}, {}
    for h in harness:
        part = [r for r in records if getattr(r, "part", None) == h.part]
        for record, stats in zip(part, metric.item_stats(part), strict=True):
            key = ItemId(h.part or NO_PART, record.doc_id)
            per_item[key], by_id[key] = stats, record
    items = TaskItems.build(
        task_id, metric.kind, {prompt_id: per_item}, parts=[h.part or NO_PART for h in harness]
    )
    return items, [by_id[key] for key in items.item_ids()]


def _check(task_id: str, prompt_id: str, records: Sequence[DetailRecord]) -> None:
    task, metric = TASKS[task_id], SPEC.metric_of(task_id)
    items, ordered = _items(task_id, prompt_id, records)
    boot = bootstrap_task(items, EVALITA_KINDS, RESAMPLES)
    expected = prompt_score(task.prompt(prompt_id), metric, records).score
    assert float(boot.prompt_scores[0]) == expected, (task_id, prompt_id)
    for b, row in enumerate(DrawCache(1).get(RESAMPLES, items).indices):
        resampled = [ordered[i] for i in row]
        again = prompt_score(task.prompt(prompt_id), metric, resampled).score
        assert again is not None
        assert boot.prompt_draws[0, b] == pytest.approx(again, abs=1e-12, rel=0), (task_id, prompt_id, b)


@cache
def _store(root: Path) -> Path:
    write_synthetic_store(root, n_models=2, items=25)
    return root


@pytest.fixture(scope="module")
def store(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return _store(tmp_path_factory.mktemp("set-items"))


@pytest.mark.parametrize("task_id", [task.id for task in SUITE])
def test_the_per_item_statistics_aggregate_to_the_as_specified_score(store: Path, task_id: str) -> None:
    folders = sorted({p.parent for p in (store / "details").rglob(f"{task_id}_p1.jsonl")})
    assert len(folders) == 4
    for folder in folders:
        for prompt in TASKS[task_id].prompts:
            data = (folder / details_file_name(task_id, prompt.id)).read_bytes()
            _check(task_id, prompt.id, parse_details(data, task_id))


def _gen(doc_id: int, answer: str, gold: list, part: str | None = None) -> DetailRecord:
    record = DetailRecord(doc_id=doc_id, input="x", answer=answer, target="-", gold=gold)
    return record.model_copy(update={"part": part}) if part else record


def _ner(cases: list[tuple[str, list]]) -> list[DetailRecord]:
    # The same documents in each domain (the prompt score weighs the three).
    return [
        _gen(i, answer, gold, part) for part in ("adg", "fic", "wn") for i, (answer, gold) in enumerate(cases)
    ]


@pytest.mark.parametrize(
    "records",
    [
        # No gold entity and no span anywhere: 1; no gold and only invalid spans: 0.
        _ner([("&&NOENT&&", []), ("", [])]),
        _ner([("la città, Milano$LUOGO", []), ("&&NOENT&&", [])]),
        # Invalid spans count against every averaged type; a repeated name is one tp, one fp.
        _ner(
            [
                ("Roma$LOC, Mario Rossi$PER, la città, ieri", [["Roma", "LOC"], ["Mario Rossi", "PER"]]),
                ("Roma$LOC, Roma$LOC", [["Roma", "LOC"]]),
                ("Fiat$PER", [["Fiat", "ORG"]]),
            ]
        ),
    ],
    ids=["empty", "only-invalid", "mixed"],
)
def test_ner_corner_cases(records: list[DetailRecord]) -> None:
    _check("ner", "p1", records)


@pytest.mark.parametrize(
    ("task_id", "records"),
    [
        ("re", [_gen(0, "&&NOREL&&", []), _gen(1, "&&NOREL&&", [])]),  # nothing to find, nothing named: 1
        (
            "re",
            [_gen(0, "1 mg$TC%1 mg$TC", [["1 mg", "TC"]]), _gen(1, "", [["2 mg", "TC"]]), _gen(2, "x", [])],
        ),
        (
            "ls",
            [
                _gen(0, "pieno, pieno", [["pieno", 3], ["colmo", 1]]),
                _gen(1, "colmo", [["pieno", 3], ["colmo", 1]]),
            ],
        ),
        ("ls", [_gen(0, "", [["pieno", 3]]), _gen(1, "vuoto", [])]),
    ],
    ids=["re-empty", "re-mixed", "ls-duplicates", "ls-unanswered"],
)
def test_relations_and_substitutes_corner_cases(task_id: str, records: list[DetailRecord]) -> None:
    _check(task_id, "p1", records)


def test_a_wrong_kind_is_caught() -> None:
    """The check can fail: the same statistics read as lm-eval's NER kind give another number."""
    records = _ner([("Roma$LOC, la città", [["Roma", "LOC"], ["Mario Rossi", "PER"]])])
    items, _ = _items("ner", "p1", records)
    stats = items.stats[:, 0]
    right = EVALITA_KINDS.get("evalita_ner_entities").aggregate(stats.sum(axis=0), len(stats))
    wrong = EVALITA_KINDS.get("f1_macro").aggregate(stats.sum(axis=0)[:6], len(stats))
    assert right == prompt_score(TASKS["ner"].prompt("p1"), SPEC.metric_of("ner"), records).parts["adg"]
    assert not np.isclose(right, wrong)
