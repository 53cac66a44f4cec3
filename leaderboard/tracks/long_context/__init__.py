"""The long-context track (INDAQA2): narrative QA over whole Italian books.

Importable without torch or lm-eval (the UI runs on a CPU Space):

* :mod:`.definition` — the one definition: ``QuestionSet``, ``ContextSetting``, ``Metric``,
  ``AnswerKind``, ``harness_tasks(settings)``, ``parse_settings("10k,full")``,
  ``render_prompt`` (Figure 4), ``GENERATION``, ``TABLE5_COLUMNS``, ``ABOUT_MARKDOWN``;
* :mod:`.metrics` — ``exact_match``, ``meteor_paper``, ``meteor_italian``, ``extract_letter``,
  ``score_multiple_choice`` (pure; METEOR takes the WordNet of :mod:`.wordnet`);
* :mod:`.schema` — ``LongContextResults`` (envelope ``evalita-llm-results/2`` + ``settings``
  body), ``LongContextDetail`` (one details line);
* :mod:`.tables` — ``table5``, ``plot_frame``, ``export_table`` (pandas, no gradio);
* ``harness/`` — the lm-eval task configs and their hooks.

The worker side is :mod:`backend.tracks.long_context` (``run_long_context``).
"""
