"""The project's shared vocabulary: what every track shares, each defined once.

Both :mod:`leaderboard` and :mod:`eval_queue` (and :mod:`backend`) import from here;
this module imports nothing of the project, so it can never take part in a cycle.  A
track's own value sets (its settings, its table's aggregates) live in its own folder; the
few-shot counts each track runs are its spec's ``TrackSpec.fewshot``.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar

#: How many characters of a revision (a commit sha or a branch name) are shown and
#: used in file names.  Twelve hex digits of a sha are unique in any real repository.
SHORT_REVISION_LEN = 12


def short_revision(revision: str) -> str:
    """The revision as shown and as written in file names (first :data:`SHORT_REVISION_LEN` characters)."""
    return str(revision)[:SHORT_REVISION_LEN]


def fewshot_label(num_fewshot: int) -> str:
    """How a few-shot count is shown: ``0-shot``, ``5-shot``."""
    return f"{num_fewshot}-shot"


@dataclass(frozen=True, order=True)
class RunRef:
    """One evaluated (model, revision, precision): what a model page, a link or a row click names.

    Its settings (0- and 5-shot) are separate runs of the same reference.  :attr:`key` is
    the one string form (dropdown values, links, the tables' hidden key column).
    """

    model: str
    revision: str
    precision: str

    #: The columns of a run table that hold a reference, in field order.
    COLUMNS: ClassVar[tuple[str, str, str]] = ("model", "revision", "precision")
    _SEPARATOR: ClassVar[str] = "|"

    @property
    def key(self) -> str:
        return self._SEPARATOR.join((self.model, self.revision, self.precision))

    @property
    def short_revision(self) -> str:
        return short_revision(self.revision)

    @classmethod
    def parse(cls, key: str) -> RunRef | None:
        """The reference a :attr:`key` names; ``None`` for anything else (a hand-edited link)."""
        parts = str(key).split(cls._SEPARATOR)
        if len(parts) != 3 or not all(parts):
            return None
        return cls(*parts)
