"""``hf-book-cache``: lm-eval's ``hf`` model for prompts that start with a whole book.

Two things the stock ``HFLM.generate_until`` does not do for the long-context track:

1. **Window truncation that keeps the question.**  HFLM left-truncates a prompt that
   does not fit the window: it would drop the *beginning of the book*.  Here the prompt
   is split at its last :data:`QUESTION_MARKER` into a *prefix* (BOS, any chat-template
   preamble, the book) and a *tail* (question, choices, ``Risposta:``, template end),
   tokenised separately, and only the prefix is cut, from its end, so that prefix +
   tail + ``max_gen_toks`` fits ``max_length``.  A book longer than the window is never
   run through the model.  The prefixes of one book are cut to one length (what fits
   beside the group's longest tail), so that its questions share them.
2. **Prefix (KV-cache) reuse.**  Requests whose prefixes are equal (one book, one context
   setting: 38–117 questions, INDAQA2 Table 1) are grouped; the prefix is prefilled
   once and every question continues from that cache, which is cropped back to the
   prefix after each answer.  Greedy decoding from a cache equals decoding the whole
   prompt (same tokens, same positions); ``reuse_prefix=False`` runs each prompt whole,
   one at a time, with the same tokens, for comparison.

``run_report()`` (read by :func:`backend.runner.run_harness`) gives the prefill token
count, the groups, and per request the prefix tokens and how many the model saw.
Log-likelihood requests are HFLM's own (this track has none).
"""

from __future__ import annotations

import copy
import logging
import time
from collections import Counter
from dataclasses import asdict, dataclass, field
from typing import Any

import torch
from lm_eval.api.registry import register_model
from lm_eval.models.huggingface import HFLM
from lm_eval.models.utils import handle_stop_sequences, normalize_gen_kwargs, postprocess_generated_text
from transformers import DynamicCache
from transformers.cache_utils import DynamicLayer

from backend.options import HarnessError
from leaderboard.tracks.long_context.definition import QUESTION_MARKER, UnknownNameError, task_by_name

log = logging.getLogger(__name__)

MODEL_NAME = "hf-book-cache"
#: Tokens per forward pass when prefilling a book: bounds activation memory for
#: 100K-token books; the cache is the same as one pass would give.
PREFILL_CHUNK = 8192


def _setting_of(task: str) -> str:
    try:
        return task_by_name(task).setting.value
    except UnknownNameError:
        return "?"


