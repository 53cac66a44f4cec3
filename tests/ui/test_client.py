"""The running app through gradio_client: what its endpoints return for a known store."""

from __future__ import annotations

import csv
import time
from pathlib import Path

import pandas as pd
import pytest
from gradio_client import Client

from eval_queue.settings import Settings
from eval_queue.storage import open_stores
from leaderboard.tracks.evalita.app import tables, views
from leaderboard.tracks.evalita.app.records import load_results
from tests.ui.conftest import Served
from tests.ui.store import CACHED_MODEL, CACHED_SHA, SAMPLE_MODEL, XSS_MODEL

ALL_FILTERS = ([], [], [], "", ["cps"], False)  # types, sizes, precisions, search, columns, all runs


@pytest.fixture(scope="module")
def client(served: Served) -> Client:
    client = Client(served.url, verbose=False)
    client.predict(api_name="/refresh")  # other test modules may have added results to the live store
    return client


def _frame(value: dict) -> pd.DataFrame:
    """A Dataframe output (an update carries it under ``value``) as a pandas frame."""
    value = value.get("value", value)
    return pd.DataFrame(value["data"], columns=value["headers"])


def _ranking(client: Client, setting: str = "0", *filters) -> tuple[str, pd.DataFrame, str]:
    banner, table, csv_path, _caption = client.predict(
        setting, *(filters or ALL_FILTERS), api_name="/ranking"
    )
    return banner, _frame(table), csv_path


def _plain_model(cell: str) -> str:
    """The text of the model link (the page shows the id as escaped text inside <a>)."""
    import html
    import re

    return html.unescape(re.sub(r"<[^>]+>", "", cell))


def test_zero_shot_ranking_is_led_by_llm5_with_the_papers_score(client: Client) -> None:
    _, table, _ = _ranking(client, "0")
    top = table.iloc[0]
    assert _plain_model(top["Model"]) == "paper-dev/LLM-5"
    assert top["Avg CPS"] == pytest.approx(45.57)
    assert top["Rank"] == 1


def test_five_shot_ranking_is_led_by_llm2_with_54(client: Client) -> None:
    _, table, _ = _ranking(client, "5")
    top = table.iloc[0]
    assert _plain_model(top["Model"]) == "paper-dev/LLM-2"
    assert top["Avg CPS"] == pytest.approx(54.00)
    # LLM-1 has an N/A prompt score on SUM 5-shot: shown, but unranked and last.
    last = table.iloc[-1]
    assert _plain_model(last["Model"]) == "paper-dev/LLM-1"
    assert pd.isna(last["Rank"])


def test_rendered_ranking_equals_the_tables_module(client: Client, served: Served) -> None:
    """Parity: every number on screen is the one leaderboard.tracks.evalita.app.tables computes."""
    expected = tables.ranking_table(load_results(open_stores(Settings(data_dir=served.data_dir)).results), 0)
    _, shown, _ = _ranking(client, "0", [], [], [], "", ["cps", "maxp", "avgp", "best_prompt"], False)
    shown = shown.assign(model=shown["Model"].map(_plain_model)).set_index("model")
    checked = 0
    for row in expected.to_dict("records"):
        got = shown.loc[row["model"]]
        assert got["Avg CPS"] == pytest.approx(row["avg_cps"])
        for task in ("wic", "te", "sa", "hs", "faq", "at", "ls", "ner", "re", "sum"):
            label = {"re": "REL"}.get(task, task.upper())
            assert got[f"{label} CPS"] == pytest.approx(row[f"{task}_cps"]), (row["model"], task)
            assert got[f"{label} MaxP"] == pytest.approx(row[f"{task}_maxp"])
            assert got[f"{label} AvgP"] == pytest.approx(row[f"{task}_avgp"])
            assert got[f"{label} best prompt"] == row[f"{task}_best_prompt"]
            checked += 4
        if pd.notna(row["rank"]):
            assert got["Rank"] == row["rank"]
    assert checked >= 7 * 40


def test_sample_runs_are_hidden_by_default_and_marked_when_shown(client: Client) -> None:
    _, hidden, _ = _ranking(client, "0")
    assert SAMPLE_MODEL not in set(hidden["Model"].map(_plain_model))
    banner, shown, _ = _ranking(client, "0", [], [], [], "", ["cps"], True)
    row = shown[shown["Model"].map(_plain_model) == SAMPLE_MODEL].iloc[0]
    assert "sample" in row["Note"]
    assert pd.isna(row["Rank"])
    assert "not comparable" in banner


