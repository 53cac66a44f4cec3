"""The ranking's user views (issue 32): a custom average over picked tasks with its interval and
tier, complete results only, chat vs base, and an organisation's best of N — in the views, the
link state and the export."""

from __future__ import annotations

import csv
import io
from pathlib import Path
from types import SimpleNamespace

import numpy as np
import pandas as pd
import pytest

from eval_queue.settings import Settings
from leaderboard.__main__ import main as leaderboard_main
from leaderboard.core.tiers import TierEntry, assign_tiers
from leaderboard.core.uncertainty import percentile_intervals
from leaderboard.state import PageState
from leaderboard.tracks.evalita.app import tables, views
from leaderboard.tracks.evalita.app.link import EvalitaLink
from leaderboard.tracks.evalita.app.tab.ranking import filters_of
from leaderboard.tracks.evalita.app.views import board as board_module
from leaderboard.tracks.evalita.app.views import ranking, subsets
from leaderboard.tracks.evalita.definition import TASK_IDS
from leaderboard.tracks.evalita.metric_sets import DEFAULT_METRIC_SET
from leaderboard.tracks.evalita.uncertainty import cps_figure, cps_tie_figure
from leaderboard.tracks.evalita.vocabulary import Setting
from leaderboard.ui.context import AppContext
from tests.ui.user_views_store import (
    CHAT_MODEL,
    HOSTILE_ORG,
    INCOMPLETE_MODEL,
    write_user_views_store,
)


@pytest.fixture(scope="module")
def data_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("user-views")
    write_user_views_store(root / "results")
    return root


@pytest.fixture(scope="module")
def board(data_dir: Path) -> views.Board:
    return views.current_board(AppContext.from_settings(Settings(data_dir=data_dir)))


def _view(board, setting=Setting.ZERO, **filters) -> pd.DataFrame:
    return views.ranking_view(board, setting, views.RankingFilters(**filters)).table


def test_a_custom_average_over_every_task_is_the_stored_mean_cps_with_its_interval_and_tier(board):
    for k in (0, 5):
        rows = board.rows(k)
        keys = [
            (m, r, p, int(n))
            for m, r, p, n in rows[["model", "revision", "precision", "num_fewshot"]].itertuples(index=False)
        ]
        # Computed from the kept draws, as for any set of tasks ...
        average = subsets.custom_average(
            keys, board.loaded.prompt_scores, board.loaded.uncertainty, TASK_IDS, rows["comparable"].tolist()
        )
        ranked = rows["tier"].notna().to_numpy()
        assert ranked.sum() >= 6
        np.testing.assert_allclose(
            average.points[ranked] * 100, rows["avg_cps"][ranked].astype(float), atol=0.005
        )
        np.testing.assert_allclose(
            average.lows[ranked] * 100, rows["avg_cps_low"][ranked].astype(float), atol=0.005
        )
        np.testing.assert_allclose(
            average.highs[ranked] * 100, rows["avg_cps_high"][ranked].astype(float), atol=0.005
        )
        assert [t for t, r in zip(average.tiers, ranked, strict=True) if r] == rows["tier"][ranked].tolist()
        # ... and as the table shows it.
        table = _view(board, Setting(str(k)), average_over=TASK_IDS)
        shown = table[table[views.TIER].notna()]
        assert (shown[ranking.CUSTOM_AVG] == shown[views.AVG]).all()
        assert (shown[ranking.CUSTOM_CI] == shown[views.CI]).all()
        assert (shown[ranking.CUSTOM_TIER] == shown[views.TIER]).all()


def test_a_subsets_interval_and_tier_come_from_that_subsets_draws(board):
    chosen = ("te", "sa", "ner")
    rows = board.rows(5)
    rows = rows[rows["comparable"] & rows["tier"].notna()]
    keys = [
        (m, r, p, int(k))
        for m, r, p, k in rows[["model", "revision", "precision", "num_fewshot"]].itertuples(index=False)
    ]
    # By hand: the mean of the three tasks' kept draws, the union of both percentile intervals.
    reflected = np.stack(
        [
            np.mean([board.loaded.uncertainty[k].draws[cps_figure(t)].values() for t in chosen], axis=0)
            for k in keys
        ]
    )
    tie = np.stack(
        [
            np.mean([board.loaded.uncertainty[k].draws[cps_tie_figure(t)].values() for t in chosen], axis=0)
            for k in keys
        ]
    )
    points = rows[[tables.task_column(t, "cps") for t in chosen]].astype(float).mean(axis=1).to_numpy()
    average = subsets.custom_average(
        keys, board.loaded.prompt_scores, board.loaded.uncertainty, chosen, [True] * len(keys)
    )
    np.testing.assert_allclose(average.points * 100, points, atol=0.01)
    plain = percentile_intervals(reflected)
    tied = percentile_intervals(tie)
    np.testing.assert_allclose(average.lows, [min(a.low, b.low) for a, b in zip(plain, tied, strict=True)])
    np.testing.assert_allclose(average.highs, [max(a.high, b.high) for a, b in zip(plain, tied, strict=True)])
    entries = [TierEntry(str(i), float(p), reflected[i], "k", tie[i]) for i, p in enumerate(average.points)]
    assert average.tiers == tuple(r.tier for r in assign_tiers(entries))
    # And it is not the ten-task figure: the subset's interval differs from the mean CPS's.
    shown = _view(board, Setting.FIVE, average_over=chosen).set_index(views.MODEL)
    assert (shown[ranking.CUSTOM_CI] != shown[views.CI]).any()


