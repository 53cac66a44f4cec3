"""The ``paper`` protocol: Appendix A's prompts with an examples file in their slots, no prefill, the
model's own generation settings, think blocks; the request option and the worker's pre-claim check.

The examples are invented here (the paper's own are under a no-derivatives licence, never bundled).
"""

from __future__ import annotations

import hashlib
import json
import re
from pathlib import Path

import pytest
import yaml

from backend.config import WorkerConfig
from backend.options import ModelRef
from backend.tracks import check_track_data
from backend.tracks.judge.convert import answers_from_samples, detail_lines
from backend.tracks.judge.data import read_examples, write_harness_tasks
from backend.tracks.judge.generation import (
    MIN_PAPER_ANSWER_TOKENS,
    PAPER_ANSWER_TOKENS,
    PAPER_THINKING_TOKENS,
    harness_generation_kwargs,
    load_tokenizer,
    paper_generation,
    project_generation,
    read_generation_config,
    thinks,
)
from backend.tracks.judge.run import check_data
from eval_queue.requests import EvalRequest, ModelType, Precision, isoformat, request_path, utc_now
from leaderboard.tracks.judge.data import FewShotSet, JudgeDataError, examples_option, load_examples
from leaderboard.tracks.judge.definition import (
    Criterion,
    JudgeMode,
    JudgeOptions,
    JudgeProtocol,
    harness_task_name,
)
from leaderboard.tracks.judge.harness.hooks import process_results
from leaderboard.tracks.judge.items import ANSWER_PREFIX_FIELD, JudgeUnit, harness_row
from leaderboard.tracks.judge.paper import (
    JSON_TEMPLATE,
    PAPER_STOP_SEQUENCES,
    paper_answer,
    render_paper_prompt,
)
from leaderboard.tracks.judge.parse import ParseStatus, parse_answer, split_thinking
from leaderboard.tracks.judge.rubric import CRITERIA
from leaderboard.tracks.judge.schema import GenerationSource, JudgeDetail
from tests.support.tiny_model import TinyModel

#: The level names Appendix A gives each criterion's five scores.
LEVELS = {
    Criterion.COHERENCE: ("Very Poor", "Poor", "Moderate", "Good", "Excellent"),
    Criterion.CONSISTENCY: ("Very Poor", "Poor", "Moderate", "Good", "Excellent"),
    Criterion.FLUENCY: ("Very Poor", "Poor", "Moderate", "Good", "Excellent"),
    Criterion.RELEVANCE: ("Very Poor", "Poor", "Fair", "Good", "Excellent"),
    Criterion.ORDERING: ("Very Poor", "Poor", "Fair", "Good", "Excellent"),
}


def invented_examples(criteria: tuple[Criterion, ...] = CRITERIA, per_criterion: int = 2) -> list[dict]:
    """Invented worked examples (not the paper's): low and high scores for each criterion."""
    rows = []
    for criterion in criteria:
        for k in range(per_criterion):
            score = 1 + (4 * k) // max(per_criterion - 1, 1)
            rows.append(
                {
                    "criterion": criterion.value,
                    "document": f"Articolo inventato {criterion.value} {k}: il comune di Borgoluce apre una piscina.",
                    "summary": f"Riassunto inventato {criterion.value} {k}: apre la piscina di Borgoluce.",
                    "score": score,
                    "explanation": f"Spiegazione inventata per {criterion.value}: l'esempio vale {score}.",
                }
            )
    return rows


def write_examples(path: Path, criteria: tuple[Criterion, ...] = CRITERIA, per_criterion: int = 2) -> Path:
    path.write_text(
        "\n".join(json.dumps(r, ensure_ascii=False) for r in invented_examples(criteria, per_criterion))
        + "\n",
        encoding="utf-8",
    )
    return path


@pytest.fixture
def examples(tmp_path: Path) -> FewShotSet:
    return load_examples(write_examples(tmp_path / "examples.jsonl"))


# --------------------------------------------------------------------------- the prompt


