"""The shared vocabulary: fixed values and formats defined once."""

from __future__ import annotations

from eval_queue.vocabulary import SHORT_REVISION_LEN, Track, short_revision


def test_short_revision_keeps_twelve_characters_of_a_sha() -> None:
    sha = "ed21def1e1b1a81abad67639c340480c39966810"
    assert short_revision(sha) == "ed21def1e1b1"
    assert len(short_revision(sha)) == SHORT_REVISION_LEN


def test_short_revision_leaves_a_short_branch_name_alone() -> None:
    assert short_revision("main") == "main"


def test_every_track_has_a_distinct_label() -> None:
    labels = [track.label for track in Track]
    assert len(set(labels)) == len(labels) == len(Track)
    assert Track("evalita") is Track.EVALITA
