"""The rubric is the one definition: prompts, task config, About text all derive from it."""

from __future__ import annotations

from pathlib import Path

import pytest
import yaml

from leaderboard.tracks.judge import definition
from leaderboard.tracks.judge.app.about import about_markdown
from leaderboard.tracks.judge.definition import (
    EXPLANATION_KEY,
    SCORE_KEY,
    SCORES,
    Criterion,
    JudgeMode,
    UnknownCriterionError,
    harness_task_name,
    judge_variant,
    parse_criterion,
)
from leaderboard.tracks.judge.harness.hooks import process_results
from leaderboard.tracks.judge.items import ANSWER_PREFIX_FIELD, JudgeUnit, harness_row
from leaderboard.tracks.judge.parse import parse_answer
from leaderboard.tracks.judge.prompts import (
    ANSWER_PREFIX,
    MAX_ANSWER_TOKENS,
    STOP_SEQUENCES,
    FewShotExample,
    judge_answer,
    render_prompt,
)
from leaderboard.tracks.judge.rubric import CRITERIA, RUBRIC

TEMPLATE = Path(definition.__file__).parent / "harness" / "_judge_template_yaml"


class _FunctionTag(yaml.SafeLoader):
    """Reads ``!function`` tags as plain strings (what lm-eval resolves to a callable)."""


_FunctionTag.add_constructor("!function", lambda loader, node: f"!function {loader.construct_scalar(node)}")


def test_the_rubric_has_the_five_criteria_of_the_paper_in_order() -> None:
    assert [c.value for c in CRITERIA] == ["coherence", "consistency", "fluency", "relevance", "ordering"]
    assert list(RUBRIC) == list(CRITERIA)


@pytest.mark.parametrize("criterion", CRITERIA)
def test_every_criterion_has_definition_subcriteria_procedure_five_levels_and_a_guideline(
    criterion: Criterion,
) -> None:
    spec = RUBRIC[criterion]

    assert spec.criterion is criterion
    assert spec.definition_it and spec.task_it and spec.label and spec.label_it
    assert len(spec.subcriteria_it) >= 3
    assert len(spec.procedure_it) == 3
    assert len(spec.levels_it) == len(SCORES) == 5
    assert len(set(spec.levels_it)) == 5
    assert len(spec.guideline.scale) == 5 and len(spec.guideline.subcriteria) >= 3


@pytest.mark.parametrize("criterion", CRITERIA)
def test_the_prompt_follows_the_appendix_a_structure(criterion: Criterion) -> None:
    spec = RUBRIC[criterion]
    prompt = render_prompt(criterion, "TESTO ORIGINALE DI PROVA", "RIASSUNTO DI PROVA")

    parts = [
        "valutatore imparziale",
        spec.definition_it,
        *(sub.text for sub in spec.subcriteria_it),
        *spec.procedure_it,
        *spec.levels_it,
        "Nella spiegazione",
        f'"{SCORE_KEY}"',
        f'"{EXPLANATION_KEY}"',
        "Ora valuta:",
        "TESTO ORIGINALE DI PROVA",
        "RIASSUNTO DI PROVA",
    ]
    position = 0
    for part in parts:  # each part present, in the template's order: role … input last
        found = prompt.find(part, position)
        assert found >= 0, f"{part!r} missing or out of order"
        position = found + len(part)
    assert prompt.endswith("<Output>")
    assert "Esempi di valutazione" not in prompt  # zero-shot by default


def test_the_prompts_of_two_criteria_differ_only_in_the_criterion_parts() -> None:
    fluency = render_prompt(Criterion.FLUENCY, "D", "S")
    coherence = render_prompt(Criterion.COHERENCE, "D", "S")

    assert fluency != coherence
    assert RUBRIC[Criterion.COHERENCE].definition_it not in fluency


def test_few_shot_examples_are_rendered_in_the_answer_format_the_parser_reads() -> None:
    example = FewShotExample(Criterion.ORDERING, "Doc esempio.", "Sintesi esempio.", 2, "Ordine invertito.")
    prompt = render_prompt(Criterion.ORDERING, "D", "S", [example])

    shown = prompt.split("Esempio 1:", 1)[1].split("<Output>", 1)[1].split("</Output>", 1)[0]
    assert parse_answer(shown).score == 2
    assert prompt.index("Esempio 1:") < prompt.index("Ora valuta:")


def test_examples_of_another_criterion_are_refused() -> None:
    example = FewShotExample(Criterion.FLUENCY, "D", "S", 3, "x")

    with pytest.raises(ValueError, match="fluency"):
        render_prompt(Criterion.ORDERING, "D", "S", [example])


def test_an_unknown_criterion_fails_with_a_suggestion() -> None:
    assert parse_criterion("fluency") is Criterion.FLUENCY
    with pytest.raises(UnknownCriterionError, match="Did you mean coherence"):
        parse_criterion("coherense")


def test_the_harness_template_uses_the_definitions_stops_cap_and_greedy_decoding() -> None:
    config = yaml.load(TEMPLATE.read_text(encoding="utf-8"), Loader=_FunctionTag)

    kwargs = config["generation_kwargs"]
    assert tuple(kwargs["until"]) == STOP_SEQUENCES
    assert kwargs["max_gen_toks"] == MAX_ANSWER_TOKENS
    assert kwargs["do_sample"] is False and kwargs["temperature"] == 0.0
    assert config["output_type"] == "generate_until"
    assert config["gen_prefix"] == ANSWER_PREFIX_FIELD  # a column of every row: the prefilled answer start
    assert config["process_results"] == "!function hooks.process_results"
    assert [m["metric"] for m in config["metric_list"]] == ["parsed", "score"]


def test_harness_task_names_and_variants_are_built_in_one_place() -> None:
    assert len({harness_task_name(c) for c in CRITERIA}) == 5
    assert harness_task_name(Criterion.COHERENCE) == "evalita-judge_coherence"
    assert judge_variant(JudgeMode.META) is None
    variant = judge_variant(JudgeMode.GENERATIONS, "org/m/results_x.json")
    assert variant is not None and variant.startswith("gen-") and len(variant) == 16
    assert variant != judge_variant(JudgeMode.GENERATIONS, "org/m/results_y.json")
    with pytest.raises(ValueError, match="results path"):
        judge_variant(JudgeMode.GENERATIONS, None)


def test_the_about_text_gives_every_criterions_guideline_and_scale() -> None:
    text = about_markdown()

    for spec in RUBRIC.values():
        assert spec.label in text and spec.guideline.definition in text
        assert all(level in text for level in spec.guideline.scale)
    assert "unparsed" in text and "not enough data" in text


def test_the_prefilled_answer_start_is_part_of_the_answer_the_parser_reads() -> None:
    row = harness_row(JudgeUnit("d1-s1", Criterion.FLUENCY, "Testo.", "Riassunto.", 4))
    assert row[ANSWER_PREFIX_FIELD] == ANSWER_PREFIX == '{"score":'
    assert process_results(row, [' 4, "explanation": "Scorrevole."}']) == {"parsed": 1.0, "score": 4}
    # Only the prefix, and nothing generated after it: no score, never a number.
    assert process_results(row, [""]) == {"parsed": 0.0, "score": None}
    assert parse_answer(judge_answer(" 2")).score == 2
    # Rows written before the prefill (no column) are read as they are.
    assert process_results({}, ['{"score": 3}'])["score"] == 3
