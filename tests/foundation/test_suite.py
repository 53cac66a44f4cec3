"""The suite definition: invariants, and parity with the installed lm-eval task configs."""

from __future__ import annotations

import ast
import importlib
import importlib.util
import re
from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest

from leaderboard.tracks.evalita.definition import (
    FEWSHOT_SETTINGS,
    SUITE,
    TASK_IDS,
    TASKS,
    PromptPattern,
    TaskKind,
    UnknownTaskError,
    all_harness_tasks,
    get_task,
    harness_index,
    tasks_of_kind,
)

PAPER_ORDER = ("wic", "te", "sa", "hs", "faq", "at", "ls", "ner", "re", "sum")


def test_suite_lists_the_ten_tasks_in_paper_order() -> None:
    assert TASK_IDS == PAPER_ORDER
    assert tuple(TASKS) == PAPER_ORDER
    assert len({task.abbrev for task in SUITE}) == len(SUITE)


def test_multiple_choice_tasks_have_six_prompts_and_generative_two() -> None:
    mc, gen = tasks_of_kind(TaskKind.MULTIPLE_CHOICE), tasks_of_kind(TaskKind.GENERATIVE)
    assert [t.id for t in mc] == ["wic", "te", "sa", "hs", "faq", "at"]
    assert [t.id for t in gen] == ["ls", "ner", "re", "sum"]
    for task in mc:
        assert task.prompt_ids == ("p1", "p2", "p3", "p4", "p5", "p6")
        assert [p.paper_id for p in task.prompts] == list(task.prompt_ids)
        assert all(p.choices for p in task.prompts), task.id
        assert task.stop_sequences == ()
    for task in gen:
        assert task.prompt_ids == ("p1", "p2")
        assert all(p.choices == () for p in task.prompts), task.id
        assert task.stop_sequences and task.stop_sequences[0] == "</s>"


def test_generative_prompts_map_to_the_papers_p7_to_p10() -> None:
    paper_ids = {
        task.id: tuple(p.paper_id for p in task.prompts) for task in tasks_of_kind(TaskKind.GENERATIVE)
    }
    assert paper_ids == {"ls": ("p8", "p10"), "ner": ("p8", "p10"), "re": ("p8", "p10"), "sum": ("p7", "p9")}


def test_task_description_prompts_extend_their_base_prompt() -> None:
    # The paper's patterns: p2 = description + p1, p4 = description + p3, p6 = description + p5.
    described = {
        PromptPattern.TASK_QUESTION,
        PromptPattern.TASK_QUESTION_ANSWERS,
        PromptPattern.TASK_AFFIRMATIVE,
        PromptPattern.TASK_REQUEST,
        PromptPattern.TASK_REQUEST_OUTPUT,
    }
    for task in SUITE:
        for base, with_description in zip(task.prompts[::2], task.prompts[1::2], strict=True):
            assert with_description.pattern in described
            assert with_description.template.startswith("Devi "), (task.id, with_description.id)
            if task.id not in {"faq", "at", "hs"}:  # their p4 uses another description or options
                assert with_description.template.endswith(base.template), (task.id, with_description.id)


def test_harness_task_names_are_unique_and_indexed() -> None:
    names = all_harness_tasks()
    assert len(names) == 6 * 6 + 2 * 3 + 2 * 3  # NER: one harness task per domain per prompt
    assert len(set(names)) == len(names)
    index = harness_index()
    ref = index["evalita-mp_ner_fic_p2"]
    assert (ref.task.id, ref.prompt.id, ref.part) == ("ner", "p2", "fic")
    assert index["evalita-mp_te_prompt-3"].prompt.id == "p3"


def test_unknown_task_fails_with_a_suggestion() -> None:
    with pytest.raises(UnknownTaskError, match=re.escape("Unknown task 'tee'. Did you mean te?")):
        get_task("tee")
    with pytest.raises(UnknownTaskError, match=re.escape("Did you mean p2?")):
        get_task("te").prompt("p22")
    assert get_task("sum").metric == "rouge1"


def test_suite_records_the_papers_baselines() -> None:
    te = {b.label: b.score for b in get_task("te").baselines}
    sa = {b.label: b.score for b in get_task("sa").baselines}
    assert te["Random guess"] == 50.00
    assert sa["Majority class"] == 41.63
    assert max(sa.values()) == 66.38
    assert all(task.baselines for task in SUITE)
    assert FEWSHOT_SETTINGS == (0, 5)


