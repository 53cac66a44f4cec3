"""The package boundaries of docs/ARCHITECTURE.md: imports go down only, and a track is named in its own folders.

* ``backend/`` never imports the app layer (gradio, plotly, the UI, the views, the store reader,
  any track's ``app`` package): checked by importing every backend module in a fresh interpreter.
* The domain (``leaderboard/core``, each ``leaderboard/tracks/<t>/`` outside ``app/``) and
  ``eval_queue`` import no app-layer module, anywhere in a file (function-level imports too).
* Outside the tracks' own folders, a track is named only by the registry line
  (``eval_queue/tracks.py``).  For Evalita, whose name is also the product's, the rule is
  stricter: no shared module says "evalita" at all, in code, strings or comments, but the
  registry's lines and the product's own names (:data:`PRODUCT_NAME`).
"""

from __future__ import annotations

import ast
import re
import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]
APP_LAYER = re.compile(
    r"^(gradio|plotly|leaderboard\.(ui|views|store|state|export|__main__)|leaderboard\.tracks\.[a-z_]+\.app)(\.|$)"
)
PACKAGES = ("eval_queue", "leaderboard", "backend")


def _python_files(*roots: str) -> list[Path]:
    return sorted(p for root in roots for p in (REPO / root).rglob("*.py") if "sample_data" not in p.parts)


def _imports(path: Path) -> list[str]:
    """Every module a file imports, at any depth (function-level imports included)."""
    tree = ast.parse(path.read_text(encoding="utf-8"))
    names = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            names += [alias.name for alias in node.names]
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            names += [node.module, *(f"{node.module}.{alias.name}" for alias in node.names)]
    return names


def _is_domain(path: Path) -> bool:
    rel = path.relative_to(REPO).as_posix()
    if rel.startswith("eval_queue/") or rel.startswith("leaderboard/core/"):
        return True
    return rel.startswith("leaderboard/tracks/") and "/app/" not in rel


def test_importing_every_backend_module_loads_no_app_layer_module() -> None:
    modules = sorted(
        ".".join(p.relative_to(REPO).with_suffix("").parts).removesuffix(".__init__")
        for p in _python_files("backend")
        if p.name != "__main__.py"
    )
    code = (
        "import importlib, re, sys\n"
        f"for name in {modules!r}:\n"
        "    importlib.import_module(name)\n"
        f"app = re.compile({APP_LAYER.pattern!r})\n"
        "print('\\n'.join(sorted(m for m in sys.modules if app.match(m))))\n"
    )
    done = subprocess.run([sys.executable, "-c", code], cwd=REPO, capture_output=True, text=True, timeout=600)
    assert done.returncode == 0, done.stderr[-3000:]
    assert done.stdout.split() == [], f"backend modules pulled in the app layer: {done.stdout.split()}"
    assert len(modules) > 30  # the walk found the backend


def test_the_domain_and_the_queue_import_no_app_layer_module() -> None:
    checked = 0
    for path in _python_files("eval_queue", "leaderboard"):
        if not _is_domain(path):
            continue
        checked += 1
        bad = [name for name in _imports(path) if APP_LAYER.match(name)]
        assert bad == [], f"{path.relative_to(REPO)} imports the app layer: {bad}"
    assert checked > 40


def test_backend_source_names_no_app_layer_module() -> None:
    for path in _python_files("backend"):
        bad = [name for name in _imports(path) if APP_LAYER.match(name)]
        assert bad == [], f"{path.relative_to(REPO)} imports the app layer: {bad}"


#: How each track is named in code: its name or package, in identifiers, strings and comments.
TRACK_NAMES = {
    "judge": re.compile(r"judge", re.I),
    "contamination": re.compile(r"contamination", re.I),
    "long-context": re.compile(r"long[-_ ]?context|indaqa", re.I),
    # "Evalita" is also the project's name (EvalitaError, EVALITA_DATA_DIR): the track is named by
    # its package or its name as a value.
    "evalita": re.compile(r"tracks[./]evalita|[\"']evalita[\"']"),
}
#: The modules outside the tracks' folders allowed to name a track (docs/ARCHITECTURE.md).
ALLOWED = {
    "judge": {"eval_queue/tracks.py"},
    "contamination": {"eval_queue/tracks.py"},
    "long-context": {"eval_queue/tracks.py"},
    "evalita": {"eval_queue/tracks.py"},
}


@pytest.mark.parametrize("track", sorted(TRACK_NAMES))
def test_outside_the_tracks_folders_a_track_is_named_only_by_the_registry(track: str) -> None:
    shared = _shared_modules()
    naming = {
        p.relative_to(REPO).as_posix() for p in shared if TRACK_NAMES[track].search(p.read_text("utf-8"))
    }
    assert naming <= ALLOWED[track], f"{sorted(naming - ALLOWED[track])} name the {track} track"
    assert "eval_queue/tracks.py" in naming  # the pattern finds the registry line


