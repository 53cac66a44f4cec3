"""The benches' kept synthetic stores carry the app's contents format (issue 32): a store whose
table predates it has the table rebuilt from its results files, once."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pyarrow.parquet as pq
import pytest

from leaderboard.core.contents import CONTENTS_FORMAT, CONTENTS_PATH, METADATA_KEY, format_of, to_parquet
from tests.support.synthetic.results import cached_synthetic_store, refresh_contents

OLDER = "leaderboard-contents/1"


def test_a_kept_store_with_an_older_table_has_it_rebuilt_once(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    data = cached_synthetic_store(tmp_path, 2, workers=1)
    table_path = data / "results" / CONTENTS_PATH
    current = pq.read_table(table_path)
    assert format_of(current.schema) == CONTENTS_FORMAT
    assert refresh_contents(data) is None  # current: nothing rebuilt, nothing said
    assert capsys.readouterr().out == ""
    # The table as an older writer marked it; a hard link stands for another reader's copy.
    older = current.replace_schema_metadata({METADATA_KEY: json.dumps({"format": OLDER}).encode()})
    table_path.write_bytes(to_parquet(older))
    os.link(table_path, tmp_path / "their-copy.parquet")

    assert cached_synthetic_store(tmp_path, 2, workers=1) == data
    said = capsys.readouterr().out
    assert f"{OLDER}, not the app's {CONTENTS_FORMAT}: rebuilding" in said
    rebuilt = pq.read_table(table_path)
    assert format_of(rebuilt.schema) == CONTENTS_FORMAT
    assert rebuilt.equals(current)
    assert (
        format_of(pq.read_schema(tmp_path / "their-copy.parquet")) == OLDER
    )  # replaced, not written through
    assert refresh_contents(data) is None


def test_a_store_without_a_table_gets_one(tmp_path: Path) -> None:
    data = cached_synthetic_store(tmp_path, 2, workers=1)
    (data / "results" / CONTENTS_PATH).unlink()
    assert refresh_contents(data) == "no table"
    assert format_of(pq.read_schema(data / "results" / CONTENTS_PATH)) == CONTENTS_FORMAT
