"""The shared domain of every track: what the worker and the app both need, with no UI in it.

Nothing here imports gradio, plotly or the app layer (``leaderboard.ui``, ``leaderboard.views``,
``leaderboard.store``, any ``leaderboard.tracks.<track>.app``): ``tests/test_boundaries.py`` checks it.
"""
