"""Greedy generation with ``transformers``' continuous batching (paged KV cache).

The reference path generates a fixed batch until *all* its sequences stop, so a batch of
22 runs as long as its longest answer and the GPU idles on padding.  Here every request
is handed to ``transformers``' :class:`ContinuousBatchingManager`, which keeps many
sequences in flight, each stopped at its own end and replaced by a waiting one at once.

Stop sequences.  The manager stops a request on an end token only; lm-eval stops on
strings (``"</s>"``, ``"\\n"``, the EOS text).  Two mechanisms, neither changing the text:

* every vocabulary entry whose text alone contains a stop string ends the request like
  EOS (synchronously, inside the manager: most stops — ``"\\n"`` — are caught here);
* a stop string split over several tokens is caught on the streamed tokens — the decoded
  tail is looked at only after a token that can close one — and the request is cancelled
  (asynchronously: a few surplus tokens may be generated).

Either way the answer is then cut exactly as the reference cuts it — the decoded tokens,
truncated at the first stop string (:func:`lm_eval.models.utils.postprocess_generated_text`)
— so greedy text equals the reference's wherever their logits agree.

Data shapes: :class:`GenerationJob` in; ``{job.key: generated token ids}`` out.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

from transformers import GenerationConfig
from transformers.generation.configuration_utils import ContinuousBatchingConfig

from backend.options import HarnessError

log = logging.getLogger(__name__)

#: How long to wait for one streamed result before checking the manager is still alive.
POLL_S = 1.0


class GenerationError(HarnessError):
    """The continuous-batching manager failed a request or died."""


@dataclass(frozen=True)
class GenerationJob:
    """One greedy request: prompt token ids, its token cap and its stop strings."""

    key: int
    prompt: list[int]
    max_new_tokens: int
    stops: tuple[str, ...]


def vocabulary_texts(tokenizer: Any) -> list[str]:
    """Every token's text, decoded alone (special tokens included)."""
    return tokenizer.batch_decode([[i] for i in range(len(tokenizer))], skip_special_tokens=False)


@dataclass(frozen=True)
class StopPlan:
    """How one set of stop strings is watched.

    ``ending``: tokens whose text alone contains a stop string — they end the request like
    EOS.  Sound for the tokenizers lm-eval meets (byte-level BPE, SentencePiece): a token's
    text in context contains its text alone (at most with a leading space), so such a token
    always puts the stop string into the answer.  ``closing``: tokens that may complete a
    stop string spread over several tokens (their text holds a stop's last character, or is
    an incomplete UTF-8 sequence): only after one of them is the decoded tail looked at.
    """

    stops: tuple[str, ...]
    ending: frozenset[int]
    closing: frozenset[int]

    @classmethod
    def build(cls, stops: Sequence[str], texts: Sequence[str]) -> StopPlan:
        wanted = tuple(s for s in stops if s)
        last = {s[-1] for s in wanted} | {"\ufffd"}
        ending = frozenset(i for i, text in enumerate(texts) if any(s in text for s in wanted))
        closing = (
            frozenset(i for i, text in enumerate(texts) if any(c in text for c in last))
            if wanted
            else frozenset()
        )
        return cls(wanted, ending, closing)


@dataclass(frozen=True)
class BatchingLimits:
    """How many sequences decode in one step: at most ``max_requests``, and at most
    ``kv_tokens // longest sequence`` of a wave.

    Without flash attention (CPU, or a GPU without ``flash-attn``) ``transformers``' paged
    attention lets every query of a step attend to the keys of every sequence in it (a
    packed mask), so a step costs about requests² × length: the key budget keeps long
    prompts (summaries) from paying quadratically while short ones still batch widely.
    ``max_batch_tokens``: tokens per step (prefill chunks); ``None`` lets ``transformers`` choose.
    """

    max_requests: int
    kv_tokens: int
    max_batch_tokens: int | None = None


CPU_LIMITS = BatchingLimits(max_requests=16, kv_tokens=4096, max_batch_tokens=512)
GPU_LIMITS = BatchingLimits(max_requests=128, kv_tokens=65536)