@pytest.mark.parametrize("criterion", CRITERIA)
def test_the_paper_prompt_follows_appendix_a_with_the_examples_in_its_slot(
    criterion: Criterion, examples: FewShotSet
) -> None:
    prompt = render_paper_prompt(
        criterion, "Il testo da giudicare.", "Il riassunto da giudicare.", examples[criterion]
    )

    name = criterion.value
    # Appendix A's parts, in its order: role and task, definition, sub-criteria, process, the five
    # levels, the Italian explanation, the JSON template and its rules, the slot, the item.
    parts = [
        f"As an impartial evaluator, your task is to assess the {name} of a given summary",
        "providing a detailed explanation in Italian that justifies your rating.",
        f"{name.capitalize()} refers to",
        "Evaluation Criteria\nTo conduct a thorough assessment, consider the following sub-criteria",
        "Evaluation Process\n",
        *(
            f"    Score {s} ({level} {name.capitalize()}):\n        "
            for s, level in enumerate(LEVELS[criterion], 1)
        ),
        "Provide your score along with a detailed explanation in italian that justifies your rating",
        f"Output in the following json template: {JSON_TEMPLATE}\n",
        "Update values enclosed in <> and remove the <>.\n",
        "Your response must only be the updated json template beginning with { and ending with }\n",
        "Ensure the following output keys are present in the json: score explanation\n",
        *(e.summary for e in examples[criterion]),
        "Now Evaluate:\n<Input>\n    <Source_Material>\n        <Text>Il testo da giudicare.</Text>\n",
        "    <Summary>\n        <Text>Il riassunto da giudicare.</Text>\n    </Summary>\n</Input>\n<Output>",
    ]
    positions = [prompt.find(part) for part in parts]
    assert -1 not in positions, [p for p, at in zip(parts, positions, strict=True) if at == -1]
    assert positions == sorted(positions)
    assert prompt.endswith("</Input>\n<Output>")
    assert "'score': '<score between 1 and 5 from very poor to excellent>'" in prompt
    assert "'explanation': '<spigazione del voto dato al riassunto" in prompt  # as printed
    # The slot holds this criterion's examples, in file order, each as the item judged plus its answer.
    slot = prompt[prompt.index("in the json: score explanation\n") : prompt.index("Now Evaluate:")]
    for example in examples[criterion]:
        block = (
            f"<Input>\n    <Source_Material>\n        <Text>{example.document}</Text>\n    </Source_Material>\n"
            f"    <Summary>\n        <Text>{example.summary}</Text>\n    </Summary>\n</Input>\n"
            f"<Output>\n{paper_answer(example.score, example.explanation)}\n</Output>"
        )
        assert block in slot
    assert slot.count("<Input>") == len(examples[criterion]) == 2
    assert all(other.value not in slot for other in CRITERIA if other is not criterion)


def test_the_examples_answers_are_in_the_templates_shape_and_the_parser_reads_them(
    examples: FewShotSet,
) -> None:
    example = examples[Criterion.FLUENCY][0]
    answer = paper_answer(example.score, "L'esempio: un 'voto' con apostrofi.")

    assert answer.startswith("{'score': '1', 'explanation': ")
    read = parse_answer(answer)
    assert (read.score, read.explanation, read.repaired) == (1, "L'esempio: un 'voto' con apostrofi.", False)


def test_a_paper_prompt_refuses_examples_of_another_criterion(examples: FewShotSet) -> None:
    with pytest.raises(ValueError, match="fluency given to the coherence prompt"):
        render_paper_prompt(Criterion.COHERENCE, "d", "s", examples[Criterion.FLUENCY])


