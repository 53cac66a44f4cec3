"""Every module, attribute and file the docs name in backticks exists: a rename breaks the build, not the reader.

The docs checked: docs/ARCHITECTURE.md, docs/TRACKS.md, docs/DESIGN.md, the README (its
"Architecture" section and the rest) and eval_queue/README.md.  Nothing is imported: the names are resolved against the source
(``ast``), so the check is fast and never loads torch, lm-eval or gradio.

What counts as a name (the extraction rules), inside one pair of single backticks outside
fenced code blocks, once a trailing call (``(…)``), ``:line`` suffix or ``()`` is cut off:

* **a repository path**: text whose first segment is a top-level entry of the repository
  (``leaderboard/…``, ``backend/…``, ``docs/…``, ``tests/…``…): the file or folder must exist.
  A ``<t>`` / ``<pkg>`` / ``<track>`` placeholder must fit at least one track package; a
  ``{a,b}`` group is expanded (each must exist); any other placeholder (``<ts>``, ``*``, ``…``)
  makes it a pattern, not checked.  A path ending in ``module.attribute``
  (``backend/tracks/evalita/run.per_item_outputs``) is that module's attribute;
* **a path relative to a folder the prose names**, ending in ``.py``, ``.md`` or a module's
  ``.attribute`` (``app/views/board.py``, ``judge/app/intervals.FiguresCache``), or a bare
  Python or Markdown file name (``cps_intervals.py``): some file of the repository must end so
  (with ``.attribute``: one such module defines it).  A relative folder (``details/``) may be a
  store's, not the repository's: not checked;
* **a dotted Python name** rooted in one of the project's packages (``eval_queue``,
  ``leaderboard``, ``backend``): its longest prefix that is a module must exist, and each part
  after it must be defined there — a top-level name of the module (assigned or defined; imported
  counts only in a package's ``__init__`` or a module's ``__all__``: the docs give a name's home,
  not a module that happens to import it), then a member of that class (in its body or a project
  base class's).  The spec's ``module:attribute`` form is read the same way;
* **a class member** ``Class.member`` (``Class`` in CamelCase, defined once or more in the
  project; ``[…]`` after it cut off): one of the project's classes of that name must define
  ``member`` (in its body, as ``self.member`` or in a project base class).  A ``Class`` the
  project does not define (pandas, gradio…) is not checked;
* **a module's class or constant** ``module.Name`` (``module`` the file name of a project module,
  ``Name`` capitalised: ``identity.SignInRequired``): one module of that name must define it.
  ``module.lower_name`` is not checked: the docs use the same form for JSON fields (``run.data``).

Anything else in backticks (commands, field values, prose, external libraries) is left alone.
"""

from __future__ import annotations

import ast
import re
from collections.abc import Iterator
from dataclasses import dataclass, field
from functools import cache
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
#: The project's Python packages: a dotted name rooted in one of them is checked.
PACKAGES = ("eval_queue", "leaderboard", "backend")
#: The pages checked.
DOCS = ("docs/ARCHITECTURE.md", "docs/TRACKS.md", "docs/DESIGN.md", "README.md", "eval_queue/README.md")

_FENCE = re.compile(r"^\s*```.*?^\s*```[^\n]*$", re.M | re.S)
_SPAN = re.compile(r"(?<!`)`([^`\n]+)`(?!`)")
_IDENT = r"[A-Za-z_][A-Za-z0-9_]*"
_DOTTED = re.compile(rf"^{_IDENT}(?:\.{_IDENT})+(?::{_IDENT}(?:\.{_IDENT})*)?$")
_MEMBER = re.compile(rf"^([A-Z][A-Za-z0-9]*[a-z][A-Za-z0-9]*)\.({_IDENT})$")
_PATH = re.compile(r"^[A-Za-z0-9_.\-/<>]+$")
_PLACEHOLDER = re.compile(r"<(t|pkg|track)>")
#: File name suffixes of data, not Python: ``DIR/annotated.jsonl`` is not ``annotated``'s attribute.
_DATA_SUFFIXES = frozenset(
    {"json", "jsonl", "yaml", "yml", "parquet", "txt", "sh", "toml", "csv", "tmp", "slurm"}
)


def _doc_texts() -> Iterator[tuple[str, str]]:
    for page in DOCS:
        yield page, (ROOT / page).read_text(encoding="utf-8")


def _clean(span: str) -> str:
    """The name in a span: a call's arguments, a ``:line`` suffix and trailing punctuation cut off."""
    span = span.strip()
    span = re.sub(r"\(.*$", "", span)  # f(x, y) -> f
    span = re.sub(r":\d+(?:-\d+)?$", "", span)  # path.py:452-453 -> path.py
    span = re.sub(r"\[[^\]]*\]$", "", span)  # records[track] -> records
    return span.rstrip(".,;")


