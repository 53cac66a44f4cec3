"""The safe reader refuses what would crash a later reader, and names the file and the reason."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from eval_queue.errors import MalformedFileError, NotFoundError, StorageError, UnreadableFileError
from eval_queue.safe_json import JsonLimits, loads
from eval_queue.storage import LocalStorage
from eval_queue.text import printable, shorten

LIMITS = JsonLimits(max_bytes=1 << 20)


@pytest.mark.parametrize(
    ("data", "reason"),
    [
        (b"[" * 100_000 + b"]" * 100_000, "nested too deeply; the limit is 32"),
        (b'{"a": ' + b"[" * 40 + b"]" * 40 + b"}", "nested 41 levels deep"),
        (b'{"n": ' + b"9" * 5000 + b"}", "an integer of 5,000 digits"),
        (b'{"n": -' + b"1" * 19 + b"}", "an integer of 19 digits"),
        (b'{"x": NaN}', "NaN is not a JSON number"),
        (b'{"x": -Infinity}', "-Infinity is not a JSON number"),
        (b'{"x": 1e999}', "'1e999' is out of range"),
        (b'{"x": "\\ud800"}', "lone surrogate"),
        (b'{"\\udfff": 1}', "lone surrogate"),
        (b'{"x": "\xed\xa0\x80"}', "not UTF-8"),
        (b'{"x": "\xff"}', "not UTF-8 (byte 7"),
        ('{"x": 1}'.encode("utf-16"), "UTF-16 or UTF-32 byte-order mark"),
        (b'{"status": "PENDING", "status": "FINISHED"}', "duplicate key 'status'"),
        (b'{"x": "a\x1bb"}', "Invalid control character"),
        (b'{"x": ', "not valid JSON"),
        (b"", "not valid JSON"),
        (b"x" * (LIMITS.max_bytes + 1), "the limit is 1,048,576"),
    ],
)
def test_each_hostile_input_is_refused_with_its_reason(data: bytes, reason: str) -> None:
    with pytest.raises(MalformedFileError) as info:
        loads(data, "org/file.json", LIMITS)
    assert info.value.path == "org/file.json"
    assert reason in info.value.reason


def test_brackets_inside_strings_do_not_count_as_nesting() -> None:
    text = json.dumps({"log": "[[[[{{{{" * 100, "quote": 'a "[" b \\ ['})
    assert loads(text.encode(), "f", LIMITS)["log"].startswith("[[[[")


def test_a_utf8_byte_order_mark_is_dropped_and_the_content_kept() -> None:
    assert loads(b'\xef\xbb\xbf{"a": "\xc3\xa8"}', "f", LIMITS) == {"a": "è"}


def test_valid_pairs_escapes_and_control_escapes_are_kept() -> None:
    value = loads(b'{"emoji": "\\ud83d\\ude00", "log": "\\u001b[31mred\\u0007"}', "f", LIMITS)
    assert value == {"emoji": "😀", "log": "\x1b[31mred\x07"}


def test_a_reason_quoting_the_file_is_printable_and_clipped() -> None:
    error = MalformedFileError("org/\x1b[2Jx.json", "unknown schema " + "\x07" * 10_000)
    assert "\x1b" not in str(error) and "\x07" not in error.reason
    assert len(error.reason) < 600 and error.reason.endswith("characters)")


def test_printable_and_shorten() -> None:
    assert printable("a\x1b[31mb\x07\u202ec\n") == "a\\x1b[31mb\\x07\\u202ec\n"
    assert printable("a\nb", keep_newlines=False) == "a\\nb"
    long = shorten("o/" + "m" * 100_000)
    assert long.endswith("… (100,002 characters)") and len(long) < 120


# -- the local store never follows a link and never blocks on a special file ---------------


@pytest.fixture
def store(tmp_path: Path) -> LocalStorage:
    root = tmp_path / "store"
    (root / "org").mkdir(parents=True)
    (root / "org" / "real.json").write_text("{}")
    (tmp_path / "outside.json").write_text('{"secret": 1}')
    (tmp_path / "outside").mkdir()
    (tmp_path / "outside" / "x.json").write_text("{}")
    os.symlink(root / "org" / "real.json", root / "org" / "inside.json")
    os.symlink(tmp_path / "outside.json", root / "org" / "out.json")
    os.symlink(tmp_path / "nowhere.json", root / "org" / "dangling.json")
    os.symlink(tmp_path / "outside", root / "linked-org")
    os.mkfifo(root / "org" / "pipe.json")
    return LocalStorage(root)


def test_links_and_special_files_are_listed_so_readers_can_report_them(store: LocalStorage) -> None:
    assert store.list() == [
        "linked-org",
        "org/dangling.json",
        "org/inside.json",
        "org/out.json",
        "org/pipe.json",
        "org/real.json",
    ]


@pytest.mark.parametrize(
    ("path", "reason"),
    [
        ("org/inside.json", "a symbolic link"),
        ("org/out.json", "a symbolic link"),
        ("org/dangling.json", "a dangling symbolic link"),
        ("org/pipe.json", "not a regular file"),
        ("linked-org/x.json", "a folder on its path is a symbolic link"),
        ("org/../../outside.json", "not a safe store path"),
    ],
)
def test_reading_a_link_or_special_file_is_refused_unread(
    store: LocalStorage, path: str, reason: str
) -> None:
    with pytest.raises(UnreadableFileError) as info:
        store.read(path)
    assert isinstance(info.value, StorageError) and isinstance(info.value, MalformedFileError)
    assert reason in info.value.reason


def test_writing_through_a_linked_folder_is_refused(store: LocalStorage, tmp_path: Path) -> None:
    with pytest.raises(UnreadableFileError):
        store.create("linked-org/new.json", b"{}")
    assert not (tmp_path / "outside" / "new.json").exists()


def test_a_file_over_the_cap_is_refused_before_it_is_read(store: LocalStorage) -> None:
    assert store.read("org/real.json", max_bytes=2) == b"{}"
    with pytest.raises(UnreadableFileError, match="2 bytes; the limit is 1"):
        store.read("org/real.json", max_bytes=1)
    with pytest.raises(NotFoundError):
        store.read("org/missing.json", max_bytes=1)
