"""The page state: one value for everything a shared link restores, naming no track.

The state is the open tab and the values of the *link fields* the tabs own.  A tab declares
its fields as :class:`UrlField` s (``Tab.url_fields``: a default, the values it accepts, how
a notice names the default…); each track's tabs declare theirs in the track's own folder,
and the page merges them.  ``PageState.from_query`` reads the query parameters the browser
sent: a value no field accepts (a stale or hand-edited link: an unknown task, setting, sort,
filter or tab) falls back to the default and is reported as a :class:`Notice` the page shows;
it is never an error.  ``PageState.to_query`` writes the state back, leaving out what equals
the default, so a plain address stays plain.  ``with_value`` applies one control's new value.

Values are typed by their field's default: a bool, an int (a page, at least 1), a tuple (a
comma list), an enum member or text.  Values that can only be checked against the loaded
results (run keys) are free text here; the tabs that show them check them, with the same
kind of notice.
"""

from __future__ import annotations

import functools
from collections.abc import Callable, Collection, Mapping, Sequence
from dataclasses import dataclass, field, replace
from enum import Enum
from types import MappingProxyType
from typing import Any
from urllib.parse import urlencode

from leaderboard.views.common import md_text

#: The tab of a plain address (the default track's ranking).
DEFAULT_TAB = "ranking"
#: How long a free-text value may be (a search, a run key).
MAX_SEARCH = 200
#: How much of an unusable link value a notice repeats (a link can carry anything, at any length).
MAX_ECHO = 80


@dataclass(frozen=True)
class Notice:
    """A value of a link that was not used, and what is shown instead (plain text; escaped when shown)."""

    field: str
    given: str
    used: str

    @property
    def text(self) -> str:
        given = self.given if len(self.given) <= MAX_ECHO else self.given[: MAX_ECHO - 1] + "…"
        return f"The link's {self.field} “{given}” is unknown: showing {self.used} instead."


#: Reads another field's value (for :attr:`UrlField.normalise`).
Getter = Callable[[str], Any]


@dataclass(frozen=True)
class UrlField:
    """A link field a tab owns: its default (whose type is the field's), and what it accepts.

    ``choices``: the values (as the link writes them) a field, or each item of a tuple field,
    accepts; ``None``: the values come from the data (a run key, the data sets a track's runs
    used), so any printable text of at most :data:`MAX_SEARCH` characters is kept and the tab
    checks it when it renders, with a notice of its own (``clip``: longer text is cut instead).
    ``item`` turns an accepted text into the value (an enum); ``describe`` names a value in a
    notice; ``resets`` are the fields set back to their default when this one changes (a
    page number when the rows change); ``normalise(value, get)`` keeps the value consistent
    with the other fields (a prompt of the chosen task).
    """

    default: Any
    choices: Collection[str] | Callable[[], Collection[str]] | None = None
    item: Callable[[str], Any] | None = None
    describe: Callable[[Any], str] | None = None
    resets: tuple[str, ...] = ()
    normalise: Callable[[Any, Getter], Any] | None = None
    clip: bool = False

    def allowed(self) -> Collection[str] | None:
        return self.choices() if callable(self.choices) else self.choices

    def accepts(self, raw: str) -> bool:
        """Whether a link's text for this (single-valued) field would be used as it is."""
        return not self.parse(raw)[1]

    def parse(self, raw: object) -> tuple[Any, list[str]]:
        """``raw`` (a query string or a control's value) as the type of the default, and what was rejected."""
        default = self.default
        if isinstance(default, bool):
            return (raw if isinstance(raw, bool) else str(raw).lower() in {"1", "true", "yes"}), []
        if isinstance(default, int):
            try:
                return max(1, int(str(raw))), []
            except ValueError:
                return default, [str(raw)]
        allowed = self.allowed()
        if isinstance(default, tuple):
            parts = _split(raw)
            if allowed is None:
                return tuple(part for part in parts if _is_text(part)), [p for p in parts if not _is_text(p)]
            kept = tuple(self._value(part) for part in parts if part in allowed)
            rejected = [part for part in parts if part not in allowed]
            # An emptied list of an enum (the table's columns) is its default, not nothing.
            return (kept or default) if self.item is not None else kept, rejected
        text = str(raw if raw is not None else "").strip()
        if allowed is None:
            if self.clip:
                return text[:MAX_SEARCH], []
            return (text, []) if _is_text(text) else (default, [text])
        if text not in allowed:
            return default, [text]
        return self._value(text), []

    def _value(self, text: str) -> Any:
        return self.item(text) if self.item is not None else text

    def described(self, value: Any) -> str:
        """How a notice names ``value`` (the default it shows instead)."""
        if self.describe is not None:
            return self.describe(value)
        if isinstance(value, tuple):
            return ", ".join(_text(v) for v in value) or "all"
        return _text(value)


def _is_text(text: str) -> bool:
    return len(text) <= MAX_SEARCH and text.isprintable()


def _text(value: object) -> str:
    return str(getattr(value, "value", value))


def _split(value: object) -> tuple[str, ...]:
    if isinstance(value, list | tuple):
        return tuple(str(part) for part in value)
    return tuple(part for part in str(value).split(",") if part)