def doc_names() -> list[tuple[str, str]]:
    """(page, name) for every backticked span of the docs, fenced blocks left out."""
    found = []
    for page, text in _doc_texts():
        for span in _SPAN.findall(_FENCE.sub("", text)):
            name = _clean(span)
            if name:
                found.append((page, name))
    return found


# --------------------------------------------------------------------------- the source index


@dataclass
class _Class:
    members: set[str] = field(default_factory=set)
    bases: list[str] = field(default_factory=list)


@dataclass
class _Module:
    names: set[str]
    classes: dict[str, _Class]


def _targets(node: ast.AST) -> Iterator[str]:
    if isinstance(node, ast.Name):
        yield node.id
    elif isinstance(node, ast.Tuple | ast.List):
        for element in node.elts:
            yield from _targets(element)


def _body_names(body: list[ast.stmt], imports: bool = True) -> Iterator[str]:
    for node in body:
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef):
            yield node.name
        elif isinstance(node, ast.Assign):
            for target in node.targets:
                yield from _targets(target)
        elif isinstance(node, ast.AnnAssign | ast.AugAssign):
            yield from _targets(node.target)
        elif isinstance(node, ast.Import | ast.ImportFrom) and imports:
            for alias in node.names:
                yield (alias.asname or alias.name).split(".")[0]
        elif isinstance(node, ast.If | ast.Try):  # TYPE_CHECKING blocks, optional imports
            blocks = [node.body, node.orelse]
            if isinstance(node, ast.Try):
                blocks += [node.finalbody, *(h.body for h in node.handlers)]
            for block in blocks:
                yield from _body_names(block, imports)


def _self_attributes(cls: ast.ClassDef) -> Iterator[str]:
    """``self.x = …`` in the class's methods: instance attributes are members too."""
    for node in ast.walk(cls):
        if isinstance(node, ast.Assign | ast.AnnAssign):
            for target in node.targets if isinstance(node, ast.Assign) else [node.target]:
                is_self = isinstance(target, ast.Attribute) and isinstance(target.value, ast.Name)
                if is_self and target.value.id == "self":
                    yield target.attr


def _exported(tree: ast.Module) -> set[str]:
    """The names in ``__all__`` (a module's public re-exports)."""
    for node in tree.body:
        if isinstance(node, ast.Assign | ast.AnnAssign):
            targets = node.targets if isinstance(node, ast.Assign) else [node.target]
            if any(isinstance(t, ast.Name) and t.id == "__all__" for t in targets) and node.value is not None:
                try:
                    return set(ast.literal_eval(node.value))
                except ValueError:
                    return set()
    return set()


@cache
def _module(path: Path) -> _Module:
    """A module's names: what it defines; what it imports only when it is a package or lists it in ``__all__``.

    So ``leaderboard.tracks.evalita.schema.ResultsEnvelope`` (imported there, defined in
    ``leaderboard.core.schema``) is a wrong address, while a package's re-export is its API.
    """
    tree = ast.parse(path.read_text(encoding="utf-8"))
    classes = {}
    for node in tree.body:
        if isinstance(node, ast.ClassDef):
            classes[node.name] = _Class(
                members={*_body_names(node.body), *_self_attributes(node)},
                bases=[ast.unparse(base).split(".")[-1].split("[")[0] for base in node.bases],
            )
    defined = set(_body_names(tree.body, imports=path.name == "__init__.py"))
    return _Module(defined | _exported(tree), classes)


@cache
def _all_classes() -> dict[str, list[_Class]]:
    by_name: dict[str, list[_Class]] = {}
    for package in PACKAGES:
        for path in (ROOT / package).rglob("*.py"):
            for name, cls in _module(path).classes.items():
                by_name.setdefault(name, []).append(cls)
    return by_name


def _defines(class_name: str, member: str, seen: frozenset[str] = frozenset()) -> bool:
    """Whether a project class of that name (or a project base class of it) defines ``member``."""
    for cls in _all_classes().get(class_name, []):
        if member in cls.members:
            return True
        for base in cls.bases:
            if base not in seen and _defines(base, member, seen | {class_name}):
                return True
    return False


def _module_file(parts: list[str]) -> Path | None:
    base = ROOT.joinpath(*parts)
    for candidate in (base.with_suffix(".py"), base / "__init__.py"):
        if candidate.is_file():
            return candidate
    return None


