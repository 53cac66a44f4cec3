"""What the contamination track knows of the tracks whose public test sets it tests.

The sets are the ten Evalita-LLM tasks' test splits as the harness reads them (NER: one per
domain) and INDAQA2's questions.  This is the one module of the track that names another
track's domain; every other module takes the sets from :func:`suite_sets`.
"""

from __future__ import annotations

from leaderboard.tracks.contamination.definition import TestSet
from leaderboard.tracks.evalita.definition import SUITE
from leaderboard.tracks.long_context.definition import HUB_DATASET as INDAQA2_DATASET
from leaderboard.tracks.long_context.definition import HUB_DATASET_CONFIG as INDAQA2_CONFIG

#: The set id of INDAQA2's questions (every question of every book, in file order).
INDAQA2 = "indaqa2"


def suite_sets() -> tuple[TestSet, ...]:
    """Every public test set of the suite, in the suite's order, INDAQA2 last."""
    sets: list[TestSet] = []
    for task in SUITE:
        configs = task.dataset.configs if len(task.dataset.configs) > 1 else (None,)
        for config in configs:
            set_id = str(task.id) if config is None else f"{task.id}-{config}"
            label = task.abbrev if config is None else f"{task.abbrev} ({config})"
            default_config = task.dataset.configs[0] if task.dataset.configs else None
            sets.append(
                TestSet(
                    id=set_id,
                    label=label,
                    task=str(task.id),
                    dataset_path=task.dataset.path,
                    dataset_config=config if config is not None else default_config,
                    split=task.dataset.test_split,
                )
            )
    sets.append(
        TestSet(
            id=INDAQA2,
            label="INDAQA2 (questions)",
            task=INDAQA2,
            dataset_path=INDAQA2_DATASET,
            dataset_config=INDAQA2_CONFIG,
            split="*",
            optional=True,
        )
    )
    return tuple(sets)
