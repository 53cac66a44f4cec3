"""Harness samples → results file (schema /2, track judge) → the judges table, matrix, distributions, SUM means."""

from __future__ import annotations

import hashlib
import json
import math
from typing import Any

import pandas as pd
import pytest
from scipy import stats as scipy_stats

from backend.tracks.judge.convert import (
    JudgeRunError,
    JudgeRunSetup,
    answers_from_samples,
    check_harness_agreement,
    detail_lines,
    generations_body,
    meta_body,
)
from eval_queue.errors import MalformedFileError
from leaderboard.core.schema import ModelInfo, RunInfo, results_file_path
from leaderboard.tracks.judge.app.records import JudgeRun
from leaderboard.tracks.judge.app.tables import (
    NOT_ENOUGH_DATA,
    OVERALL,
    JudgeExport,
    TableFigure,
    agreement_for,
    agreement_table,
    annotated_sets,
    criterion_means_table,
    distribution_table,
    export_table,
    judges_table,
    mean_column,
    stat_column,
)
from leaderboard.tracks.judge.definition import Criterion, JudgeProtocol, harness_task_name
from leaderboard.tracks.judge.harness.hooks import mean_of_scored, process_results
from leaderboard.tracks.judge.metrics import NotEnoughData, meta_evaluation
from leaderboard.tracks.judge.parse import ParseStatus
from leaderboard.tracks.judge.rubric import CRITERIA
from leaderboard.tracks.judge.schema import (
    AnnotatedSetInfo,
    FewShotInfo,
    JudgeDetail,
    JudgedRun,
    JudgeResultsFile,
    JudgeStanding,
    PaperDataPins,
    StatBlock,
)

HUMAN = {"a": 1, "b": 2, "c": 3, "d": 4, "e": 5}


def _answer(score: int | None) -> str:
    return "nessun JSON qui" if score is None else f'{{"score": {score}, "explanation": "Motivo {score}."}}'


def _samples(
    judge: dict[str, int | None], criteria: tuple[Criterion, ...] = CRITERIA
) -> dict[str, list[Any]]:
    """Samples as ``simple_evaluate`` logs them for the judge tasks."""
    return {
        harness_task_name(c): [
            {
                "doc_id": i,
                "doc": {"item": item, "criterion": c.value, "human": HUMAN[item], "prompt": "…"},
                "filtered_resps": [_answer(judge[item])],
            }
            for i, item in enumerate(HUMAN)
        ]
        for c in criteria
    }


def set_key(data: str) -> str:
    """The invented digest of the annotated set labelled ``data`` in these tests."""
    return hashlib.sha256(data.encode()).hexdigest()


EXAMPLES = FewShotInfo(file="examples.jsonl", sha256="e" * 64, examples=dict.fromkeys(CRITERIA, 2))


def _meta_file(
    model: str,
    judge: dict[str, int | None],
    *,
    data: str = "hub:org/set",
    finished: str = "2026-11-23T10:00:00Z",
    limit: int | None = None,
    protocol: JudgeProtocol = JudgeProtocol.PAPER,
    examples: FewShotInfo = EXAMPLES,
    pins: PaperDataPins | None = None,
) -> JudgeRun:
    """A judge's results on the 5-item set labelled ``data``, run with ``protocol`` (paper: comparable
    on a hub or local set, its worker holding pins equal to ``EXAMPLES`` and the set unless ``pins``)."""
    answers = answers_from_samples(_samples(judge))
    record = JudgeRunSetup(
        protocol=protocol,
        few_shot=examples if protocol is JudgeProtocol.PAPER else None,
        annotated=AnnotatedSetInfo(name=data, sha256=set_key(data), items=len(HUMAN)),
        paper_pins=pins or PaperDataPins(examples_sha256=EXAMPLES.sha256, annotated_sha256=set_key(data)),
    )
    results = JudgeResultsFile(
        model=ModelInfo(id=model, revision="b" * 40, precision="bfloat16"),
        run=RunInfo(num_fewshot=0, data=data, limit=limit, finished_at=finished),
        judge=meta_body(answers, record),
    )
    path = results_file_path(results, finished, None)
    return JudgeRun(path, JudgeResultsFile.from_json(results.to_json(), path))