class _Progress:
    """Logs answers done per context setting, elapsed time and an ETA, every ``interval_s``."""

    def __init__(self, items: list[_Item], interval_s: float) -> None:
        self.total = Counter(_setting_of(i.task) for i in items)
        self.done: Counter[str] = Counter()
        self.interval_s = interval_s
        self.start = self.last = time.monotonic()

    def tick(self, item: _Item) -> None:
        self.done[_setting_of(item.task)] += 1
        now = time.monotonic()
        finished = sum(self.done.values())
        if now - self.last < self.interval_s and finished < sum(self.total.values()):
            return
        self.last = now
        elapsed = now - self.start
        total = sum(self.total.values())
        # The first answers carry their book's prefill: no extrapolation from fewer than 5%.
        eta = (
            f"{elapsed / finished * (total - finished):.0f} s"
            if finished >= max(2, total // 20)
            else "(estimating)"
        )
        per_setting = ", ".join(f"{s} {self.done[s]}/{n}" for s, n in self.total.items())
        log.info("long-context answers: %s; elapsed %.0f s, ETA %s", per_setting, elapsed, eta)


@dataclass(frozen=True)
class WindowRecord:
    """How much of one request's prefix (BOS + preamble + book) the model saw, in tokens."""

    task: str
    doc_id: int
    prefix_tokens: int
    seen_tokens: int

    @property
    def cut(self) -> bool:
        return self.seen_tokens < self.prefix_tokens


@dataclass
class ReuseStats:
    prefill_tokens: int = 0  # tokens run through the model before generating
    groups: int = 0  # distinct prefixes (book × setting)
    requests: int = 0
    windows: list[WindowRecord] = field(default_factory=list)


def split_prompt(context: str) -> tuple[str, str]:
    """(prefix, tail) at the last :data:`QUESTION_MARKER`; no marker: the whole prompt is the tail."""
    at = context.rfind(QUESTION_MARKER)
    return (context[:at], context[at:]) if at >= 0 else ("", context)


@dataclass
class _Item:
    index: int  # position in the request list
    context: str
    gen_kwargs: dict[str, Any]
    tail_ids: list[int]
    until: list[str]
    max_gen_toks: int
    extra: dict[str, Any]
    task: str
    doc_id: int


@register_model(MODEL_NAME)
class BookCacheHFLM(HFLM):
    """HFLM whose ``generate_until`` cuts the book, not the question, and reuses its KV cache."""

    def __init__(
        self, *args: Any, reuse_prefix: bool = True, progress_interval_s: float = 30.0, **kwargs: Any
    ) -> None:
        super().__init__(*args, **kwargs)
        self.reuse_prefix = bool(reuse_prefix)
        self.progress_interval_s = float(progress_interval_s)
        self.stats = ReuseStats()

    # ------------------------------------------------------------------ reporting

    def run_report(self) -> dict[str, Any]:
        """Prefill tokens, groups and per-request windows (``backend.runner`` stores it)."""
        return {
            "model_class": MODEL_NAME,
            "reuse_prefix": self.reuse_prefix,
            "max_length": self.max_length,
            "prefill_tokens": self.stats.prefill_tokens,
            "groups": self.stats.groups,
            "requests": self.stats.requests,
            "windows": [asdict(w) for w in self.stats.windows],
        }

    # ------------------------------------------------------------------ generation

    def _item(self, index: int, request: Any) -> tuple[str, _Item]:
        context, gen_kwargs = request.args
        kwargs = normalize_gen_kwargs(gen_kwargs, self.max_gen_toks)
        eos = self.tok_decode(self.eot_token_id, skip_special_tokens=False)
        until = handle_stop_sequences(kwargs.pop("until", None), eos=eos)
        max_gen_toks = int(kwargs.pop("max_gen_toks"))
        prefix, tail = split_prompt(context)
        item = _Item(
            index=index,
            context=context,
            gen_kwargs=gen_kwargs,
            tail_ids=self.tok_encode(tail, add_special_tokens=False),
            until=until,
            max_gen_toks=max_gen_toks,
            extra=kwargs,
            task=str(getattr(request, "task_name", None) or "?"),
            doc_id=int(getattr(request, "doc_id", None) or 0),
        )
        return prefix, item

    def _fit_prefix(self, prefix: str, items: list[_Item]) -> list[int]:
        """The prefix's tokens, cut from the end so that every item of the group fits."""
        ids = self.tok_encode(prefix)  # BOS (if the model uses one) even for an empty prefix
        room = self.max_length - max(len(i.tail_ids) + i.max_gen_toks for i in items)
        if room < min(len(ids), 1):
            worst = max(items, key=lambda i: len(i.tail_ids))
            raise HarnessError(
                f"{worst.task} doc {worst.doc_id}: the question alone ({len(worst.tail_ids)} tokens) "
                f"plus {worst.max_gen_toks} generated tokens does not fit the model's window "
                f"of {self.max_length} tokens"
            )
        keep = min(len(ids), room)
        for item in items:
            self.stats.windows.append(WindowRecord(item.task, item.doc_id, len(ids), keep))
        return ids[:keep]

    def _autocast(self) -> Any:
        return torch.autocast(
            device_type=self.device.type,
            dtype=self.mixed_precision_dtype,
            enabled=self.mixed_precision_dtype is not None,
        )

    def _prefill(self, prefix_ids: list[int]) -> DynamicCache:
        cache = DynamicCache()
        with torch.no_grad(), self._autocast():
            for start in range(0, len(prefix_ids), PREFILL_CHUNK):
                chunk = torch.tensor([prefix_ids[start : start + PREFILL_CHUNK]], device=self.device)
                self.model(input_ids=chunk, past_key_values=cache, use_cache=True, logits_to_keep=1)
        self.stats.prefill_tokens += len(prefix_ids)
        return cache

    def _generate(self, ids: list[int], item: _Item, cache: DynamicCache | None) -> str:
        context = torch.tensor([ids], device=self.device)
        # Explicit, as HFLM passes the tokenizer's: inferred from the pad id, a prompt that
        # contains that token (some chat templates) would have it masked out.
        extra = dict(item.extra, attention_mask=torch.ones_like(context))
        if cache is not None:
            extra["past_key_values"] = cache
        with torch.no_grad():
            out = self._model_generate(
                context=context, max_length=len(ids) + item.max_gen_toks, stop=item.until, **extra
            )
        text = self.tok_decode(out[0, len(ids) :].tolist())
        return postprocess_generated_text(generation=text, stop=item.until, think_end_token=None)

    def generate_until(self, requests: list[Any], disable_tqdm: bool = False) -> list[str]:
        """Answers in request order; see the module docstring for grouping and truncation."""
        del disable_tqdm
        groups: dict[str, list[_Item]] = {}
        for index, request in enumerate(requests):
            prefix, item = self._item(index, request)
            groups.setdefault(prefix, []).append(item)
        answers: list[str | None] = [None] * len(requests)
        progress = _Progress([i for items in groups.values() for i in items], self.progress_interval_s)
        log.info(
            "generating %d answers over %d shared prefixes (prefix reuse %s, window %d tokens)",
            len(requests),
            len(groups),
            "on" if self.reuse_prefix else "off",
            self.max_length,
        )
        for prefix, items in groups.items():
            prefix_ids = self._fit_prefix(prefix, items)
            self.stats.groups += 1
            cache = self._prefill(prefix_ids) if self.reuse_prefix else None
            # Plain layers grow by concatenation and are cropped back to the prefix after
            # each answer; a sliding-window or hybrid cache drops states, so it is copied.
            croppable = cache is not None and all(type(layer) is DynamicLayer for layer in cache.layers)
            for item in items:
                ids = prefix_ids + item.tail_ids
                if cache is None:
                    self.stats.prefill_tokens += len(ids)
                    answer = self._generate(ids, item, None)
                elif croppable:
                    self.stats.prefill_tokens += len(item.tail_ids)
                    answer = self._generate(ids, item, cache)
                    cache.crop(len(prefix_ids) - cache.get_seq_length())
                else:
                    self.stats.prefill_tokens += len(item.tail_ids)
                    answer = self._generate(ids, item, copy.deepcopy(cache))
                answers[item.index] = answer
                self.stats.requests += 1
                progress.tick(item)
                self.cache_hook.add_partial("generate_until", (item.context, item.gen_kwargs), answer)
            del cache
        return [a if a is not None else "" for a in answers]
