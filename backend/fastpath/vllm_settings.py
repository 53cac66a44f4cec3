"""vLLM's reproducibility traps, handled where the runner loads lm-eval's ``vllm`` model.

vLLM is optional (not in ``requirements-backend.txt``: its wheel pins its own torch).
Two of its defaults make scores depend on things other than the model and the data:

* prefix caching reuses KV blocks computed for an earlier request, so a log-likelihood
  depends on what ran before it — the runner passes ``enable_prefix_caching=False``;
* its kernels reduce in an order that depends on the batch, so greedy decoding can change
  with which requests share a step — ``VLLM_BATCH_INVARIANT=1`` (vLLM's batch-invariant
  kernels, NVIDIA compute capability 9.0+ in current releases) makes every request's output
  independent of its neighbours.  It must be set before vLLM is imported.
"""

from __future__ import annotations

import logging
import os

log = logging.getLogger(__name__)

BATCH_INVARIANT_ENV = "VLLM_BATCH_INVARIANT"


def prepare_vllm_environment() -> None:
    """Ask vLLM for batch-invariant kernels, unless the operator set the variable explicitly."""
    if os.environ.setdefault(BATCH_INVARIANT_ENV, "1") != "1":
        log.warning(
            "%s=%s: vLLM greedy outputs may depend on batch composition",
            BATCH_INVARIANT_ENV,
            os.environ[BATCH_INVARIANT_ENV],
        )
