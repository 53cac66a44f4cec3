"""Small rendering helpers shared by the tabs: tables with two decimals, CSV files."""

from __future__ import annotations

import hashlib
import logging
from pathlib import Path

import gradio as gr
import pandas as pd

from leaderboard import views

logger = logging.getLogger(__name__)

ERROR_TEXT = (
    "Something went wrong while preparing this view; the maintainers can find the details in the log."
)


def table_update(table: pd.DataFrame, *, link_models: bool = True) -> gr.Dataframe:
    """A read-only Dataframe update: numbers shown with two decimals, model names as links."""
    shown = views.linked(table) if link_models else table
    kinds = (
        views.datatypes(shown)
        if link_models
        else [
            "str" if c == views.MODEL else k
            for c, k in zip(shown.columns, views.datatypes(shown), strict=True)
        ]
    )
    value = shown.style.format(precision=2, na_rep="—") if not shown.empty else shown
    return gr.Dataframe(value=value, datatype=kinds)


def write_csv(folder: Path, stem: str, table: pd.DataFrame) -> str:
    """Write ``table`` as CSV under ``folder`` (content-addressed, so repeats reuse one file)."""
    text = views.to_csv(table).encode()
    digest = hashlib.sha1(text).hexdigest()[:16]
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / f"{stem}-{digest}.csv"
    if not path.exists():
        path.write_bytes(text)
    return str(path)