def test_samples_become_answers_parsed_with_the_projects_parser() -> None:
    answers = answers_from_samples(_samples({"a": 1, "b": None, "c": 4, "d": 4, "e": 5}))

    assert len(answers) == 25
    first = answers[0]
    assert (first.item, first.criterion, first.human, first.answer.score) == ("a", Criterion.COHERENCE, 1, 1)
    unparsed = [a for a in answers if not a.answer.parsed]
    assert {a.item for a in unparsed} == {"b"} and unparsed[0].answer.status is ParseStatus.NO_JSON


def test_the_harness_hook_and_the_parser_must_agree() -> None:
    answers = answers_from_samples(_samples({"a": 1, "b": None, "c": 4, "d": 4, "e": 5}))
    agreeing = {harness_task_name(c): {"parsed,none": 0.8} for c in CRITERIA}

    check_harness_agreement(agreeing, answers)
    agreeing[harness_task_name(Criterion.FLUENCY)]["parsed,none"] = 1.0
    with pytest.raises(JudgeRunError, match="disagree"):
        check_harness_agreement(agreeing, answers)


def test_a_sample_of_the_wrong_task_is_refused() -> None:
    samples = _samples(dict.fromkeys(HUMAN, 3))
    samples[harness_task_name(Criterion.FLUENCY)][0]["doc"]["criterion"] = "ordering"

    with pytest.raises(JudgeRunError, match="not a fluency item"):
        answers_from_samples(samples)


def test_the_meta_results_file_holds_table_1_figures_per_criterion_and_overall() -> None:
    run = _meta_file("org/judge", {"a": 2, "b": 2, "c": 4, "d": None, "e": 5})
    body = run.results.judge

    assert run.results.schema_ == "evalita-llm-results/2" and run.results.track == "judge"
    assert list(body.criteria) == list(CRITERIA)
    block = body.criteria[Criterion.FLUENCY]
    scored_h, scored_j = [1, 2, 3, 5], [2, 2, 4, 5]
    expected = scipy_stats.spearmanr(scored_h, scored_j)
    assert (block.n_items, block.n_scored, block.unparsed_rate) == (5, 4, 0.2)
    assert block.rho == pytest.approx(expected.statistic) and block.p == pytest.approx(expected.pvalue)
    assert block.mae == pytest.approx(0.5) and block.bias == pytest.approx(0.5)
    assert body.overall.n_items == 25 and body.overall.n_scored == 20
    assert len(body.items) == 25


def test_a_judge_with_no_usable_answers_has_typed_not_enough_data_not_nan() -> None:
    run = _meta_file("org/mute", dict.fromkeys(HUMAN))
    block = run.results.judge.overall

    assert block.unparsed_rate == 1.0
    assert block.rho is None and isinstance(block.figure("rho"), NotEnoughData)
    assert "0 scored items" in str(block.figure("mae"))
    table = judges_table([run])
    assert table.loc[0, stat_column(OVERALL, TableFigure.RHO)] is pd.NA
    assert table.loc[0, stat_column(OVERALL, TableFigure.UNPARSED)] == 1.0
    numeric = table.select_dtypes("Float64")
    assert not any(isinstance(v, float) and math.isnan(v) for v in numeric.to_numpy().ravel())


def test_a_malformed_or_foreign_results_file_is_reported_with_its_path() -> None:
    with pytest.raises(MalformedFileError, match=r"x\.json"):
        JudgeResultsFile.from_json(b'{"schema": "evalita-llm-results/2", "track": "long-context"}', "x.json")
    with pytest.raises(MalformedFileError, match=r"y\.json"):
        JudgeResultsFile.from_json(b"not json", "y.json")


