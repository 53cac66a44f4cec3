"""``hf-book-cache``: lm-eval's ``hf`` model for prompts that start with a whole book.

**What the model reads** (``keep``, :class:`~leaderboard.tracks.long_context.definition.KeptSide`):

* ``end`` (default; the paper's): exactly the tokens lm-eval 0.4.13's ``HFLM.generate_until``
  feeds at batch size 1.  The prompt is tokenised whole as ``HFLM.tok_batch_encode`` does
  (no special tokens added when it already starts with the BOS text, else ``add_special_tokens``
  = the ``add_bos_token`` model argument when one is given, else the tokenizer's default;
  ``truncation`` as HFLM's).  When it is longer than ``max_length − max_gen_toks``
  (``max_gen_toks`` of the request: 96 open-ended, 32 multiple choice) only its **last**
  ``max_length − max_gen_toks`` tokens are kept: the BOS token, any chat-template preamble
  and the beginning of the book are cut; the end of the (word-truncated) book, the question,
  the options and ``Risposta:`` are read.  The one difference from HFLM: a question that
  alone does not fit (with its options) is an error here, where HFLM would cut into it.
* ``start`` (a variant: the project's rule before issue 22): the prompt is split at its last
  :data:`QUESTION_MARKER` into a *prefix* (BOS, preamble, book) and a *tail* (question,
  options, ``Risposta:``), tokenised separately; only the prefix is cut, from its end, to
  what fits beside the longest tail of its group (one book in one setting) plus
  ``max_gen_toks``, so the model reads the beginning of the book.

**Speed**, with the answers of the plain run (``reuse_prefix=False``: each prompt whole
through ``generate``, as HFLM does) under greedy decoding:

1. *One prefill per distinct kept prefix.*  Each request's tokens are split where its
   question begins; requests whose tokens before that point are equal share one prefill
   and continue from its KV cache.  With ``end``, a prompt that fits shares its book with
   every question of that book and setting; prompts cut to the window start at a point that
   depends on the question's length, so only the questions whose question side has the
   same number of tokens (and the same ``max_gen_toks``) read the same window and share it.
   With ``start`` every question of a book reads the same cut book, and settings that cut
   it to the same tokens share one prefill.  Prefixes are taken in sorted order and the
   cache of one is cropped to the tokens the next one starts with (the 10K-word book is
   the start of the 50K one when both fit), so only the new tokens are prefilled.
2. *A static cache.*  Decoding writes into a ``transformers.StaticCache`` preallocated for
   the group (its longest prompt + ``max_gen_toks``): no per-step concatenation of the whole
   cache as ``DynamicCache`` does.  After each answer the cache is cropped back to the
   prefix.  Models whose layers are not all plain full attention (sliding window, hybrid)
   prefill a ``DynamicCache`` per group and answer each question from a copy of it.

:meth:`BookCacheHFLM.run_report` (read by :func:`backend.runner.run_harness`) gives the
kept side, the cache, prefill counts and, per request, the prefix tokens and how many of
them the model saw.  Log-likelihood requests are HFLM's own (this track has none).
"""

from __future__ import annotations

import copy
import hashlib
import logging
import time
from collections import Counter
from collections.abc import Iterator
from dataclasses import asdict, dataclass, field
from typing import Any

import torch
from lm_eval.api.registry import register_model
from lm_eval.models.huggingface import HFLM
from lm_eval.models.utils import (
    handle_stop_sequences,
    has_bos_prefix,
    normalize_gen_kwargs,
    postprocess_generated_text,
)
from transformers import DynamicCache, StaticCache
from transformers.cache_utils import Cache, DynamicLayer, StaticLayer

from backend.options import HarnessError
from leaderboard.tracks.long_context.definition import (
    QUESTION_MARKER,
    KeptSide,
    UnknownNameError,
    task_by_name,
)

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
    groups: int = 0  # distinct kept prefixes
    prefix_prefills: int = 0  # prefixes run through the model (0 new tokens: not counted)
    carried_tokens: int = 0  # prefix tokens taken over from the previous prefix's cache
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
    until: list[str]
    max_gen_toks: int
    extra: dict[str, Any]
    task: str
    doc_id: int
    marker: int  # where the question begins in ``context`` (-1: no marker, all of it is the tail)


@dataclass(frozen=True)
class _Plan:
    """One request's tokens: ``ids[:split]`` before its question (shared), ``ids[split:]`` from it."""

    item: _Item
    ids: torch.Tensor  # 1-D int64 on the CPU: exactly what the model reads
    split: int
    window: WindowRecord

    @property
    def capacity(self) -> int:
        return len(self.ids) + self.item.max_gen_toks

    def key(self) -> tuple[int, bytes]:
        return self.split, hashlib.sha1(self.ids[: self.split].numpy().tobytes()).digest()


