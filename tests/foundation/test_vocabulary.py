"""The shared vocabulary: fixed values and formats defined once."""

from __future__ import annotations

import pytest

from eval_queue.tracks import track_spec
from eval_queue.vocabulary import SHORT_REVISION_LEN, RunRef, short_revision
from leaderboard.tracks.evalita import definition as suite
from leaderboard.tracks.evalita import vocabulary as evalita_vocabulary
from leaderboard.tracks.evalita.vocabulary import (
    FEWSHOT_SETTINGS,
    MODEL_AGGREGATES,
    PROMPT_AGGREGATES,
    RANKING_AGGREGATES,
    RUN_SETTINGS,
    Aggregate,
    Setting,
)


def test_short_revision_keeps_twelve_characters_of_a_sha() -> None:
    sha = "ed21def1e1b1a81abad67639c340480c39966810"
    assert short_revision(sha) == "ed21def1e1b1"
    assert len(short_revision(sha)) == SHORT_REVISION_LEN


def test_short_revision_leaves_a_short_branch_name_alone() -> None:
    assert short_revision("main") == "main"


def test_every_track_has_a_distinct_label() -> None:
    from eval_queue.tracks import DEFAULT_TRACK, track_registry

    labels = [spec.label for spec in track_registry()]
    assert len(set(labels)) == len(labels) == len(track_registry().names)
    assert track_registry().spec(DEFAULT_TRACK).name == "evalita"


def test_every_setting_has_a_label_and_its_few_shot_count() -> None:
    assert [(s.value, s.num_fewshot, s.label) for s in Setting] == [
        ("0", 0, "0-shot"),
        ("5", 5, "5-shot"),
        ("both", None, "both (5-shot − 0-shot)"),
    ]
    assert tuple(s.num_fewshot for s in RUN_SETTINGS) == FEWSHOT_SETTINGS == Setting.BOTH.fewshots
    assert Setting.of_fewshot(5) is Setting.FIVE


def test_a_few_shot_count_the_leaderboard_does_not_run_is_refused_with_the_valid_ones() -> None:
    with pytest.raises(ValueError, match=r"\[0, 5\].*3"):
        Setting.of_fewshot(3)


def test_the_few_shot_settings_are_defined_once_by_the_track_and_its_spec_carries_them() -> None:
    assert suite.FEWSHOT_SETTINGS is evalita_vocabulary.FEWSHOT_SETTINGS is track_spec("evalita").fewshot


def test_a_request_or_results_file_may_only_ask_for_a_setting_its_track_runs() -> None:
    evalita, judge = track_spec("evalita"), track_spec("judge")
    assert evalita.check_fewshot(5) == 5 and judge.check_fewshot(0) == 0
    with pytest.raises(ValueError, match=r"num_fewshot must be one of \[0, 5\], got 3"):
        evalita.check_fewshot(3)
    with pytest.raises(ValueError, match="the judge track has no few-shot setting"):
        judge.check_fewshot(5)


def test_aggregate_labels_are_distinct_and_the_column_sets_are_subsets() -> None:
    labels = [a.label for a in Aggregate]
    assert len(set(labels)) == len(labels)
    assert set(RANKING_AGGREGATES) <= set(MODEL_AGGREGATES)
    assert Aggregate.MINP in PROMPT_AGGREGATES and Aggregate.MINP not in MODEL_AGGREGATES
    assert [a for a in Aggregate if not a.is_score] == [Aggregate.BEST_PROMPT]


def test_a_run_reference_round_trips_through_its_key_and_rejects_anything_else() -> None:
    ref = RunRef("org/model", "0123456789abcdef0123", "bfloat16")
    assert RunRef.parse(ref.key) == ref
    assert ref.short_revision == "0123456789ab"
    for junk in ("", "org/model", "a|b", "a|b|c|d", "a||c", "<script>|x|y|z"):
        assert RunRef.parse(junk) is None, junk