def test_the_judges_table_ranks_by_overall_rho_and_keeps_comparable_runs_by_default() -> None:
    good = _meta_file("org/good", {"a": 1, "b": 2, "c": 3, "d": 4, "e": 5})
    poor = _meta_file("org/poor", {"a": 5, "b": 3, "c": 1, "d": 2, "e": 4})
    sample = _meta_file("org/sample", {"a": 1, "b": 2, "c": 3, "d": 4, "e": 5}, data="sample")

    table = judges_table([poor, good, sample])

    assert table["judge"].tolist() == ["org/good", "org/poor"]
    assert table.loc[0, stat_column(OVERALL, TableFigure.RHO)] == 1.0
    assert table.loc[0, stat_column(Criterion.ORDERING, TableFigure.MAE)] == 0.0
    assert table.loc[1, stat_column(Criterion.FLUENCY, TableFigure.BIAS)] == pytest.approx(0.0)
    everything = judges_table([poor, good, sample], include_noncomparable=True)
    assert set(everything["judge"]) == {"org/good", "org/poor", "org/sample"}
    assert everything.loc[everything["judge"] == "org/sample", "comparable"].item() is False


def test_the_newest_file_of_one_judge_on_one_set_wins() -> None:
    old = _meta_file("org/j", dict.fromkeys(HUMAN, 3), finished="2026-11-20T10:00:00Z")
    new = _meta_file("org/j", {"a": 1, "b": 2, "c": 3, "d": 4, "e": 5}, finished="2026-11-23T10:00:00Z")

    table = judges_table([new, old])

    assert len(table) == 1 and table.loc[0, "finished_at"] == "2026-11-23T10:00:00Z"


def test_the_agreement_matrix_covers_the_judges_of_one_set_symmetrically() -> None:
    runs = [
        _meta_file("org/x", {"a": 1, "b": 2, "c": 3, "d": 4, "e": 5}),
        _meta_file("org/y", {"a": 2, "b": 1, "c": 4, "d": 3, "e": None}),
        _meta_file("org/z", {"a": 5, "b": 4, "c": 3, "d": 2, "e": 1}, data="sample"),
    ]

    frame = agreement_table(runs, set_key("hub:org/set"))

    assert list(frame.index) == list(frame.columns) == ["org/x", "org/y"]
    assert frame.loc["org/x", "org/x"] == 1.0
    assert frame.loc["org/x", "org/y"] == frame.loc["org/y", "org/x"]
    per_fluency = agreement_for(runs, set_key("hub:org/set"), Criterion.FLUENCY).cell("org/x", "org/y")
    assert per_fluency.n == 4  # "e" unparsed by y


def test_distributions_pair_human_and_judge_counts_per_criterion() -> None:
    run = _meta_file("org/j", {"a": 5, "b": 5, "c": 4, "d": None, "e": 5})

    frame = distribution_table([run])

    fluency = frame[(frame["criterion"] == "fluency")]
    human = dict(
        zip(
            fluency[fluency["source"] == "human"]["score"],
            fluency[fluency["source"] == "human"]["count"],
            strict=True,
        )
    )
    judge = dict(
        zip(
            fluency[fluency["source"] == "judge"]["score"],
            fluency[fluency["source"] == "judge"]["count"],
            strict=True,
        )
    )
    assert human == {"1": 1, "2": 1, "3": 1, "4": 1, "5": 1}
    assert judge == {"1": 0, "2": 0, "3": 0, "4": 1, "5": 3, "unparsed": 1}


def _generations_file(judged_model: str, scores: dict[str, int | None]) -> JudgeRun:
    samples = {
        harness_task_name(c): [
            {
                "doc_id": i,
                "doc": {"item": item, "criterion": c.value, "human": None, "prompt": "…"},
                "filtered_resps": [_answer(score)],
            }
            for i, (item, score) in enumerate(scores.items())
        ]
        for c in CRITERIA
    }
    answers = answers_from_samples(samples)
    target = JudgedRun(
        results_path=f"{judged_model}/results_2026-11-22T11-00-00Z_bfloat16_0shot.json",
        model=judged_model,
        revision="a" * 40,
        precision="bfloat16",
        num_fewshot=0,
        data="sample",
        details_path=f"{judged_model}/2026-11-22T11-00-00Z_bfloat16_0shot",
    )
    results = JudgeResultsFile(
        model=ModelInfo(id="org/judge", revision="c" * 40, precision="bfloat16"),
        run=RunInfo(num_fewshot=0, data="sample", finished_at="2026-11-23T12:00:00Z"),
        judge=generations_body(answers, target),
    )
    path = results_file_path(results, "2026-11-23T12:00:00Z", "gen-0123456789ab")
    return JudgeRun(path, JudgeResultsFile.from_json(results.to_json(), path))