def test_a_custom_average_orders_the_rows_and_a_run_missing_a_chosen_task_has_none(board):
    table = _view(board, average_over=("sum", "te"))
    custom = table[ranking.CUSTOM_AVG].dropna().tolist()
    assert custom == sorted(custom, reverse=True) and len(custom) >= 6
    assert pd.isna(table.set_index(views.MODEL).loc[INCOMPLETE_MODEL, ranking.CUSTOM_AVG])
    # Without SUM in the average, the incomplete run has one.
    table = _view(board, average_over=("te",))
    assert not pd.isna(table.set_index(views.MODEL).loc[INCOMPLETE_MODEL, ranking.CUSTOM_AVG])


def test_both_settings_show_each_settings_custom_average_and_best_of_n(board):
    table = _view(board, Setting.BOTH, average_over=("te", "sa")).set_index(views.MODEL)
    zero = _view(board, Setting.ZERO, average_over=("te", "sa")).set_index(views.MODEL)
    five = _view(board, Setting.FIVE, average_over=("te", "sa")).set_index(views.MODEL)
    for model in ("acme/model-a", CHAT_MODEL):
        assert table.loc[model, f"{ranking.CUSTOM_AVG} 0-shot"] == zero.loc[model, ranking.CUSTOM_AVG]
        assert table.loc[model, f"{ranking.CUSTOM_AVG} 5-shot"] == five.loc[model, ranking.CUSTOM_AVG]
        assert table.loc[model, f"{ranking.BEST_OF} 5-shot"] == five.loc[model, ranking.BEST_OF]
    assert table.loc[CHAT_MODEL, ranking.KIND] == "chat"


def test_complete_results_only_hides_the_incomplete_runs_and_says_what_they_miss(board):
    view = views.ranking_view(board, Setting.ZERO, views.RankingFilters(complete_only=True))
    assert INCOMPLETE_MODEL not in set(view.table[views.MODEL])
    assert "1 run hidden: missing SUM (1)" in view.banner
    # Only the tasks in view count: an average without SUM hides nothing.
    view = views.ranking_view(
        board, Setting.ZERO, views.RankingFilters(complete_only=True, average_over=("te", "sa"))
    )
    assert INCOMPLETE_MODEL in set(view.table[views.MODEL]) and "hidden" not in view.banner


def test_chat_and_base_models_are_kept_apart_and_unknown_when_the_run_does_not_say(board):
    table = _view(board).set_index(views.MODEL)
    assert table.loc[CHAT_MODEL, ranking.KIND] == "chat"  # the chat template was applied
    assert set(table[ranking.KIND]) <= set(subsets.MODEL_KINDS)
    chat = _view(board, kinds=("chat",))
    assert CHAT_MODEL in set(chat[views.MODEL]) and set(chat[ranking.KIND]) == {"chat"}
    assert len(chat) < len(table)
    base = _view(board, kinds=("base",))
    assert set(base[ranking.KIND]) == {"base"} and CHAT_MODEL not in set(base[views.MODEL])
    kind = subsets.model_kind(
        pd.Series(["instruction-tuned", "pretrained", "pretrained", "fine-tuned", None]),
        pd.Series([None, None, True, False, None], dtype=object),
    )
    assert kind.tolist() == ["chat", "base", "chat", "unknown", "unknown"]


def test_the_best_of_an_organisations_runs_is_marked_with_its_count(board):
    table = _view(board).set_index(views.MODEL)
    marked = table[table[ranking.BEST_OF] != ""]
    assert marked[ranking.BEST_OF].to_dict() == {
        f"{HOSTILE_ORG}/model-e": f"best of 2 from {HOSTILE_ORG}",
        "acme/model-a": "best of 3 from acme",
        "paper-dev/LLM-5": "best of 6 from paper-dev",
    }
    assert (
        table.loc["acme/model-b", ranking.ORG_RUNS] == 3
        and table.loc["solo-1/model-f", ranking.ORG_RUNS] == 1
    )
    best = _view(board, org_best=True)
    assert "acme/model-b" not in set(best[views.MODEL]) and "acme/model-a" in set(best[views.MODEL])
    assert "solo-1/model-f" in set(best[views.MODEL])


