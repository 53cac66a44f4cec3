"""Log-likelihood requests as prefix trees: one forward per shared context, no padding waste.

A multiple-choice document asks for log P(choice | context) for each of its 2–6 choices;
the reference path forwards ``context + choice`` once per choice.  Here the requests that
share their context become one *row*: the context once, then each distinct continuation
as a *branch* that attends to the context and to itself only (a 4-D attention mask), its
positions continuing the context's.  Mathematically each branch sees exactly the tokens
the reference forwards for it, so the log-probabilities are the same up to float rounding.

Rows are sorted by length (longest first, so an out-of-memory error shows at once) and
cut into batches under a token budget; with many rows of nearly equal length the padding
is a few per cent (counted in :class:`Batch`), and on a CPU, where padding costs as much as
a real token and wide batches buy nothing, a batch also ends where padding would pass a
share of its width.  Only the positions that score a token go
through the LM head and the log-softmax.

Planning is pure (lists and numpy); :func:`attention_bias` builds the 4-D mask on the
model's device from the ``segment`` ids, so a batch crosses to the GPU as a few small
integer arrays.

Data shapes
-----------
``requests``: ``[(context_enc, continuation_enc), ...]`` token id lists, as lm-eval's
``_loglikelihood_tokens`` receives them.  A :class:`Row` holds ``prefix`` (list[int]),
``branches`` (distinct continuations) and ``members`` (``(request index, branch index)``).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field

import numpy as np
import torch

#: ``segment`` values: a context token, a padding token; branches are numbered from 0.
PREFIX = -1
PAD = -2
#: Rows are padded to a multiple of this (attention kernels prefer aligned lengths).
ALIGN = 8
#: Branch tokens one row may hold beyond its context's length.  A row's attention is dense
#: (the 4-D mask hides, it does not skip), so sharing pays only while the shared context is
#: long next to the branches: requests whose context is one prefix token (a whole text
#: scored, ``loglikelihood_rolling``'s windows, CoDeC's items alone) would otherwise become
#: one row of every text at once.  Past the cap, a new row repeats the context; a batch of
#: rows with one branch each needs no 4-D mask at all (:attr:`Batch.linear`).
ROW_BRANCH_TOKENS = 64


@dataclass
class Row:
    """The requests sharing one context: the context once, each distinct continuation once."""

    prefix: list[int]
    branches: list[tuple[int, ...]] = field(default_factory=list)
    members: list[tuple[int, int]] = field(default_factory=list)  # (request index, branch index)

    @property
    def length(self) -> int:
        """Tokens forwarded: the context plus every continuation but its last token."""
        return len(self.prefix) + sum(len(b) - 1 for b in self.branches)


def plan_rows(requests: Sequence[tuple[Sequence[int], Sequence[int]]], max_length: int) -> list[Row]:
    """Group requests by the tokens before their continuation, as the reference truncates them.

    The reference forwards ``(context + continuation)[-(max_length + 1):][:-1]``: the
    scored continuation is always whole, the context loses tokens on the left.  Requests
    are grouped by that (possibly truncated) prefix; identical continuations of a group
    share one branch; a group's branches fill rows of at most ``max(ROW_BRANCH_TOKENS,
    len(prefix))`` branch tokens each (texts scored from one prefix token pack several to a
    row, never one row of all of them).
    """
    rows: dict[tuple[int, ...], Row] = {}
    done: list[Row] = []
    branch_index: dict[tuple[tuple[int, ...], tuple[int, ...]], tuple[Row, int]] = {}
    for index, (context, continuation) in enumerate(requests):
        if not continuation or len(continuation) > max_length:
            raise ValueError(f"request {index}: continuation of {len(continuation)} tokens cannot be scored")
        sequence = (list(context) + list(continuation))[-(max_length + 1) :]
        prefix = tuple(sequence[: len(sequence) - len(continuation)])
        if not prefix:
            raise ValueError(f"request {index}: empty context (lm-eval puts a prefix token there)")
        key = (prefix, tuple(continuation))
        if key not in branch_index:
            row = rows.get(prefix)
            fed = len(continuation) - 1
            if (
                row is not None
                and row.branches
                and row.length - len(prefix) + fed > max(ROW_BRANCH_TOKENS, len(prefix))
            ):
                done.append(row)
                row = None
            if row is None:
                row = rows[prefix] = Row(prefix=list(prefix))
            branch_index[key] = (row, len(row.branches))
            row.branches.append(tuple(continuation))
        row, branch = branch_index[key]
        row.members.append((index, branch))
    return done + list(rows.values())


def _padded(length: int) -> int:
    return -(-length // ALIGN) * ALIGN


def plan_batches(
    rows: Sequence[Row], token_budget: int, padding_share: float | None = None
) -> list[list[Row]]:
    """Longest rows first; a batch takes rows while ``rows × padded longest length ≤ token_budget``.

    A row longer than the budget forms a batch of its own.  With ``padding_share``, a batch
    also stops taking rows once the next one would be padded by more than that share of the
    batch's width: on a CPU a forward costs about its tokens, padding included, whatever the
    batch size, so wide batches of unequal rows buy nothing there and padding is pure waste
    (on an accelerator wide batches are what is fast: no cap).
    """
    ordered = sorted(rows, key=lambda r: (-r.length, r.prefix))
    batches: list[list[Row]] = []
    current: list[Row] = []
    width = 0
    for row in ordered:
        too_padded = padding_share is not None and width - _padded(row.length) > padding_share * width
        if current and ((len(current) + 1) * width > token_budget or too_padded):
            batches.append(current)
            current = []
        if not current:
            width = _padded(row.length)
        current.append(row)
    if current:
        batches.append(current)
    return batches


@dataclass
class Batch:
    """One forward's inputs (numpy) and where each request's scored tokens are.

    ``input_ids``, ``position_ids``, ``segment``, ``keep``: ``[rows, width]``; ``keep`` marks
    the positions whose logits are needed, in row-major order the rows of the kept logits.
    ``score_rows[t]`` is the kept-logit row that scores token ``score_tokens[t]`` of
    request slot ``score_owner[t]``; ``requests[slot]`` is that slot's request index.
    """

    input_ids: np.ndarray
    position_ids: np.ndarray
    segment: np.ndarray
    keep: np.ndarray
    score_rows: np.ndarray
    score_tokens: np.ndarray
    score_owner: np.ndarray
    requests: list[int]

    @property
    def linear(self) -> bool:
        """Every row is one sequence (context, then at most one branch), padded on the right:
        plain causal attention computes it, no 4-D mask needed."""
        return bool((self.segment <= 0).all())

    @property
    def real_tokens(self) -> int:
        return int((self.segment != PAD).sum())

    @property
    def padded_tokens(self) -> int:
        return int(self.segment.size)


def build_batch(rows: Sequence[Row], pad_id: int) -> Batch:
    """Lay the rows out: context, then each branch's tokens but its last; padding on the right."""
    width = _padded(max(r.length for r in rows))
    shape = (len(rows), width)
    input_ids = np.full(shape, pad_id, dtype=np.int64)
    position_ids = np.zeros(shape, dtype=np.int64)
    segment = np.full(shape, PAD, dtype=np.int64)
    keep = np.zeros(shape, dtype=bool)
    # Scored positions per row, as (row, column) → filled in after ``keep`` is complete.
    scored: list[tuple[int, list[tuple[int, int]], tuple[int, ...]]] = []
    requests: list[int] = []
    for r, row in enumerate(rows):
        p = len(row.prefix)
        input_ids[r, :p] = row.prefix
        position_ids[r, :p] = np.arange(p)
        segment[r, :p] = PREFIX
        keep[r, p - 1] = True
        starts: list[int] = []
        column = p
        for b, branch in enumerate(row.branches):
            fed = len(branch) - 1
            starts.append(column)
            input_ids[r, column : column + fed] = branch[:-1]
            position_ids[r, column : column + fed] = np.arange(p, p + fed)
            segment[r, column : column + fed] = b
            keep[r, column : column + fed] = True
            column += fed
        for request, b in row.members:
            branch = row.branches[b]
            cells = [(r, p - 1)] + [(r, starts[b] + t) for t in range(len(branch) - 1)]
            scored.append((len(requests), cells, branch))
            requests.append(request)
    flat_index = np.cumsum(keep.ravel()) - 1  # row-major rank of each kept cell
    rows_out: list[int] = []
    tokens_out: list[int] = []
    owner_out: list[int] = []
    for slot, cells, branch in scored:
        rows_out.extend(int(flat_index[r * width + c]) for r, c in cells)
        tokens_out.extend(branch)
        owner_out.extend([slot] * len(branch))
    return Batch(
        input_ids=input_ids,
        position_ids=position_ids,
        segment=segment,
        keep=keep,
        score_rows=np.asarray(rows_out, dtype=np.int64),
        score_tokens=np.asarray(tokens_out, dtype=np.int64),
        score_owner=np.asarray(owner_out, dtype=np.int64),
        requests=requests,
    )


def attention_bias(segment: torch.Tensor, dtype: torch.dtype) -> torch.Tensor:
    """``[rows, 1, width, width]`` additive mask (0 or the dtype's minimum) from ``segment``.

    Query ``i`` may attend key ``j`` when ``j <= i`` and: both are context tokens, or ``j``
    is a context token and ``i`` a branch token, or both belong to the same branch.  A
    padding token sees earlier padding, so no mask row is empty (an empty row gives NaN).
    Additive, not boolean: eager attention adds the mask, SDPA accepts either.
    """
    width = segment.shape[1]
    causal = torch.ones(width, width, dtype=torch.bool, device=segment.device).tril()
    query = segment[:, :, None]
    key = segment[:, None, :]
    allowed = causal[None] & (((key == PREFIX) & (query != PAD)) | (query == key))
    bias = torch.zeros(allowed.shape, dtype=dtype, device=segment.device)
    bias.masked_fill_(~allowed, torch.finfo(dtype).min)
    return bias[:, None]