def test_judged_generations_give_criterion_means_per_model_pooled_and_per_prompt() -> None:
    run = _generations_file("org/writer", {"sum/p1/0": 4, "sum/p1/1": 2, "sum/p2/0": None, "sum/p2/1": 5})
    body = run.results.judge

    assert body.task == "sum" and sorted(body.by_prompt) == ["p1", "p2"]
    assert body.criteria[Criterion.FLUENCY].mean == pytest.approx(11 / 3)
    assert body.criteria[Criterion.FLUENCY].unparsed_rate == 0.25
    assert body.items[0].explanation == "Motivo 4."

    pooled = criterion_means_table([run], task="sum", model="org/writer")
    assert pooled.loc[0, mean_column(Criterion.FLUENCY)] == pytest.approx(3.67)
    assert pooled.loc[0, "judge"] == "org/judge" and pooled.loc[0, "judge_revision"] == "c" * 40
    p2 = criterion_means_table([run], task="sum", prompt="p2")
    assert p2.loc[0, mean_column(OVERALL)] == 5.0 and p2.loc[0, "overall_unparsed"] == 0.5
    assert criterion_means_table([run], model="org/other").empty


def test_details_keep_the_raw_answer_and_how_it_was_read() -> None:
    answers = answers_from_samples(
        _samples({"a": 1, "b": None, "c": 4, "d": 4, "e": 5}, (Criterion.FLUENCY,))
    )

    [(criterion, data)] = detail_lines(answers).items()

    lines = [JudgeDetail.model_validate_json(line) for line in data.decode().splitlines()]
    assert criterion is Criterion.FLUENCY and len(lines) == 5
    assert (lines[1].raw, lines[1].status, lines[1].score) == ("nessun JSON qui", ParseStatus.NO_JSON, None)
    assert (lines[0].score, lines[0].explanation, lines[0].human) == (1, "Motivo 1.", 1)


def test_the_export_prints_judges_or_generations() -> None:
    meta = _meta_file("org/good", {"a": 1, "b": 2, "c": 3, "d": 4, "e": 5})
    generated = _generations_file("org/writer", {"sum/p1/0": 4})

    assert export_table([meta, generated])["judge"].tolist() == ["org/good"]
    assert export_table([meta, generated], JudgeExport.GENERATIONS)["model"].tolist() == ["org/writer"]
    assert NOT_ENOUGH_DATA == "not enough data"


def test_the_stored_figures_are_those_recomputed_from_the_stored_items() -> None:
    run = _meta_file("org/j", {"a": 2, "b": None, "c": 4, "d": 4, "e": 5})
    body = run.results.judge

    again = meta_evaluation(body.judged_scores())
    checked = 0
    for criterion, block in body.criteria.items():
        assert StatBlock.from_agreement(again.criteria[criterion]) == block
        checked += 1
    assert StatBlock.from_agreement(again.overall) == body.overall
    assert checked == len(CRITERIA)


def test_the_harness_hooks_read_answers_with_the_parser() -> None:
    assert process_results({}, ['{"score": "4/5", "explanation": "x"}']) == {"parsed": 1.0, "score": 4}
    assert process_results({}, ["niente"]) == {"parsed": 0.0, "score": None}
    assert mean_of_scored([4, None, 2]) == 3.0
    assert mean_of_scored([None, None]) is None


