"""The contamination track: evidence that a model has seen a public test set in its published order.

Domain side (no gradio, torch or lm-eval): :mod:`.definition` (the sets, the tests' designs),
:mod:`.suite` (the one module naming the tracks whose sets are tested),
:mod:`.metrics` (the statistics, pure), :mod:`.schema` (the results file), :mod:`.spec`.  App side: :mod:`.app` (its About text in ``app/about.py``).
"""
