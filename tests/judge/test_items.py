"""Judging generations: the units come from a run's published SUM details, the article recovered from the prompt."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from backend.tracks.judge.data import read_judged_run, write_harness_tasks
from eval_queue.settings import Settings
from eval_queue.storage import Stores, open_stores
from leaderboard.core.schema import ModelInfo, RunInfo
from leaderboard.tracks.evalita.definition import get_task
from leaderboard.tracks.evalita.schema import DetailRecord, PromptScore, ResultsFile, TaskResult
from leaderboard.tracks.judge.data import JudgeDataError, load_annotated_set
from leaderboard.tracks.judge.definition import Criterion, harness_task_name
from leaderboard.tracks.judge.items import (
    document_from_input,
    generation_units,
    harness_row,
    meta_units,
    parse_generation_item,
    template_pattern,
)
from leaderboard.tracks.judge.rubric import CRITERIA

SUM = get_task("sum")
ARTICLE = "Il sindaco ha detto: 'basta code'.\nLa linea 4 cambierà percorso per sei settimane."
OTHER = "Un altro articolo, usato come esempio."


def _rendered(prompt_id: str, source: str) -> str:
    return SUM.prompt(prompt_id).template.replace("{{source}}", source)


def test_the_article_is_recovered_from_either_sum_prompt() -> None:
    for prompt in SUM.prompts:
        record = DetailRecord(doc_id=3, input=_rendered(prompt.id, ARTICLE), answer="Sintesi.", target="t")

        units = generation_units("sum", prompt.id, [record])

        assert [u.criterion for u in units] == list(CRITERIA)
        assert {u.document for u in units} == {ARTICLE}
        assert {u.summary for u in units} == {"Sintesi."}
        assert units[0].item == f"sum/{prompt.id}/3" and units[0].human is None
        assert parse_generation_item(units[0].item) == ("sum", prompt.id, 3)


def test_with_few_shot_examples_in_the_prompt_the_last_article_is_the_one_judged() -> None:
    five_shot = "\n\n".join(
        [_rendered("p1", OTHER) + " Esempio di riassunto."] * 5 + [_rendered("p1", ARTICLE)]
    )
    record = DetailRecord(doc_id=0, input=five_shot, answer="Sintesi.", target="t")

    [unit] = generation_units("sum", "p1", [record], criteria=[Criterion.RELEVANCE])

    assert unit.document == ARTICLE


def test_an_input_the_template_does_not_match_is_judged_whole() -> None:
    record = DetailRecord(doc_id=0, input="Testo libero senza modello.", answer="x", target="t")

    [unit] = generation_units("sum", "p1", [record], criteria=[Criterion.FLUENCY])

    assert unit.document == "Testo libero senza modello."


def test_any_generative_task_can_be_judged_but_not_a_multiple_choice_one() -> None:
    record = DetailRecord(doc_id=1, input="Frase: Roma è bella.", answer="Roma$LOC", target="t")

    [unit] = generation_units("ner", "p1", [record], criteria=[Criterion.FLUENCY])
    assert unit.document == "Frase: Roma è bella."
    with pytest.raises(ValueError, match="not generative"):
        generation_units("te", "p1", [record])


def test_template_patterns_capture_only_the_named_field() -> None:
    pattern = template_pattern("A {{x}} B {{y}} C", "y")

    assert pattern is not None
    assert document_from_input("A 1 B 2 C", [pattern]) == "2"
    assert template_pattern("A {{x}} B", "y") is None


def test_a_harness_row_carries_the_rendered_prompt_and_what_maps_the_answer_back() -> None:
    unit = meta_units(load_annotated_set("sample"))[0]

    row = harness_row(unit)

    assert row["item"] == unit.item and row["criterion"] == unit.criterion.value
    assert row["human"] == unit.human and row["target"] == str(unit.human)
    assert unit.document.strip() in row["prompt"] and unit.summary.strip() in row["prompt"]


def test_the_harness_tasks_are_one_yaml_and_one_jsonl_per_criterion(tmp_path: Path) -> None:
    units = meta_units(load_annotated_set("sample"))

    prepared = write_harness_tasks(units, tmp_path)

    assert prepared.task_names == tuple(harness_task_name(c) for c in CRITERIA)
    for criterion in CRITERIA:
        lines = (prepared.include_path / f"{criterion.value}.jsonl").read_text(encoding="utf-8").splitlines()
        assert len(lines) == prepared.units[criterion] == 20
        assert {json.loads(line)["criterion"] for line in lines} == {criterion.value}
        config = (prepared.include_path / f"{harness_task_name(criterion)}.yaml").read_text(encoding="utf-8")
        assert "_judge_template_yaml" in config and f"{criterion.value}.jsonl" in config


# --------------------------------------------------------------------------- a published run


def _publish_sum_run(stores: Stores, *, details: bool = True) -> str:
    folder = "org/model/2026-11-22T11-00-00Z_bfloat16_0shot"
    results = ResultsFile(
        model=ModelInfo(id="org/model", revision="a" * 40, precision="bfloat16"),
        run=RunInfo(num_fewshot=0, data="sample", limit=2, details_path=folder),
        tasks={"sum": TaskResult(metric="rouge1", prompts={"p1": PromptScore(score=0.2, n=2)})},
    )
    path = "org/model/results_2026-11-22T11-00-00Z_bfloat16_0shot.json"
    stores.results.write(path, results.to_json())
    if details:
        for prompt in SUM.prompts:
            lines = [
                DetailRecord(
                    doc_id=i,
                    input=_rendered(prompt.id, f"Articolo {i}."),
                    answer=f"Riassunto {i}.",
                    target="t",
                )
                for i in range(2)
            ]
            data = "\n".join(line.model_dump_json() for line in lines) + "\n"
            stores.details.write(f"{folder}/sum_{prompt.id}.jsonl", data.encode())
    return path


def test_a_published_sum_run_becomes_units_for_every_prompt_output_and_criterion(tmp_path: Path) -> None:
    stores = open_stores(Settings(data_dir=tmp_path))
    target = _publish_sum_run(stores)

    judged, units = read_judged_run(stores.results, stores.details, target, "sum")

    assert (judged.model, judged.data, judged.limit, judged.num_fewshot) == ("org/model", "sample", 2, 0)
    assert judged.details_path.endswith("_0shot")
    assert len(units) == 2 * 2 * len(CRITERIA)
    assert {u.document for u in units} == {"Articolo 0.", "Articolo 1."}
    only_p2 = read_judged_run(stores.results, stores.details, target, "sum", ["p2"], [Criterion.ORDERING])[1]
    assert [u.item for u in only_p2] == ["sum/p2/0", "sum/p2/1"]


def test_a_missing_run_missing_details_or_a_wrong_task_is_a_clear_error(tmp_path: Path) -> None:
    stores = open_stores(Settings(data_dir=tmp_path))
    target = _publish_sum_run(stores, details=False)

    with pytest.raises(JudgeDataError, match="not in the results store"):
        read_judged_run(stores.results, stores.details, "org/none/results_x.json", "sum")
    with pytest.raises(JudgeDataError, match=r"no details file .*sum_p1\.jsonl"):
        read_judged_run(stores.results, stores.details, target, "sum")
    with pytest.raises(JudgeDataError, match="multiple choice"):
        read_judged_run(stores.results, stores.details, target, "te")


def test_a_hub_annotated_set_missing_from_the_offline_cache_is_a_clear_error(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    import datasets

    from backend.tracks.judge.data import hub_rows_from_cache

    monkeypatch.setattr(datasets.config, "HF_DATASETS_CACHE", tmp_path)
    monkeypatch.setattr(datasets.config, "HF_HUB_OFFLINE", True)

    with pytest.raises(JudgeDataError, match=r"not available.*datasets cache"):
        load_annotated_set("hub:evalita-tests/no-such-set", hub_rows=hub_rows_from_cache)
