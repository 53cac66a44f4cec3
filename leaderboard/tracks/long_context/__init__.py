"""The long-context track (INDAQA2): narrative QA over whole Italian books.

Domain (importable without gradio, torch or lm-eval): :mod:`.spec` (its ``TrackSpec``),
:mod:`.definition` (``QuestionSet``, ``ContextSetting`` and ``CONTEXT_SETTINGS``, ``KeptSide``,
``LongContextOptions``, ``Metric``, ``harness_tasks(settings)``, ``render_prompt`` (Figure 4)),
:mod:`.metrics` (``exact_match``, ``meteor_paper``, ``meteor_italian``,
``extract_letter``; METEOR takes the WordNet of :mod:`.wordnet`), :mod:`.schema`
(``LongContextResults``, ``LongContextDetail``), :mod:`.uncertainty`, ``harness/`` (the lm-eval
task configs and their hooks), ``sample_data/``.  App side: :mod:`.app` (``results``, ``export``,
``tables``, ``views``, ``tab``, ``about``: the About text).  Worker side: :mod:`backend.tracks.long_context`.
"""
