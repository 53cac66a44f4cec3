"""Offline metrics for the harness: ROUGE for the summarization task.

Why: ``lm_eval/tasks/evalita_llm/sum_utils.py`` runs ``evaluate.load("rouge")`` when the SUM
tasks are built.  ``evaluate`` resolves a bare name like ``rouge`` in this order:
a local ``./rouge/rouge.py`` (relative to the working directory), the hub module
``evaluate-metric/rouge`` (downloaded into its modules cache), and — when the hub cannot
be reached or ``HF_EVALUATE_OFFLINE=1`` — the newest copy already in that cache,
``$HF_MODULES_CACHE/evaluate_modules/metrics/evaluate-metric--rouge/<64-hex hash>/rouge.py``
(``HF_MODULES_CACHE`` defaults to ``$HF_HOME/modules`` = ``~/.cache/huggingface/modules``).

How: :func:`install_offline_rouge` pre-fills that cache entry with
``backend/tracks/evalita/offline_rouge/rouge/rouge.py``, our ROUGE metric with the upstream defaults, exactly
what an earlier online ``evaluate.load("rouge")`` would have left there.  The harness
code is untouched and the cwd does not matter.  Call it before lm-eval builds the SUM
tasks, with the same ``HF_MODULES_CACHE`` the harness process uses (the default reads
``evaluate.config.HF_MODULES_CACHE``), and run with ``HF_EVALUATE_OFFLINE=1`` so
``evaluate`` goes to the cache without trying the network.  Where the hub is reachable
the genuine module is used instead; both give the same numbers (``rouge_score`` defaults,
no stemming).

The tokenizer that keeps accented letters is the ``as-specified`` metric set's
(``leaderboard.tracks.evalita.specified.ItalianTokenizer``); the lm-eval scores keep this one.
"""

from __future__ import annotations

import hashlib
import logging
import os
import sys
from collections.abc import Mapping
from pathlib import Path

log = logging.getLogger(__name__)

#: Our ROUGE metric script (an ``evaluate.Metric``), installed under the hub module's name.
ROUGE_SCRIPT = Path(__file__).resolve().parent / "rouge" / "rouge.py"
#: The cache folder name ``evaluate`` uses for the canonical hub module ``evaluate-metric/rouge``.
ROUGE_CACHE_NAME = "evaluate-metric--rouge"


def default_modules_cache() -> Path:
    """The modules cache ``evaluate`` uses in this process (``HF_MODULES_CACHE``).

    ``evaluate.config``'s own value once ``evaluate`` is imported; before, the same rule read from
    the environment, because importing ``evaluate`` costs about two CPU-seconds (its evaluators pull
    in ``transformers.pipelines``) that a run without the SUM tasks, which alone load ROUGE, never needs.
    """
    config = sys.modules.get("evaluate.config")
    if config is not None:
        return Path(config.HF_MODULES_CACHE)
    return modules_cache_from_env(os.environ)


def modules_cache_from_env(env: Mapping[str, str]) -> Path:
    """``evaluate.config``'s rule: ``$HF_MODULES_CACHE``, else ``$HF_HOME/modules`` (``~`` expanded),
    else ``$XDG_CACHE_HOME/huggingface/modules`` (default ``~/.cache``)."""
    if "HF_MODULES_CACHE" in env:
        return Path(env["HF_MODULES_CACHE"])
    hf_home = env.get("HF_HOME", os.path.join(env.get("XDG_CACHE_HOME", "~/.cache"), "huggingface"))
    return Path(os.path.expanduser(hf_home)) / "modules"


def install_offline_rouge(modules_cache: Path | None = None) -> Path:
    """Put our ROUGE script where ``evaluate.load("rouge")`` finds it offline; return its path.

    Idempotent: the entry is named after the script's SHA-256, like ``evaluate``'s own
    entries, so a second call rewrites nothing.
    """
    cache = Path(modules_cache) if modules_cache is not None else default_modules_cache()
    source = ROUGE_SCRIPT.read_bytes()
    digest = hashlib.sha256(source).hexdigest()
    module_dir = cache / "evaluate_modules" / "metrics" / ROUGE_CACHE_NAME
    target_dir = module_dir / digest
    target_dir.mkdir(parents=True, exist_ok=True)
    for package in (cache, cache / "evaluate_modules", module_dir.parent, module_dir, target_dir):
        (package / "__init__.py").touch(exist_ok=True)
    target = target_dir / "rouge.py"
    if not target.is_file() or target.read_bytes() != source:
        tmp = target.with_suffix(f".{os.getpid()}.tmp")  # one per process: xdist workers install at once
        tmp.write_bytes(source)
        tmp.replace(target)
        log.info("installed offline ROUGE metric at %s", target)
    return target


__all__ = [
    "ROUGE_CACHE_NAME",
    "ROUGE_SCRIPT",
    "default_modules_cache",
    "install_offline_rouge",
    "modules_cache_from_env",
]
