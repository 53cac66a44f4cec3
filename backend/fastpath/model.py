"""``hf-fast``: lm-eval's ``HFLM`` with a fast log-likelihood and a continuous-batching generation.

lm-eval still builds every request, applies the filters and computes every metric; only
the two request types a model serves are computed differently:

* ``loglikelihood``: batched tokenisation (:mod:`.encoding`), then prefix trees — one
  forward per shared context for all its choices, length-sorted batches under a token
  budget, logits only where a token is scored (:mod:`.tree`).  The first call checks the
  tree against the reference on a few requests and, if they disagree (an architecture the
  4-D mask does not suit), runs the reference instead.
* ``loglikelihood_rolling``: the same windows as the reference (one per text that fits the
  model's window), each a request of the tree above: length-sorted batches, no padding to
  the longest text of a fixed-size batch, no per-window Python overhead.
* ``generate_until``: greedy requests go through ``transformers``' continuous batching
  (:mod:`.generation`); anything else (sampling, a model whose greedy decoding uses logits
  processors) through the reference.

Whenever the fast path cannot serve a request it says why in the log and in
:attr:`FastHFLM.stats`, and the reference code of ``HFLM`` serves it: the scores never
depend on which path ran, only the time does.

Model arguments (``--model_args``) on top of ``HFLM``'s: ``max_batch_tokens`` (tokens per
log-likelihood forward; default 4096 on CPU, sized from free memory on GPU),
``cb_max_requests``, ``cb_kv_tokens`` and ``cb_max_batch_tokens`` (continuous batching:
requests per step, their key budget, tokens per step — :class:`~.generation.BatchingLimits`;
defaults ``CPU_LIMITS`` and ``GPU_LIMITS``), ``verify_tree`` (default on).
"""

from __future__ import annotations

import copy
import inspect
import logging
import time
from collections.abc import Callable, Sequence
from dataclasses import asdict, dataclass, field
from typing import Any

import torch
import torch.nn.functional as F
from lm_eval.api.model import CacheHook
from lm_eval.api.registry import register_model
from lm_eval.models.huggingface import HFLM
from lm_eval.models.utils import handle_stop_sequences, normalize_gen_kwargs, postprocess_generated_text
from lm_eval.utils import get_rolling_token_windows, make_disjoint_window

from backend.fastpath.encoding import encode_many, encode_pairs
from backend.fastpath.generation import CPU_LIMITS, GPU_LIMITS, BatchingLimits, GenerationJob, generate_greedy
from backend.fastpath.tree import Batch, Row, attention_bias, build_batch, plan_batches, plan_rows
from backend.options import FAST_BACKEND

log = logging.getLogger(__name__)

CPU_MAX_BATCH_TOKENS = 4096
#: On CPU, the padding one row may bring into a log-likelihood batch, as a share of its width.
CPU_PADDING_SHARE = 0.125
GPU_MAX_BATCH_TOKENS = 65536
#: Fraction of free accelerator memory a log-likelihood forward may plan for.
GPU_MEMORY_SHARE = 0.25
#: Tree vs reference on the check requests: |Δ| ≤ atol + rtol·|reference|.
CHECK_TOLERANCE = {torch.float32: (1e-3, 1e-4), torch.float64: (1e-6, 1e-8)}
HALF_TOLERANCE = (0.1, 0.02)


@dataclass
class FastPathStats:
    """What the fast path did, for the run record and the benchmark (plain numbers)."""

    tree_requests: int = 0
    tree_rows: int = 0
    tree_batches: int = 0
    tree_tokens: int = 0  # tokens forwarded, padding excluded
    tree_padded_tokens: int = 0  # tokens forwarded, padding included
    reference_loglikelihood_requests: int = 0
    tree_check: str = ""  # "passed (max |Δ| …)", "failed …", or "" when not run
    encode_s: float = 0.0
    cb_requests: int = 0
    cb_prompt_tokens: int = 0
    cb_generated_tokens: int = 0
    reference_generation_requests: int = 0
    fallback_reasons: list[str] = field(default_factory=list)

    def note(self, reason: str) -> None:
        if reason not in self.fallback_reasons:
            self.fallback_reasons.append(reason)
            log.warning("fast path: %s; the reference code serves these requests", reason)


