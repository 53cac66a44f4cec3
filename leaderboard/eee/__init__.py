"""Every Eval Ever (EEE) records of the board's runs: ``python -m leaderboard export --format eee DIR``.

Every Eval Ever (the EvalEval coalition's schema, package ``every-eval-ever``) is what the
evaluation community's tools read: one *aggregate* JSON per run (who ran which model on what,
every figure with its interval) and one *instance-level* JSONL beside it (every item: input,
references, the model's answer, its score).  This package writes them for every run of every
track, in the datastore's layout ``data/<benchmark>/<developer>/<model>/<uuid>.json`` (+
``<uuid>_samples.jsonl``), and validates each file with the package's own validator.

Shared code names no track: a track says what its figures and its details lines are through
its spec's ``eee`` reference (:class:`~leaderboard.eee.model.TrackEee`); a track without one
is exported from its columns of the contents table (every score column, with its interval).
"""