def test_the_paper_protocol_has_no_prefill_and_overrides_the_templates_decoding(
    tmp_path: Path, examples: FewShotSet
) -> None:
    unit = JudgeUnit("d1/s1", Criterion.ORDERING, "Il testo.", "Il riassunto.", human=3)
    row = harness_row(unit, examples, JudgeProtocol.PAPER)
    project = harness_row(unit, examples, JudgeProtocol.PROJECT)

    assert row[ANSWER_PREFIX_FIELD] == "" and project[ANSWER_PREFIX_FIELD] == '{"score":'
    assert row["prompt"].startswith("As an impartial evaluator") and row["prompt"].endswith("<Output>")
    # With nothing prefilled, the answer is read as the judge wrote it.
    assert process_results(row, ["{'score': '2', 'explanation': 'Ordine invertito.'}"]) == {
        "parsed": 1.0,
        "score": 2,
    }

    settings = paper_generation({"do_sample": True, "temperature": 0.6, "top_p": 0.95}, 32768, 3000)
    prepared = write_harness_tasks(
        [unit], tmp_path, examples, JudgeProtocol.PAPER, harness_generation_kwargs(settings)
    )
    config = yaml.safe_load(
        (prepared.include_path / f"{harness_task_name(Criterion.ORDERING)}.yaml").read_text()
    )
    assert "gen_prefix" in config and config["gen_prefix"] is None
    assert config["generation_kwargs"] == {
        "until": ["</Output>"],
        "do_sample": True,
        "temperature": 0.6,
        "top_p": 0.95,
        "max_gen_toks": PAPER_ANSWER_TOKENS,
    }
    plain = write_harness_tasks([unit], tmp_path / "plain")
    assert set(yaml.safe_load(next(plain.include_path.glob("*.yaml")).read_text())) == {
        "include",
        "task",
        "dataset_kwargs",
    }


# --------------------------------------------------------------------------- decoding


def test_the_models_generation_config_gives_the_sampling_settings_else_greedy() -> None:
    sampled = paper_generation(
        {"do_sample": True, "temperature": 0.6, "top_k": 20, "top_p": 0.95, "bos_token_id": 1}, 40960, 5000
    )
    assert sampled.source is GenerationSource.GENERATION_CONFIG and sampled.do_sample is True
    assert sampled.sampling == {"temperature": 0.6, "top_k": 20, "top_p": 0.95}
    assert sampled.prefill is None and sampled.stop == list(PAPER_STOP_SEQUENCES) == ["</Output>"]

    for config in (None, {"bos_token_id": 1}, {"temperature": 0.7}):  # no do_sample: generate is greedy
        greedy = paper_generation(config, 8192, 3000)
        assert (
            greedy.source is GenerationSource.GREEDY and greedy.do_sample is False and greedy.sampling == {}
        )
    told_greedy = paper_generation({"do_sample": False, "temperature": 0.7}, 8192, 3000)
    assert told_greedy.source is GenerationSource.GENERATION_CONFIG and told_greedy.sampling == {}
    assert harness_generation_kwargs(told_greedy)["temperature"] == 0.0


def test_the_budget_lets_a_judge_think_within_the_window_and_a_window_too_small_is_refused() -> None:
    thinker = paper_generation(None, 131072, 9000, reasoning=True)
    assert (thinker.max_gen_toks, thinker.reasoning) == (PAPER_THINKING_TOKENS, True) == (8192, True)
    answerer = paper_generation(None, 131072, 9000)
    assert (answerer.max_gen_toks, answerer.reasoning) == (PAPER_ANSWER_TOKENS, False) == (1024, False)
    roomy = paper_generation(None, 8192, 3000, reasoning=True)
    assert (roomy.max_gen_toks, roomy.window, roomy.longest_prompt_tokens) == (5192, 8192, 3000)
    with pytest.raises(JudgeDataError, match="window 4096"):
        paper_generation(None, 4096, 4096 - MIN_PAPER_ANSWER_TOKENS + 1)
    assert paper_generation(None, 4096, 4000, cap=12).max_gen_toks == 12  # a smoke test's cap
    assert project_generation().max_gen_toks == 256 and project_generation().prefill == '{"score":'


