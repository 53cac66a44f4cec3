"""The results schema of the track and the tables computed from it (Table 5 of the paper)."""

from __future__ import annotations

import json

import pytest

from eval_queue.errors import MalformedFileError
from leaderboard.tracks.long_context.app.tables import (
    TABLE5_COLUMN_NAMES,
    column_label,
    export_table,
    plot_frame,
    table5,
)
from leaderboard.tracks.long_context.definition import ContextSetting, QuestionSet
from leaderboard.tracks.long_context.schema import LongContextResults

# INDAQA2 Table 5, 10K-word context, the four 7-8B models (0–100):
# Summary EM, METEOR; Local EM, METEOR, ACC; Local alt. EM, METEOR, ACC; Entity METEOR.
PAPER_10K = {
    "ANITA-8B": (3.92, 23.12, 10.38, 14.92, 38.08, 4.16, 11.47, 36.37, 20.15),
    "Minerva-7B": (3.24, 25.37, 8.15, 16.98, 28.57, 2.89, 12.56, 25.08, 21.56),
    "Minerva-7B_L": (5.08, 26.93, 11.87, 20.31, 33.52, 6.08, 15.31, 27.48, 22.21),
    "Llama3.1-8B": (4.46, 25.60, 14.44, 18.66, 43.83, 9.89, 16.65, 43.15, 20.83),
}
# The paper's bold (best per column among the 7-8B models, 10K).
PAPER_BOLD = (
    "Minerva-7B_L",
    "Minerva-7B_L",
    "Llama3.1-8B",
    "Minerva-7B_L",
    "Llama3.1-8B",
    "Llama3.1-8B",
    "Llama3.1-8B",
    "Llama3.1-8B",
    "Minerva-7B_L",
)

TRUNCATION = {
    "items": 10,
    "words_cut": 2,
    "window_cut": 1,
    "offered_words_mean": 9000.0,
    "context_tokens_mean": 14000.0,
    "seen_tokens_mean": 8000.0,
    "seen_tokens_min": 4000,
    "seen_fraction_mean": 0.6,
    "window_tokens": 8192,
}


def _sets(values: tuple[float, ...]) -> dict[str, dict]:
    s_em, s_met, l_em, l_met, l_acc, a_em, a_met, a_acc, e_met = (v / 100 for v in values)
    return {
        "summary": {"n_oe": 10, "em": s_em, "meteor": s_met, "meteor_it": s_met},
        "local": {
            "n_oe": 10,
            "em": l_em,
            "meteor": l_met,
            "meteor_it": l_met,
            "n_mc": 10,
            "acc": l_acc,
            "unparsed": 0.1,
        },
        "local_alt": {
            "n_oe": 5,
            "em": a_em,
            "meteor": a_met,
            "meteor_it": a_met,
            "n_mc": 5,
            "acc": a_acc,
            "unparsed": 0.0,
        },
        "entity": {"n_oe": 3, "em": 0.0, "meteor": e_met, "meteor_it": e_met},
    }


def _document(
    model: str, values: tuple[float, ...], settings: tuple[str, ...] = ("10k",), data: str = "hub"
) -> dict:
    return {
        "schema": "evalita-llm-results/2",
        "track": "long-context",
        "model": {"id": f"org/{model}", "revision": "abc", "precision": "bfloat16"},
        "run": {
            "num_fewshot": 0,
            "data": data,
            "context_settings": list(settings),
            "kept_side": "end",
            # A hub run of the paper's data: its revision recorded, its counts the paper's.
            **({"data_sha256": "d" * 64, "data_mismatches": []} if data == "hub" else {}),
        },
        "settings": {s: {"sets": _sets(values), "truncation": TRUNCATION} for s in settings},
    }


def _results(model: str, values: tuple[float, ...], **kwargs) -> LongContextResults:
    return LongContextResults.from_json(json.dumps(_document(model, values, **kwargs)).encode(), "x.json")


def test_table5_reproduces_the_papers_10k_rows_and_bold():
    runs = [_results(name, values) for name, values in PAPER_10K.items()]
    table = table5(runs)
    assert list(table.frame.columns[4:]) == list(TABLE5_COLUMN_NAMES)
    for (_, row), (name, values) in zip(table.frame.iterrows(), PAPER_10K.items(), strict=True):
        assert row["model"] == f"org/{name}"
        assert tuple(row[list(TABLE5_COLUMN_NAMES)]) == values
    bold = [table.frame.loc[table.best[col], "model"].tolist() for col in TABLE5_COLUMN_NAMES]
    assert bold == [[f"org/{name}"] for name in PAPER_BOLD]
    assert column_label("local_alt_acc") == "Local alt. ACC"