def test_suite_module_imports_neither_torch_nor_lm_eval() -> None:
    source = Path(importlib.import_module("leaderboard.tracks.evalita.definition").__file__).read_text()
    tree = ast.parse(source)
    imported = {
        alias.name.split(".")[0]
        for node in ast.walk(tree)
        if isinstance(node, ast.Import | ast.ImportFrom)
        for alias in (node.names if isinstance(node, ast.Import) else [ast.alias(node.module or "")])
    }
    assert not imported & {"torch", "lm_eval", "transformers", "datasets"}


# ----------------------------------------------------------------- parity with lm-eval


@pytest.fixture(scope="module")
def harness_configs() -> dict[str, dict[str, Any]]:
    """The installed lm-eval 0.4.13 configs of every Evalita task (YAML only: no dataset, no network).

    Indexed from the installed lm-eval's own ``evalita_llm`` task folder alone: the same YAML
    files the full built-in index finds for these names (no other built-in folder holds an
    Evalita task), without indexing lm-eval's 14,000 other tasks (about 10 s of CPU).
    """
    import lm_eval.tasks
    from lm_eval.tasks import TaskManager
    from lm_eval.tasks._yaml_loader import load_yaml

    builtin_evalita = Path(lm_eval.tasks.__file__).parent / "evalita_llm"
    manager = TaskManager(include_path=str(builtin_evalita), include_defaults=False)
    configs = {}
    for name in manager.all_tasks:
        entry = manager.task_index[name]
        if "evalita" in name and entry.kind.name == "TASK":
            # resolve_func=False: the summarisation hooks would fetch a metric from the hub.
            configs[name] = load_yaml(entry.yaml_path, resolve_func=False)
    return configs


def _harness_choices(config: dict[str, Any]) -> tuple[str, ...]:
    """The options a config offers, with per-row options written as ``{{A}}`` placeholders."""
    choice = config["doc_to_choice"]
    if isinstance(choice, list):
        return tuple(choice)
    if "{{" in choice:  # a Jinja list of row fields, e.g. "{{[A,B,C,D,E]}}"
        import jinja2

        fields = [f.strip() for f in choice.strip("{}[] ").split(",")]
        rendered = jinja2.Template(choice).render({f: "{{" + f + "}}" for f in fields})
        return tuple(ast.literal_eval(rendered))
    # An unresolved "!function module.func" reference, given as "<dir>/module.func".
    module_path, func_name = choice.rsplit(".", 1)
    spec = importlib.util.spec_from_file_location("_evalita_hook", module_path + ".py")
    assert spec and spec.loader
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return tuple(getattr(module, func_name)({}))


@pytest.mark.slow
def test_every_harness_task_in_the_suite_exists_in_lm_eval(
    harness_configs: dict[str, dict[str, Any]],
) -> None:
    missing = [name for name in all_harness_tasks() if name not in harness_configs]
    assert missing == []


@pytest.mark.slow
def test_prompt_texts_choices_and_data_match_lm_eval(harness_configs: dict[str, dict[str, Any]]) -> None:
    checked = 0
    for task in SUITE:
        for prompt in task.prompts:
            for harness in prompt.harness_tasks:
                config = harness_configs[harness.name]
                assert config["doc_to_text"] == prompt.template, harness.name
                assert config["dataset_path"] == task.dataset.path, harness.name
                assert config["test_split"] == task.dataset.test_split, harness.name
                assert config.get("fewshot_split") == task.dataset.fewshot_split, harness.name
                assert task.metric in [m["metric"] for m in config["metric_list"]], harness.name
                if harness.part is not None:
                    assert config["dataset_name"] == harness.part
                if task.kind is TaskKind.MULTIPLE_CHOICE:
                    assert config["output_type"] == "multiple_choice"
                    assert _harness_choices(config) == prompt.choices, harness.name
                else:
                    assert config["output_type"] == "generate_until"
                    assert tuple(config["generation_kwargs"]["until"]) == task.stop_sequences
                checked += 1
    assert checked == 48


def test_defining_a_prompt_twice_is_an_error() -> None:
    te = get_task("te")
    with pytest.raises(ValueError, match="prompt of task 'te' 'p1' is defined twice"):
        replace(te, prompts=(te.prompts[0], te.prompts[0]))
