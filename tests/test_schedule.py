"""The test files' order under xdist: longest first, each file whole and in order, the list up to date."""

from __future__ import annotations

from pathlib import Path

from tests.support.schedule import HEAVY_FILES, file_of, longest_first

ROOT = Path(__file__).resolve().parents[1]


def test_longer_files_come_first_each_whole_and_the_rest_keep_their_order() -> None:
    collected = [
        "tests/a.py::t1",
        "tests/b.py::t1",
        "tests/b.py::t2[x]",
        "tests/c.py::C::t1",
        "tests/d.py::t1",
        "tests/b.py::t3",  # a file's tests stay together even if collected apart
        "tests/c.py::C::t2",
    ]

    ordered = longest_first(collected, str, {"tests/c.py": 30.0, "tests/b.py": 10.0})

    assert ordered == [
        "tests/c.py::C::t1",
        "tests/c.py::C::t2",
        "tests/b.py::t1",
        "tests/b.py::t2[x]",
        "tests/b.py::t3",
        "tests/a.py::t1",
        "tests/d.py::t1",
    ]
    # Without weights: files in the order they were first collected, each whole.
    assert [file_of(n) for n in longest_first(collected, str, {})] == [
        "tests/a.py",
        "tests/b.py",
        "tests/b.py",
        "tests/b.py",
        "tests/c.py",
        "tests/c.py",
        "tests/d.py",
    ]


def test_every_listed_heavy_file_is_a_test_file_of_the_suite() -> None:
    assert HEAVY_FILES, "no file is scheduled first: the list is empty"
    missing = [path for path in HEAVY_FILES if not (ROOT / path).is_file()]
    assert not missing, f"renamed or removed: update tests/support/schedule.py HEAVY_FILES: {missing}"
    assert all(Path(path).name.startswith("test_") for path in HEAVY_FILES)
    assert list(HEAVY_FILES.values()) == sorted(HEAVY_FILES.values(), reverse=True)
