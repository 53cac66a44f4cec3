"""LS and RE: the pure reimplementations of lm-eval 0.4.13 equal the harness's own functions.

Both tasks are scored alike in both metric sets (the paper names F1 without a formula the
harness departs from), but rescoring checks them: these reimplementations must give the
harness's number to the last bit, on hand-made cases and on random answers over the sample.
"""

from __future__ import annotations

import json
import random

import pytest

from leaderboard.tracks.evalita.specified import (
    NO_RELATIONS,
    lm_eval_ls_f1,
    lm_eval_ls_item,
    lm_eval_rel_f1,
    lm_eval_rel_labels,
    parse_rel_target,
)
from tests.metrics.upstream import SAMPLE_DIR, config, only_metric

pytestmark = pytest.mark.filterwarnings("ignore::sklearn.exceptions.UndefinedMetricWarning")

LS_YAML = "_evalita-mp_ls_p1.yaml"
RE_YAML = "_evalita-mp_re_p1.yaml"


def _docs(task: str) -> list[dict]:
    lines = (SAMPLE_DIR / task / "test.jsonl").read_text(encoding="utf-8").splitlines()
    return [json.loads(line) for line in lines if line.strip()]


def _ls_gold(doc: dict) -> list[tuple[str, int]]:
    return [(a["word"], a["count"]) for a in doc["answers"]]


def _upstream(yaml_name: str, docs: list[dict], answers: list[str]) -> float:
    process = config(yaml_name)["process_results"]
    aggregate = only_metric(yaml_name)["aggregation"]
    return aggregate([process(doc, [answer])["f1"] for doc, answer in zip(docs, answers, strict=True)])


LS_CASES = [
    # (gold substitutes with counts, answer)
    ([("genuino", 2), ("sobrio", 1)], "genuino, sobrio, semplice"),
    ([("genuino", 2), ("sobrio", 1)], "genuino, genuino"),  # a word twice counts twice
    ([("genuino", 2)], '"genuino, sobrio", altro.'),  # quoted pieces, the last kept to letters
    ([], "genuino"),  # no annotation
    ([("genuino", 2)], ""),  # no answer
    ([("genuino", 0)], "genuino"),  # counts of zero
    ([("a", 1)], ", ".join(["x"] * 12 + ["a"])),  # only the first ten count
    ([("genuino", 1)], "genuino\nsobrio, altro"),  # the first line only
]


@pytest.mark.parametrize(("gold", "answer"), LS_CASES)
def test_ls_item_equals_the_harness_process_results(gold: list[tuple[str, int]], answer: str) -> None:
    doc = {"answers": [{"word": w, "count": c} for w, c in gold]}
    assert lm_eval_ls_item(gold, answer) == config(LS_YAML)["process_results"](doc, [answer])["f1"]


def test_ls_f1_equals_the_harness_on_random_answers_over_the_sample() -> None:
    docs = _docs("ls")
    vocabulary = [*sorted({a["word"] for d in docs for a in d["answers"]}), "casa", "cosa", "bello"]
    rng = random.Random(3)
    for _ in range(30):
        answers = [", ".join(rng.sample(vocabulary, rng.randint(0, 12))) for _ in docs]
        assert lm_eval_ls_f1([_ls_gold(d) for d in docs], answers) == _upstream(LS_YAML, docs, answers)


RE_CASES = [
    # (gold relations, answer)
    ([("8,2 g/dl", "emoglobina")], "8,2 g/dl$emoglobina"),
    ([("8,2 g/dl", "emoglobina")], NO_RELATIONS),  # a missed relation
    ([], NO_RELATIONS),  # a true negative
    ([], "5$x"),  # a false positive
    ([("a", "b"), ("c", "d")], "a$b%c$d%e$f"),  # one extra
    ([("a", "b")], "a$b%a$b%x$y"),  # extra answers, the matched one among the first: skipped
    ([("a", "b")], ""),  # an empty answer never matches
    ([("a", "b")], " a $ b % c"),  # parts are stripped
]


@pytest.mark.parametrize(("gold", "answer"), RE_CASES)
def test_rel_labels_equal_the_harness_process_results(gold: list[tuple[str, str]], answer: str) -> None:
    doc = {"relations": [list(r) for r in gold]}
    assert lm_eval_rel_labels(gold, answer) == config(RE_YAML)["process_results"](doc, [answer])["f1"]


def test_rel_f1_equals_the_harness_on_random_answers_over_the_sample() -> None:
    docs = _docs("re")
    pool = [f"{r[0]}${r[1]}" for d in docs for r in d["relations"]] + ["1$x", "negativo$TC"]
    rng = random.Random(5)
    for _ in range(30):
        answers = [
            rng.choice([NO_RELATIONS, "", "%".join(rng.sample(pool, rng.randint(1, 4)))]) for _ in docs
        ]
        golds = [[tuple(r) for r in d["relations"]] for d in docs]
        assert lm_eval_rel_f1(golds, answers) == _upstream(RE_YAML, docs, answers)


def test_rel_target_parses_back_unless_a_text_holds_a_separator() -> None:
    target_of = config(RE_YAML)["doc_to_target"]
    parsed = 0
    ambiguous = 0
    for doc in _docs("re"):
        gold = [tuple(r) for r in doc["relations"]]
        target = target_of(doc)
        if any("%" in text or "$" in text for relation in gold for text in relation):
            with pytest.raises(ValueError, match="unambiguously"):
                parse_rel_target(target)
            ambiguous += 1
        else:
            assert parse_rel_target(target) == gold
            parsed += 1
    assert parsed > 10 and ambiguous >= 1  # the sample has "35%" of an ejection fraction