def resolve_dotted(name: str) -> str | None:
    """None if ``pkg.module[:.]attr[.member]`` exists in the source, else why not."""
    parts = re.split(r"[.:]", name)
    for split in range(len(parts), 0, -1):
        path = _module_file(parts[:split])
        if path is not None:
            break
    else:
        return f"no module {parts[0]}"
    rest = parts[split:]
    if not rest:
        return None
    module = _module(path)
    if rest[0] not in module.names:
        if (path.parent / rest[0]).is_dir() and path.name == "__init__.py":
            return f"no module {'.'.join(parts[: split + 1])}"
        return f"{'.'.join(parts[:split])} defines no {rest[0]}"
    if len(rest) > 1:
        if rest[0] not in _all_classes():
            return None  # an instance or a module alias: not followed further
        if not _defines(rest[0], rest[1]):
            return f"class {rest[0]} defines no {rest[1]}"
    return None


def _track_packages() -> list[str]:
    return sorted(p.name for p in (ROOT / "leaderboard" / "tracks").iterdir() if (p / "spec.py").is_file())


def _expanded(name: str) -> list[str]:
    """``a/{b,c}.py`` -> ``a/b.py``, ``a/c.py`` (one group)."""
    match = re.search(r"\{([^{}]*)\}", name)
    if match is None:
        return [name]
    return [name[: match.start()] + part + name[match.end() :] for part in match.group(1).split(",")]


def _exists(path: str) -> str | None:
    """None if ``path`` (a file, a folder, or ``a/module.attribute``) exists under the root."""
    if (ROOT / path.rstrip("/")).exists():
        return None
    module, _, attribute = path.rpartition(".")
    if module and "/" not in attribute and (ROOT / f"{module}.py").is_file():
        if attribute in _module(ROOT / f"{module}.py").names:
            return None
        return f"{module}.py defines no {attribute}"
    return f"no file or folder {path}"


def resolve_path(name: str) -> str | None:
    """None if the repository path exists (for one track at least, with a placeholder), else why not."""
    for path in _expanded(name):
        if _PLACEHOLDER.search(path):
            if not any(_exists(_PLACEHOLDER.sub(package, path)) is None for package in _track_packages()):
                return f"no track has {path}"
        elif (why := _exists(path)) is not None:
            return why
    return None


@cache
def _repo_files() -> tuple[str, ...]:
    """Every file and folder of the project, as ``/``-led relative paths (for suffix matches)."""
    found = []
    for top in _top_level():
        base = ROOT / top
        paths = [base, *base.rglob("*")] if base.is_dir() else [base]
        found += ["/" + p.relative_to(ROOT).as_posix() for p in paths if "__pycache__" not in p.parts]
    return tuple(found)


def resolve_relative(name: str) -> str | None:
    """None if some project file or folder ends with ``name`` (``name`` may end in ``.attribute``)."""
    suffix = "/" + name.rstrip("/")
    if any(path.endswith(suffix) for path in _repo_files()):
        return None
    module, _, attribute = name.rpartition(".")
    modules = [p for p in _repo_files() if p.endswith(f"/{module}.py")]
    if modules and "/" not in attribute:
        if any(attribute in _module(ROOT / p.lstrip("/")).names for p in modules):
            return None
        return f"no {module}.py defines {attribute}"
    return f"no file or folder ends with {name}"


@cache
def _module_basenames() -> frozenset[str]:
    return frozenset(p.rsplit("/", 1)[1][:-3] for p in _repo_files() if p.endswith(".py"))


def _ignored_top_level() -> set[str]:
    """The top-level folders ``.gitignore`` keeps out of the project (``/artifacts/``): what a run
    leaves there (bench stores, caches) is not the project, and a clean clone has none of it."""
    lines = (ROOT / ".gitignore").read_text(encoding="utf-8").splitlines()
    return {line.strip().strip("/") for line in lines if re.fullmatch(r"/[^/*]+/?", line.strip())}


def _top_level() -> set[str]:
    present = {p.name for p in ROOT.iterdir() if not p.name.startswith(".") or p.name == ".ci"}
    return present - {".venv", "shared"} - _ignored_top_level()


def classify(name: str) -> str | None:
    """``"path"``, ``"relative"``, ``"dotted"``, ``"member"``, ``"module_name"`` or None: the extraction rules."""
    if re.search(r"[*…]|<(?!t>|pkg>|track>)", name):
        return None  # a pattern (results_<ts>_….json, results_*.json), not a name
    if "/" in name and _PATH.match(name.replace("{", "").replace("}", "").replace(",", "")):
        first = name.split("/")[0]
        if first in _top_level():
            return "path"
        if "<" in name or "{" in name or name.startswith("/"):
            return None
        if re.search(r"\.(py|md)$", name):
            return "relative"
        attribute = re.search(rf"/{_IDENT}\.({_IDENT})$", name)
        if attribute and attribute.group(1) not in _DATA_SUFFIXES:
            return "relative"  # judge/app/tables.FiguresCache: a module's attribute
        return None
    if re.fullmatch(r"[A-Za-z0-9_]+\.(py|md)", name):
        return "relative"
    if _DOTTED.match(name) and name.split(".")[0] in PACKAGES:
        return "dotted"
    match = _MEMBER.match(name)
    if match and match.group(1) in _all_classes():
        return "member"
    match = re.fullmatch(r"([a-z_][a-z0-9_]*)\.([A-Z][A-Za-z0-9_]*)", name)
    if match and match.group(1) in _module_basenames():
        return "module_name"
    return None


