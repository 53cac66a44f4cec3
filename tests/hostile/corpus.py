"""The hostile corpus: request, results and details files as a hostile writer of a store would make them.

Every file is generated from the tables below into ``tmp_path`` (no binary fixture is
committed).  Each :class:`Case` says what the readers must make of it:

* ``Expect.MALFORMED`` — skipped and named (path and a reason containing ``reason``),
  never rewritten;
* ``Expect.SERVED`` — a valid file, however odd: it is served (listed, claimed, run,
  ranked) and shown safely;
* ``Expect.REFUSED_AT_RUN`` — a valid request file whose model id or revision could not
  have been submitted: the worker refuses it (FAILED, with ``reason``) before any
  ``model_args`` is built.

``local_only`` cases need a file system (links, FIFOs); the others also run on the hub double.
"""

from __future__ import annotations

import json
import os
from collections.abc import Callable
from dataclasses import dataclass, field
from enum import StrEnum
from pathlib import Path
from typing import Any

from eval_queue.requests import request_path
from leaderboard.tracks.evalita.definition import SUITE

SUBMITTED = "2026-03-01T09:00:00Z"
FINISHED_AT = "2026-03-01T10:00:00Z"


class Expect(StrEnum):
    MALFORMED = "malformed"
    SERVED = "served"
    REFUSED_AT_RUN = "refused at run"


@dataclass(frozen=True)
class Case:
    """One hostile file: ``content`` bytes at ``path`` in the store, or a file-system ``make``."""

    name: str
    kind: str
    path: str
    expect: Expect
    reason: str = ""
    content: bytes | None = None
    # Builds the entry itself (a link, a FIFO): ``make(store_root, outside_dir)``.
    make: Callable[[Path, Path], None] | None = field(default=None, compare=False)
    # A served request that ends in this status after the worker polls (None: as written).
    final_status: str | None = "FINISHED"

    @property
    def local_only(self) -> bool:
        return self.make is not None


def dump(value: Any) -> bytes:
    return json.dumps(value, ensure_ascii=False).encode()


# -- requests ------------------------------------------------------------------------------


def request(model: str, **changes: Any) -> dict[str, Any]:
    base = {
        "schema": "evalita-llm-request/1",
        "model": model,
        "revision": "main",
        "precision": "bfloat16",
        "num_fewshot": 0,
        "model_type": "pretrained",
        "submitted_by": "hostile",
        "submitted_time": SUBMITTED,
        "status": "PENDING",
        "history": [],
    }
    return {**base, **changes}


def rpath(model: str, num_fewshot: int = 0, revision: str = "main") -> str:
    return request_path(model, revision, "bfloat16", num_fewshot)


def raw_request(model: str, body: str | bytes) -> bytes:
    """A request whose JSON text is spliced by hand (what ``json.dumps`` cannot write)."""
    return dump(request(model))[:-1] + b", " + (body.encode() if isinstance(body, str) else body) + b"}"


#: The good requests: the oldest in the queue, so every claim order reaches them first.
GOOD_REQUESTS = {
    rpath("org/good-a"): dump(request("org/good-a", submitted_time="2026-01-01T00:00:00Z")),
    rpath("org/good-b"): dump(
        request("org/good-b", submitted_time="2026-01-01T00:00:01Z", submitted_by="other")
    ),
}


def _link_to(target: str) -> Callable[[Path, Path], None]:
    def make(root: Path, outside: Path) -> None:
        os.symlink(root / target, root / LINK_IN_PATH)

    return make


def _link_out(root: Path, outside: Path) -> None:
    target = outside / "request.json"
    target.write_bytes(dump(request("org/link-out")))
    os.symlink(target, root / rpath("org/link-out"))


def _dangling(root: Path, outside: Path) -> None:
    os.symlink(outside / "deleted.json", root / rpath("org/dangling"))


def _linked_folder(root: Path, outside: Path) -> None:
    folder = outside / "folder"
    folder.mkdir()
    (folder / "x_eval_request_main_bfloat16_0shot.json").write_bytes(dump(request("linked-org/x")))
    os.symlink(folder, root / "linked-org")


def _fifo(root: Path, outside: Path) -> None:
    os.mkfifo(root / rpath("org/fifo"))


LINK_IN_PATH = rpath("org/link-in")
HUGE_ID = "org/" + "m" * 100_000