def test_the_views_round_trip_through_the_link_state():
    state = PageState().with_values(
        avg_tasks=("te", "sum"), complete=True, kinds=("chat", "base"), org_best=True
    )
    query = state.to_query()
    assert "avg_tasks=te,sum" in query and "complete=1" in query and "org_best=1" in query
    back, notices = PageState.from_query(dict(pair.split("=") for pair in query.split("&")))
    assert back == state and not notices
    # A link's own order and unknown values: suite order, and a notice for the unknown.
    odd, notices = PageState.from_query({"avg_tasks": "sum,te,nope", "kinds": "chat,robot"})
    assert EvalitaLink.of(odd).avg_tasks == ("te", "sum") and EvalitaLink.of(odd).kinds == ("chat",)
    assert {n.field for n in notices} == {"avg_tasks", "kinds"}
    filters = filters_of(back)
    assert filters.average_over == ("te", "sum") and filters.complete_only and filters.org_best


def _export(data_dir: Path, monkeypatch, capsys, caplog, *args: str) -> tuple[int, list[dict[str, str]], str]:
    monkeypatch.setenv("EVALITA_DATA_DIR", str(data_dir))
    caplog.clear()
    code = leaderboard_main(["export", "--fewshot", "0", *args])
    out = capsys.readouterr()
    return code, list(csv.DictReader(io.StringIO(out.out))), out.err + caplog.text


def test_the_export_writes_the_views_columns_and_applies_their_filters(
    data_dir, board, monkeypatch, capsys, caplog
):
    code, rows, _ = _export(data_dir, monkeypatch, capsys, caplog, "--average-over", "sa,te")
    assert code == 0
    shown = _view(board, average_over=("te", "sa")).set_index(views.MODEL)
    for row in rows:
        if row["custom_tier"]:
            assert int(row["custom_tier"]) == shown.loc[row["model"], ranking.CUSTOM_TIER]
            assert float(row["custom_avg_cps"]) == pytest.approx(shown.loc[row["model"], ranking.CUSTOM_AVG])
            assert row["custom_tasks"] == "te,sa"
    assert {r["model"]: r["org_runs"] for r in rows}["acme/model-c"] == "3"
    code, rows, err = _export(
        data_dir, monkeypatch, capsys, caplog, "--complete-only", "--kinds", "chat,unknown", "--org-best"
    )
    assert code == 0 and "1 run hidden: missing SUM (1)" in err
    assert {r["kind"] for r in rows} <= {"chat", "unknown"} and INCOMPLETE_MODEL not in {
        r["model"] for r in rows
    }
    assert all(r["org_best"] == "True" for r in rows)


def test_the_export_refuses_an_unknown_task_or_kind_and_prints_nothing(data_dir, monkeypatch, capsys, caplog):
    code, rows, err = _export(data_dir, monkeypatch, capsys, caplog, "--average-over", "te,tee")
    assert code == 2 and not rows and "Unknown task 'tee'" in err
    code, rows, err = _export(data_dir, monkeypatch, capsys, caplog, "--kinds", "robot")
    assert code == 2 and not rows and "Unknown model kind 'robot'" in err


def test_the_about_page_defines_best_of_n_and_why_it_matters():
    from leaderboard.tracks.evalita.app.about import about_markdown

    text = " ".join(about_markdown().split())
    assert "**Best of N from an organisation.**" in text and "Singh et al. 2025" in text
    assert "the part of a model id before" in text and "inflated" in text


@pytest.mark.parametrize("kept", [subsets.TIER_DRAWS_KEPT, 0])
def test_the_custom_tiers_of_each_page_are_the_tiers_of_the_whole_table(data_dir, monkeypatch, kept):
    # A page fills only its rows' custom tiers (their own Holm families), the CSV's table every
    # row's (the whole board's tests): the same tier for every run, in every view, page by page
    # — also when the draws were dropped from memory in between (gathered again: kept = 0).
    monkeypatch.setattr(subsets, "TIER_DRAWS_KEPT", kept)
    seen: list[object] = []
    for setting in (Setting.ZERO, Setting.FIVE, Setting.BOTH):
        for filters in (
            views.RankingFilters(average_over=("te",)),
            views.RankingFilters(average_over=("sum", "te"), show_noncomparable=True),
            views.RankingFilters(average_over=("te", "sa", "ner"), search="model"),
        ):
            fresh = views.current_board(AppContext.from_settings(Settings(data_dir=data_dir)))
            view = views.ranking_view(fresh, setting, filters)
            labels = [column.label for column in view.tier_columns]
            assert labels and all(view.partial[label].isna().all() for label in labels)
            pages = [view.page(n, size=3) for n in range(1, view.page(1, size=3).count + 1)]
            assert "table" not in vars(view)  # no page asked for every row's tier
            shown = pd.concat([page.rows for page in pages])
            pd.testing.assert_frame_equal(shown, view.table)
            seen.extend(shown[label].tolist() for label in labels)
    tiers = [tier for column in seen for tier in column]
    assert any(tier is not None for tier in tiers) and any(tier is None for tier in tiers)


