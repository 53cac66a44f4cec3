"""Where a run reads its data: the one data-source type of every track.

``hub`` — the track's official datasets, through the Hugging Face datasets cache (what
``python -m backend prefetch`` fills); ``hub:<org>/<name>`` — one named hub dataset (e.g.
an annotated set); ``sample`` — the track's bundled sample; ``local:<dir>`` — files in
a folder, in the layout the track documents.  The worker's ``--data`` and a track's own
data options (its ``worker_options``) are parsed here; each track maps the source to its files
(its ``sample_data/`` for ``sample``), and refuses a form it cannot read.
"""

from __future__ import annotations

from dataclasses import dataclass
from enum import StrEnum
from pathlib import Path

from eval_queue.errors import EvalitaError

#: How a data source is written, for messages.
FORMS = "hub, hub:<org>/<name>, sample, local:<dir>"


class DataSourceError(EvalitaError):
    """A data source that is malformed, missing or incomplete (the message says what and where)."""


class DataSourceKind(StrEnum):
    HUB = "hub"
    SAMPLE = "sample"
    LOCAL = "local"


@dataclass(frozen=True)
class DataSource:
    """A parsed data source (see the module docstring)."""

    kind: DataSourceKind
    #: ``local``: the folder (resolved, existing).
    root: Path | None = None
    #: ``hub:<org>/<name>``: the dataset; None for ``hub`` (the track's official datasets).
    repo: str | None = None
    #: ``local``: the name its label shows when it is not the folder's own (a sub-folder of a worker's data).
    name: str | None = None

    @classmethod
    def parse(cls, spec: str) -> DataSource:
        """Parse one of :data:`FORMS`; a ``local`` folder must exist.  :class:`DataSourceError` otherwise."""
        kind, sep, rest = str(spec).strip().partition(":")
        match kind:
            case DataSourceKind.HUB if not sep:
                return cls(DataSourceKind.HUB)
            case DataSourceKind.HUB if rest.count("/") == 1 and all(rest.split("/")):
                return cls(DataSourceKind.HUB, repo=rest)
            case DataSourceKind.SAMPLE if not sep:
                return cls(DataSourceKind.SAMPLE)
            case DataSourceKind.LOCAL if rest:
                root = Path(rest).expanduser().resolve()
                if not root.is_dir():
                    raise DataSourceError(f"local data directory {root} does not exist")
                return cls(DataSourceKind.LOCAL, root=root)
            case _:
                raise DataSourceError(f"Unknown data source {spec!r}. Valid: {FORMS}.")

    @staticmethod
    def parse_spec(spec: str) -> str:
        """``spec`` unchanged once it parses (for command-line options that keep the text)."""
        DataSource.parse(spec)
        return spec

    def folder(self, sample: Path) -> Path | None:
        """The folder the files are read from: ``sample`` (the track's) for the sample, the root for local."""
        match self.kind:
            case DataSourceKind.SAMPLE:
                return sample
            case DataSourceKind.LOCAL:
                return self.root
            case _:
                return None

    @property
    def label(self) -> str:
        """The value of ``run.data`` in a results file: ``hub``, ``hub:<org>/<name>``, ``sample``, ``local:<name>``."""
        match self.kind:
            case DataSourceKind.LOCAL:
                assert self.root is not None
                return f"local:{self.name or self.root.name}"
            case DataSourceKind.HUB if self.repo:
                return f"hub:{self.repo}"
            case _:
                return self.kind.value
