"""Page state in the URL query string, so that a view can be shared by its address.

``PageState.from_query`` reads the query parameters the browser sent (unknown keys and
bad values are ignored, never an error); ``PageState.to_query`` writes them back,
leaving out what equals the default so that a plain address stays plain.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, fields, replace
from urllib.parse import urlencode

TABS: tuple[str, ...] = ("ranking", "task", "model", "plots", "submit", "about")
SETTINGS: tuple[str, ...] = ("0", "5", "both")
# Per-task columns the ranking can show (keys of the ranking table's ``<task>_<metric>``).
TASK_COLUMNS: tuple[str, ...] = ("cps", "maxp", "avgp", "best_prompt")
MAX_CHOSEN_MODELS = 6


def _split(value: str) -> tuple[str, ...]:
    return tuple(part for part in value.split(",") if part)


@dataclass(frozen=True)
class PageState:
    """Everything a shared link restores: tab, setting, task, chosen models and filters."""

    tab: str = "ranking"
    setting: str = "0"  # the ranking's: "0", "5" or "both"
    shots: str = "0"  # the task, model and plots tabs': "0" or "5"
    task: str = ""
    model: str = ""
    models: tuple[str, ...] = ()
    types: tuple[str, ...] = ()
    sizes: tuple[str, ...] = ()
    precisions: tuple[str, ...] = ()
    search: str = ""
    columns: tuple[str, ...] = ("cps",)
    all_runs: bool = False

    @classmethod
    def from_query(cls, params: Mapping[str, str]) -> PageState:
        state = cls()
        changes: dict[str, object] = {}
        for f in fields(cls):
            raw = params.get(f.name)
            if raw is None:
                continue
            default = getattr(state, f.name)
            if isinstance(default, bool):
                changes[f.name] = raw.lower() in {"1", "true", "yes"}
            elif isinstance(default, tuple):
                changes[f.name] = _split(raw)
            else:
                changes[f.name] = raw.strip()
        state = replace(state, **changes)  # type: ignore[arg-type]
        return state.normalised()

    def normalised(self) -> PageState:
        """Drop values no control accepts (a hand-edited or stale link)."""
        columns = tuple(c for c in self.columns if c in TASK_COLUMNS)
        return replace(
            self,
            tab=self.tab if self.tab in TABS else "ranking",
            setting=self.setting if self.setting in SETTINGS else "0",
            shots=self.shots if self.shots in {"0", "5"} else "0",
            columns=columns or ("cps",),
            models=self.models[:MAX_CHOSEN_MODELS],
            search=self.search[:200],
        )

    def to_query(self) -> str:
        default = PageState()
        pairs: list[tuple[str, str]] = []
        for f in fields(self):
            value = getattr(self, f.name)
            if value == getattr(default, f.name):
                continue
            if isinstance(value, bool):
                pairs.append((f.name, "1" if value else "0"))
            elif isinstance(value, tuple):
                pairs.append((f.name, ",".join(value)))
            else:
                pairs.append((f.name, str(value)))
        return urlencode(pairs, safe=",/|")