def test_judge_files_are_read_by_the_one_store_reader_and_exported_as_table_1(tmp_path) -> None:
    from eval_queue.storage.local import LocalStorage
    from eval_queue.tracks import track_spec
    from leaderboard.export import ExportOptions
    from leaderboard.store import read_results_store

    store = LocalStorage(tmp_path)
    good = _meta_file("org/good", {"a": 1, "b": 2, "c": 3, "d": 4, "e": 5})
    sample = _meta_file("org/sample", {"a": 1, "b": None, "c": None, "d": None, "e": None}, data="sample")
    for run in (good, sample):
        store.write(run.path, run.results.to_json())

    read = read_results_store(store)
    export_results = track_spec("judge").load("export")
    records = read.of("judge")
    assert sorted(records) == sorted([good.path, sample.path]) and not read.problems_of("judge")

    export = export_results(records, ExportOptions())
    assert list(export.table["judge"]) == ["org/good"]
    assert export.table.loc[0, stat_column(OVERALL, TableFigure.RHO)] == 1.0
    assert any("left out" in note for note in export.notes)
    assert not any("not enough data" in note for note in export.notes)  # every figure of org/good exists
    shown = export_results(records, ExportOptions(include_noncomparable=True))
    assert list(shown.table["judge"]) == ["org/good", "org/sample"]  # "not enough data" sorts last
    assert shown.table.loc[1, stat_column(OVERALL, TableFigure.RHO)] is pd.NA
    assert any("not enough data" in note for note in shown.notes)


def test_a_judge_file_whose_body_is_another_tracks_is_malformed_in_the_store(tmp_path) -> None:
    from eval_queue.storage.local import LocalStorage
    from leaderboard.store import read_results_store

    store = LocalStorage(tmp_path)
    store.write(
        "org/m/results_2026-11-23T10-00-00Z_bfloat16_judge.json",
        b'{"schema": "evalita-llm-results/2", "track": "judge", "model": {"id": "org/m"}, '
        b'"run": {"num_fewshot": 0}, "tasks": {}}',
    )
    read = read_results_store(store)
    (problem,) = read.problems_of("judge")
    assert "judge" in problem.reason and problem.path.endswith("_judge.json")


def _same_set(run: JudgeRun, data: str, key: str) -> JudgeRun:
    """``run`` as if its set had been read from ``data`` with digest ``key`` (and pinned as the paper's)."""
    body = run.results.judge
    annotated = AnnotatedSetInfo(name=data, sha256=key, items=len(HUMAN))
    pins = PaperDataPins(examples_sha256=EXAMPLES.sha256, annotated_sha256=key)
    results = run.results.model_copy(
        update={
            "run": run.results.run.model_copy(update={"data": data}),
            "judge": body.model_copy(update={"annotated": annotated, "paper_pins": pins}),
        }
    )
    return JudgeRun(run.path.replace(".json", f"-{len(data)}.json"), results)


@pytest.mark.parametrize(
    ("data", "protocol", "limit", "capped", "comparable"),
    [
        ("local:annotazioni", JudgeProtocol.PAPER, None, False, True),
        ("hub:org/set", JudgeProtocol.PAPER, None, False, True),
        ("sample", JudgeProtocol.PAPER, None, False, False),
        ("hub:org/set", JudgeProtocol.PROJECT, None, False, False),
        ("local:annotazioni", JudgeProtocol.PAPER, 2, False, False),
        ("local:annotazioni", JudgeProtocol.PAPER, None, True, False),
    ],
)
def test_comparable_means_the_paper_protocol_in_full_on_a_real_annotated_set(
    data: str, protocol: JudgeProtocol, limit: int | None, capped: bool, comparable: bool
) -> None:
    run = _meta_file(
        "org/j", {"a": 1, "b": 2, "c": 3, "d": 4, "e": 5}, data=data, protocol=protocol, limit=limit
    )
    if capped:
        run = JudgeRun(
            run.path,
            run.results.model_copy(update={"run": run.results.run.model_copy(update={"max_gen_toks": 16})}),
        )

    assert run.results.comparable is comparable and run.comparable is comparable
    assert (run.results.judge.protocol, run.results.annotated_set) == (protocol, set_key(data))
    assert run.listed is comparable  # the data are the pinned ones: listed only when comparable


INVENTED = FewShotInfo(file="my-examples.jsonl", sha256="1" * 64, examples=dict.fromkeys(CRITERIA, 2))


