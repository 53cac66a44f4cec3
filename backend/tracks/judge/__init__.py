"""Worker side of the LLM-as-judge track: one judge request → results file and details.

:func:`~backend.tracks.judge.run.evaluate` is the track's runner (its spec names it); it runs
:func:`run_judge` (with :class:`JudgeJob`), see :mod:`backend.tracks.judge.run`.  This package imports
torch and lm-eval only through :mod:`backend.runner`, and only once a run starts.
"""

from backend.tracks.judge.convert import JudgeRunError
from backend.tracks.judge.run import JudgeJob, run_judge

__all__ = ["JudgeJob", "JudgeRunError", "run_judge"]
