"""The Evalita-LLM track (Magnini et al.): ten native-Italian tasks, several prompts each, ranked by CPS.

Domain (no UI): :mod:`.definition` (tasks, prompts, harness names), :mod:`.metrics` (paper §5),
:mod:`.schema` (the results body and details records), ``sample_data/``.  App side: :mod:`.app`.
Worker side: :mod:`backend.tracks.evalita`.
"""
