"""A model's results on its own Hub page: ``python -m leaderboard hub-results ORG/MODEL``.

The Hub shows benchmark scores on a model's page from YAML files in the model repo's
``.eval_results/`` folder (each entry: the benchmark dataset's id, the task id its ``eval.yaml``
defines, the value, the date, a source link, notes), and aggregates them on the benchmark
dataset's leaderboard once that dataset has an ``eval.yaml``.  This package writes those files
for a model's **comparable** runs (full runs on the official data), opens a pull request on the
model repo with them (never a direct commit), and writes the benchmark's ``eval.yaml``.

Shared code names no track: a track that fits the format says how through its spec's
``hub_results`` (a :class:`~leaderboard.hub_results.model.TrackHubResults`).
"""