@functools.cache
def registered_url_fields() -> Mapping[str, UrlField]:
    """The link fields of every registered track's tabs (what a state knows without a page)."""
    from eval_queue.tracks import load_reference, track_registry  # the registry loads the tracks

    merged: dict[str, UrlField] = {}
    for spec in track_registry():
        for reference in spec.tabs:
            merged.update(load_reference(reference).url_fields)
    return MappingProxyType(merged)


@dataclass(frozen=True)
class PageState:
    """Everything a shared link restores: the tab, and the tabs' link fields that differ from their default."""

    tab: str = DEFAULT_TAB
    #: The link fields' values (typed by their :class:`UrlField`) that are not their defaults,
    #: as (name, value) pairs sorted by name.
    extra: tuple[tuple[str, Any], ...] = ()
    #: The fields this state knows (the page's tabs'; by default every registered track's).
    fields: Mapping[str, UrlField] = field(
        default_factory=lambda: registered_url_fields(), compare=False, repr=False
    )

    # -- reading a link -------------------------------------------------------------------

    @classmethod
    def from_query(
        cls,
        params: Mapping[str, str],
        *,
        tabs: Collection[str] = (DEFAULT_TAB,),
        extra_fields: Mapping[str, UrlField] | None = None,
    ) -> tuple[PageState, list[Notice]]:
        """The state a link asks for, and a notice for every value that could not be used.

        ``extra_fields``: fields beyond the registered tracks' (a page's own tabs')."""
        known = {**registered_url_fields(), **(extra_fields or {})}
        notices: list[Notice] = []
        tab = DEFAULT_TAB
        raw_tab = params.get("tab")
        if raw_tab is not None:
            if raw_tab.strip() in tabs:
                tab = raw_tab.strip()
            else:
                notices.append(Notice("tab", raw_tab, DEFAULT_TAB))
        values: dict[str, Any] = {}
        for name, spec in known.items():
            raw = params.get(name)
            if raw is None:
                continue
            value, rejected = spec.parse(raw)
            values[name] = value
            if rejected:
                notices.append(Notice(name, ", ".join(rejected), spec.described(spec.default)))
        state = cls(tab=tab, fields=MappingProxyType(known))
        return state._with(values).normalised(), notices

    def normalised(self) -> PageState:
        """Keep the dependent fields consistent (each field's :attr:`UrlField.normalise`)."""
        values = {}
        for name, spec in self.fields.items():
            if spec.normalise is not None:
                values[name] = spec.normalise(self.get(name), self.get)
        return self._with(values) if values else self

    # -- values ---------------------------------------------------------------------------

    def get(self, name: str) -> Any:
        """A field's value (its default when the link does not set it); ``None`` for a field no tab declares."""
        if name == "tab":
            return self.tab
        for key, value in self.extra:
            if key == name:
                return value
        spec = self.fields.get(name)
        return spec.default if spec is not None else None

    def with_values(self, **values: Any) -> PageState:
        """This state with typed values set as they are (a tab's own correction: a page number)."""
        return self._with(values).normalised()

    def with_value(self, name: str, raw: object) -> PageState:
        """This state with one field set from a control's value (a value no control offers is
        ignored: controls only offer valid ones).  The fields it resets return to their default."""
        spec = self.fields.get(name)
        if name == "tab":  # the tab changes by choosing it (a transition), never through a control
            return self
        if spec is None:  # a field of no tab: kept as text; an emptied control leaves it unset
            return self._with({name: None if raw is None or str(raw) == "" else str(raw)})
        value, _ = spec.parse(raw)
        changes = {name: value, **{other: None for other in spec.resets}}
        return self._with(changes).normalised()

    def _with(self, changes: Mapping[str, Any]) -> PageState:
        """``changes`` applied (``None`` or the default: the field unset)."""
        values = dict(self.extra)
        for name, value in changes.items():
            spec = self.fields.get(name)
            if value is None or (spec is not None and value == spec.default):
                values.pop(name, None)
            else:
                values[name] = value
        return replace(self, extra=tuple(sorted(values.items())))

    def control_value(self, name: str) -> object:
        """What the control bound to ``name`` shows for this state (lists for tuples, strings for enums)."""
        value = self.get(name)
        if isinstance(value, tuple):
            return [_text(item) for item in value]
        if isinstance(value, Enum):
            return value.value
        return value

    # -- writing a link -------------------------------------------------------------------

    def to_query(self) -> str:
        pairs: list[tuple[str, str]] = []
        if self.tab != DEFAULT_TAB:
            pairs.append(("tab", self.tab))
        # In the order the tabs declare their fields, then any other.
        order = {name: i for i, name in enumerate(self.fields)}
        for name, value in sorted(self.extra, key=lambda pair: (order.get(pair[0], len(order)), pair[0])):
            if isinstance(value, bool):
                pairs.append((name, "1" if value else "0"))
            elif isinstance(value, tuple):
                pairs.append((name, ",".join(_text(v) for v in value)))
            else:
                pairs.append((name, _text(value)))
        return urlencode(pairs, safe=",/|")


def notices_markdown(notices: Sequence[Notice]) -> str:
    """The notices as one escaped Markdown line (empty when there is none)."""
    return " ".join(f"⚠️ {md_text(notice.text)}" for notice in notices)
