"""The Gradio web app, one module per tab; :func:`build_app` assembles them."""

from leaderboard.ui.layout import build_app

__all__ = ["build_app"]