def test_a_model_thinks_when_its_chat_template_or_its_vocabulary_has_the_think_tags(
    tiny_model: TinyModel, tmp_path: Path
) -> None:
    from backend.options import RunOptions

    plain = load_tokenizer(ModelRef(str(tiny_model.folder)), RunOptions())
    assert thinks(plain) is False
    plain.chat_template = "{% for m in messages %}{{ m['content'] }}{% endfor %}<think>\n"
    assert thinks(plain) is True
    tagged = load_tokenizer(ModelRef(str(tiny_model.folder)), RunOptions())
    tagged.add_tokens(["<think>", "</think>"], special_tokens=True)
    assert thinks(tagged) is True


def test_the_generation_config_is_read_from_the_models_files(tiny_model: TinyModel, tmp_path: Path) -> None:
    shipped = read_generation_config(ModelRef(str(tiny_model.folder)))
    assert shipped is not None and "do_sample" not in shipped  # the tiny model's: token ids only
    bare = tmp_path / "bare"
    bare.mkdir()
    (bare / "config.json").write_text((tiny_model.folder / "config.json").read_text())
    assert read_generation_config(ModelRef(str(bare))) is None


# --------------------------------------------------------------------------- thinking


def test_a_reasoning_answer_is_read_after_its_think_block_which_is_kept() -> None:
    answer = (
        "<think>Il riassunto inverte l'ordine. Bozza: {'score': '5', 'explanation': 'bozza'}. "
        "No, direi 2.</think>\n{'score': '2', 'explanation': \"L'ordine dei fatti è invertito.\"}"
    )

    read = parse_answer(answer)

    assert (read.status, read.score, read.explanation) == (
        ParseStatus.PARSED,
        2,
        "L'ordine dei fatti è invertito.",
    )
    assert read.thinking is not None and "No, direi 2." in read.thinking and "<think>" not in read.thinking


def test_think_blocks_opened_by_the_chat_template_or_cut_by_the_budget_are_set_aside() -> None:
    # Qwen 3 and DeepSeek-R1 templates open the block in the prompt: the answer has only </think>.
    opened = parse_answer("Valuto i fatti… {'score': '1'}</think>\n\n{'score': '4', 'explanation': 'Buono.'}")
    assert (opened.score, opened.thinking) == (4, "Valuto i fatti… {'score': '1'}")
    # The budget ran out mid-thought: no answer, never the draft.
    cut = parse_answer("<think>Forse {'score': '5', 'explanation': 'bozza'} ma")
    assert cut.status is ParseStatus.NO_JSON and cut.score is None and cut.thinking is not None
    assert split_thinking('{"score": 3}') == (None, '{"score": 3}')


def test_the_details_keep_the_think_block_beside_the_answer() -> None:
    raw = "<think>Ci penso.</think>{'score': '3', 'explanation': 'Discreto.'}"
    samples = {
        harness_task_name(Criterion.FLUENCY): [
            {
                "doc_id": 0,
                "doc": {"item": "d1/s1", "criterion": "fluency", "human": 3, "answer_prefix": ""},
                "filtered_resps": [raw],
            }
        ]
    }

    [(_, data)] = detail_lines(answers_from_samples(samples)).items()

    detail = JudgeDetail.model_validate_json(data.decode().splitlines()[0])
    assert (detail.raw, detail.thinking, detail.score, detail.explanation) == (
        raw,
        "Ci penso.",
        3,
        "Discreto.",
    )


# --------------------------------------------------------------------------- the request and the worker


def test_a_request_chooses_the_protocol_and_the_file_names_say_which() -> None:
    paper = JudgeOptions.parse({"judge_protocol": "paper"})
    assert paper.protocol is JudgeProtocol.PAPER and paper.variant() == "paper"
    project = JudgeOptions.parse({"judge_protocol": "project"})
    assert project.judge_protocol is None and project.variant() is None  # the same request as none
    target = "org/m/results_2026-01-01T00-00-00Z_bfloat16_0shot.json"
    both = JudgeOptions.parse({"judge_target": target, "judge_protocol": "paper"})
    assert both.mode is JudgeMode.GENERATIONS and re.fullmatch(
        r"gen-[0-9a-f]{12}-paper", both.variant() or ""
    )
    with pytest.raises(ValueError, match="judge_protocol"):
        JudgeOptions.parse({"judge_protocol": "papers"})
    path = request_path("org/judge", "a" * 40, "bfloat16", 0, "judge", paper.variant())
    assert path.endswith("_bfloat16_judge-paper.json")