def test_the_cells_kept_per_setting_are_the_cells_formatted_for_the_view(data_dir, monkeypatch):
    # A single-setting view takes each run's rank, interval, tier, identity and key cells from the
    # setting's, formatted once per snapshot: the same table as formatting the view's own rows.
    cases = [
        (Setting.ZERO, views.RankingFilters(), "rank"),
        (Setting.FIVE, views.RankingFilters(search="acme", show_noncomparable=True), "model"),
        (Setting.ZERO, views.RankingFilters(average_over=("te", "sa"), kinds=("chat",)), "params"),
        (Setting.ZERO, views.RankingFilters(search="no such model"), "rank"),
    ]

    def tables() -> list[pd.DataFrame]:
        fresh = views.current_board(AppContext.from_settings(Settings(data_dir=data_dir)))
        return [views.ranking_view(fresh, setting, filters, sort).table for setting, filters, sort in cases]

    kept = tables()
    monkeypatch.setattr(
        ranking,
        "_run_columns",
        lambda board, k, rows: ranking.taken(ranking.run_columns(rows), np.arange(len(rows))),
    )
    direct = tables()
    for a, b in zip(kept, direct, strict=True):
        pd.testing.assert_frame_equal(a, b)
    assert len(kept[0]) >= 6 and kept[-1].empty


def test_only_the_latest_custom_task_sets_views_are_kept_and_a_dropped_one_comes_back_the_same(data_dir):
    # Each custom task set's setting rows and views are kept as one group, the latest
    # MEMO_GROUPS sets only (the standard views stay): a set asked again after it was dropped
    # is computed again, its table (every tier) and its first page equal to the first computation's.
    fresh = views.current_board(AppContext.from_settings(Settings(data_dir=data_dir)))
    sets = [subsets.chosen_tasks(tasks) for tasks in [("te",), ("sa", "ner"), ("sum", "te"), ("hs",)]]
    plain = views.ranking_view(fresh, Setting.ZERO, views.RankingFilters())
    first = {}
    for tasks in sets:
        for setting in (Setting.ZERO, Setting.BOTH):
            view = views.ranking_view(fresh, setting, views.RankingFilters(average_over=tasks))
            first[tasks, setting] = (view, view.table.copy(), view.page(1, size=3).rows.copy())
    assert [group[1:] for group in fresh._grouped] == sets[-board_module.MEMO_GROUPS :]
    assert views.ranking_view(fresh, Setting.ZERO, views.RankingFilters()) is plain  # never dropped
    latest = views.ranking_view(fresh, Setting.ZERO, views.RankingFilters(average_over=sets[-1]))
    assert latest is first[sets[-1], Setting.ZERO][0]  # kept: not computed again
    for tasks in sets:
        for setting in (Setting.ZERO, Setting.BOTH):
            old, table, page = first[tasks, setting]
            again = views.ranking_view(fresh, setting, views.RankingFilters(average_over=tasks))
            if tasks == sets[0]:
                assert again is not old  # dropped, computed again
            pd.testing.assert_frame_equal(again.page(1, size=3).rows, page)
            pd.testing.assert_frame_equal(again.table, table)
    assert len(fresh._grouped) == board_module.MEMO_GROUPS


def test_the_board_keeps_the_latest_asked_groups_apart_from_its_main_memo(monkeypatch):
    monkeypatch.setattr(board_module, "MEMO_GROUPS", 2)
    board = views.Board(loaded=SimpleNamespace(metric_set=DEFAULT_METRIC_SET))  # the memo alone
    calls: list[str] = []

    def computed(name: str):
        def compute() -> str:
            calls.append(name)
            return name

        return compute

    assert board.memo(("plain",), computed("plain")) == "plain"
    for group in ("a", "b", "a", "c"):  # "a" asked again before "c": "b" is the oldest asked
        assert board.memo(("view",), computed(f"view {group}"), group=group) == f"view {group}"
    assert list(board._grouped) == ["a", "c"]
    assert calls == ["plain", "view a", "view b", "view c"]
    assert board.memo(("view",), computed("view b"), group="b") == "view b"  # dropped: computed again
    assert board.memo(("plain",), computed("plain again")) == "plain"  # the main memo untouched
    assert calls[-1] == "view b" and list(board._grouped) == ["c", "b"]
