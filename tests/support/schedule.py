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
#: ``-n 2`` run on 2026-11-28, on the shared 2-core machine under load (load average 7 to 13; a
#: quiet machine takes about a third as long).  Relative values only matter.  Re-measure with
#: ``scripts/test.sh --durations=0 --junitxml=FILE`` (``-v`` shows which worker ran what) when a
#: file grows, and list any file that takes more than a few seconds.
HEAVY_FILES: Mapping[str, float] = {
    "tests/ui/test_browser.py": 242,
    "tests/backend/test_fastpath_equality.py": 200,
    "tests/judge/test_browser.py": 180,
    "tests/backend/test_worker_e2e.py": 132,
    "tests/judge/test_harness_run.py": 127,  # 153 before its tiny judge answered one prompt at a time
    "tests/long_context/test_worker_e2e.py": 122,
    "tests/reproduce/test_reproduce.py": 107,
    # 147 before the GGUF conversion parsed its file once (-n 0 CPU ratio 17.5/29.5)
    "tests/backend/test_embedded.py": 87,
    "tests/backend/test_runner_equivalence.py": 73,
    "tests/publish/test_fault_injection.py": 64,  # 69 before the held answers' shorter timeout
    "tests/foundation/test_export_cli.py": 58,
    "tests/backend/test_data_sources.py": 57,  # 93 before issue 30's cuts (estimates from -n 0 CPU ratios)
    "tests/reproduce/test_recipe.py": 55,
    "tests/ui/test_browser_user_views.py": 54,
    "tests/ui/test_browser_uncertainty.py": 50,
    "tests/queue/test_concurrency.py": 48,
    "tests/rescore/test_rescore_real_run.py": 45,  # 77: its worker run is now suite_run, shared
    "tests/slurm/test_slurm.py": 41,
    "tests/ui/test_browser_metrics.py": 39,
    "tests/metrics/test_rouge.py": 39,
    "tests/publish/test_kills.py": 38,
    "tests/metrics/test_classification_f1.py": 38,
    "tests/contamination/test_browser.py": 38,
    "tests/test_boundaries.py": 37,
    "tests/publish/test_race.py": 36,
    "tests/contents/test_publish_contents.py": 35,  # 59: its worker run is now the reproduce tests'
    "tests/contents/test_concurrency.py": 35,
    "tests/long_context/test_smollm2.py": 34,
    "tests/tracks/test_toy_track.py": 33,
    "tests/backend/test_rouge.py": 29,
    "tests/contamination/test_worker_e2e.py": 26,
    "tests/foundation/test_suite.py": 24,  # 45 before it indexed lm-eval's whole task folder
    "tests/contamination/test_memorised_model.py": 24,  # 31 before its training was cut to 80 steps
    "tests/contents/test_contents.py": 22,
    "tests/uncertainty/test_calibration.py": 21,
    "tests/hostile/test_corpus.py": 20,
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
