"""Evalita's per-item extraction: the right metric per harness task, records → TaskItems."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
import yaml

from leaderboard.core.items import ItemId
from leaderboard.tracks.evalita.definition import SUITE, TASK_IDS, TASKS, all_harness_tasks
from leaderboard.tracks.evalita.uncertainty import (
    EVALITA_KINDS,
    EVALITA_METRICS,
    evalita_run_items,
    evalita_task_items,
)

lm_eval_tasks = pytest.importorskip("lm_eval.tasks")
EVALITA_DIR = Path(lm_eval_tasks.__file__).parent / "evalita_llm"


class _Loader(yaml.SafeLoader):
    pass


_Loader.add_constructor("!function", lambda loader, node: loader.construct_scalar(node))


def harness_configs() -> dict[str, dict[str, Any]]:
    """Every Evalita harness task's config, its template merged in (as the harness includes it)."""
    configs = {}
    for path in EVALITA_DIR.glob("_evalita-*.yaml"):
        config = yaml.load(path.read_text(), Loader=_Loader)
        if not isinstance(config.get("task"), str):
            continue
        if "include" in config:
            config = {**yaml.load((EVALITA_DIR / config["include"]).read_text(), Loader=_Loader), **config}
        configs[config["task"]] = config
    return configs


def test_every_harness_task_is_aggregated_as_its_kind_reproduces():
    configs = harness_configs()
    checked = 0
    for task in SUITE:
        metric = EVALITA_METRICS[task.id]
        assert metric.kind.name in EVALITA_KINDS
        for prompt in task.prompts:
            for harness in prompt.harness_tasks:
                listed = {m["metric"]: m.get("aggregation") for m in configs[harness.name]["metric_list"]}
                assert listed[task.metric] == metric.harness_aggregation, harness.name
                assert metric.sample_key == task.metric
                checked += 1
    assert checked == len(all_harness_tasks()) == 48


def test_every_suite_task_has_a_metric():
    assert tuple(EVALITA_METRICS) == TASK_IDS


def records(values: list[Any], key: str) -> list[dict[str, Any]]:
    return [{"doc_id": i, key: v, "target": "…"} for i, v in enumerate(values)]


def test_ner_records_become_one_task_with_three_parts():
    ner = TASKS["ner"]
    samples = {
        h.name: records([([0], [0])] * (2 + i), "f1")
        for p in ner.prompts
        for i, h in enumerate(p.harness_tasks)
    }
    items = evalita_task_items(ner, samples)
    assert items.parts == ("adg", "fic", "wn") and items.n_items == 2 + 3 + 4
    assert items.item_ids()[:3] == (ItemId("adg", 0), ItemId("adg", 1), ItemId("fic", 0))


def test_a_task_with_a_prompt_without_records_has_no_items():
    te = TASKS["te"]
    samples = {p.harness_task_names[0]: records([1.0, 0.0], "acc") for p in te.prompts[:-1]}
    assert evalita_task_items(te, samples) is None
    run = evalita_run_items(samples)
    assert dict(run.tasks) == {}


def test_a_repeated_doc_id_or_a_missing_value_is_refused():
    te = TASKS["te"]
    samples = {p.harness_task_names[0]: records([1.0, 0.0], "acc") for p in te.prompts}
    first = te.prompts[0].harness_task_names[0]
    with pytest.raises(ValueError, match="twice"):
        evalita_task_items(te, {**samples, first: samples[first] * 2})
    with pytest.raises(ValueError, match="'acc'"):
        evalita_task_items(te, {**samples, first: [{"doc_id": 0}]})
    with pytest.raises(ValueError, match="number"):
        evalita_task_items(te, {**samples, first: records(["yes"], "acc")})