def test_best_is_marked_within_each_setting_and_ties_are_all_marked():
    same = PAPER_10K["ANITA-8B"]
    runs = [_results("a", same, settings=("10k", "full")), _results("b", same, settings=("10k",))]
    table = table5(runs)
    assert table.settings() == ["10k", "full"]
    assert table.best.loc[table.frame["setting"] == "10k"].all().all()  # a tie: both rows best
    assert table.best.loc[table.frame["setting"] == "full"].all().all()  # alone in its setting


def test_noncomparable_runs_are_listed_only_on_request():
    runs = [_results("sample", PAPER_10K["ANITA-8B"], data="sample")]
    assert table5(runs).frame.empty
    assert len(table5(runs, include_noncomparable=True).frame) == 1


def test_plot_frame_orders_settings_and_export_keeps_every_number():
    run = _results("m", PAPER_10K["Llama3.1-8B"], settings=("full", "10k"))
    plot = plot_frame([run])
    assert plot["setting"].drop_duplicates().tolist() == ["10k", "full"]
    assert len(plot) == 2 * len(TABLE5_COLUMN_NAMES)
    export = export_table([run])
    row = export.iloc[0]
    assert row["local_unparsed"] == 10.0 and row["local_meteor_it"] == 18.66 and row["entity_acc"] is None
    assert (row["window_cut"], row["seen_tokens_min"], row["local_n_mc"]) == (1, 4000, 10)


@pytest.mark.parametrize(
    ("change", "message"),
    [
        (lambda d: d["settings"]["10k"]["sets"].pop("entity"), "question set"),
        (lambda d: d["settings"]["10k"]["sets"]["local"].pop("acc"), "given together"),
        (
            lambda d: d["settings"]["10k"]["sets"]["entity"].update(n_mc=2, acc=0.5, unparsed=0.0),
            "no multiple-choice",
        ),
        (lambda d: d["settings"]["10k"]["sets"]["summary"].update(em=43.8), "less than or equal to 1"),
        (lambda d: d["run"].update(context_settings=["10k", "full"]), "differ from run.context_settings"),
        (lambda d: d["settings"]["10k"].update(extra=1), "extra"),
        (lambda d: d.update(track="judge"), "a 'judge' results file, not a 'long-context' one"),
        (lambda d: d["settings"].update({"20k": d["settings"]["10k"]}), "settings"),
    ],
)
def test_a_malformed_results_file_is_rejected_naming_the_problem(change, message):
    document = _document("m", PAPER_10K["ANITA-8B"])
    change(document)
    with pytest.raises(MalformedFileError, match=message) as err:
        LongContextResults.from_json(json.dumps(document).encode(), "results/org/m/results_x.json")
    assert "results/org/m/results_x.json" in str(err.value)


def test_results_round_trip_through_json():
    run = _results("m", PAPER_10K["Minerva-7B"], settings=("10k", "50k", "full"))
    assert LongContextResults.from_json(run.to_json(), "r.json") == run
    local = run.settings[ContextSetting.K50].sets[QuestionSet.LOCAL]
    assert (local.n_oe, local.n_mc) == (10, 10)
    assert (local.em, local.acc, local.unparsed) == pytest.approx((0.0815, 0.2857, 0.1))


@pytest.mark.parametrize(
    ("run_fields", "variants"),
    [
        ({}, ()),
        ({"kept_side": "start"}, ("window keeps the start",)),
        ({"kept_side": None}, ("window keeps the start",)),  # written before the side was recorded
        ({"chat_template": True}, ("chat template",)),
    ],
)
def test_only_runs_measuring_as_the_paper_are_comparable(run_fields, variants):
    document = _document("m", PAPER_10K["ANITA-8B"])
    document["run"].update(run_fields)
    run = LongContextResults.from_json(json.dumps(document).encode(), "r.json")
    assert run.run.variants == variants
    assert run.comparable is (not variants)
    assert table5([run]).frame.empty is bool(variants)
    [row] = export_table([run], include_noncomparable=True).to_dict("records")
    assert row["variant"] == (", ".join(variants) or None)


def test_a_variant_is_never_ranked_beside_the_papers_measurement():
    paper = _results("paper", PAPER_10K["ANITA-8B"])
    document = _document("start", PAPER_10K["Llama3.1-8B"])  # better in every column
    document["run"]["kept_side"] = "start"
    variant = LongContextResults.from_json(json.dumps(document).encode(), "v.json")
    table = table5([paper, variant], include_noncomparable=True)
    rows = dict(zip(table.frame["model"], table.best.itertuples(index=False), strict=True))
    assert all(rows["org/paper"]), "the best of the comparable runs, whatever the variant scored"
    assert all(rows["org/start"]), "and the variant is the best of its own kind only"
