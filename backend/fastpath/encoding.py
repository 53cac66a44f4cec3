"""Tokenisation in batches, token for token what lm-eval's ``HFLM`` computes one string at a time.

The reference path calls ``tokenizer.encode`` twice per log-likelihood request (context,
and context + continuation) and once per generation request: ~200,000 Python-level calls
for the multiple-choice suite.  Here each distinct string is encoded once, in a few batch
calls of the fast tokenizer, with exactly the ``add_special_tokens`` setting that
``HFLM.tok_encode`` would pick for it — so the token ids are identical (a test pins this
against ``HFLM._encode_pair`` on every sample request).
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Sequence
from typing import Any

from lm_eval.models.utils import _add_special_kwargs, has_bos_prefix

TokenIds = list[int]


def _special_kwargs(lm: Any, string: str, add_special_tokens: bool | None, bos_text: str) -> dict[str, bool]:
    """The ``add_special_tokens`` keyword ``HFLM.tok_encode`` passes for ``string``."""
    kwargs = _add_special_kwargs(add_special_tokens, lm.add_bos_token)
    if add_special_tokens is None and has_bos_prefix(string, bos_text):
        kwargs["add_special_tokens"] = False
    return kwargs


def encode_many(lm: Any, strings: Sequence[str], add_special_tokens: bool | None = None) -> list[TokenIds]:
    """``[lm.tok_encode(s, add_special_tokens) for s in strings]``, one batch call per setting.

    Each distinct string is encoded once; the result lists are shared between duplicates
    (callers must not mutate them).
    """
    bos_text = lm.tokenizer.decode(lm.prefix_token_id)
    by_setting: defaultdict[tuple[tuple[str, bool], ...], list[str]] = defaultdict(list)
    seen: set[str] = set()
    for string in strings:
        if string in seen:
            continue
        seen.add(string)
        setting = tuple(sorted(_special_kwargs(lm, string, add_special_tokens, bos_text).items()))
        by_setting[setting].append(string)
    encoded: dict[str, TokenIds] = {}
    for setting, group in by_setting.items():
        ids = lm.tokenizer(group, **dict(setting))["input_ids"]
        encoded.update(zip(group, ids, strict=True))
    return [encoded[s] for s in strings]


def encode_pairs(lm: Any, pairs: Sequence[tuple[str, str]]) -> list[tuple[TokenIds, TokenIds]]:
    """``(context_enc, continuation_enc)`` per pair, as ``TemplateLM.loglikelihood`` builds them.

    Causal models only: trailing spaces of the context move to the continuation; the
    continuation's tokens are those of ``context + continuation`` after the context's
    own tokens; an empty context becomes the prefix token (BOS, else EOS).
    """
    moved: list[tuple[str, str]] = []
    for context, continuation in pairs:
        spaces = len(context) - len(context.rstrip())
        if context and spaces:
            continuation = context[-spaces:] + continuation
            context = context[:-spaces]
        moved.append((context, continuation))
    with_context = [(c, x) for c, x in moved if c]
    contexts = encode_many(lm, [c for c, _ in with_context])
    wholes = encode_many(lm, [c + x for c, x in with_context])
    bare = encode_many(lm, [x for c, x in moved if not c], add_special_tokens=False)
    full_iter = iter(zip(contexts, wholes, strict=True))
    bare_iter = iter(bare)
    prefix = lm.prefix_token_id
    out: list[tuple[TokenIds, TokenIds]] = []
    for context, _ in moved:
        if context:
            context_enc, whole_enc = next(full_iter)
            out.append((context_enc, whole_enc[len(context_enc) :]))
        else:
            continuation_enc = next(bare_iter)
            if continuation_enc and continuation_enc[0] == prefix:
                out.append((continuation_enc[:1], continuation_enc[1:]))
            else:
                out.append(([prefix], continuation_enc))
    return out
