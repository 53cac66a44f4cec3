"""The ranking and prompt tables the UI renders, checked cell by cell against the paper."""

from __future__ import annotations

import math
from pathlib import Path

import pandas as pd
import pytest

from eval_queue.storage.local import LocalStorage
from leaderboard.core.schema import results_file_path
from leaderboard.tracks.evalita.app.records import load_results
from leaderboard.tracks.evalita.app.tables import (
    PROMPT_COLUMNS,
    RANKING_COLUMNS,
    Aggregate,
    all_prompts_table,
    prompt_table,
    ranking_table,
    task_column,
)
from leaderboard.tracks.evalita.definition import SUITE, TASK_IDS
from tests.foundation.test_paper_parity import KNOWN_APPENDIX_ERRATA, KNOWN_PROMPT_SIDE_ERRATA
from tests.paper_tables import AGGREGATE_ROWS, APPENDIX, APPENDIX_COLUMNS, PROMPT_SIDE, paper_results

_ROW_TO_AGGREGATE = {"MaxP": Aggregate.MAXP, "AvgP": Aggregate.AVGP, "CPS": Aggregate.CPS}


def _cell(value: object) -> float | None:
    return None if value is None or (isinstance(value, float) and math.isnan(value)) else float(value)  # type: ignore[arg-type]


def test_column_names_are_derived_from_the_suite_once() -> None:
    assert len(set(RANKING_COLUMNS)) == len(RANKING_COLUMNS)
    assert RANKING_COLUMNS[:5] == ("rank", "model", "revision", "precision", "num_fewshot")
    for task in SUITE:
        for suffix in ("maxp", "avgp", "cps", "best_prompt"):
            assert f"{task.id}_{suffix}" in RANKING_COLUMNS
    assert task_column("te", Aggregate.CPS) == "te_cps"
    assert {"avg_cps", "mc_avg_cps", "gen_avg_cps"} <= set(RANKING_COLUMNS)


def test_ranking_table_reproduces_every_appendix_cell(paper_store: LocalStorage) -> None:
    full = ranking_table(load_results(paper_store))
    assert list(full.columns) == list(RANKING_COLUMNS)
    table = full.set_index(["model", "num_fewshot"])
    checked = 0
    for appendix in APPENDIX:
        for llm, shots in APPENDIX_COLUMNS:
            row = table.loc[(f"paper-dev/{llm}", shots)]
            for name in AGGREGATE_ROWS:
                ours = _cell(row[task_column(appendix.task_id, _ROW_TO_AGGREGATE[name])])
                if (appendix.name, llm, shots, name) in KNOWN_APPENDIX_ERRATA:
                    assert ours == KNOWN_APPENDIX_ERRATA[(appendix.name, llm, shots, name)]
                    continue
                assert ours == appendix.printed(name, llm, shots), (appendix.name, llm, shots, name)
                checked += 1
    assert checked == 356


def test_best_prompt_is_the_prompt_reaching_maxp(paper_store: LocalStorage) -> None:
    table = ranking_table(load_results(paper_store), num_fewshot=0).set_index("model")
    assert table.loc["paper-dev/LLM-5", "te_best_prompt"] == "p2"  # 78.75, Table 14
    assert table.loc["paper-dev/LLM-6", "sa_best_prompt"] == "p4"  # 72.17, Table 15
    assert table.loc["paper-dev/LLM-1", "ner_best_prompt"] == "p1"  # paper p8, Table 19
    assert table.loc["paper-dev/LLM-4", "ner_best_prompt"] == "p2"  # paper p10


def test_ranking_orders_by_mean_cps_and_leaves_incomplete_models_unranked(paper_store: LocalStorage) -> None:
    loaded = load_results(paper_store)
    zero_shot = ranking_table(loaded, num_fewshot=0)
    assert zero_shot["model"].tolist()[:2] == ["paper-dev/LLM-5", "paper-dev/LLM-6"]
    assert zero_shot["avg_cps"].tolist() == [45.57, 43.57, 41.14, 39.59, 33.87, 31.63]
    assert zero_shot["rank"].tolist() == [1, 2, 3, 4, 5, 6]
    few_shot = ranking_table(loaded, num_fewshot=5)
    assert few_shot.loc[0, ["model", "avg_cps", "rank"]].tolist() == ["paper-dev/LLM-2", 54.00, 1]
    last = few_shot.iloc[-1]
    assert last["model"] == "paper-dev/LLM-1"
    assert pd.isna(last["rank"]) and pd.isna(last["avg_cps"]) and pd.isna(last["gen_avg_cps"])
    assert last["mc_avg_cps"] == 51.13  # its multiple-choice tasks are all there
    assert pd.isna(last["sum_cps"]) and pd.isna(last["sum_best_prompt"])
    both = ranking_table(loaded)
    assert both["num_fewshot"].tolist() == [0] * 6 + [5] * 6
    assert both["rank"].tolist()[:6] == [1, 2, 3, 4, 5, 6]  # each setting ranked on its own
    assert both["rank"].tolist()[6:11] == [1, 2, 3, 4, 5] and pd.isna(both["rank"].iloc[11])


