"""The LLM-as-judge track (Donati et al.; docs/TRACKS.md): rubric, parser, statistics, results, tables.

Importable without torch or lm-eval (the UI runs on a CPU Space).  Modules:

* :mod:`~leaderboard.tracks.judge.definition` — ids, modes, protocols, the score scale, the request options;
* :mod:`~leaderboard.tracks.judge.rubric` — the rubric (the one definition of every criterion's texts);
* :mod:`~leaderboard.tracks.judge.prompts` — the ``project`` protocol's prompts, rendered from the rubric;
* :mod:`~leaderboard.tracks.judge.paper` — the ``paper`` protocol's prompts: Appendix A's templates
  (quoted with attribution);
* :mod:`~leaderboard.tracks.judge.parse` — reading a judge's answer (``parse_answer``);
* :mod:`~leaderboard.tracks.judge.metrics` — Spearman ρ, MAE, bias, agreement matrix, distributions;
* :mod:`~leaderboard.tracks.judge.data` — the annotated-set and few-shot (examples) file formats,
  loaders and the set's digest;
* :mod:`~leaderboard.tracks.judge.items` — what the judge is asked (meta and generations units);
* :mod:`~leaderboard.tracks.judge.schema` — the results file (``evalita-llm-results/2``, track ``judge``);
* :mod:`~leaderboard.tracks.judge.app.records` — one parsed results file (``JudgeRun``), the newest per measurement;
* :mod:`~leaderboard.tracks.judge.app.tables` — the judges table, agreement matrix, distributions, SUM means;
* :mod:`~leaderboard.tracks.judge.app.about` — the About text;
* ``harness/`` — the lm-eval task template and its hooks; ``sample_data/`` — the bundled annotated set.

The worker side is :mod:`backend.tracks.judge`.
"""