def plan_waves(
    jobs: Sequence[GenerationJob], limits: BatchingLimits
) -> list[tuple[list[GenerationJob], int]]:
    """Longest first, cut into waves of similar length, each with its requests per step.

    A wave keeps taking jobs down to half its longest one; its requests per step are
    ``kv_tokens // longest`` within ``[1, max_requests]``.
    """
    waves: list[tuple[list[GenerationJob], int]] = []
    longest = 0
    for job in sorted(jobs, key=lambda j: (-(len(j.prompt) + j.max_new_tokens), j.key)):
        length = len(job.prompt) + job.max_new_tokens
        if waves and 2 * length > longest:
            waves[-1][0].append(job)
            continue
        longest = length
        waves.append(([job], max(1, min(limits.max_requests, limits.kv_tokens // length))))
    return waves


def continuous_config(
    *, device_type: str, jobs: Sequence[GenerationJob], requests: int, max_batch_tokens: int | None
) -> ContinuousBatchingConfig:
    """The manager's settings for one wave.

    Block sharing (prefix caching) is off: a shared block computed inside one batch would
    make a request's numbers depend on what ran beside it.  On CPU the paged cache is
    sized to the wave (the automatic sizing measures free accelerator memory and on CPU
    allocates gigabytes); on GPU it is sized from free memory by ``transformers``.
    """
    if device_type != "cpu":
        return ContinuousBatchingConfig(
            allow_block_sharing=False, max_requests_per_batch=requests, max_batch_tokens=max_batch_tokens
        )
    page = 64
    longest = max(len(j.prompt) + j.max_new_tokens for j in jobs)
    return ContinuousBatchingConfig(
        allow_block_sharing=False,
        page_size=page,
        num_blocks=requests * -(-longest // page) + 2,
        max_requests_per_batch=requests,
        max_batch_tokens=max_batch_tokens,
        use_cuda_graph=False,
    )


class _StopWatch:
    """Finds a stop string spread over several of a request's streamed tokens."""

    def __init__(self, tokenizer: Any, plan: StopPlan) -> None:
        self.tokenizer = tokenizer
        self.plan = plan
        # A stop string of n bytes spans at most n tokens; one more for the new token.
        self.window = max((len(s.encode()) for s in plan.stops), default=0) + 1

    def hit(self, tokens: Sequence[int]) -> bool:
        if not tokens or tokens[-1] not in self.plan.closing:
            return False
        tail = self.tokenizer.decode(tokens[-self.window :], skip_special_tokens=False)
        if not any(s in tail for s in self.plan.stops):
            return False
        text = self.tokenizer.decode(tokens, skip_special_tokens=False)
        return any(s in text for s in self.plan.stops)


def generate_greedy(
    model: Any,
    tokenizer: Any,
    jobs: Sequence[GenerationJob],
    *,
    generation_config: GenerationConfig,
    limits: BatchingLimits,
    device_type: str,
    eos_ids: set[int],
    on_done: Callable[[GenerationJob, list[int]], None] | None = None,
) -> dict[int, list[int]]:
    """Run ``jobs`` through continuous batching, wave by wave (:func:`plan_waves`); ids per ``job.key``.

    ``generation_config`` must be greedy with no logits processors (the caller checks).
    ``on_done`` is called once per job as it finishes (progress reporting).
    """
    if not jobs:
        return {}
    texts = vocabulary_texts(tokenizer)
    watches = {
        stops: _StopWatch(tokenizer, StopPlan.build(stops, texts)) for stops in {j.stops for j in jobs}
    }
    done: dict[int, list[int]] = {}
    for wave, requests in plan_waves(jobs, limits):
        config = continuous_config(
            device_type=device_type, jobs=wave, requests=requests, max_batch_tokens=limits.max_batch_tokens
        )
        log.info("continuous batching: %d requests, up to %d per step", len(wave), requests)
        _run_wave(model, wave, generation_config, config, eos_ids, watches, done, on_done)
    return done


def _run_wave(
    model: Any,
    jobs: Sequence[GenerationJob],
    generation_config: GenerationConfig,
    cb_config: ContinuousBatchingConfig,
    eos_ids: set[int],
    watches: dict[tuple[str, ...], _StopWatch],
    done: dict[int, list[int]],
    on_done: Callable[[GenerationJob, list[int]], None] | None,
) -> None:
    """One manager for ``jobs``; finished ids go into ``done``."""
    by_id = {str(job.key): job for job in jobs}
    remaining = len(jobs)
    manager = model.init_continuous_batching(
        generation_config=generation_config, continuous_batching_config=cb_config
    )
    manager.start()
    try:
        for job in jobs:
            manager.add_request(
                job.prompt,
                request_id=str(job.key),
                max_new_tokens=job.max_new_tokens,
                streaming=True,
                eos_token_id=sorted(eos_ids | watches[job.stops].plan.ending),
            )
        while remaining:
            output = manager.get_result(timeout=POLL_S)
            if output is None:
                if not manager.is_running():
                    raise GenerationError(
                        f"continuous batching stopped with {remaining} of {len(jobs)} requests unfinished"
                    )
                continue
            job = by_id.get(output.request_id)
            if job is None or job.key in done:
                continue  # a streamed update arriving after we cut the request
            if output.error is not None:
                raise GenerationError(f"generation failed for a request: {output.error}")
            tokens = list(output.generated_tokens)
            finished = output.is_finished()
            if not finished and watches[job.stops].hit(tokens):
                manager.cancel_request(output.request_id)
                finished = True
            if finished:
                done[job.key] = tokens
                remaining -= 1
                if on_done is not None:
                    on_done(job, tokens)
    finally:
        manager.stop(block=True, timeout=30)
        manager.destroy()