REQUEST_CASES: tuple[Case, ...] = (
    # truncated, empty, not JSON
    Case(
        "truncated",
        "truncated",
        rpath("org/trunc"),
        Expect.MALFORMED,
        "not valid JSON",
        dump(request("org/trunc"))[:40],
    ),
    Case(
        "cut in a string",
        "truncated",
        rpath("org/trunc2"),
        Expect.MALFORMED,
        "not valid JSON",
        b'{"model": "org/tr',
    ),
    Case("empty", "truncated", rpath("org/empty"), Expect.MALFORMED, "not valid JSON", b""),
    Case("whitespace", "truncated", rpath("org/blank"), Expect.MALFORMED, "not valid JSON", b" \n\t "),
    # wrong types and missing fields
    Case(
        "attempts a word",
        "wrong types",
        rpath("org/t1"),
        Expect.MALFORMED,
        "field 'attempts'",
        dump(request("org/t1", attempts="many")),
    ),
    Case(
        "model a number",
        "wrong types",
        rpath("org/t2"),
        Expect.MALFORMED,
        "field 'model'",
        dump(request("org/t2") | {"model": 123}),
    ),
    Case(
        "history a string",
        "wrong types",
        rpath("org/t3"),
        Expect.MALFORMED,
        "field 'history'",
        dump(request("org/t3", history="x")),
    ),
    Case(
        "history of numbers",
        "wrong types",
        rpath("org/t4"),
        Expect.MALFORMED,
        "field 'history.0'",
        dump(request("org/t4", history=[1, 2])),
    ),
    Case(
        "status a number",
        "wrong types",
        rpath("org/t5"),
        Expect.MALFORMED,
        "field 'status'",
        dump(request("org/t5", status=5)),
    ),
    Case(
        "few-shot a word",
        "wrong types",
        rpath("org/t6"),
        Expect.MALFORMED,
        "field 'num_fewshot'",
        dump(request("org/t6", num_fewshot="five")),
    ),
    Case(
        "negative attempts",
        "wrong types",
        rpath("org/t7"),
        Expect.MALFORMED,
        "field 'attempts'",
        dump(request("org/t7", attempts=-1)),
    ),
    Case(
        "no model",
        "missing fields",
        rpath("org/m1"),
        Expect.MALFORMED,
        "field 'model': Field required",
        dump({k: v for k, v in request("org/m1").items() if k != "model"}),
    ),
    Case(
        "no submitted_time",
        "missing fields",
        rpath("org/m2"),
        Expect.MALFORMED,
        "field 'submitted_time'",
        dump({k: v for k, v in request("org/m2").items() if k != "submitted_time"}),
    ),
    # size, binary, shape
    Case(
        "2 MB",
        "huge",
        rpath("org/huge"),
        Expect.MALFORMED,
        "the limit is 1,048,576",
        dump(request("org/huge", pad="x" * (2 << 20))),
    ),
    Case("all bytes", "binary", rpath("org/bin1"), Expect.MALFORMED, "not UTF-8", bytes(range(256)) * 4),
    Case(
        "a PNG",
        "binary",
        rpath("org/bin2"),
        Expect.MALFORMED,
        "not UTF-8",
        b"\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR\xff\xff",
    ),
    Case(
        "NUL in a string",
        "binary",
        rpath("org/bin3"),
        Expect.MALFORMED,
        "Invalid control character",
        b'{"model": "org/bin3\x00"}',
    ),
    Case(
        "top-level array",
        "not an object",
        rpath("org/arr"),
        Expect.MALFORMED,
        "not a JSON object",
        b"[1, 2, 3]",
    ),
    Case(
        "top-level string",
        "not an object",
        rpath("org/str"),
        Expect.MALFORMED,
        "not a JSON object",
        b'"PENDING"',
    ),
    Case(
        "top-level null", "not an object", rpath("org/null"), Expect.MALFORMED, "not a JSON object", b"null"
    ),
    Case(
        "100,000 levels",
        "deep nesting",
        rpath("org/deep1"),
        Expect.MALFORMED,
        "nested too deeply",
        b"[" * 100_000 + b"]" * 100_000,
    ),
    Case(
        "40 levels in an extra key",
        "deep nesting",
        rpath("org/deep2"),
        Expect.MALFORMED,
        "nested 41 levels",
        raw_request("org/deep2", '"x": ' + "[" * 40 + "]" * 40),
    ),
    # numbers
    Case(
        "5,000-digit attempts",
        "huge integers",
        rpath("org/int1"),
        Expect.MALFORMED,
        "an integer of 5,000 digits",
        raw_request("org/int1", '"attempts2": ' + "9" * 5000),
    ),
    Case(
        "30-digit params",
        "huge integers",
        rpath("org/int2"),
        Expect.MALFORMED,
        "an integer of 30 digits",
        raw_request("org/int2", '"params_b2": ' + "1" * 30),
    ),
    Case(
        "NaN",
        "NaN/Infinity",
        rpath("org/nan"),
        Expect.MALFORMED,
        "NaN is not a JSON number",
        raw_request("org/nan", '"p": NaN'),
    ),
    Case(
        "Infinity",
        "NaN/Infinity",
        rpath("org/inf"),
        Expect.MALFORMED,
        "Infinity is not a JSON number",
        raw_request("org/inf", '"p": -Infinity'),
    ),
    Case(
        "1e999",
        "NaN/Infinity",
        rpath("org/ovf"),
        Expect.MALFORMED,
        "out of range",
        raw_request("org/ovf", '"p": 1e999'),
    ),
    # encodings
    Case(
        "UTF-8 BOM",
        "BOM",
        rpath("org/bom"),
        Expect.SERVED,
        content=b"\xef\xbb\xbf" + dump(request("org/bom")),
    ),
    Case(
        "UTF-16 with BOM",
        "BOM",
        rpath("org/utf16"),
        Expect.MALFORMED,
        "UTF-16",
        json.dumps(request("org/utf16")).encode("utf-16"),
    ),
    Case(
        "lone surrogate value",
        "surrogates",
        rpath("org/sur1"),
        Expect.MALFORMED,
        "lone surrogate",
        raw_request("org/sur1", '"note": "\\ud800"'),
    ),
    Case(
        "lone surrogate key",
        "surrogates",
        rpath("org/sur2"),
        Expect.MALFORMED,
        "lone surrogate",
        raw_request("org/sur2", '"\\udfff": 1'),
    ),
    Case(
        "encoded surrogate",
        "surrogates",
        rpath("org/sur3"),
        Expect.MALFORMED,
        "not UTF-8",
        raw_request("org/sur3", b'"note": "\xed\xa0\x80"'),
    ),
    Case(
        "invalid UTF-8",
        "surrogates",
        rpath("org/utf8"),
        Expect.MALFORMED,
        "not UTF-8",
        b'{"model": "org/utf8\xff"}',
    ),
    # control characters
    Case(
        "raw ESC in a string",
        "control characters",
        rpath("org/esc1"),
        Expect.MALFORMED,
        "Invalid control character",
        b'{"model": "org/esc1\x1b[2J"}',
    ),
    Case(
        "escaped ESC/BEL in an error",
        "control characters",
        rpath("org/esc2"),
        Expect.SERVED,
        content=dump(request("org/esc2", status="FAILED", error="CUDA \x1b[31merror\x07\x1b]0;pwned\x07")),
        final_status="FAILED",
    ),
    Case(
        "escaped ESC in the submitter",
        "control characters",
        rpath("org/esc3"),
        Expect.SERVED,
        content=dump(request("org/esc3", submitted_by="\x1b[2Jme")),
    ),
    Case(
        "ESC in the file name",
        "control characters",
        "org/\x1b[2Jname_eval_request_main_bfloat16_0shot.json",
        Expect.MALFORMED,
        "wrong place",
        dump(request("org/name")),
    ),
    # markup and injection
    Case(
        "script in the model id",
        "HTML/script",
        rpath("<script>alert(1)</script>/x"),
        Expect.REFUSED_AT_RUN,
        "is not a Hub model id",
        dump(request("<script>alert(1)</script>/x")),
    ),
    Case(
        "markup in the licence",
        "HTML/script",
        rpath("org/lic"),
        Expect.SERVED,
        content=dump(request("org/lic", license="<img src=x onerror=alert(1)>")),
    ),
    Case(
        "model_args injection",
        "path traversal",
        rpath("org/x,peft=/tmp/evil"),
        Expect.REFUSED_AT_RUN,
        "is not a Hub model id",
        dump(request("org/x,peft=/tmp/evil")),
    ),
    Case(
        "revision injection",
        "path traversal",
        rpath("org/rev", revision="main,trust_remote_code=True"),
        Expect.REFUSED_AT_RUN,
        "is not a valid revision",
        dump(request("org/rev", revision="main,trust_remote_code=True")),
    ),
    Case(
        "traversal in the model id",
        "path traversal",
        rpath("org/../../etc/passwd"),
        Expect.REFUSED_AT_RUN,
        "is not a Hub model id",
        dump(request("org/../../etc/passwd")),
    ),
    Case(
        "traversal in results_path",
        "path traversal",
        rpath("org/done"),
        Expect.SERVED,
        content=dump(request("org/done", status="FINISHED", results_path="../../../etc/passwd")),
        final_status="FINISHED",
    ),
    # links and special files (local store only)
    Case(
        "link into the store",
        "symlinks",
        LINK_IN_PATH,
        Expect.MALFORMED,
        "a symbolic link",
        make=_link_to(rpath("org/good-a")),
    ),
    Case(
        "link out of the store",
        "symlinks",
        rpath("org/link-out"),
        Expect.MALFORMED,
        "a symbolic link",
        make=_link_out,
    ),
    Case(
        "dangling link",
        "symlinks",
        rpath("org/dangling"),
        Expect.MALFORMED,
        "dangling symbolic link",
        make=_dangling,
    ),
    Case(
        "linked folder out of the store",
        "symlinks",
        "linked-org",
        Expect.MALFORMED,
        "not named like a request file",
        make=_linked_folder,
    ),
    Case("FIFO", "special files", rpath("org/fifo"), Expect.MALFORMED, "not a regular file", make=_fifo),
    # duplicates
    Case(
        "copy of a good request",
        "duplicate ids",
        rpath("org/copy"),
        Expect.MALFORMED,
        "wrong place",
        GOOD_REQUESTS[rpath("org/good-a")],
    ),
    Case(
        "same id, other case",
        "duplicate ids",
        rpath("org/good-a").replace("good-a", "Good-A"),
        Expect.MALFORMED,
        "wrong place",
        dump(request("org/good-a")),
    ),
    Case(
        "duplicate key",
        "duplicate keys",
        rpath("org/dupkey"),
        Expect.MALFORMED,
        "duplicate key 'status'",
        raw_request("org/dupkey", '"status": "FINISHED"'),
    ),
    # values outside the vocabulary
    Case(
        "status DONE",
        "unknown values",
        rpath("org/u1"),
        Expect.MALFORMED,
        "field 'status'",
        dump(request("org/u1", status="DONE")),
    ),
    Case(
        "status lowercase",
        "unknown values",
        rpath("org/u2"),
        Expect.MALFORMED,
        "field 'status'",
        dump(request("org/u2", status="pending")),
    ),
    Case(
        "3-shot",
        "unknown values",
        rpath("org/u3", 3),
        Expect.MALFORMED,
        "num_fewshot must be one of [0, 5], got 3",
        dump(request("org/u3", num_fewshot=3)),
    ),
    Case(
        "precision fp8 inside",
        "unknown values",
        rpath("org/u4"),
        Expect.MALFORMED,
        "field 'precision'",
        dump(request("org/u4", precision="fp8")),
    ),
    Case(
        "precision fp8 in the name",
        "unknown values",
        "org/u5_eval_request_main_fp8_0shot.json",
        Expect.MALFORMED,
        "not named like a request file",
        dump(request("org/u5")),
    ),
    Case(
        "schema from the future",
        "unknown values",
        rpath("org/u6"),
        Expect.MALFORMED,
        "unknown schema 'evalita-llm-request/9'",
        dump(request("org/u6", schema="evalita-llm-request/9")),
    ),
    Case(
        "schema a huge object",
        "unknown values",
        rpath("org/u7"),
        Expect.MALFORMED,
        "unknown schema",
        dump(request("org/u7", schema={"k": "v" * 50_000})),
    ),
    Case(
        "bad submitted_time",
        "unknown values",
        rpath("org/u8"),
        Expect.MALFORMED,
        "not an ISO-8601 time",
        dump(request("org/u8", submitted_time="yesterday")),
    ),
    Case(
        "bad lease_expires",
        "unknown values",
        rpath("org/u9"),
        Expect.MALFORMED,
        "not an ISO-8601 time",
        dump(request("org/u9", status="RUNNING", lease_expires="soon")),
    ),
    Case(
        "stray file", "names", "stray/notes.txt", Expect.MALFORMED, "not named like a request file", b"hello"
    ),
    Case(
        "100 KB model id", "names", rpath("org/long"), Expect.MALFORMED, "wrong place", dump(request(HUGE_ID))
    ),
    # a worker that died: its lease expired long ago
    Case(
        "expired lease",
        "expired leases",
        rpath("org/orphan"),
        Expect.SERVED,
        content=dump(
            request(
                "org/orphan",
                status="RUNNING",
                claimed_by="dead-worker",
                lease_expires="2000-01-01T00:00:00.000Z",
            )
        ),
    ),
)