def _judge_request(**options: str) -> EvalRequest:
    return EvalRequest(
        model="org/judge",
        revision="a" * 40,
        precision=Precision.BFLOAT16,
        model_type=ModelType.PRETRAINED,
        submitted_by="tests",
        submitted_time=isoformat(utc_now()),
        track="judge",
        **options,
    )


def test_a_paper_request_on_a_worker_without_examples_is_refused_before_the_claim(tmp_path: Path) -> None:
    paper = _judge_request(judge_protocol="paper")
    bare = WorkerConfig(worker_id="w", data="sample")

    with pytest.raises(JudgeDataError, match="--judge-examples"):
        check_track_data("judge", bare, request=paper)
    check_data(bare, _judge_request())  # the project protocol needs no examples
    check_data(bare, None)
    assert check_track_data("judge", bare) is True

    examples = examples_option(str(write_examples(tmp_path / "examples.jsonl")))
    served = WorkerConfig(worker_id="w", data="sample", track_options={"judge_examples": examples})
    check_data(served, paper)
    Path(examples).unlink()  # gone since the worker started: refused, not claimed
    with pytest.raises(JudgeDataError, match=r"cannot be read|does not exist"):
        check_data(served, paper)


def test_an_examples_file_must_cover_every_criterion_and_is_recorded_by_its_digest(tmp_path: Path) -> None:
    partial = write_examples(tmp_path / "partial.jsonl", (Criterion.COHERENCE, Criterion.FLUENCY))
    with pytest.raises(JudgeDataError, match="no examples for consistency, relevance, ordering"):
        examples_option(str(partial))

    full = write_examples(tmp_path / "full.jsonl", per_criterion=3)
    shots, info = read_examples(full, CRITERIA)

    assert info.file == "full.jsonl" and info.sha256 == hashlib.sha256(full.read_bytes()).hexdigest()
    assert info.examples == dict.fromkeys(CRITERIA, 3) and len(shots[Criterion.ORDERING]) == 3


def test_the_protocol_is_a_cli_flag_and_a_form_choice_derived_from_the_spec() -> None:
    import gradio as gr

    from eval_queue.cli import build_parser
    from eval_queue.tracks import track_spec
    from leaderboard.ui import submit

    args = build_parser().parse_args(["submit", "org/judge", "--track", "judge", "--judge-protocol", "paper"])
    assert args.option_judge_protocol == "paper"
    [field] = [f for f in track_spec("judge").option_fields if f.name == "judge_protocol"]
    assert field.form and not field.multiple and [v for _, v in field.choices] == ["project", "paper"]
    with gr.Blocks():
        radio = submit._option_component(track_spec("judge"), field)
    assert isinstance(radio, gr.Radio) and radio.value == "project"

    sent = submit.track_fields("judge", [], {"judge_target": "", "judge_protocol": "paper"})
    assert sent["options"] == {"judge_protocol": "paper"}
    assert "options" not in submit.track_fields("evalita", ["0"], {"judge_protocol": "paper"})


def test_a_long_decoding_batch_beats_the_stall_watchdog_without_stopping_it() -> None:
    import torch

    from backend.runner import DecodingHeartbeat

    now = [0.0]
    beats: list[float] = []
    heartbeat = DecodingHeartbeat(lambda: beats.append(now[0]), every_s=10.0, clock=lambda: now[0])
    ids = torch.zeros((3, 5), dtype=torch.long)

    for step in range(1, 36):  # one decoding step a second
        now[0] = float(step)
        assert heartbeat(ids, None).tolist() == [False, False, False]

    assert beats == [10.0, 20.0, 30.0]
