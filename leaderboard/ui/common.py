"""What the tabs' render functions return, and how each becomes a gradio update.

A render function returns plain *view values* keyed by output name: a :class:`Table`, a
:class:`CodeBlock`, a plotly figure (``None``: nothing to draw, so the plot is hidden), a
:class:`Choices` for a dropdown, a :class:`LazyFile` (a download made only when asked), or a
string.  :func:`fingerprint` identifies a value's content (the page sends a
value only when its fingerprint differs from what the browser already shows) and
:func:`to_update` turns it into what gradio sends, once it is known to be needed.
"""

from __future__ import annotations

import hashlib
import json
import logging
import re
import threading
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import gradio as gr
import pandas as pd
import plotly.graph_objects as go

from leaderboard.views import common as views

logger = logging.getLogger(__name__)

ERROR_TEXT = (
    "Something went wrong while preparing this view; the maintainers can find the details in the log."
)
#: The CSS class of tables whose last column is the hidden run key (:data:`views.KEY_COLUMN`).
KEYED_TABLE = "keyed-table"


@dataclass(frozen=True)
class Table:
    """A table to show: numbers with two decimals (parameters with :func:`views.format_params`),
    model names as Hub links unless ``link_models`` is off."""

    frame: pd.DataFrame
    link_models: bool = True
    #: Decimals of the numbers, and what an empty cell says (a track may say why it is empty).
    precision: int = 2
    na_rep: str = "—"
    #: Columns whose cells are HTML, already escaped (a task cell another track marked).
    html_columns: tuple[str, ...] = ()


@dataclass(frozen=True)
class HtmlTable:
    """A small fixed table drawn as plain HTML (every cell escaped): no sorting or paging, and a
    fraction of the browser's work of an interactive Dataframe."""

    frame: pd.DataFrame

    def html(self) -> str:
        # A column with nothing in it holds ``None`` objects, which ``na_rep`` does not cover.
        frame = self.frame.mask(self.frame.isna())
        return frame.to_html(
            index=False,
            escape=True,
            na_rep="—",
            float_format=lambda x: f"{x:.2f}",
            border=0,
            classes="plain-table",
        )


@dataclass(frozen=True)
class CodeBlock:
    """A script to copy, shown by a ``gr.Markdown`` as a fenced code block (gradio gives each code
    block a copy button).  Not a ``gr.Code``: that component's editor (CodeMirror, about 400 KB of
    script) is loaded by every page that has one in its config, on whatever tab, so every
    visitor of the ranking paid for it before their first row (issue 32's first-row step)."""

    text: str
    language: str = "shell"

    def markdown(self) -> str:
        # A fence longer than any run of backticks in the text: the text cannot close it.
        longest = max((len(run) for run in re.findall(r"`+", self.text)), default=0)
        fence = "`" * max(3, longest + 1)
        return f"{fence}{self.language}\n{self.text}\n{fence}"


@dataclass(frozen=True)
class Choices:
    """A dropdown's options (``(label, value)`` pairs) and its selected value(s)."""

    options: tuple[tuple[str, str], ...]
    value: str | list[str] | None


class LazyFile:
    """A file a render names without making it: made (once) when something asks for it — the
    page's download click, an API endpoint returning it — not at every render (issue 32: the
    CSV of a 10,000-row view took longer to write than the page took to show).

    ``key`` identifies the file's content (its :func:`fingerprint`); ``make()`` writes it and
    returns its path.  Kept with shared renders (:mod:`leaderboard.ui.render_cache`): ``make``
    should hold what recomputes the file, not the data it is made from.
    """

    def __init__(self, key: str, make: Callable[[], str]) -> None:
        self.key = key
        self._make: Callable[[], str] | None = make
        self._path: str | None = None
        self._lock = threading.Lock()

    def path(self) -> str:
        """The file's path, made on the first call."""
        with self._lock:
            if self._path is None:
                assert self._make is not None
                self._path = self._make()
                self._make = None  # what made it is no longer needed
            return self._path

    def __repr__(self) -> str:
        return f"LazyFile({self.key!r})"


def fingerprint(value: object) -> str:
    """A digest of what ``value`` shows: equal digests mean the browser needs nothing new."""
    digest = hashlib.sha1(type(value).__name__.encode())
    if isinstance(value, Table | HtmlTable):
        frame = value.frame
        shown = (
            getattr(value, "link_models", None),
            getattr(value, "precision", None),
            getattr(value, "na_rep", None),
            getattr(value, "html_columns", None),
        )
        digest.update(repr((list(frame.columns), shown)).encode())
        if not frame.empty:
            digest.update(pd.util.hash_pandas_object(frame.astype(str), index=False).to_numpy().tobytes())
    elif isinstance(value, go.Figure):
        digest.update(value.to_json().encode())
    elif isinstance(value, LazyFile):
        digest.update(value.key.encode())
    else:
        digest.update(json.dumps(value, default=repr, sort_keys=True).encode())
    return digest.hexdigest()


def table_update(table: Table) -> dict:
    """A read-only Dataframe update: numbers shown with two decimals, model names as links.

    A ``gr.update`` (postprocessed once, by gradio) rather than a new component per update.
    """
    frame = views.linked(table.frame) if table.link_models else table.frame
    kinds = views.datatypes(frame)
    if not table.link_models:
        kinds = ["str" if c == views.MODEL else k for c, k in zip(frame.columns, kinds, strict=True)]
    if table.html_columns:
        kinds = ["html" if c in table.html_columns else k for c, k in zip(frame.columns, kinds, strict=True)]
    if frame.empty:
        return gr.update(value=frame, datatype=kinds)
    styled = frame.style.format(precision=table.precision, na_rep=table.na_rep)
    if views.PARAMS in frame.columns:  # one parameter format on every page
        styled = styled.format(views.format_params, subset=[views.PARAMS])
    return gr.update(value=styled, datatype=kinds)


def plot_update(figure: go.Figure | None) -> dict:
    """The plot, or a hidden plot when there is nothing to draw (no empty box on the page)."""
    if figure is None:
        return gr.update(value=None, visible=False)
    return gr.update(value=figure, visible=True)


def to_update(component: gr.components.Component, value: object) -> object:
    """What gradio sends to ``component`` for a view value."""
    if isinstance(value, Table):
        return table_update(value)
    if isinstance(value, HtmlTable):
        return value.html()
    if isinstance(value, CodeBlock):
        return value.markdown()
    if isinstance(component, gr.Plot):
        return plot_update(value)  # type: ignore[arg-type]
    if isinstance(value, Choices):
        return gr.update(choices=list(value.options), value=value.value)
    if isinstance(value, LazyFile):
        return value.path()
    return value


def write_csv(folder: Path, stem: str, table: pd.DataFrame) -> str:
    """Write ``table`` as CSV under ``folder`` (content-addressed, so repeats reuse one file)."""
    text = views.to_csv(table).encode()
    digest = hashlib.sha1(text).hexdigest()[:16]
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / f"{stem}-{digest}.csv"
    if not path.exists():
        path.write_bytes(text)
    return str(path)