# -- results -------------------------------------------------------------------------------


def results(model: str, score: float = 0.5, **run: Any) -> dict[str, Any]:
    tasks = {
        task.id: {"metric": task.metric, "prompts": {p.id: {"score": score, "n": 10} for p in task.prompts}}
        for task in SUITE
    }
    return {
        "schema": "evalita-llm-results/1",
        "model": {"id": model, "revision": "abc", "precision": "bfloat16", "license": "mit"},
        "run": {"num_fewshot": 0, "data": "hub", "finished_at": FINISHED_AT, **run},
        "tasks": tasks,
    }


def respath(name: str, stamp: str = "2026-03-01T10-00-00Z", k: int = 0) -> str:
    return f"org/{name}/results_{stamp}_bfloat16_{k}shot.json"


def with_task(model: str, change: Callable[[dict[str, Any]], None]) -> bytes:
    value = results(model)
    change(value)
    return dump(value)


def raw_results(model: str, body: str) -> bytes:
    text = dump(results(model)).decode()
    return (text[:-1] + ", " + body + "}").encode()


GOOD_RESULTS = {
    respath("good-a"): dump(results("org/good-a", 0.6)),
    respath("good-b"): dump(results("org/good-b", 0.4)),
}
RESULTS_LINK_IN = respath("link-in")


