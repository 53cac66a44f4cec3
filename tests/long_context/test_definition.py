"""Invariants of the track definition, the prompt and the project-owned harness configs."""

from __future__ import annotations

from pathlib import Path

import pytest
import yaml

from backend.tracks.evalita.data.upstream import (
    _read_config,  # the harness-YAML reader the Evalita data layer uses
)
from leaderboard.tracks.long_context import definition as d
from leaderboard.tracks.long_context.harness import utils as hooks
from tests.long_context.books import book_text

HARNESS = Path(d.__file__).parent / "harness"


def test_ids_are_unique_and_table5_has_its_nine_columns():
    assert len({t.name for t in d.harness_tasks()}) == len(d.harness_tasks()) == 18
    assert [f"{qs.value}:{m.value}" for qs, m in d.TABLE5_COLUMNS] == [
        "summary:em",
        "summary:meteor",
        "local:em",
        "local:meteor",
        "local:acc",
        "local_alt:em",
        "local_alt:meteor",
        "local_alt:acc",
        "entity:meteor",
    ]


def test_only_the_local_sets_have_multiple_choice():
    with_mc = {s.id for s in d.QUESTION_SETS if d.AnswerKind.MULTIPLE_CHOICE in s.kinds}
    assert with_mc == {d.QuestionSet.LOCAL, d.QuestionSet.LOCAL_ALT}


def test_settings_parse_in_canonical_order_and_unknown_ones_get_a_suggestion():
    assert d.parse_settings("full, 10K") == (d.ContextSetting.K10, d.ContextSetting.FULL)
    assert d.parse_settings(None) == d.parse_settings("") == tuple(d.ContextSetting)
    with pytest.raises(d.UnknownNameError, match="Did you mean 50k"):
        d.parse_settings("50K,5k")


def test_generation_cap_fits_entity_answers():
    # Table 2: entity answers 24 ± 8 words; Italian needs about 1.5–1.8 tokens a word.
    assert d.GENERATION[d.AnswerKind.OPEN_ENDED].max_gen_toks >= int(1.8 * (24 + 8))


@pytest.mark.parametrize("kind", list(d.AnswerKind))
def test_harness_template_agrees_with_the_definition(kind):
    cfg = _read_config((HARNESS / f"_indaqa2_{kind.value}.yaml").resolve())
    spec = d.GENERATION[kind]
    assert cfg["generation_kwargs"] == {
        "until": list(spec.stop),
        "max_gen_toks": spec.max_gen_toks,
        "do_sample": spec.do_sample,
        "temperature": spec.temperature,
    }
    assert [m["metric"] for m in cfg["metric_list"]] == [m.value for m in d.metrics_for(kind)]
    for metric in cfg["metric_list"]:
        assert metric["higher_is_better"] == d.METRIC_SPECS[d.Metric(metric["metric"])].higher_is_better
    for hook in ("doc_to_text", "doc_to_target", "process_results"):
        assert cfg[hook] == f"utils.{hook}_{kind.value}"
        assert callable(getattr(hooks, f"{hook}_{kind.value}"))


def test_every_base_config_exists_and_names_its_task():
    found = {p.stem for p in HARNESS.glob("indaqa2_*.yaml")}
    assert found == set(d.base_configs())
    for name in found:
        raw = yaml.safe_load((HARNESS / f"{name}.yaml").read_text())
        task = next(t for t in d.harness_tasks() if t.base == name)
        assert raw == {"include": f"_indaqa2_{task.kind.value}.yaml", "task": name}


def test_prompt_is_figure_4_with_choices_only_for_mc():
    oe = d.render_prompt("Il libro.\n\n", "Chi è Carla?")
    assert oe == "Il libro.\nDomanda: Chi è Carla?\nRisposta:"
    mc = d.render_prompt(
        "Il libro.", "Chi è Carla?", ["A. Un'amica", "B. Una parente", "C. L'amante", "D. La serva"]
    )
    assert mc == (
        "Il libro.\nDomanda: Chi è Carla?\nA. Un'amica\nB. Una parente\nC. L'amante\nD. La serva\nRisposta:"
    )
    assert mc.rfind(d.QUESTION_MARKER) == len("Il libro.")


def test_truncate_words_keeps_the_first_words_with_their_spacing():
    assert d.truncate_words("uno  due\ntre quattro", 3) == "uno  due\ntre"
    assert d.truncate_words("uno due", 10) == "uno due"
    assert d.truncate_words("uno due", None) == "uno due"


def test_a_12k_word_book_under_10k_gives_its_first_10k_words_and_the_whole_question(tmp_path):
    text = book_text(12_000)
    book = tmp_path / "book.txt"
    book.write_text(text, encoding="utf-8")
    doc = {
        "question_id": "q",
        "book_file": str(book),
        "max_words": d.CONTEXT_SETTING_SPECS[d.ContextSetting.K10].max_words,
        "question": "Dove abitava Giacometta?",
        "answers": ["Vicino al fiume"],
        "choices": ["A. Al fiume", "B. In città", "C. In montagna", "D. Al mare"],
        "label": "A",
    }
    prompt = hooks.doc_to_text_mc(doc)
    shown, tail = prompt[: prompt.rfind(d.QUESTION_MARKER)], prompt[prompt.rfind(d.QUESTION_MARKER) :]
    assert shown.split() == text.split()[:10_000]
    assert (
        tail
        == "\nDomanda: Dove abitava Giacometta?\nA. Al fiume\nB. In città\nC. In montagna\nD. Al mare\nRisposta:"
    )
    full = hooks.doc_to_text_oe(doc | {"max_words": None})
    assert full.split()[:12_000] == text.split()


def test_the_ui_side_and_the_worker_entry_import_without_torch_or_lm_eval():
    import subprocess
    import sys

    code = (
        "import sys\n"
        "import leaderboard.tracks.long_context.app.tables, leaderboard.tracks.long_context.schema\n"
        "import backend.tracks.long_context\n"
        "print(sorted(m for m in ('torch', 'lm_eval', 'gradio') if m in sys.modules))\n"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert done.stdout.strip() == "[]", done.stderr[-2000:]