def test_search_and_type_filters_narrow_the_ranking(client: Client) -> None:
    _, table, _ = _ranking(client, "0", [], [], [], "llm-3", ["cps"], False)
    assert list(table["Model"].map(_plain_model)) == ["paper-dev/LLM-3"]
    assert table.iloc[0]["Rank"] == 5  # the global rank is kept under a filter
    _, typed, _ = _ranking(client, "0", ["pretrained"], [], [], "", ["cps"], False)
    assert XSS_MODEL in set(typed["Model"].map(_plain_model)) and set(typed["Type"]) == {"pretrained"}
    _, sized, _ = _ranking(client, "0", [], ["3–10B"], [], "", ["cps"], False)
    assert len(sized) == 6


def test_both_view_shows_the_difference(client: Client) -> None:
    _, table, _ = _ranking(client, "both", [], [], [], "LLM-2", ["cps"], False)
    row = table.iloc[0]
    assert row["Avg CPS 0-shot"] == pytest.approx(41.14)
    assert row["Avg CPS 5-shot"] == pytest.approx(54.00)
    assert row["Avg CPS Δ"] == pytest.approx(12.86)


def test_csv_download_is_what_is_on_screen(client: Client) -> None:
    _, table, csv_path = _ranking(client, "0", [], [], [], "llm", ["cps"], False)
    with Path(csv_path).open(newline="") as handle:
        rows = list(csv.reader(handle))
    assert rows[0] == [c for c in table.columns if c != views.KEY_COLUMN]  # the hidden key is not data
    assert [r[1] for r in rows[1:]] == list(table["Model"].map(_plain_model))
    assert rows[1][2] == f"{table.iloc[0]['Avg CPS']:.2f}"


def test_task_drill_down_shows_prompts_and_both_sides(client: Client) -> None:
    info, prompts, models, side, _ = client.predict("te", "0", False, api_name="/task")
    assert "TE" in info and "Textual" in info
    assert "implica logicamente" in prompts
    models = _frame(models)
    top = models.iloc[0]
    assert _plain_model(top["Model"]) == "paper-dev/LLM-5"
    assert (top["p2"], top["MaxP"], top["AvgP"], top["CPS"], top["Best prompt"]) == (
        78.75,
        78.75,
        70.08,
        71.93,
        "p2",
    )
    side = _frame(side).set_index("Prompt")
    # Paper Table 14, prompt side of p4: MinP 55.00, MaxP 74.75, AvgP 63.54, CPS 66.37 (with the extra model).
    assert side.loc["p4", "MaxP"] == pytest.approx(74.75)


def test_model_page_and_its_answers(client: Client) -> None:
    key = f"{XSS_MODEL}|abcdef1234567890|bfloat16"
    header, *_ = client.predict(key, "0", api_name="/model")
    assert "&lt;img" in header and "<img" not in header.replace("&lt;img", "")
    assert "&lt;b&gt;evil" in header
    status_line, answers = client.predict(key, "0", "wic", "p1", api_name="/details")
    answers = _frame(answers)
    assert len(answers) == 3 and "3 answers" in status_line
    assert answers.iloc[0]["Input"].startswith("Frase 0: <script>")  # data, rendered as text by the table


def test_valid_submission_creates_requests_and_shows_them_queued(client: Client) -> None:
    result, _summary, pending, *_ = client.predict(
        CACHED_MODEL, "main", "bfloat16", ["0", "5"], "pretrained", api_name="/submit"
    )
    assert "Submitted" in result
    assert CACHED_SHA[:12] in result
    pending = _frame(pending)
    mine = pending[pending["Model"] == CACHED_MODEL]
    assert sorted(mine["Setting"]) == ["0-shot", "5-shot"]
    assert list(pending["Position"]) == list(range(1, len(pending) + 1))


def test_refused_submission_shows_the_validators_message(client: Client) -> None:
    result, *_ = client.predict(
        "no-such-org/missing", "main", "bfloat16", ["0"], "pretrained", api_name="/submit"
    )
    assert result.startswith("❌")
    assert "no" in result.lower() and "missing" in result