@pytest.mark.parametrize(
    ("examples", "pins", "why"),
    [
        (INVENTED, None, "examples made up by the maintainer, not the paper's"),
        (EXAMPLES, PaperDataPins(examples_sha256=EXAMPLES.sha256, annotated_sha256="2" * 64), "another set"),
        (INVENTED, PaperDataPins(examples_sha256="1" * 64, annotated_sha256="2" * 64), "neither"),
    ],
)
def test_the_paper_protocol_on_data_other_than_the_pinned_is_not_comparable(
    examples: FewShotInfo, pins: PaperDataPins | None, why: str
) -> None:
    run = _meta_file("org/j", HUMAN, data="local:annotazioni", examples=examples, pins=pins)

    assert run.standing is JudgeStanding.PAPER_OTHER_DATA, why
    assert not run.comparable and run.listed


def test_a_worker_without_pins_records_none_and_its_paper_runs_are_other_data() -> None:
    run = _meta_file("org/j", HUMAN, data="local:annotazioni")
    raw = json.loads(run.results.to_json())
    raw["judge"]["paper_pins"] = None
    results = JudgeResultsFile.from_json(json.dumps(raw).encode(), run.path)

    assert results.standing is JudgeStanding.PAPER_OTHER_DATA and not results.comparable


def test_other_data_runs_are_listed_beside_the_comparable_ones_never_among_them() -> None:
    paper = _meta_file("org/paper", {"a": 1, "b": 2, "c": 3, "d": 3, "e": 5}, data="local:set")
    # The best ρ of all, on invented examples: listed, but after every comparable run.
    invented = _meta_file("org/invented", HUMAN, data="local:set", examples=INVENTED)
    project = _meta_file("org/project", HUMAN, data="local:set", protocol=JudgeProtocol.PROJECT)

    table = judges_table([invented, project, paper])

    assert list(table["judge"]) == ["org/paper", "org/invented"]
    assert list(table["standing"]) == ["comparable with Table 1", "paper protocol, other data"]
    assert table["overall_rho"].iloc[1] > table["overall_rho"].iloc[0]
    everything = judges_table([invented, project, paper], include_noncomparable=True)
    assert list(everything["judge"]) == ["org/paper", "org/invented", "org/project"]


def test_a_results_file_without_protocol_or_set_reads_as_the_project_protocol_and_is_not_comparable() -> None:
    run = _meta_file("org/old", {"a": 1, "b": 2, "c": 3, "d": 4, "e": 5})
    raw = json.loads(run.results.to_json())
    for key in ("protocol", "annotated", "generation", "few_shot"):
        raw["judge"].pop(key, None)

    old = JudgeResultsFile.from_json(json.dumps(raw).encode(), run.path)

    assert old.judge.protocol is JudgeProtocol.PROJECT and old.comparable is False
    assert old.annotated_set == "hub:org/set"  # grouped by its label


def test_judges_are_grouped_by_the_sets_digest_whether_read_from_hub_or_local() -> None:
    copy_key = set_key("the study's set")
    on_hub = _same_set(_meta_file("org/a", {"a": 1, "b": 2, "c": 3, "d": 5, "e": 4}), "hub:org/set", copy_key)
    on_local = _same_set(
        _meta_file("org/b", {"a": 1, "b": 2, "c": 3, "d": 4, "e": 5}), "local:copia", copy_key
    )
    elsewhere = _meta_file("org/c", {"a": 5, "b": 4, "c": 3, "d": 2, "e": 1}, data="local:altro")

    sets = annotated_sets([on_hub, on_local, elsewhere])
    table = judges_table([elsewhere, on_hub, on_local])

    assert [(s.key, s.judges) for s in sets] == [(copy_key, 2), (set_key("local:altro"), 1)]
    # One set's judges together, ranked among themselves; the other set's after them.
    assert table["judge"].tolist() == ["org/b", "org/a", "org/c"]
    assert table["set_sha256"].tolist() == [copy_key, copy_key, set_key("local:altro")]
    assert judges_table([on_hub, on_local, elsewhere], annotated_set=copy_key)["judge"].tolist() == [
        "org/b",
        "org/a",
    ]
    assert list(agreement_table([on_hub, on_local, elsewhere], copy_key).index) == ["org/a", "org/b"]
