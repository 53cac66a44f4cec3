"""The long-context track (INDAQA2): narrative QA over whole Italian books.

Importable without torch or lm-eval (the UI runs on a CPU Space):

* :mod:`.definition` — the one definition: ``QuestionSet``, ``CONTEXT_SETTINGS`` (labels and word
  counts of the queue's ``eval_queue.vocabulary.ContextSetting``), ``Metric``,
  ``AnswerKind``, ``harness_tasks(settings)``, ``parse_settings("10k,full")``,
  ``render_prompt`` (Figure 4), ``GENERATION``, ``TABLE5_COLUMNS``, ``ABOUT_MARKDOWN``;
* :mod:`.metrics` — ``exact_match``, ``meteor_paper``, ``meteor_italian``, ``extract_letter``,
  ``score_multiple_choice`` (pure; METEOR takes the WordNet of :mod:`.wordnet`);
* :mod:`.schema` — ``LongContextResults`` (a ``ResultsEnvelope`` + ``settings`` body),
  ``LongContextDetail`` (one details line), ``parse_details`` (safe reader);
* :mod:`.tables` — ``table5``, ``plot_frame``, ``export_table`` (pandas, no gradio);
* :mod:`.export` — ``RESULTS``, the track's ``ResultsTrack`` (parser + ``export --track long-context``);
* :mod:`.views` — the tab's view values (Table 5 HTML, plot, drill-down answers; no gradio);
* :mod:`.tab` — ``LongContextTab`` (gradio; imports :mod:`leaderboard.ui`);
* ``harness/`` — the lm-eval task configs and their hooks.

The worker side is :mod:`backend.tracks.long_context` (``run.evaluate``, ``run_long_context``).
"""