def test_queue_lists_every_state_and_malformed_files(client: Client) -> None:
    status, summary, _pending, running, finished, failed, problems = client.predict(api_name="/refresh")
    assert "1 unreadable results file" in status and "broken\\-org/model" in status
    assert "running" in summary
    running, finished, failed = _frame(running), _frame(finished), _frame(failed)
    assert "queue-org/running-b" in set(running["Model"])
    assert "worker-1" in set(running["Worker"])
    assert "queue-org/finished-c" in set(finished["Model"])
    reasons = dict(zip(failed["Model"], failed["Reason"], strict=True))
    assert "CUDA out of memory" in reasons["queue-org/failed-d"]
    assert "bad_eval_request_main_bfloat16_0shot.json" in problems.replace("\\", "")


def test_new_results_appear_after_a_refresh_without_restart(client: Client, served: Served) -> None:
    """Runs last: adds a results file to the live store; the refresh re-reads it (no restart)."""
    from tests.ui.store import _results

    fresh = _results("late-org/new-model", 0.05)
    path = served.data_dir / "results" / "late-org" / "new-model" / "results_2025-06-01T00-00-00Z.json"
    path.parent.mkdir(parents=True)
    path.write_bytes(fresh.to_json())
    # A refresh re-reads the store at most once per few seconds, however many callers ask.
    deadline = time.monotonic() + 120
    while True:
        client.predict(api_name="/refresh")
        _, table, _ = _ranking(client, "0", [], [], [], "new-model", ["cps"], False)
        if len(table) or time.monotonic() > deadline:
            break
        time.sleep(1)
    assert list(table["Model"].map(_plain_model)) == ["late-org/new-model"]
    assert table.iloc[0]["Avg CPS"] == pytest.approx(5.0)


def _queued(served: Served, model: str) -> list:
    from eval_queue.queue import RequestQueue

    listing = RequestQueue(open_stores(Settings(data_dir=served.data_dir)).requests).listing()
    return [r for r in listing.requests if r.model == model]


def test_long_context_submission_queues_one_request_with_the_ticked_settings(
    client: Client, served: Served
) -> None:
    before = len(_queued(served, CACHED_MODEL))
    result, *_ = client.predict(
        CACHED_MODEL,
        "main",
        "bfloat16",
        [],
        "pretrained",
        "long-context",
        ["full", "10k"],
        "",
        api_name="/submit",
    )
    assert "Submitted" in result, result
    [request] = [r for r in _queued(served, CACHED_MODEL) if r.track == "long-context"]
    assert [s.value for s in request.options.context_settings or []] == ["10k", "full"]
    assert request.num_fewshot == 0 and len(_queued(served, CACHED_MODEL)) == before + 1


def test_long_context_submission_without_a_setting_is_refused_and_writes_nothing(
    client: Client, served: Served
) -> None:
    before = _queued(served, CACHED_MODEL)
    result, *_ = client.predict(
        CACHED_MODEL, "main", "bfloat16", ["0"], "pretrained", "long-context", [], "", api_name="/submit"
    )
    assert result.startswith("❌") and "context setting" in result
    assert _queued(served, CACHED_MODEL) == before


def test_judge_submission_with_a_target_judges_that_runs_outputs(client: Client, served: Served) -> None:
    [target] = [
        str(p.relative_to(served.data_dir / "results"))
        for p in (served.data_dir / "results" / SAMPLE_MODEL).glob("results_*_0shot.json")
    ]
    result, *_ = client.predict(
        CACHED_MODEL, "main", "bfloat16", [], "pretrained", "judge", [], f"  {target} ", api_name="/submit"
    )
    assert "Submitted" in result, result
    [request] = [r for r in _queued(served, CACHED_MODEL) if r.track == "judge"]
    assert (request.options.judge_mode.value, request.options.judge_target) == ("generations", target)


def test_a_judge_of_a_run_that_is_not_in_the_store_is_refused_and_writes_nothing(
    client: Client, served: Served
) -> None:
    before = _queued(served, CACHED_MODEL)
    target = "nobody/none/results_2025-01-01T00-00-00Z_bfloat16_0shot.json"
    result, *_ = client.predict(
        CACHED_MODEL, "main", "bfloat16", [], "pretrained", "judge", [], target, api_name="/submit"
    )
    assert result.startswith("❌") and "no results file" in result
    assert _queued(served, CACHED_MODEL) == before


def test_an_unknown_track_is_refused_and_writes_nothing(client: Client, served: Served) -> None:
    from gradio_client.exceptions import AppError

    before = _queued(served, CACHED_MODEL)
    with pytest.raises(AppError, match="not in the list of choices"):
        client.predict(
            CACHED_MODEL, "main", "bfloat16", ["0"], "pretrained", "<b>nope</b>", [], "", api_name="/submit"
        )
    assert _queued(served, CACHED_MODEL) == before