def tree_unsupported(lm: HFLM) -> str | None:
    """Why prefix-tree forwards cannot serve this model, or ``None`` if they can."""
    if lm.backend != "causal":
        return "log-likelihood: not a decoder-only model"
    config = lm.model.config
    implementation = getattr(config, "_attn_implementation", None)
    if implementation not in ("sdpa", "eager"):
        return f"log-likelihood: attention {implementation!r} takes no custom 4-D mask"
    window = getattr(config, "sliding_window", None)
    layer_types = set(getattr(config, "layer_types", None) or ["full_attention"])
    if (window and getattr(config, "use_sliding_window", True)) or layer_types != {"full_attention"}:
        return "log-likelihood: sliding-window attention"
    return None


def keeps_logits_by_mask(model: Any) -> bool:
    """Whether ``model.forward`` takes a boolean ``[batch, seq]`` ``logits_to_keep``.

    ``transformers``' ``slice_logits_to_keep`` accepts one; older model code slices with
    ``logits_to_keep`` as a range only.
    """
    forward = type(model).forward
    if "logits_to_keep" not in inspect.signature(forward).parameters:
        return False
    try:
        return "slice_logits_to_keep" in inspect.getsource(inspect.unwrap(forward))
    except (OSError, TypeError):  # source not available (compiled or dynamic model code)
        return False