#: The product's own name, which shared modules may carry: "Evalita-LLM" (the leaderboard and the
#: benchmark it is built on: app title, CLI descriptions, export sources), the project's base error
#: ``EvalitaError``, its ``EVALITA_*`` settings, file-format ids (``evalita-llm-results/2``), the
#: prefixes of its temporary folders and Slurm jobs (``evalita-run-``) and the page's ready flag.
PRODUCT_NAME = re.compile(
    r"Evalita-LLM|EvalitaError|EVALITA_\w*|evalita[-_]llm[\w./-]*|evalita-(?:run|csv|worker)\b|evalitaReady"
)
#: The registry's lines that name the Evalita track: its spec reference and the default track.
EVALITA_REGISTRY_LINES = {
    '"evalita": "leaderboard.tracks.evalita.spec:SPEC",',
    'DEFAULT_TRACK = "evalita"',
}


def _shared_modules() -> list[Path]:
    """Every module outside the tracks' own folders (the ``tracks`` packages' ``__init__`` included)."""
    folders = ("leaderboard/tracks/", "backend/tracks/")
    return [
        p
        for p in _python_files(*PACKAGES)
        if not p.relative_to(REPO).as_posix().startswith(folders) or p.parent.name == "tracks"
    ]


def test_no_shared_module_names_evalita_but_its_registry_lines() -> None:
    """The Evalita track is reached through its spec like any other: the shared modules name it
    nowhere (not in comments either: they describe "the default track"), the registry aside."""
    naming = []
    for path in _shared_modules():
        rel = path.relative_to(REPO).as_posix()
        for number, line in enumerate(path.read_text("utf-8").splitlines(), start=1):
            if not re.search("evalita", PRODUCT_NAME.sub("", line), re.I):
                continue
            if rel == "eval_queue/tracks.py" and line.strip() in EVALITA_REGISTRY_LINES:
                continue
            naming.append(f"{rel}:{number}: {line.strip()}")
    assert naming == [], "shared modules name the Evalita track:\n" + "\n".join(naming)
    registry = (REPO / "eval_queue/tracks.py").read_text("utf-8").splitlines()
    assert {line.strip() for line in registry} >= EVALITA_REGISTRY_LINES  # the lines it allows exist


#: Another track's modules that may name a track: the judge judges Evalita's SUM outputs.
#: Contamination tests the public sets of Evalita and INDAQA2 (its suite module and its worker's data
#: module read them) and adds a panel to Evalita's model page; its About text names INDAQA2.
CROSS_TRACK = {
    "evalita": {
        "leaderboard/tracks/judge/judged.py",
        "leaderboard/tracks/judge/app/panels.py",
        "leaderboard/tracks/contamination/suite.py",
        "leaderboard/tracks/contamination/app/panels.py",
        "backend/tracks/contamination/data.py",
    },
    "judge": set(),
    "long-context": {
        "leaderboard/tracks/contamination/suite.py",
        "leaderboard/tracks/contamination/definition.py",
        "leaderboard/tracks/contamination/app/about.py",
        "backend/tracks/contamination/data.py",
    },
    "contamination": set(),
}
#: Each track's package name in the tracks' folders.
PACKAGE = {
    "evalita": "evalita",
    "judge": "judge",
    "long-context": "long_context",
    "contamination": "contamination",
}


@pytest.mark.parametrize("track", sorted(TRACK_NAMES))
def test_another_tracks_folders_name_a_track_only_where_they_depend_on_it(track: str) -> None:
    own = tuple(f"{side}/tracks/{PACKAGE[track]}/" for side in ("leaderboard", "backend"))
    others = [
        p
        for p in _python_files("leaderboard/tracks", "backend/tracks")
        if p.parent.name != "tracks" and not p.relative_to(REPO).as_posix().startswith(own)
    ]
    naming = {
        p.relative_to(REPO).as_posix() for p in others if TRACK_NAMES[track].search(p.read_text("utf-8"))
    }
    assert naming == CROSS_TRACK[track]


def test_every_class_name_is_defined_once_across_the_codebase() -> None:
    """One class per name: two classes called alike with different meanings (the judge's run set-up
    and Evalita's record once shared ``RunRecord``) mislead whoever greps for one of them."""
    where: dict[str, list[str]] = {}
    for path in _python_files(*PACKAGES, "bench"):
        for node in ast.walk(ast.parse(path.read_text("utf-8"))):
            if isinstance(node, ast.ClassDef):
                where.setdefault(node.name, []).append(path.relative_to(REPO).as_posix())
    assert {name: paths for name, paths in where.items() if len(paths) > 1} == {}
    assert len(where) > 200  # the walk found the codebase