def _common_prefix(a: torch.Tensor, b: torch.Tensor) -> int:
    n = min(len(a), len(b))
    differ = torch.nonzero(a[:n] != b[:n])
    return int(differ[0, 0]) if len(differ) else n


def _crop_to(cache: Cache, length: int) -> None:
    current = int(cache.get_seq_length())
    if current > length:
        cache.crop(length - current)


class _SharedPrefix:
    """The KV cache of the last prefilled prefix, kept for the next group that starts the same way."""

    def __init__(self, lm: BookCacheHFLM) -> None:
        self.lm = lm
        self.cache: Cache | None = None
        self.tokens = torch.empty(0, dtype=torch.long)
        self.capacity = 0

    def prepare(self, prefix: torch.Tensor, capacity: int) -> Cache:
        """A cache holding ``prefix`` with room for ``capacity`` tokens; only new tokens are prefilled."""
        lm = self.lm
        if not lm.static_cache:
            self.cache, self.tokens = DynamicCache(config=lm.model.config), prefix
            lm._prefill(self.cache, prefix, 0)
            return self.cache
        carried = _common_prefix(self.tokens, prefix) if self.cache is not None else 0
        if self.cache is not None and self.capacity == capacity:
            _crop_to(self.cache, carried)
        else:
            old, self.cache = self.cache, lm._static_cache(capacity)
            if old is not None and carried:
                for source, target in zip(old.layers, self.cache.layers, strict=True):
                    target.update(source.keys[:, :, :carried], source.values[:, :, :carried])
            del old
        self.capacity, self.tokens = capacity, prefix
        lm.stats.carried_tokens += carried
        lm._prefill(self.cache, prefix, carried)
        return self.cache

    def rewind(self) -> None:
        """Back to the prefix, after an answer (the question and the answer written after it)."""
        assert self.cache is not None
        _crop_to(self.cache, len(self.tokens))

    def release(self) -> None:
        self.cache, self.tokens, self.capacity = None, torch.empty(0, dtype=torch.long), 0


