"""Longest files first: the order in which ``pytest -n 2 --dist loadfile`` hands test files to its workers.

xdist's ``loadfile`` gives each worker a whole file at a time, in collection order
(``--no-loadscope-reorder``), the next one whenever a worker is nearly out of work.  In
alphabetical order a long file that comes late (the UI's browser tests) starts when the other
worker has little left, and the run ends with one worker idle.  Handing out the longest files
first and the short ones last ("longest processing time first") lets the short files fill the
gap, so both workers end within a short file of each other.

:data:`HEAVY_FILES` holds the files that take longest, with their time on one worker (seconds,
setup included, measured in a whole run under xdist); every other file counts as short and keeps
its collection order after them.  ``tests/conftest.py`` applies the order under xdist only.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import TypeVar

Item = TypeVar("Item")

#: Test files that take longest on one worker (seconds), longest first: the junit times of one whole
#: ``-n 2`` run from a clean clone on 2026-11-28 (stop 33, the shared 2-core machine, quiet: pytest
#: 7 min 1 s; the fast-path parity file's bootstrap cut since, some 6 s; with them the two workers
#: ended 0.2–1.5 s apart in the stop's last three runs).  Relative values only matter.  Re-measure with ``scripts/test.sh --durations=0 --junitxml=FILE`` (``-v`` shows which
#: worker ran what) when a file grows, and list any file that takes more than a few seconds.
HEAVY_FILES: Mapping[str, float] = {
    "tests/ui/test_browser.py": 82,
    "tests/backend/test_fastpath_equality.py": 67,
    "tests/judge/test_browser.py": 64,
    "tests/publish/test_fault_injection.py": 31,
    "tests/ui/test_browser_uncertainty.py": 23,
    "tests/backend/test_worker_e2e.py": 23,
    "tests/reproduce/test_reproduce.py": 21,
    "tests/contamination/test_browser.py": 21,
    "tests/backend/test_embedded.py": 21,
    "tests/long_context/test_worker_e2e.py": 20,
    "tests/queue/test_concurrency.py": 19,
    "tests/judge/test_harness_run.py": 19,
    "tests/ui/test_browser_user_views.py": 19,
    "tests/reproduce/test_recipe.py": 18,
    "tests/test_preforked.py": 17,
    "tests/backend/test_runner_equivalence.py": 17,
    "tests/slurm/test_slurm.py": 17,
    "tests/publish/test_race.py": 15,
    "tests/metrics/test_classification_f1.py": 14,
    "tests/backend/test_worker.py": 13,
    "tests/ui/test_client.py": 13,
    "tests/long_context/test_smollm2.py": 11,
    "tests/test_boundaries.py": 9,
    "tests/contamination/test_worker_e2e.py": 8,
    "tests/publish/test_kills.py": 8,
    "tests/backend/test_rouge.py": 8,
    "tests/ui/test_browser_metrics.py": 8,
    "tests/publish/test_hub_client.py": 8,
    "tests/tracks/test_toy_track.py": 7,
    "tests/contents/test_concurrency.py": 7,
    "tests/reproduce/test_browser.py": 7,
    "tests/contamination/test_memorised_model.py": 7,
    "tests/uncertainty/test_calibration.py": 6,
    "tests/backend/test_data_sources.py": 6,
    "tests/long_context/test_metrics.py": 5,
    "tests/ui/test_api_cache.py": 5,
    "tests/ui/test_views.py": 5,
    "tests/rescore/test_rescore_intervals.py": 5,
    "tests/ui/test_user_views.py": 5,
    "tests/ui/test_refresh.py": 5,
    "tests/contents/test_columnar_cold_start.py": 5,
    "tests/ui/test_app_import.py": 5,
}


def file_of(nodeid: str) -> str:
    """The test file of a node id (``tests/a/test_b.py::test_c[1]`` → ``tests/a/test_b.py``)."""
    return nodeid.split("::", 1)[0]


def longest_first(
    items: Sequence[Item], nodeid: Callable[[Item], str], seconds: Mapping[str, float] = HEAVY_FILES
) -> list[Item]:
    """The items with their files reordered longest first; each file's tests kept together, in order.

    Files not in ``seconds`` come after the listed ones, in their collection order.
    """
    first_seen: dict[str, int] = {}
    for position, item in enumerate(items):
        first_seen.setdefault(file_of(nodeid(item)), position)

    def key(item: Item) -> tuple[float, int]:
        path = file_of(nodeid(item))
        return (-seconds.get(path, 0.0), first_seen[path])

    return sorted(items, key=key)