def test_a_model_missing_a_task_is_shown_without_an_overall_score(tmp_path: Path) -> None:
    store = LocalStorage(tmp_path)
    partial = paper_results("LLM-5", 0)
    del partial.tasks["re"]
    store.write(results_file_path(partial, "2025-01-01T00:00:00Z"), partial.to_json())
    row = ranking_table(load_results(store)).iloc[0]
    assert pd.isna(row["avg_cps"]) and pd.isna(row["rank"]) and pd.isna(row["re_cps"])
    assert row["te_cps"] == 71.93


def test_noncomparable_runs_stay_off_the_ranking_unless_asked(paper_store: LocalStorage) -> None:
    sample = paper_results("LLM-3", 0)
    sample.model.id = "someone/tiny"
    sample.run.data = "sample"
    paper_store.write(results_file_path(sample, "2025-01-01T00:00:00Z"), sample.to_json())
    loaded = load_results(paper_store)
    assert "someone/tiny" not in set(ranking_table(loaded, 0)["model"])
    with_sample = ranking_table(loaded, 0, include_noncomparable=True).set_index("model")
    assert not with_sample.loc["someone/tiny", "comparable"]
    # Listed when asked for, but never placed: the comparable runs keep ranks 1..6.
    assert pd.isna(with_sample.loc["someone/tiny", "rank"])
    assert sorted(with_sample["rank"].dropna().astype(int)) == [1, 2, 3, 4, 5, 6]
    assert prompt_table(loaded, "te", 0).loc[0, "n_models"] == 6


def test_prompt_table_reproduces_tables_14_15_19(paper_store: LocalStorage) -> None:
    loaded = load_results(paper_store)
    checked = 0
    for paper in PROMPT_SIDE:
        full = prompt_table(loaded, paper.task_id, 0)
        assert list(full.columns) == list(PROMPT_COLUMNS)
        table = full.set_index("prompt")
        for label in paper.prompt_rows:
            row = table.loc[paper.harness_prompt(label)]
            assert row["paper_prompt"] == label and row["n_models"] == 6
            for column in ("MinP", "MaxP", "AvgP", "CPS"):
                expected = KNOWN_PROMPT_SIDE_ERRATA.get(
                    (paper.name, label, column), paper.printed(label, column)
                )
                assert row[column.lower()] == expected, (paper.name, label, column)
                checked += 1
    assert checked == (6 + 6 + 2) * 4


def test_prompt_table_skips_models_without_the_prompt(paper_store: LocalStorage) -> None:
    table = prompt_table(load_results(paper_store), "sum", 5)
    assert table["n_models"].tolist() == [5, 5]  # LLM-1's few-shot summaries are N/A
    assert table["paper_prompt"].tolist() == ["p7", "p9"]


def test_all_prompts_table_has_one_row_per_task_setting_and_prompt(paper_store: LocalStorage) -> None:
    table = all_prompts_table(load_results(paper_store))
    assert len(table) == 2 * (6 * 6 + 4 * 2)
    assert table[["task", "num_fewshot", "prompt"]].drop_duplicates().shape[0] == len(table)
    assert list(table["task"].drop_duplicates()) == list(TASK_IDS)
    assert len(all_prompts_table(load_results(paper_store), num_fewshot=5)) == 44


def test_unknown_task_in_prompt_table_fails_with_a_suggestion(paper_store: LocalStorage) -> None:
    with pytest.raises(LookupError, match="Did you mean sum"):
        prompt_table(load_results(paper_store), "summ", 0)


def test_spread_column_is_maxp_minus_avgp_from_the_scoring_module_unrounded() -> None:
    from leaderboard.core.numbers import percent
    from leaderboard.tracks.evalita.app import tables
    from leaderboard.tracks.evalita.definition import get_task
    from leaderboard.tracks.evalita.metrics import score_task

    task = get_task("te")
    prompts = {p.id: 0.1 + 0.01 * i for i, p in enumerate(task.prompts)}
    result = score_task(task, prompts)
    assert result.maxp is not None and result.avgp is not None
    row = tables._ranking_row(dict.fromkeys(tables._RUN_FIELDS), {"te": prompts})
    assert row[task_column("te", Aggregate.SPREAD)] == percent(result.maxp - result.avgp)
    assert row[task_column("wic", Aggregate.SPREAD)] is None  # no scores: missing, never 0