@register_model(MODEL_NAME)
class BookCacheHFLM(HFLM):
    """HFLM whose ``generate_until`` reads what HFLM reads (or the book's start) and shares prefills."""

    def __init__(
        self,
        *args: Any,
        reuse_prefix: bool = True,
        keep: str | KeptSide = KeptSide.END,
        progress_interval_s: float = 30.0,
        **kwargs: Any,
    ) -> None:
        super().__init__(*args, **kwargs)
        self.reuse_prefix = bool(reuse_prefix)
        self.keep = KeptSide.parse(str(keep))
        self.progress_interval_s = float(progress_interval_s)
        self.stats = ReuseStats()
        self._static_cache_ok: bool | None = None

    # ------------------------------------------------------------------ reporting

    def run_report(self) -> dict[str, Any]:
        """Kept side, cache, prefill counts and per-request windows (``backend.runner`` stores it)."""
        return {
            "model_class": MODEL_NAME,
            "reuse_prefix": self.reuse_prefix,
            "kept_side": self.keep.value,
            "decode_cache": ("static" if self.static_cache else "dynamic")
            if self.reuse_prefix
            else "dynamic",
            "max_length": self.max_length,
            "prefill_tokens": self.stats.prefill_tokens,
            "groups": self.stats.groups,
            "prefix_prefills": self.stats.prefix_prefills,
            "carried_tokens": self.stats.carried_tokens,
            "requests": self.stats.requests,
            "windows": [asdict(w) for w in self.stats.windows],
        }

    # ------------------------------------------------------------------ what the model reads

    def _item(self, index: int, request: Any) -> _Item:
        context, gen_kwargs = request.args
        kwargs = normalize_gen_kwargs(gen_kwargs, self.max_gen_toks)
        eos = self.tok_decode(self.eot_token_id, skip_special_tokens=False)
        until = handle_stop_sequences(kwargs.pop("until", None), eos=eos)
        return _Item(
            index=index,
            context=context,
            gen_kwargs=gen_kwargs,
            until=until,
            max_gen_toks=int(kwargs.pop("max_gen_toks")),
            extra=kwargs,
            task=str(getattr(request, "task_name", None) or "?"),
            doc_id=int(getattr(request, "doc_id", None) or 0),
            marker=context.rfind(QUESTION_MARKER),
        )

    def _room(self, item: _Item) -> int:
        room = self.max_length - item.max_gen_toks
        if room <= 0:  # HFLM asserts the same
            raise HarnessError(
                f"{item.task}: {item.max_gen_toks} tokens to generate do not leave room for a prompt "
                f"in the model's window of {self.max_length} tokens"
            )
        return room

    def _too_long(self, item: _Item, tail: int) -> HarnessError:
        return HarnessError(
            f"{item.task} doc {item.doc_id}: the question alone ({tail} tokens) plus "
            f"{item.max_gen_toks} generated tokens does not fit the model's window of {self.max_length} tokens"
        )

    def encode_prompt(self, context: str) -> tuple[list[int], list[tuple[int, int]] | None]:
        """The prompt's tokens as ``HFLM.tok_batch_encode`` makes them for a batch of one (and offsets)."""
        special: dict[str, bool] = {}
        if has_bos_prefix(context, getattr(self.tokenizer, "bos_token", None)):
            special = {"add_special_tokens": False}
        elif self.add_bos_token is not None:
            special = {"add_special_tokens": self.add_bos_token}
        fast = bool(getattr(self.tokenizer, "is_fast", False))
        encoding = self.tokenizer(context, truncation=self.truncation, return_offsets_mapping=fast, **special)
        offsets = [tuple(o) for o in encoding["offset_mapping"]] if fast else None
        return list(encoding["input_ids"]), offsets

    def _end_plan(self, item: _Item) -> _Plan:
        """HFLM's left truncation: the prompt's last ``max_length − max_gen_toks`` tokens."""
        ids, offsets = self.encode_prompt(item.context)
        if item.marker < 0:
            boundary = 0
        elif offsets is not None:  # the first token holding a character of the question side
            boundary = next((i for i, (_, end) in enumerate(offsets) if end > item.marker), len(ids))
        else:
            tail = self.tok_encode(item.context[item.marker :], add_special_tokens=False)
            boundary = max(0, len(ids) - len(tail))
        room = self._room(item)
        if len(ids) - boundary > room:
            raise self._too_long(item, len(ids) - boundary)
        start = max(0, len(ids) - room)
        window = WindowRecord(item.task, item.doc_id, boundary, boundary - start)
        return _Plan(item, torch.tensor(ids[start:], dtype=torch.long), boundary - start, window)

    def _start_plans(self, items: list[_Item]) -> list[_Plan]:
        """The book's beginning: the shared prefix cut from its end so that every item fits."""
        prefix, _ = split_prompt(items[0].context)
        ids = self.tok_encode(prefix)  # BOS (if the model uses one) even for an empty prefix
        tails = [self.tok_encode(split_prompt(i.context)[1], add_special_tokens=False) for i in items]
        need = max(len(t) + i.max_gen_toks for t, i in zip(tails, items, strict=True))
        room = self.max_length - need
        if room < min(len(ids), 1):
            worst = max(range(len(items)), key=lambda n: len(tails[n]))
            raise self._too_long(items[worst], len(tails[worst]))
        keep = min(len(ids), room)
        return [
            _Plan(
                item,
                torch.tensor(ids[:keep] + tail, dtype=torch.long),
                keep,
                WindowRecord(item.task, item.doc_id, len(ids), keep),
            )
            for item, tail in zip(items, tails, strict=True)
        ]

    def plans(self, items: list[_Item]) -> list[_Plan]:
        """What each item of one prefix group (same prompt up to the question) reads."""
        match self.keep:
            case KeptSide.END:
                return [self._end_plan(item) for item in items]
            case KeptSide.START:
                return self._start_plans(items)
            case _:
                raise AssertionError(f"unhandled kept side {self.keep!r}")

    def _by_prefix(self, requests: list[Any]) -> dict[str, list[_Item]]:
        """Items grouped by their prompt up to the question (one book in one setting)."""
        by_prefix: dict[str, list[_Item]] = {}
        for index, request in enumerate(requests):
            item = self._item(index, request)
            by_prefix.setdefault(item.context[: max(item.marker, 0)], []).append(item)
        return by_prefix

    def kept_tokens(self, requests: list[Any]) -> list[list[int]]:
        """What the model reads for each request, in request order, without generating anything."""
        kept: list[list[int]] = [[] for _ in requests]
        for items in self._by_prefix(requests).values():
            for plan in self.plans(items):
                kept[plan.item.index] = plan.ids.tolist()
        return kept

    # ------------------------------------------------------------------ caches

    @property
    def static_cache(self) -> bool:
        """Whether a ``StaticCache`` of this model can be cropped back (plain full-attention layers)."""
        if self._static_cache_ok is None:
            probe = StaticCache(config=self.model.config, max_cache_len=1)
            self._static_cache_ok = (
                all(type(layer) is StaticLayer for layer in probe.layers)
                and getattr(self.model.generation_config, "cache_implementation", None) is None
            )
        return self._static_cache_ok

    def _static_cache(self, capacity: int) -> StaticCache:
        return StaticCache(config=self.model.config, max_cache_len=capacity)

    def _autocast(self) -> Any:
        return torch.autocast(
            device_type=self.device.type,
            dtype=self.mixed_precision_dtype,
            enabled=self.mixed_precision_dtype is not None,
        )

    def _prefill(self, cache: Cache, ids: torch.Tensor, start: int) -> None:
        """Run ``ids[start:]`` through the model into ``cache`` (which holds ``ids[:start]``)."""
        with torch.no_grad(), self._autocast():
            for at in range(start, len(ids), PREFILL_CHUNK):
                chunk = ids[at : at + PREFILL_CHUNK].unsqueeze(0).to(self.device)
                self.model(input_ids=chunk, cache=cache, use_cache=True, logits_to_keep=1)
        if len(ids) > start:
            self.stats.prefix_prefills += 1
        self.stats.prefill_tokens += len(ids) - start

    def _generate(self, ids: torch.Tensor, item: _Item, cache: Cache | None) -> str:
        context = ids.unsqueeze(0).to(self.device)
        # Explicit, as HFLM passes the tokenizer's: inferred from the pad id, a prompt that
        # contains that token (some chat templates) would have it masked out.
        extra = dict(item.extra, attention_mask=torch.ones_like(context))
        if cache is not None:
            extra["cache"] = cache
            if isinstance(cache, StaticCache):
                extra["disable_compile"] = True  # no torch.compile per group size on a GPU
        with torch.no_grad():
            out = self._model_generate(
                context=context, max_length=len(ids) + item.max_gen_toks, stop=item.until, **extra
            )
        text = self.tok_decode(out[0, len(ids) :].tolist())
        return postprocess_generated_text(generation=text, stop=item.until, think_end_token=None)

    # ------------------------------------------------------------------ generation

    def generate_until(self, requests: list[Any], disable_tqdm: bool = False) -> list[str]:
        """Answers in request order; see the module docstring for what is read and shared."""
        del disable_tqdm
        by_prefix = self._by_prefix(requests)
        answers: list[str | None] = [None] * len(requests)
        progress = _Progress([i for items in by_prefix.values() for i in items], self.progress_interval_s)
        log.info(
            "generating %d answers over %d prompt prefixes (window %d tokens, the prompt's %s kept; "
            "prefix reuse %s)",
            len(requests),
            len(by_prefix),
            self.max_length,
            self.keep.value,
            "on" if self.reuse_prefix else "off",
        )
        shared = _SharedPrefix(self)
        # Sorted: a prefix is followed by those it begins (the 10K-word book, then the 50K one).
        for prefix in sorted(by_prefix):
            groups: dict[tuple[int, bytes], list[_Plan]] = {}
            for plan in self.plans(by_prefix.pop(prefix)):
                self.stats.windows.append(plan.window)
                groups.setdefault(plan.key(), []).append(plan)
            for plans in groups.values():
                self.stats.groups += 1
                for plan, answer in self._answer(plans, shared):
                    answers[plan.item.index] = answer
                    self.stats.requests += 1
                    progress.tick(plan.item)
                    self.cache_hook.add_partial(
                        "generate_until", (plan.item.context, plan.item.gen_kwargs), answer
                    )
        shared.release()
        return [a if a is not None else "" for a in answers]

    def _answer(self, plans: list[_Plan], shared: _SharedPrefix) -> Iterator[tuple[_Plan, str]]:
        """``(plan, answer)`` for every plan of one group (the same tokens before the question)."""
        split = plans[0].split
        if not self.reuse_prefix or split == 0:
            for plan in plans:
                self.stats.prefill_tokens += len(plan.ids)
                yield plan, self._generate(plan.ids, plan.item, None)
            return
        cache = shared.prepare(plans[0].ids[:split], max(p.capacity for p in plans))
        # Plain layers are cropped back to the prefix after each answer; a sliding-window or
        # hybrid cache drops states, so it is copied.
        croppable = self.static_cache or all(type(layer) is DynamicLayer for layer in cache.layers)
        for plan in plans:
            self.stats.prefill_tokens += len(plan.ids) - split
            if croppable:
                answer = self._generate(plan.ids, plan.item, cache)
                shared.rewind()
            else:
                answer = self._generate(plan.ids, plan.item, copy.deepcopy(cache))
            yield plan, answer