def _results_link_in(root: Path, outside: Path) -> None:
    (root / RESULTS_LINK_IN).parent.mkdir(parents=True, exist_ok=True)
    os.symlink(root / respath("good-a"), root / RESULTS_LINK_IN)


def _results_link_out(root: Path, outside: Path) -> None:
    target = outside / "results.json"
    target.write_bytes(dump(results("org/link-out")))
    (root / respath("link-out")).parent.mkdir(parents=True, exist_ok=True)
    os.symlink(target, root / respath("link-out"))


def _results_dangling(root: Path, outside: Path) -> None:
    (root / respath("dangling")).parent.mkdir(parents=True, exist_ok=True)
    os.symlink(outside / "gone.json", root / respath("dangling"))


def _results_fifo(root: Path, outside: Path) -> None:
    (root / respath("fifo")).parent.mkdir(parents=True, exist_ok=True)
    os.mkfifo(root / respath("fifo"))


def _set(path: tuple[str, ...], value: Any) -> Callable[[dict[str, Any]], None]:
    def change(doc: dict[str, Any]) -> None:
        node = doc
        for key in path[:-1]:
            node = node[key]
        node[path[-1]] = value

    return change


RESULTS_CASES: tuple[Case, ...] = (
    Case(
        "truncated",
        "truncated",
        respath("r-trunc"),
        Expect.MALFORMED,
        "not valid JSON",
        dump(results("org/r-trunc"))[:100],
    ),
    Case("empty", "truncated", respath("r-empty"), Expect.MALFORMED, "not valid JSON", b""),
    Case("all bytes", "binary", respath("r-bin"), Expect.MALFORMED, "not UTF-8", bytes(range(256)) * 8),
    Case("top-level array", "not an object", respath("r-arr"), Expect.MALFORMED, "not a JSON object", b"[]"),
    Case(
        "100,000 levels",
        "deep nesting",
        respath("r-deep"),
        Expect.MALFORMED,
        "nested too deeply",
        b'{"a":' * 100_000 + b"1" + b"}" * 100_000,
    ),
    Case(
        "5,000-digit n",
        "huge integers",
        respath("r-int"),
        Expect.MALFORMED,
        "an integer of 5,000 digits",
        raw_results("org/r-int", '"n": ' + "7" * 5000),
    ),
    Case(
        "NaN score",
        "NaN/Infinity",
        respath("r-nan"),
        Expect.MALFORMED,
        "NaN is not a JSON number",
        dump(results("org/r-nan")).replace(b'"score": 0.5', b'"score": NaN', 1),
    ),
    Case(
        "Infinity stderr",
        "NaN/Infinity",
        respath("r-inf"),
        Expect.MALFORMED,
        "Infinity is not a JSON number",
        dump(results("org/r-inf")).replace(b'"n": 10', b'"n": 10, "stderr": Infinity', 1),
    ),
    Case(
        "1e999 score",
        "NaN/Infinity",
        respath("r-ovf"),
        Expect.MALFORMED,
        "out of range",
        dump(results("org/r-ovf")).replace(b'"score": 0.5', b'"score": 1e999', 1),
    ),
    Case(
        "UTF-8 BOM",
        "BOM",
        respath("r-bom"),
        Expect.SERVED,
        content=b"\xef\xbb\xbf" + dump(results("org/r-bom")),
    ),
    Case(
        "UTF-16",
        "BOM",
        respath("r-utf16"),
        Expect.MALFORMED,
        "UTF-16",
        json.dumps(results("org/r-utf16")).encode("utf-16"),
    ),
    Case(
        "lone surrogate in the id",
        "surrogates",
        respath("r-sur"),
        Expect.MALFORMED,
        "lone surrogate",
        dump(results("org/r-sur")).replace(b"org/r-sur", b"org/r-sur\\ud800", 1),
    ),
    Case(
        "invalid UTF-8",
        "surrogates",
        respath("r-utf8"),
        Expect.MALFORMED,
        "not UTF-8",
        dump(results("org/r-utf8")).replace(b"mit", b"m\xffit"),
    ),
    Case(
        "no model block",
        "missing fields",
        respath("r-nomodel"),
        Expect.MALFORMED,
        "field 'model'",
        dump({k: v for k, v in results("org/x").items() if k != "model"}),
    ),
    Case(
        "no num_fewshot",
        "missing fields",
        respath("r-nok"),
        Expect.MALFORMED,
        "field 'run.num_fewshot'",
        with_task("org/r-nok", lambda d: d["run"].pop("num_fewshot")),
    ),
    Case(
        "tasks a list",
        "wrong types",
        respath("r-list"),
        Expect.MALFORMED,
        "field 'tasks'",
        with_task("org/r-list", _set(("tasks",), [])),
    ),
    Case(
        "score 1.5",
        "wrong types",
        respath("r-high"),
        Expect.MALFORMED,
        "outside [0, 1]",
        with_task("org/r-high", _set(("tasks", "te", "prompts", "p1", "score"), 1.5)),
    ),
    Case(
        "score a word",
        "wrong types",
        respath("r-word"),
        Expect.MALFORMED,
        "field 'tasks.te.prompts.p1.score'",
        with_task("org/r-word", _set(("tasks", "te", "prompts", "p1", "score"), "high")),
    ),
    Case(
        "NER parts a word",
        "wrong types",
        respath("r-parts"),
        Expect.MALFORMED,
        "field 'tasks.ner.prompts.p1.parts.adg'",
        with_task("org/r-parts", _set(("tasks", "ner", "prompts", "p1", "parts"), {"adg": "x"})),
    ),
    Case(
        "limit a word",
        "wrong types",
        respath("r-limit"),
        Expect.MALFORMED,
        "field 'run.limit",
        with_task("org/r-limit", _set(("run", "limit"), "abc")),
    ),
    Case(
        "3-shot",
        "unknown values",
        respath("r-3shot", k=3),
        Expect.MALFORMED,
        "num_fewshot must be one of [0, 5], got 3",
        with_task("org/r-3shot", _set(("run", "num_fewshot"), 3)),
    ),
    Case(
        "schema from the future",
        "unknown values",
        respath("r-schema"),
        Expect.MALFORMED,
        "unknown schema",
        with_task("org/r-schema", _set(("schema",), "evalita-llm-results/9")),
    ),
    Case(
        "17 MB",
        "huge",
        respath("r-huge"),
        Expect.MALFORMED,
        "the limit is 16,777,216",
        with_task("org/r-huge", _set(("pad",), "x" * (17 << 20))),
    ),
    Case(
        "script in id and licence",
        "HTML/script",
        respath("r-xss"),
        Expect.SERVED,
        content=with_task("<img src=x onerror=alert(1)>", _set(("model", "license"), "<b>evil</b>")),
    ),
    Case(
        "ESC in the model id",
        "control characters",
        respath("r-esc"),
        Expect.MALFORMED,
        "contains control characters",
        dump(results("org/r-esc\x1b[2J")),
    ),
    Case(
        "ESC in the licence",
        "control characters",
        respath("r-esclic"),
        Expect.SERVED,
        content=with_task("org/r-esclic", _set(("model", "license"), "\x1b[31mmit\x07")),
    ),
    Case(
        "duplicate key",
        "duplicate keys",
        respath("r-dupkey"),
        Expect.MALFORMED,
        "duplicate key 'schema'",
        raw_results("org/r-dupkey", '"schema": "evalita-llm-results/1"'),
    ),
    Case(
        "older file of a good run",
        "duplicate ids",
        respath("good-a", stamp="2025-01-01T00-00-00Z"),
        Expect.SERVED,
        content=dump(results("org/good-a", 0.1, finished_at="2025-01-01T00:00:00Z")),
    ),
    Case(
        "traversal in details_path",
        "path traversal",
        respath("r-trav"),
        Expect.SERVED,
        content=with_task("org/r-trav", _set(("run", "details_path"), "../../../etc")),
    ),
    Case(
        "unknown task and prompt",
        "unknown values",
        respath("r-extra"),
        Expect.SERVED,
        content=with_task(
            "org/r-extra",
            lambda d: d["tasks"].update(xx={"metric": "acc", "prompts": {"p9": {"score": 0.1}}}),
        ),
    ),
    Case(
        "link into the store",
        "symlinks",
        RESULTS_LINK_IN,
        Expect.MALFORMED,
        "a symbolic link",
        make=_results_link_in,
    ),
    Case(
        "link out of the store",
        "symlinks",
        respath("link-out"),
        Expect.MALFORMED,
        "a symbolic link",
        make=_results_link_out,
    ),
    Case(
        "dangling link",
        "symlinks",
        respath("dangling"),
        Expect.MALFORMED,
        "dangling symbolic link",
        make=_results_dangling,
    ),
    Case(
        "FIFO", "special files", respath("fifo"), Expect.MALFORMED, "not a regular file", make=_results_fifo
    ),
)


