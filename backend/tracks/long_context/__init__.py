"""Worker side of the long-context track (INDAQA2).

* :func:`run_long_context` (:mod:`.run`) — request + settings + data source → results and details;
* :func:`prepare_long_context` (:mod:`.data`) — §3.5 books → the run's work folder and include path;
* :mod:`.lm` — ``hf-book-cache``, the lm-eval model class (torch; imported by the run only);
* :mod:`.convert` — harness output → the results body and details (pure).

Importing this package does not import torch or lm-eval.
"""

from backend.tracks.long_context.data import LongContextData, prepare_long_context
from backend.tracks.long_context.run import LongContextEvaluation, run_long_context

__all__ = ["LongContextData", "LongContextEvaluation", "prepare_long_context", "run_long_context"]