def check(name: str) -> str | None:
    kind = classify(name)
    if kind == "path":
        return resolve_path(name)
    if kind == "dotted":
        return resolve_dotted(name)
    if kind == "relative":
        return resolve_relative(name)
    if kind == "member":
        cls, member = name.split(".")
        return None if _defines(cls, member) else f"class {cls} defines no {member}"
    if kind == "module_name":
        module, attribute = name.split(".")
        paths = [p for p in _repo_files() if p.endswith(f"/{module}.py")]
        if any(attribute in _module(ROOT / p.lstrip("/")).names for p in paths):
            return None
        return f"no {module}.py defines {attribute}"
    return None


# --------------------------------------------------------------------------- the tests


def test_every_name_the_docs_give_in_backticks_exists() -> None:
    names = doc_names()
    checked = [(page, name) for page, name in names if classify(name) is not None]
    assert len(checked) > 200, "the extraction found too few names: the rules or the docs changed"
    wrong = sorted({f"{page}: `{name}`: {why}" for page, name in checked if (why := check(name))})
    assert not wrong, "the docs name what does not exist:\n" + "\n".join(wrong)


@pytest.mark.parametrize(
    ("name", "reason"),
    [
        ("eval_queue.vocabulary.Track", "defines no Track"),
        ("leaderboard.tracks.evalita.schema.ResultsEnvelope", "defines no ResultsEnvelope"),  # imported there
        ("leaderboard.core.nowhere.thing", "leaderboard.core defines no nowhere"),
        ("leaderboard/core/{contents,nowhere}.py", "no file or folder leaderboard/core/nowhere.py"),
        ("judge/app/tables.NoSuchCache", "no judge/app/tables.py defines NoSuchCache"),
        ("app/views/nowhere.py", "no file or folder ends with"),
        ("identity.NoSuchError", "no identity.py defines NoSuchError"),
        ("backend/tracks/evalita/run.no_such_function", "run.py defines no no_such_function"),
        ("leaderboard.core.contents.no_such_function", "defines no no_such_function"),
        ("leaderboard.core.contents.TrackContents.no_such_field", "defines no no_such_field"),
        ("backend/no_such_module.py", "no file or folder"),
        ("leaderboard/tracks/<t>/no_such_file.py", "no track has"),
        ("TrackSpec.no_such_reference", "defines no no_such_reference"),
    ],
)
def test_a_renamed_or_missing_name_is_caught(name: str, reason: str) -> None:
    assert reason in (check(name) or "")


@pytest.mark.parametrize(
    "name",
    [
        "leaderboard.core.contents.TrackContents.columns",  # a dataclass field
        "leaderboard.tracks.evalita.schema:ResultsFile",  # the spec's module:attribute form
        "leaderboard/tracks/<t>/spec.py",  # a placeholder path, true for a track
        "backend/worker.py",
        "TrackSpec.about",
        "eval_queue.tracks.TRACKS",
        "leaderboard/core/{contents,contents_io}.py",
        "app/views/board.py",
        "cps_intervals.py",
        "backend/tracks/evalita/run.per_item_outputs",
        "StoreResults.records[track]",
    ],
)
def test_a_true_name_passes(name: str) -> None:
    assert classify(_clean(name)) is not None
    assert check(_clean(name)) is None


@pytest.mark.parametrize(
    "span",
    [
        "python -m backend --once",
        "org/model/",
        "details/",  # a store's folder
        "DIR/annotated.jsonl",
        "results_<ts>_<precision>_<k>shot.json",
        "pd.DataFrame",
        "null",
        "run.data",  # a results file's field, not the module run.py
        "results_*.json",
        "hub:<org>/<name>",
        "contents.parquet",
    ],
)
def test_prose_and_foreign_names_are_not_checked(span: str) -> None:
    assert classify(_clean(span)) is None


def test_a_call_and_a_line_suffix_are_cut_off() -> None:
    assert _clean("load_results(storage, cache=None)") == "load_results"
    assert _clean("backend/worker.py:452-453") == "backend/worker.py"
    assert (
        _clean("leaderboard.core.contents.rebuild(storage) -> Rebuilt") == "leaderboard.core.contents.rebuild"
    )