# -- details files (one run's per-sample answers, JSON lines) --------------------------------

GOOD_LINE = dump({"doc_id": 1, "input": "Frase?", "answer": "sì", "target": "sì", "score": 1.0}) + b"\n"
GOOD_DETAILS = "org/good-a/run/te_p1.jsonl"

DETAILS_CASES: tuple[Case, ...] = (
    Case(
        "truncated line",
        "truncated",
        "org/d/run/te_p1.jsonl",
        Expect.MALFORMED,
        "line 2: not valid JSON",
        GOOD_LINE + GOOD_LINE[:20],
    ),
    Case(
        "NaN score",
        "NaN/Infinity",
        "org/d/run/te_p2.jsonl",
        Expect.MALFORMED,
        "line 1: NaN",
        GOOD_LINE.replace(b"1.0", b"NaN"),
    ),
    Case(
        "deep line",
        "deep nesting",
        "org/d/run/te_p3.jsonl",
        Expect.MALFORMED,
        "line 2: JSON nested",
        GOOD_LINE + b"[" * 5000 + b"\n",
    ),
    Case(
        "surrogate",
        "surrogates",
        "org/d/run/te_p4.jsonl",
        Expect.MALFORMED,
        "line 1: a lone surrogate",
        GOOD_LINE.replace(b"Frase?", b"\\udc00"),
    ),
    Case(
        "binary",
        "binary",
        "org/d/run/te_p5.jsonl",
        Expect.MALFORMED,
        "line 1: not UTF-8",
        bytes(range(128, 256)),
    ),
    Case(
        "5 MB line",
        "huge",
        "org/d/run/te_p6.jsonl",
        Expect.MALFORMED,
        "line 1: file is",
        dump({"doc_id": 1, "input": "x" * (5 << 20), "answer": "", "target": ""}),
    ),
    Case(
        "huge integer",
        "huge integers",
        "org/d/run/wic_p1.jsonl",
        Expect.MALFORMED,
        "line 1: an integer",
        GOOD_LINE.replace(b'"doc_id": 1', b'"doc_id": ' + b"1" * 5000),
    ),
)
