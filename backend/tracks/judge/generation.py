"""How a judge decodes under each protocol, and the settings its results record (``generation``).

* ``project``: the task template's fixed settings — greedy, :data:`MAX_ANSWER_TOKENS`, the
  answer prefilled with ``{"score":``, the rubric's stop sequences.
* ``paper``: "the parameters suggested by the model's authors" (the paper's §4) — the sampling
  settings of the model's own ``generation_config.json`` when it sets ``do_sample`` (greedy when
  it does not, or has no such file); no prefill; stop only at the end of the model's turn or
  ``</Output>``; and a token budget a reasoning model can think in: a model that thinks in a
  ``<think>`` block (:func:`thinks`) gets up to :data:`PAPER_THINKING_TOKENS`, any other up to
  :data:`PAPER_ANSWER_TOKENS` (the answer is one JSON object: a model still writing after that
  many tokens is rambling, and on a CPU each token of a long answer costs more than the last);
  both as much as the model's window leaves after the longest prompt.  A window that cannot
  hold the longest prompt and :data:`MIN_PAPER_ANSWER_TOKENS` is refused before the model
  loads: lm-eval would cut the start of the prompt (the rubric) away.

:func:`paper_generation` and :func:`project_generation` are pure; :func:`generation_settings`
reads the model's files from the HF cache (offline).
"""

from __future__ import annotations

import json
import logging
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from backend.options import HarnessError, ModelRef, RunOptions
from leaderboard.tracks.judge.data import JudgeDataError
from leaderboard.tracks.judge.definition import JudgeProtocol
from leaderboard.tracks.judge.paper import PAPER_STOP_SEQUENCES
from leaderboard.tracks.judge.prompts import ANSWER_PREFIX, MAX_ANSWER_TOKENS, STOP_SEQUENCES
from leaderboard.tracks.judge.schema import GenerationSettings, GenerationSource

log = logging.getLogger(__name__)

#: The ``paper`` protocol's cap on one answer of a model that thinks, thinking included (several
#: Table 1 judges reason before they score: DeepSeek-R1 distillations, Qwen 3, o3/o4-mini).
PAPER_THINKING_TOKENS = 8192
#: … and of any other model: four times the project protocol's cap, ample for the JSON answer
#: with a detailed explanation.
PAPER_ANSWER_TOKENS = 1024
#: The tags a reasoning model thinks between (what :func:`~leaderboard.tracks.judge.parse.split_thinking` sets aside).
THINK_TAGS = ("<think>", "</think>")
#: Below this budget the ``paper`` protocol does not run: a reasoning judge could not finish.
MIN_PAPER_ANSWER_TOKENS = 512
#: The ``generation_config.json`` keys passed to ``generate`` when the model samples.
SAMPLING_KEYS: tuple[str, ...] = ("temperature", "top_p", "top_k", "min_p", "typical_p", "repetition_penalty")


def project_generation(cap: int | None = None) -> GenerationSettings:
    """The ``project`` protocol's settings (the task template's), with a smoke test's ``--max-gen-toks``."""
    return GenerationSettings(
        source=GenerationSource.PROJECT,
        do_sample=False,
        max_gen_toks=cap or MAX_ANSWER_TOKENS,
        stop=list(STOP_SEQUENCES),
        prefill=ANSWER_PREFIX,
    )


def paper_generation(
    generation_config: Mapping[str, Any] | None,
    window: int,
    longest_prompt_tokens: int,
    cap: int | None = None,
    *,
    reasoning: bool = False,
) -> GenerationSettings:
    """The ``paper`` protocol's settings from the model's ``generation_config.json`` (None: none).

    ``reasoning``: the model thinks before it answers (:func:`thinks`): the larger budget.
    ``cap`` is a smoke test's ``--max-gen-toks`` (the run is then not comparable).  Raises
    :class:`JudgeDataError` when the window leaves less than :data:`MIN_PAPER_ANSWER_TOKENS`.
    """
    room = window - longest_prompt_tokens
    if room < MIN_PAPER_ANSWER_TOKENS and cap is None:
        raise JudgeDataError(
            f"the longest paper-protocol prompt is {longest_prompt_tokens} tokens and the model's window "
            f"{window}: less than {MIN_PAPER_ANSWER_TOKENS} tokens would be left for the answer, and the "
            "harness would cut the start of the prompt. Judge it with the project protocol, or with "
            "fewer or shorter examples"
        )
    config = dict(generation_config or {})
    samples = config.get("do_sample") is True
    sampling = {k: config[k] for k in SAMPLING_KEYS if samples and isinstance(config.get(k), int | float)}
    return GenerationSettings(
        source=GenerationSource.GENERATION_CONFIG if "do_sample" in config else GenerationSource.GREEDY,
        do_sample=samples,
        sampling=sampling,
        max_gen_toks=cap or min(PAPER_THINKING_TOKENS if reasoning else PAPER_ANSWER_TOKENS, room),
        stop=list(PAPER_STOP_SEQUENCES),
        prefill=None,
        window=window,
        longest_prompt_tokens=longest_prompt_tokens,
        reasoning=reasoning,
    )