@register_model(FAST_BACKEND)
class FastHFLM(HFLM):
    """``HFLM`` whose ``loglikelihood`` and ``generate_until`` take the fast path where they can."""

    def __init__(
        self,
        *args: Any,
        max_batch_tokens: int | None = None,
        cb_max_requests: int | None = None,
        cb_kv_tokens: int | None = None,
        cb_max_batch_tokens: int | None = None,
        verify_tree: bool = True,
        **kwargs: Any,
    ) -> None:
        super().__init__(*args, **kwargs)
        self.stats = FastPathStats()
        self._max_batch_tokens = int(max_batch_tokens) if max_batch_tokens else None
        self._cb_max_requests = int(cb_max_requests) if cb_max_requests else None
        self._cb_kv_tokens = int(cb_kv_tokens) if cb_kv_tokens else None
        self._cb_max_batch_tokens = int(cb_max_batch_tokens) if cb_max_batch_tokens else None
        self._verify_tree = verify_tree
        self._tree_blocked: str | None = tree_unsupported(self)
        self._keep_by_mask = keeps_logits_by_mask(self.model)

    def fastpath_stats(self) -> dict[str, Any]:
        """The counters of :class:`FastPathStats` as a plain dict (for the run record)."""
        return asdict(self.stats)

    # ------------------------------------------------------------------ log-likelihood

    def loglikelihood(self, requests: list[Any], disable_tqdm: bool = False) -> list[tuple[float, bool]]:
        if self.enable_thinking or self.backend != "causal":
            return super().loglikelihood(requests, disable_tqdm=disable_tqdm)
        t0 = time.perf_counter()
        pairs = [tuple(req.args) for req in requests]
        encoded = encode_pairs(self, pairs)
        self.stats.encode_s += time.perf_counter() - t0
        tokenized = [(pair, ctx, cont) for pair, (ctx, cont) in zip(pairs, encoded, strict=True)]
        return self._loglikelihood_tokens(tokenized, disable_tqdm=disable_tqdm)

    def loglikelihood_rolling(self, requests: list[Any], disable_tqdm: bool = False) -> list[float]:
        """Each text's log-likelihood over the reference's rolling windows, the windows forwarded
        as tree requests (context: the prefix token or the window's overlap)."""
        if self.enable_thinking or self.backend != "causal" or self.world_size > 1:
            return super().loglikelihood_rolling(requests, disable_tqdm=disable_tqdm)
        t0 = time.perf_counter()
        strings = [req.args[0] for req in requests]
        windows: list[tuple[None, list[int], list[int]]] = []
        owners: list[int] = []  # the text of each window
        spans: list[range] = []  # the windows of each text
        for index, tokens in enumerate(encode_many(self, strings)):
            start = len(windows)
            for context, continuation in map(
                make_disjoint_window,
                get_rolling_token_windows(
                    token_list=tokens,
                    prefix_token=self.prefix_token_id,
                    max_seq_len=self.max_length,
                    context_len=1,
                ),
            ):
                windows.append((None, context, continuation))
                owners.append(index)
            spans.append(range(start, len(windows)))
        self.stats.encode_s += time.perf_counter() - t0
        scores: dict[int, float] = {}
        left = [len(span) for span in spans]

        def answered(window: int, answer: tuple[float, bool]) -> None:
            # A text is reported (the runner's progress, the stall watchdog) once all its windows are in.
            scores[window] = answer[0]
            owner = owners[window]
            left[owner] -= 1
            if left[owner] == 0:
                total = sum(scores[w] for w in spans[owner])
                self.cache_hook.add_partial("loglikelihood_rolling", (strings[owner],), total)

        for owner, span in enumerate(spans):
            if not span:  # an empty text: no window, log-likelihood 0 (as the reference)
                self.cache_hook.add_partial("loglikelihood_rolling", (strings[owner],), 0.0)
        answers = self._tree_loglikelihood(windows, answered) if windows else []
        if answers is None:
            return super().loglikelihood_rolling(requests, disable_tqdm=disable_tqdm)
        return [sum(answers[w][0] for w in span) for span in spans]  # window order, as the reference sums

    def _loglikelihood_tokens(
        self,
        requests: list[tuple[tuple[str, str] | None, list[int], list[int]]],
        disable_tqdm: bool = False,
        override_bs: int | None = None,
    ) -> list[tuple[float, bool]]:
        """``(log P(continuation | context), continuation is greedy)`` per request, in order."""
        if not requests:
            return []
        if override_bs is not None:  # the reference's own rolling windows (a fallback): its batches
            return super()._loglikelihood_tokens(requests, disable_tqdm, override_bs)

        def answered(index: int, answer: tuple[float, bool]) -> None:
            if requests[index][0] is not None:
                self.cache_hook.add_partial("loglikelihood", requests[index][0], answer)

        answers = self._tree_loglikelihood(requests, answered)
        if answers is None:
            self.stats.reference_loglikelihood_requests += len(requests)
            return super()._loglikelihood_tokens(requests, disable_tqdm)
        return answers

    def _tree_loglikelihood(
        self,
        requests: list[tuple[Any, list[int], list[int]]],
        on_answer: Callable[[int, tuple[float, bool]], None] | None = None,
    ) -> list[tuple[float, bool]] | None:
        """The tree's answers in request order (``on_answer(i, answer)`` as each arrives), or
        ``None`` when the tree cannot serve this model (the caller runs the reference)."""
        if self._tree_blocked is None and self._verify_tree and not self.stats.tree_check:
            self._check_tree(requests)
        if self._tree_blocked is not None:
            self.stats.note(self._tree_blocked)
            return None
        rows = plan_rows([(ctx, cont) for _, ctx, cont in requests], self.max_length)
        answers = self._run_rows(rows, len(requests), on_answer)
        self.stats.tree_requests += len(requests)
        return answers

    def _token_budget(self) -> int:
        if self._max_batch_tokens:
            return self._max_batch_tokens
        if self.device.type != "cuda":
            return CPU_MAX_BATCH_TOKENS
        free, _ = torch.cuda.mem_get_info(self.device)
        config = self.model.config
        per_token = (
            4 * config.hidden_size + 3 * getattr(config, "intermediate_size", 4 * config.hidden_size)
        ) * (2 * self.model.dtype.itemsize)
        return max(1024, min(GPU_MAX_BATCH_TOKENS, int(free * GPU_MEMORY_SHARE / per_token)))

    def _padding_share(self) -> float | None:
        """``CPU_PADDING_SHARE`` off an accelerator, where padding is paid token for token; else no cap."""
        return None if self.device.type == "cuda" else CPU_PADDING_SHARE

    def _run_rows(
        self, rows: list[Row], count: int, on_answer: Callable[[int, tuple[float, bool]], None] | None = None
    ) -> list[tuple[float, bool]]:
        """Forward the rows (of ``count`` requests) batch by batch; halve the token budget on an
        accelerator OOM.  ``on_answer(i, answer)`` as request ``i``'s answer arrives (the caller
        reports it to the cache hook: the runner's progress)."""
        results: dict[int, tuple[float, bool]] = {}
        budget = self._token_budget()
        remaining = rows
        while remaining:
            try:
                batches = plan_batches(remaining, budget, self._padding_share())
                self._forward_batches(batches, results, on_answer)
                remaining = []
            except torch.OutOfMemoryError:
                if budget <= 256:
                    raise
                budget //= 2
                log.warning("log-likelihood batch ran out of memory; token budget now %d", budget)
                torch.cuda.empty_cache()
                remaining = [r for r in remaining if any(i not in results for i, _ in r.members)]
        return [results[i] for i in range(count)]

    def _forward_batches(
        self,
        batches: list[list[Row]],
        results: dict[int, tuple[float, bool]],
        on_answer: Callable[[int, tuple[float, bool]], None] | None = None,
    ) -> None:
        """One batch in flight while the next is laid out on the CPU (the GPU is not waited on)."""
        pending: tuple[Batch, tuple[torch.Tensor, torch.Tensor]] | None = None
        for rows in batches:
            batch = build_batch(rows, self.tokenizer.pad_token_id or 0)
            launched = self._tree_forward(batch)
            if pending is not None:
                self._collect(*pending, results, on_answer)
            pending = (batch, launched)
            self.stats.tree_rows += len(rows)
            self.stats.tree_batches += 1
            self.stats.tree_tokens += batch.real_tokens
            self.stats.tree_padded_tokens += batch.padded_tokens
        if pending is not None:
            self._collect(*pending, results, on_answer)

    def _collect(
        self,
        batch: Batch,
        launched: tuple[torch.Tensor, torch.Tensor],
        results: dict[int, tuple[float, bool]],
        on_answer: Callable[[int, tuple[float, bool]], None] | None,
    ) -> None:
        sums, greedy = (t.tolist() for t in launched)
        for slot, request in enumerate(batch.requests):
            answer = (float(sums[slot]), bool(greedy[slot]))
            results[request] = answer
            if on_answer is not None:
                on_answer(request, answer)

    def _tree_forward(self, batch: Batch) -> tuple[torch.Tensor, torch.Tensor]:
        """Per request slot: summed log-probability and all-greedy flag (tensors, not synced).

        Numerics follow ``HFLM._loglikelihood_tokens``: log-softmax in ``softmax_dtype``
        (default: the logits' dtype), the sum rounded to that dtype.
        """
        device = self.device

        def on_device(array: Any) -> torch.Tensor:
            return torch.from_numpy(array).to(device, non_blocking=True)

        input_ids, position_ids, segment = map(
            on_device, (batch.input_ids, batch.position_ids, batch.segment)
        )
        keep = on_device(batch.keep)
        with (
            torch.inference_mode(),
            torch.autocast(
                device_type=device.type,
                dtype=self.mixed_precision_dtype,
                enabled=self.mixed_precision_dtype is not None,
            ),
        ):
            out = self.model(
                input_ids=input_ids,
                # One sequence per row: causal attention alone is exact (the right padding is
                # never attended by a real token) and takes the fused kernels.
                attention_mask=None if batch.linear else attention_bias(segment, self.model.dtype),
                position_ids=position_ids,
                logits_to_keep=keep if self._keep_by_mask else 0,
                use_cache=False,
            )
            logits = out.logits if self._keep_by_mask else out.logits[keep]
            logprobs = F.log_softmax(logits, dim=-1, dtype=self.softmax_dtype)
        rows, tokens, owner = map(on_device, (batch.score_rows, batch.score_tokens, batch.score_owner))
        scored = logprobs[rows, tokens]
        misses = (logprobs.argmax(dim=-1)[rows] != tokens).to(torch.int32)
        slots = len(batch.requests)
        sums = torch.zeros(slots, dtype=torch.float32, device=device).index_add_(0, owner, scored.float())
        greedy = torch.zeros(slots, dtype=torch.int32, device=device).index_add_(0, owner, misses) == 0
        return sums.to(logprobs.dtype).float(), greedy

    def _check_tree(self, requests: Sequence[tuple[Any, list[int], list[int]]]) -> None:
        """Compare the tree with the reference on one short multi-choice row; block it if they differ."""
        rows = plan_rows([(ctx, cont) for _, ctx, cont in requests], self.max_length)
        multi = [r for r in rows if len(r.branches) > 1]
        pool = [r for r in multi if any(len(b) > 1 for b in r.branches)] or multi or rows
        row = min(pool, key=lambda r: r.length)
        indices = [i for i, _ in row.members][:8]
        sample = [requests[i] for i in indices]
        local = plan_rows([(ctx, cont) for _, ctx, cont in sample], self.max_length)
        ours: dict[int, tuple[float, bool]] = {}
        self._forward_batches([local], ours)
        hook, self.cache_hook = self.cache_hook, CacheHook(None)
        try:
            theirs = super()._loglikelihood_tokens(list(sample), True, len(sample))
        finally:
            self.cache_hook = hook
        atol, rtol = CHECK_TOLERANCE.get(self.model.dtype, HALF_TOLERANCE)
        worst = max(abs(ours[i][0] - ref[0]) for i, ref in enumerate(theirs))
        agree = all(abs(ours[i][0] - ref[0]) <= atol + rtol * abs(ref[0]) for i, ref in enumerate(theirs))
        if self.model.dtype in CHECK_TOLERANCE:
            agree = agree and all(ours[i][1] == ref[1] for i, ref in enumerate(theirs))
        if agree:
            self.stats.tree_check = f"passed on {len(sample)} requests (max |Δ| {worst:.2e})"
            log.info("fast path: prefix-tree log-likelihoods %s", self.stats.tree_check)
        else:
            self.stats.tree_check = f"failed on {len(sample)} requests (max |Δ| {worst:.2e})"
            self._tree_blocked = f"log-likelihood: prefix-tree check {self.stats.tree_check}"

    # ------------------------------------------------------------------ generation

    def _greedy_config(self) -> tuple[Any, str | None]:
        """The reference's effective greedy config and why continuous batching cannot use it."""
        config = copy.deepcopy(self.model.generation_config)
        config.do_sample = False
        for name in ("temperature", "top_p", "top_k"):
            setattr(config, name, None)
        if self.backend != "causal":
            return config, "generation: not a decoder-only model"
        processors = self.model._get_logits_processor(config)
        if len(processors):
            names = ", ".join(type(p).__name__ for p in processors)
            return config, f"generation: the model's greedy decoding uses logits processors ({names})"
        return config, None

    def generate_until(self, requests: list[Any], disable_tqdm: bool = False) -> list[str]:
        config, blocked = self._greedy_config()
        eos_text = self.tok_decode(self.eot_token_id, skip_special_tokens=False)
        jobs: list[tuple[int, str, dict[str, Any], list[str], int]] = []
        others: list[int] = []
        for index, request in enumerate(requests):
            context, gen_kwargs = request.args
            kwargs = normalize_gen_kwargs(gen_kwargs, self.max_gen_toks)
            until = handle_stop_sequences(kwargs.pop("until", None), eos=eos_text)
            max_gen_toks = kwargs.pop("max_gen_toks")
            greedy = kwargs.pop("do_sample") is False and kwargs.pop("temperature", 0.0) == 0.0
            if blocked is None and greedy and not kwargs:
                jobs.append((index, context, gen_kwargs, until, max_gen_toks))
            else:
                self.stats.note(blocked or "generation: sampling or extra generation arguments")
                others.append(index)
        texts: dict[int, str] = {}
        if others:
            self.stats.reference_generation_requests += len(others)
            subset = super().generate_until([requests[i] for i in others], disable_tqdm=disable_tqdm)
            texts.update(zip(others, subset, strict=True))
        if jobs:
            texts.update(self._generate_continuous(jobs, config))
        return [texts[i] for i in range(len(requests))]

    def _generate_continuous(
        self, jobs: list[tuple[int, str, dict[str, Any], list[str], int]], config: Any
    ) -> dict[int, str]:
        prompts = encode_many(self, [context for _, context, _, _, _ in jobs])
        planned: list[GenerationJob] = []
        finish: dict[int, tuple[str, dict[str, Any], list[str]]] = {}
        for (index, context, gen_kwargs, until, max_gen_toks), prompt in zip(jobs, prompts, strict=True):
            max_ctx_len = self.max_length - max_gen_toks
            if max_ctx_len <= 0:
                raise ValueError(
                    f"max_gen_toks {max_gen_toks} must be less than the model's maximum length {self.max_length}"
                )
            planned.append(GenerationJob(index, list(prompt[-max_ctx_len:]), max_gen_toks, tuple(until)))
            finish[index] = (context, gen_kwargs, until)
        eos = config.eos_token_id
        eos_ids = set(eos if isinstance(eos, list) else [eos] if eos is not None else [self.eot_token_id])
        config.max_new_tokens = max(j.max_new_tokens for j in planned)
        defaults = GPU_LIMITS if self.device.type == "cuda" else CPU_LIMITS
        limits = BatchingLimits(
            max_requests=self._cb_max_requests or defaults.max_requests,
            kv_tokens=self._cb_kv_tokens or defaults.kv_tokens,
            max_batch_tokens=self._cb_max_batch_tokens or defaults.max_batch_tokens,
        )
        if self.device.type == "cuda":
            # The paged cache is sized from free memory: hand back what the log-likelihood
            # batches left in PyTorch's caching allocator first.
            torch.cuda.empty_cache()
        texts: dict[int, str] = {}

        def done(job: GenerationJob, tokens: list[int]) -> None:
            context, gen_kwargs, until = finish[job.key]
            texts[job.key] = self._answer_text(tokens, until)
            self.cache_hook.add_partial("generate_until", (context, gen_kwargs), texts[job.key])

        generated = generate_greedy(
            self.model,
            self.tokenizer,
            planned,
            generation_config=config,
            limits=limits,
            device_type=self.device.type,
            eos_ids=eos_ids,
            on_done=done,
        )
        self.stats.cb_requests += len(planned)
        self.stats.cb_prompt_tokens += sum(len(j.prompt) for j in planned)
        self.stats.cb_generated_tokens += sum(len(t) for t in generated.values())
        return texts

    def _answer_text(self, tokens: list[int], until: list[str]) -> str:
        """The answer as ``HFLM.generate_until`` cuts it from the generated tokens."""
        if isinstance(self.think_end_token, int):
            marks = [i for i, token in enumerate(tokens) if token == self.think_end_token]
            if marks:
                tokens = tokens[marks[-1] + 1 :]
        text = self.tok_decode(tokens)
        if isinstance(self.think_end_token, int):
            text = text.lstrip()
        return postprocess_generated_text(
            generation=text,
            stop=until,
            think_end_token=self.think_end_token if isinstance(self.think_end_token, str) else None,
        )