def harness_generation_kwargs(settings: GenerationSettings) -> dict[str, Any]:
    """The task's ``generation_kwargs`` for these settings (what the ``paper`` task YAML overrides)."""
    kwargs: dict[str, Any] = {"until": list(settings.stop), "do_sample": settings.do_sample}
    kwargs |= settings.sampling if settings.do_sample else {"temperature": 0.0}
    return kwargs | {"max_gen_toks": settings.max_gen_toks}


# --------------------------------------------------------------------------- reading the model


def load_tokenizer(model: ModelRef, options: RunOptions) -> Any:
    """The judge's tokenizer from the HF cache; :class:`HarnessError` when it cannot be read."""
    from transformers import AutoTokenizer

    try:
        return AutoTokenizer.from_pretrained(
            model.model_id, revision=model.revision, trust_remote_code=options.trust_remote_code
        )
    except (OSError, ValueError) as exc:
        raise HarnessError(
            f"could not read the tokenizer of {model.model_id}: {type(exc).__name__}: {exc}"
        ) from exc


def read_generation_config(model: ModelRef) -> dict[str, Any] | None:
    """The model's ``generation_config.json`` (HF cache or folder); None when it ships none."""
    from transformers.utils import cached_file

    path = cached_file(
        model.model_id, "generation_config.json", revision=model.revision,
        _raise_exceptions_for_missing_entries=False,
    )  # fmt: skip
    if path is None:
        return None
    try:
        loaded = json.loads(Path(path).read_text(encoding="utf-8"))
    except (OSError, ValueError) as exc:
        raise HarnessError(f"{model.model_id}: unreadable generation_config.json: {exc}") from exc
    return loaded if isinstance(loaded, dict) else None


def thinks(tokenizer: Any) -> bool:
    """Whether the model reasons in a ``<think>`` block: its chat template writes the tag, or its
    vocabulary has both tags as tokens (Qwen 3, the DeepSeek-R1 distillations, Phi-4 reasoning)."""
    template = getattr(tokenizer, "chat_template", None) or ""
    if isinstance(template, Mapping):  # several named templates
        template = " ".join(str(t) for t in template.values())
    if THINK_TAGS[0] in str(template):
        return True
    vocab = tokenizer.get_vocab()
    return all(tag in vocab for tag in THINK_TAGS)


def longest_prompt_tokens(tokenizer: Any, prompts: Sequence[str], chat: bool) -> int:
    """Tokens of the longest prompt as the judge sees it (inside its chat template when it has one)."""
    if not prompts:
        return 0
    if chat:
        texts = [
            tokenizer.apply_chat_template(
                [{"role": "user", "content": p}], tokenize=False, add_generation_prompt=True
            )
            for p in prompts
        ]
        encoded = tokenizer(texts, add_special_tokens=False)["input_ids"]
    else:
        encoded = tokenizer(list(prompts))["input_ids"]
    return max(len(ids) for ids in encoded)


def generation_settings(
    protocol: JudgeProtocol,
    model: ModelRef,
    options: RunOptions,
    *,
    tokenizer: Any,
    prompts: Sequence[str],
    chat: bool,
) -> GenerationSettings:
    """The settings a run of ``protocol`` decodes with (reads the model's files for ``paper``)."""
    if protocol is JudgeProtocol.PROJECT:
        return project_generation(options.max_gen_toks)
    from backend.runner import context_window

    window = context_window(model, options, tokenizer)
    longest = longest_prompt_tokens(tokenizer, prompts, chat)
    reasoning = thinks(tokenizer)
    settings = paper_generation(
        read_generation_config(model), window, longest, options.max_gen_toks, reasoning=reasoning
    )
    log.info(
        "paper protocol: %s decoding (settings: %s), %s, up to %d answer tokens (window %d, longest prompt %d)",
        "sampled" if settings.do_sample else "greedy",
        settings.source.value,
        "a model that thinks" if reasoning else "no think block",
        settings.max_gen_toks,
        window,
        longest,
    )
    return settings
