"""Evalita-LLM metrics as the paper specifies them, beside the ones lm-eval 0.4.13 computes (issue 20).

Pure functions: per-sample gold and predicted values in (labels, entity lists, strings), one
0–1 float out; no I/O, no gradio, no lm-eval.  ROUGE imports ``rouge_score_rs`` (a worker
requirement) only when called, so the app can import this module with its own requirements.

Two metric sets, one function each per task (``lm_eval_*`` reproduces the harness to the last bit,
as ``tests/metrics`` checks against the harness's own functions):

====  ================================================  ==========================================
task  lm-eval 0.4.13 (upstream, the paper's tables)      as specified (paper Table 1 and §3), v2
====  ================================================  ==========================================
WiC   ``f1``: scikit-learn binary F1 of label 1          :func:`f1_macro` (§3.1: WiC-ITA sub-task 1
      ("same meaning")                                  is scored with F1-macro; Table 1 says F1)
HS    the same binary F1 of label 1 ("hate"): the       :func:`f1_macro` (Table 1, §3.4)
      YAMLs' ``average: macro`` never reaches it
SA    :func:`sentipolc_f1` (mean of the positive and     the same: upstream is the paper's metric
      negative polarities' two-class F1)
LS    :func:`lm_eval_ls_f1` (oot F1; a substitute        :func:`ls_f1_distinct`: the same oot F1, a
      named twice is credited twice)                    substitute credited once per context
NER   :func:`lm_eval_ner_f1` (type labels per gold       :func:`ner_f1_macro`: entity-level F1 per
      slot; counts missed PERs as found when the model  type (PER, LOC, ORG) on (text, type)
      names more entities than the gold has)            matches, every other span a false positive
RE    :func:`lm_eval_rel_f1` (F1-macro of "relation"     :func:`rel_f1`: relation-level F1 over
      and a synthetic "no relation" slot class)         (result, test) pairs, micro, any order
SUM   :func:`rouge1_lm_eval`: ROUGE-1 F, rouge_score's   :func:`rouge1_italian`: the same ROUGE-1 on
      tokenizer (``[a-z0-9]`` only: "città" → "citt")   :func:`italian_tokens` (accents kept)
====  ================================================  ==========================================

A prompt's score from per-sample values: WiC, HS, SA, NER aggregate the whole prompt (F1 is not a
mean of per-sample F1s); SUM is :func:`mean` of the per-sample ROUGE-1.  NER is scored per domain
(``adg``, ``fic``, ``wn``) and the prompt's score is the domains' scores weighted by their number of
documents, as upstream's group does (``backend/tracks/evalita/convert.py``); only the per-domain score changes.

What each needs from a stored details record (``leaderboard.tracks.evalita.schema.DetailRecord``):
multiple choice, the gold and the picked option: :func:`mc_gold` (``target``, ``choices``) and
:func:`mc_prediction` (``loglikelihoods``); NER, the gold entities and the answer:
:func:`parse_ner_target` (``target``) and ``answer``, per ``part``; SUM, ``target`` (the reference)
and ``answer``.
"""

from __future__ import annotations

import math
import re
import unicodedata
from collections import Counter
from collections.abc import Callable, Hashable, Sequence
from dataclasses import dataclass
from functools import cache
from typing import Any

# --------------------------------------------------------------------------- multiple choice


def mc_prediction(loglikelihoods: Sequence[float]) -> int:
    """The option lm-eval picks: the first index of the highest log-likelihood, as ``np.argmax``.

    (A NaN counts as the highest, as in ``np.argmax``.)
    """
    if not loglikelihoods:
        raise ValueError("no log-likelihoods: nothing was picked")
    best = 0
    for index, value in enumerate(loglikelihoods):
        if math.isnan(value):
            return index
        if value > loglikelihoods[best]:
            best = index
    return best


def mc_gold(target: str, choices: Sequence[str]) -> int:
    """The gold option's index: details store the gold as the option's text (``DetailRecord.target``)."""
    if list(choices).count(target) != 1:
        raise ValueError(f"gold {target!r} is not exactly one of the options {list(choices)!r}")
    return list(choices).index(target)


# --------------------------------------------------------------------------- F1 on labels


def _f1(tp: int, n_gold: int, n_pred: int) -> float:
    """F1 = 2·TP / (|gold| + |predicted|), 0 when both are empty (scikit-learn's value and order)."""
    denominator = float(n_gold) + float(n_pred)
    return 2.0 * tp / denominator if denominator else 0.0


def f1_per_label(
    golds: Sequence[Hashable], preds: Sequence[Hashable], labels: Sequence[Hashable]
) -> list[float]:
    """F1 of each label in ``labels`` (one-vs-rest), as ``f1_score(average=None, labels=labels)``."""
    if len(golds) != len(preds):
        raise ValueError(f"{len(golds)} gold labels but {len(preds)} predictions")
    gold_count = Counter(golds)
    pred_count = Counter(preds)
    hits = Counter(g for g, p in zip(golds, preds, strict=True) if g == p)
    return [_f1(hits[label], gold_count[label], pred_count[label]) for label in labels]


def _mean(values: Sequence[float]) -> float:
    total = 0.0
    for value in values:  # left to right, as numpy sums fewer than eight values
        total += value
    return total / len(values)


def f1_macro(
    golds: Sequence[Hashable], preds: Sequence[Hashable], labels: Sequence[Hashable] | None = None
) -> float:
    """F1-macro: the unweighted mean of every label's F1 — WiC and HS as the paper specifies.

    ``labels`` default to those present in ``golds`` or ``preds`` (sorted), as scikit-learn's
    ``f1_score(golds, preds, average="macro")``, which this equals.  On real WiC and HS data both
    classes are present, so the binary tasks average the F1 of "0" and of "1".
    """
    if not golds:
        raise ValueError("no samples")
    chosen = sorted(set(golds) | set(preds)) if labels is None else list(labels)
    return _mean(f1_per_label(golds, preds, chosen))


def lm_eval_f1(golds: Sequence[int], preds: Sequence[int]) -> float:
    """lm-eval's ``f1`` aggregation (WiC, HS): scikit-learn's binary F1 of label 1.

    Label 1 is the positive option on every prompt ("Sì"/"A"/"hanno lo stesso significato" for
    WiC, "Vero"/"A"/"contiene incitamento all'odio" for HS), so a model that always picks the
    other option scores 0 whatever the data.
    """
    if not golds:
        raise ValueError("no samples")
    present = set(golds) | set(preds)
    if not present <= {0, 1}:
        raise ValueError(f"binary F1 needs labels 0 and 1, got {sorted(present)}")
    return f1_per_label(golds, preds, [1])[0]


# --------------------------------------------------------------------------- SA

#: The four SA options (upstream's order) as (positive polarity, negative polarity).
SA_POLARITIES: tuple[tuple[int, int], ...] = ((1, 0), (0, 1), (0, 0), (1, 1))


def sentipolc_f1(golds: Sequence[int], preds: Sequence[int]) -> float:
    """SA (both sets): SENTIPOLC's polarity score, as lm-eval's ``_aggreg_sa`` computes it.

    Options 0–3 (positive, negative, neutral, mixed) become two binary fields, ``opos`` and
    ``oneg``; each field's score is the mean of the F1 of its classes 0 and 1; the task's score is
    the mean of the two fields' (paper §3.3: "averaging the F1 scores for both the positive and
    negative polarities").  As upstream, a field where only one class occurs (in gold or
    predictions) has one F1, and the other counts as 0.
    """
    if not golds:
        raise ValueError("no samples")
    labels = set(golds) | set(preds)
    if not labels <= set(range(len(SA_POLARITIES))):
        raise ValueError(f"SA labels are 0–3, got {sorted(labels)}")
    fields = []
    for field in (0, 1):
        gold = [SA_POLARITIES[g][field] for g in golds]
        pred = [SA_POLARITIES[p][field] for p in preds]
        per_class = f1_per_label(gold, pred, sorted(set(gold) | set(pred)))
        fields.append((per_class[0] + (per_class[1] if len(per_class) > 1 else 0)) / 2)
    return (fields[0] + fields[1]) / 2


# --------------------------------------------------------------------------- NER

#: An entity as the NER task writes it: (text, type), e.g. ("Napoleone III", "PER").
Entity = tuple[str, str]
NER_TYPES: tuple[str, ...] = ("PER", "LOC", "ORG")
NO_ENTITIES = "&&NOENT&&"
_ENTITY_SEPARATOR = ","
_TYPE_SEPARATOR = "$"
# lm-eval's labels: the three types, then "O" (a gold slot the model missed, or an extra answer).
_LM_EVAL_LABEL = {"PER": 0, "LOC": 1, "ORG": 2}
_LM_EVAL_O = 3
_GOLD_PIECE_END = re.compile(r"\$(?:PER|LOC|ORG)$")


def parse_ner_target(target: str) -> list[Entity]:
    """The gold entities of a details record, from its ``target`` (upstream's ``ner_doc_to_target``).

    The target is ``Text$TYPE`` pairs joined by ``,`` (or ``&&NOENT&&``).  An entity text holding a
    comma is rejoined: a piece counts as a whole entity only once it ends in ``$PER``, ``$LOC`` or
    ``$ORG``.  Lossless unless an entity's own text contains ``$PER,`` (or LOC, ORG).
    """
    if target == NO_ENTITIES:
        return []
    entities: list[Entity] = []
    pending: str | None = None
    for piece in target.split(_ENTITY_SEPARATOR):
        pending = piece if pending is None else pending + _ENTITY_SEPARATOR + piece
        if _GOLD_PIECE_END.search(pending):
            text, _, kind = pending.rpartition(_TYPE_SEPARATOR)
            entities.append((text, kind))
            pending = None
    if pending is not None:
        raise ValueError(f"NER target {target!r} does not end in an entity of type PER, LOC or ORG")
    return entities


def parse_ner_answer(answer: str) -> list[Entity]:
    """The entities a model's answer names (as specified): ``Text$TYPE`` pairs separated by ``,``.

    As upstream: an answer containing ``&&NOENT&&`` names none, a piece with an empty text is
    skipped, the type is upper-cased.  Unlike upstream, the text and the type are stripped of
    surrounding spaces ("Roma $ LOC" is Roma, LOC) and the type is what follows the *last* ``$``;
    an empty answer names no entity.  A piece without a type keeps the type ``""``.
    """
    if NO_ENTITIES in answer:
        return []
    entities: list[Entity] = []
    for piece in answer.split(_ENTITY_SEPARATOR):
        text, separator, kind = piece.rpartition(_TYPE_SEPARATOR)
        if not separator:
            text, kind = piece, ""
        text = text.strip()
        if text:
            entities.append((text, kind.strip().upper()))
    return entities


def ner_counts(gold: Sequence[Entity], predicted: Sequence[Entity]) -> dict[str, tuple[int, int, int]]:
    """Per type: (true positives, gold entities of the type, predicted entities of the type).

    One document.  A predicted entity matches a gold one with the same text and type; each gold
    mention is matched at most once (a name twice in the gold must be named twice, and a name
    given twice for one gold mention is one true and one false positive).  Predictions of a type
    outside PER, LOC, ORG (or of none) are not in these counts: :func:`ner_invalid` counts them.
    """
    gold_count = Counter(gold)
    pred_count = Counter(predicted)
    counts = {}
    for kind in NER_TYPES:
        tp = sum(min(n, pred_count[entity]) for entity, n in gold_count.items() if entity[1] == kind)
        n_gold = sum(n for entity, n in gold_count.items() if entity[1] == kind)
        n_pred = sum(n for entity, n in pred_count.items() if entity[1] == kind)
        counts[kind] = (tp, n_gold, n_pred)
    return counts


def ner_invalid(predicted: Sequence[Entity]) -> int:
    """How many predicted spans have no type or a type outside PER, LOC, ORG (``Milano$LUOGO``,
    ``la città``): spans the model claims are entities, none of them a gold (span, type) pair."""
    return sum(1 for _, kind in predicted if kind not in NER_TYPES)


def ner_f1_macro(golds: Sequence[Sequence[Entity]], answers: Sequence[str]) -> float:
    """NER as specified (version 2): entity-level F1 of each type, macro-averaged over PER, LOC, ORG.

    Paper §3.8: "F1-macro scores evaluate system performance on person, location, and
    organization entities."  For each type, TP, gold and predicted entities are summed over the
    documents (one domain); F1 = 2·TP / (gold + predicted) = 2·TP / (2·TP + FP + FN).  Every
    predicted span that is not a gold (span, type) pair is a false positive (NERMuD and CoNLL
    score spans, and a span of a wrong type is wrong):

    * of a valid type (``Parigi$PER``, a second ``Roma$LOC`` for one gold Roma): a false
      positive of that type;
    * of no type or an invalid one (``la città``, ``Milano$LUOGO``): a false positive of
      *every* averaged type — it is wrong whichever of the three types it meant, and the macro
      average has no class of its own for it, so it is counted against each type's precision.

    The averaged types are those occurring in the domain's gold or among its validly typed
    predictions (all three on the real test set).  A domain with no entity in the gold and no
    span in any answer scores 1; one with no gold entity and only invalid spans scores 0.
    Version 1 (issue 20) left invalid spans out altogether: padded answers scored 1.
    """
    if len(golds) != len(answers):
        raise ValueError(f"{len(golds)} gold documents but {len(answers)} answers")
    if not golds:
        raise ValueError("no samples")
    totals = dict.fromkeys(NER_TYPES, (0, 0, 0))
    invalid = 0
    for gold, answer in zip(golds, answers, strict=True):
        predicted = parse_ner_answer(answer)
        invalid += ner_invalid(predicted)
        for kind, (tp, n_gold, n_pred) in ner_counts(gold, predicted).items():
            t_tp, t_gold, t_pred = totals[kind]
            totals[kind] = (t_tp + tp, t_gold + n_gold, t_pred + n_pred)
    averaged = [counts for counts in totals.values() if counts[1] + counts[2]]
    if not averaged:
        return 0.0 if invalid else 1.0
    return _mean([_f1(tp, n_gold, n_pred + invalid) for tp, n_gold, n_pred in averaged])


def _lm_eval_ner_answer(answer: str) -> list[tuple[Any, Any]]:
    """Upstream's ``_ner_process_raw_output``; its empty-answer sentinel "WRONG" never matches."""
    if NO_ENTITIES in answer:
        return []
    if answer == "":
        return [("W", "R")]  # upstream returns the string "WRONG" and reads r[0], r[1]
    results = []
    for piece in answer.split(_ENTITY_SEPARATOR):
        parts = piece.strip().split(_TYPE_SEPARATOR)
        text, kind = (parts[0], "") if len(parts) < 2 else (parts[0], parts[1])
        if text != "":
            results.append((text, kind.upper()))
    return results


def lm_eval_ner_labels(gold: Sequence[Entity], answer: str) -> tuple[list[int], list[int]]:
    """Upstream's ``ner_process_results`` for one document: (predicted labels, gold labels).

    One slot per gold entity (label 0 PER, 1 LOC, 2 ORG), which takes the gold's label when an
    answer entity has the same text and type.  When the answer has at most as many entities as
    the gold, an unmatched slot is "O" (3) and unmatched answer entities are not counted.  When it
    has more, an unmatched slot keeps its initial 0 — a missed PER counts as found, a missed LOC or
    ORG as a PER — and each answer entity beyond the gold's count adds a slot (gold "O",
    predicted ORG).  No entity in gold nor answer: one correct "O".
    """
    results = _lm_eval_ner_answer(answer)
    gold_labels = [_LM_EVAL_LABEL[kind] for _, kind in gold]
    matched = [any(r == tuple(g) for r in results) for g in gold]
    if len(results) > len(gold):
        res_labels = [label if hit else 0 for label, hit in zip(gold_labels, matched, strict=True)]
        extra = len(results) - len(gold)
        return res_labels + [_LM_EVAL_LABEL["ORG"]] * extra, gold_labels + [_LM_EVAL_O] * extra
    if not results and not gold:
        return [_LM_EVAL_O], [_LM_EVAL_O]
    return [
        label if hit else _LM_EVAL_O for label, hit in zip(gold_labels, matched, strict=True)
    ], gold_labels


def lm_eval_ner_f1(golds: Sequence[Sequence[Entity]], answers: Sequence[str]) -> float:
    """Upstream's NER score of one domain: ``_aggreg_ner`` over :func:`lm_eval_ner_labels`.

    Every document's slots are pooled; the F1 of each label present is computed and all but the
    last (normally "O") are averaged.
    """
    all_pred, all_gold = _pooled_slots(golds, answers, lm_eval_ner_labels)
    f1 = f1_per_label(all_gold, all_pred, sorted(set(all_gold) | set(all_pred)))
    return _mean(f1[:-1]) if len(f1) > 1 else f1[0]


# --------------------------------------------------------------------------- TE, FAQ, AT


def accuracy(golds: Sequence[int], preds: Sequence[int]) -> float:
    """TE, FAQ, AT (both sets): lm-eval's ``acc`` — the mean of per-sample 1.0/0.0, as its ``mean``."""
    if len(golds) != len(preds):
        raise ValueError(f"{len(golds)} gold labels but {len(preds)} predictions")
    return mean([1.0 if gold == pred else 0.0 for gold, pred in zip(golds, preds, strict=True)])


# --------------------------------------------------------------------------- LS

#: A lexical substitution gold: the annotators' substitutes with how many annotators gave each.
Substitute = tuple[str, int]
_LS_MAX_ANSWERS = 10
_LS_PIECE = re.compile(r"[^,]+")


def _ls_words_and_counts(gold: Sequence[Substitute]) -> tuple[list[str], list[int]]:
    """Upstream's ``_ls_gold_to_target`` then ``_ls_split_gold``: the round trip through
    ``word$$count::…`` that the harness makes, quirks and all."""
    if not gold:
        return [], []
    joined = "".join(f"{word}$${count}::" for word, count in gold)
    if joined[-2] == ":":
        joined = joined[:-2]
    words: list[str] = []
    counts: list[int] = []
    for piece in joined.split("::"):
        if "$$" in piece:
            word, count = piece.split("$$")
            words.append(word)
            try:
                counts.append(int(count))
            except ValueError:
                counts.append(0)
    return words, counts


def _ls_answer_words(answer: str) -> list[str]:
    """Upstream's ``split_text_with_regex`` on the first line, at most ten, the last kept to letters."""
    found: list[str] = []
    for match in _LS_PIECE.findall(answer.split("\n")[0]):
        if match.startswith('"') and match.endswith('"'):
            found.extend(_LS_PIECE.findall(match[1:-1]))
        else:
            found.append(match)
    words = [word.strip().replace('"', "") for word in found][:_LS_MAX_ANSWERS]
    if words:
        words[-1] = "".join(char for char in words[-1] if char.isalpha())
    return words


def lm_eval_ls_item(gold: Sequence[Substitute], answer: str) -> tuple[float, int, int]:
    """Upstream's ``ls_process_results`` for one context: (credit, has answer, has annotation).

    The credit sums the annotator counts of the answer's words found among the substitutes (a
    word named twice counts twice) over all the counts (out-of-ten scoring, not divided by the
    number of answers).
    """
    words, counts = _ls_words_and_counts(gold)
    answers = _ls_answer_words(answer)
    credit: float = 0
    for word in answers:
        if word in words:
            credit += counts[words.index(word.strip())]
    total = sum(counts)
    if total != 0:
        credit = credit / total
    return credit, 0 if not answers else 1, 0 if not words else 1


def lm_eval_ls_f1(golds: Sequence[Sequence[Substitute]], answers: Sequence[str]) -> float:
    """LS (both sets): upstream's ``_aggreg_ls`` — precision Σcredit/|answered|, recall
    Σcredit/|annotated| (each over 1 when 0), their F1."""
    if len(golds) != len(answers):
        raise ValueError(f"{len(golds)} gold contexts but {len(answers)} answers")
    if not golds:
        raise ValueError("no samples")
    items = [lm_eval_ls_item(gold, answer) for gold, answer in zip(golds, answers, strict=True)]
    credit = sum([item[0] for item in items])
    answered = sum([item[1] for item in items])
    annotated = sum([item[2] for item in items])
    precision = credit / (answered if answered != 0 else 1)
    recall = credit / (annotated if annotated != 0 else 1)
    return 0 if precision + recall == 0 else (2 * precision * recall) / (precision + recall)


def ls_item_distinct(gold: Sequence[Substitute], answer: str) -> tuple[float, int, int]:
    """LS as specified for one context: :func:`lm_eval_ls_item` with each substitute credited once.

    The answer is read as upstream reads it (its first line, at most ten pieces, the last kept
    to letters); a word given twice is one guess (SemEval-2007's out-of-ten scorer credited
    duplicates, a loophole its own documentation names: ``pieno, pieno`` earned ``pieno``'s
    annotators twice).  (credit, has answer, has annotation), credit over the sum of the counts.
    """
    words, counts = _ls_words_and_counts(gold)
    weight: dict[str, int] = {}
    for word, count in zip(words, counts, strict=True):
        weight.setdefault(word, count)  # the first position wins, as upstream's ``words.index``
    answers = list(dict.fromkeys(_ls_answer_words(answer)))
    total = sum(counts)
    credit = float(sum(weight[word] for word in answers if word in weight))
    if total != 0:
        credit = credit / total
    return credit, 0 if not answers else 1, 0 if not words else 1


def ls_f1_distinct(golds: Sequence[Sequence[Substitute]], answers: Sequence[str]) -> float:
    """LS as specified (version 2): the oot F1 of :func:`lm_eval_ls_f1` with each substitute of an
    answer credited once (:func:`ls_item_distinct`).

    Paper §3.7: "*Out-of-Ten (oot)*, which considers the top 10 guesses" with "precision, recall,
    and F1" — precision Σcredit / |answered contexts|, recall Σcredit / |annotated contexts|.
    """
    if len(golds) != len(answers):
        raise ValueError(f"{len(golds)} gold contexts but {len(answers)} answers")
    if not golds:
        raise ValueError("no samples")
    items = [ls_item_distinct(gold, answer) for gold, answer in zip(golds, answers, strict=True)]
    return _prf_from_credit(items)


def _prf_from_credit(items: Sequence[tuple[float, int, int]]) -> float:
    credit = sum([item[0] for item in items])
    answered = sum([item[1] for item in items])
    annotated = sum([item[2] for item in items])
    precision = credit / (answered if answered != 0 else 1)
    recall = credit / (annotated if annotated != 0 else 1)
    return 0.0 if precision + recall == 0 else (2 * precision * recall) / (precision + recall)


# --------------------------------------------------------------------------- RE

#: A relation of the RE task: (laboratory result, test), e.g. ("<0.005 mUI/L", "TSH").
Relation = tuple[str, str]
NO_RELATIONS = "&&NOREL&&"
_RE_EMPTY_TARGETS = (NO_RELATIONS, NO_ENTITIES)  # upstream's re_doc_to_target writes &&NOENT&&
_DELETED = ("DELETED", "DELETED")


def parse_rel_target(target: str) -> list[Relation]:
    """The gold relations of a RE details record, from its ``target`` (``re_doc_to_target``).

    ``result$test`` pairs joined by ``%``.  A text holding ``%`` or ``$`` (``7.5%`` of HbA1c)
    makes the joined string ambiguous: :class:`ValueError`, never a guess.
    """
    if target in _RE_EMPTY_TARGETS:
        return []
    relations = []
    for piece in target.split("%"):
        parts = piece.split("$")
        if len(parts) != 2:
            raise ValueError(f"RE target {target!r} cannot be split into result$test pairs unambiguously")
        relations.append((parts[0], parts[1]))
    return relations


def _rel_answer(answer: str) -> list[Any]:
    """Upstream's ``_rel_process_raw_output``; its empty-answer sentinel "WRONG" never matches."""
    if NO_RELATIONS in answer:
        return []
    if answer == "":
        return ["WRONG"]
    relations: list[Any] = []
    for piece in answer.split("%"):
        parts = piece.split("$")
        relations.append((parts[0].strip(), "" if len(parts) < 2 else parts[1].strip()))
    return relations


def lm_eval_rel_labels(gold: Sequence[Relation], answer: str) -> tuple[list[int], list[int]]:
    """Upstream's ``rel_process_results_v3`` for one document: (predicted labels, gold labels).

    One slot per gold relation (label 1), predicted 1 when an answer pair equals it; a document
    without relations is one slot labelled 0.  Extra answer pairs add (gold 0, predicted 1)
    slots — skipping, as upstream does, those among the *first* ones that matched.
    """
    has_answer = NO_RELATIONS not in answer
    if not has_answer:
        return ([0] * len(gold), [1] * len(gold)) if gold else ([0], [0])
    if not gold:
        return [1], [0]
    results = _rel_answer(answer)
    gold_labels = [1] * len(gold)
    res_labels = [0] * len(gold)
    for i, (result, test) in enumerate(gold):
        for j, found in enumerate(results):
            if found[0] == result and found[1] == test:
                res_labels[i] = 1
                results[j] = _DELETED
    for i in range(len(results) - len(gold)):
        if results[i] == _DELETED:
            continue
        res_labels.append(1)
        gold_labels.append(0)
    return res_labels, gold_labels


def lm_eval_rel_f1(golds: Sequence[Sequence[Relation]], answers: Sequence[str]) -> float:
    """RE (both sets): upstream's ``_aggreg_rel`` — scikit-learn's F1-macro over every slot of
    :func:`lm_eval_rel_labels` (the F1 of "relation" and of "no relation", averaged)."""
    all_pred, all_gold = _pooled_slots(golds, answers, lm_eval_rel_labels)
    return f1_macro(all_gold, all_pred)


@dataclass(frozen=True)
class PRF:
    """Precision, recall and F1 from pooled counts (each 0 when its denominator is)."""

    tp: int
    fp: int
    fn: int

    @property
    def precision(self) -> float:
        return self.tp / (self.tp + self.fp) if self.tp + self.fp else 0.0

    @property
    def recall(self) -> float:
        return self.tp / (self.tp + self.fn) if self.tp + self.fn else 0.0

    @property
    def f1(self) -> float:
        """2·TP / (2·TP + FP + FN); 1 when there is nothing to find and nothing was named."""
        denominator = 2 * self.tp + self.fp + self.fn
        return 2 * self.tp / denominator if denominator else 1.0


def parse_rel_answer(answer: str) -> list[Relation]:
    """The relations a model's answer names (as specified): ``result$test`` pairs joined by ``%``.

    As upstream, an answer containing ``&&NOREL&&`` names none.  Unlike upstream, an empty answer
    names none (it is no false positive: it misses the gold), each text is stripped, the test is
    what follows the *last* ``$``, empty pieces are skipped, and a ``%`` that ends a result is
    kept when the next piece starts with ``$`` (``7.5%$HbA1c`` is one pair, not two).  A piece
    without ``$`` is a pair with an empty test: named, so a false positive.
    """
    if NO_RELATIONS in answer:
        return []
    pieces: list[str] = []
    for piece in answer.split("%"):
        if pieces and "$" not in pieces[-1] and piece.lstrip().startswith("$"):
            pieces[-1] = pieces[-1] + "%" + piece
        else:
            pieces.append(piece)
    relations = []
    for piece in pieces:
        result, separator, test = piece.rpartition("$")
        if not separator:
            result, test = piece, ""
        if result.strip() or test.strip():
            relations.append((result.strip(), test.strip()))
    return relations


def rel_counts(gold: Sequence[Relation], predicted: Sequence[Relation]) -> PRF:
    """One document's TP, FP, FN over (result, test) pairs, whatever their order.

    A gold pair is matched at most once (a pair twice in the gold must be named twice; a pair
    named twice for one gold is one true and one false positive).
    """
    gold_count = Counter(gold)
    pred_count = Counter(predicted)
    tp = sum(min(n, pred_count[pair]) for pair, n in gold_count.items())
    return PRF(tp=tp, fp=sum(pred_count.values()) - tp, fn=sum(gold_count.values()) - tp)


def rel_prf(golds: Sequence[Sequence[Relation]], answers: Sequence[str]) -> PRF:
    """RE as specified (version 2): relation-level counts pooled over the documents (micro).

    Paper §3.9: "Performance is assessed using Precision, Recall, and F1 score" of relations
    (CLinkaRT scores (RML, EVENT) pairs; the paper names no averaging across documents, so the
    counts are summed over the test set).  A document without gold relations adds only its false
    positives: answering ``&&NOREL&&`` there is neither rewarded nor punished.
    """
    if len(golds) != len(answers):
        raise ValueError(f"{len(golds)} gold documents but {len(answers)} answers")
    if not golds:
        raise ValueError("no samples")
    tp = fp = fn = 0
    for gold, answer in zip(golds, answers, strict=True):
        counts = rel_counts(gold, parse_rel_answer(answer))
        tp, fp, fn = tp + counts.tp, fp + counts.fp, fn + counts.fn
    return PRF(tp=tp, fp=fp, fn=fn)


def rel_f1(golds: Sequence[Sequence[Relation]], answers: Sequence[str]) -> float:
    """RE as specified: the F1 of :func:`rel_prf` (2·TP / (2·TP + FP + FN), micro)."""
    return rel_prf(golds, answers).f1


def _pooled_slots(
    golds: Sequence[Sequence[Any]],
    answers: Sequence[str],
    slots: Callable[[Sequence[Any], str], tuple[list[int], list[int]]],
) -> tuple[list[int], list[int]]:
    """Upstream's pooling: every document's ``(predicted, gold)`` slot labels, concatenated."""
    if len(golds) != len(answers):
        raise ValueError(f"{len(golds)} gold documents but {len(answers)} answers")
    if not golds:
        raise ValueError("no samples")
    all_pred: list[int] = []
    all_gold: list[int] = []
    for gold, answer in zip(golds, answers, strict=True):
        pred, ref = slots(gold, answer)
        all_pred.extend(pred)
        all_gold.extend(ref)
    return all_pred, all_gold


# --------------------------------------------------------------------------- SUM (ROUGE-1)

# A run of Unicode letters or digits (no underscore): [a-z0-9] widened to every script.
_WORD = re.compile(r"[^\W_]+")


def italian_tokens(text: str) -> list[str]:
    """ROUGE tokens that keep Italian letters: NFKC, lower case, maximal runs of letters or digits.

    rouge_score's default tokenizer with ``[a-z0-9]`` widened to every Unicode letter and digit,
    so on ASCII text both give the same tokens.  "città" and "perché" stay whole; an apostrophe
    separates, as it does upstream ("dell'anno" → "dell", "anno"): Italian elides articles and
    prepositions onto the next word (l', dell', un', quest'), and the content word must still
    match "anno" elsewhere.  NFKC composes accents typed as combining marks ("e" + U+0301 → "é")
    and maps compatibility forms (ligatures, full-width letters) to plain letters.  No stemming,
    as upstream.
    """
    return _WORD.findall(unicodedata.normalize("NFKC", text).lower())


class ItalianTokenizer:
    """:func:`italian_tokens` as a ``rouge_score`` / ``rouge_score_rs`` tokenizer object."""

    def tokenize(self, text: str) -> list[str]:
        return italian_tokens(text)


@cache
def _scorer(italian: bool) -> Any:
    # rouge_score_rs gives rouge_score's numbers bit for bit (bench/bench_rouge.py,
    # tests/metrics/test_rouge.py), 23× faster on ROUGE-1 with the default tokenizer.
    from rouge_score_rs import rouge_scorer

    return rouge_scorer.RougeScorer(
        ["rouge1"], use_stemmer=False, tokenizer=ItalianTokenizer() if italian else None
    )


def rouge1_lm_eval(reference: str, prediction: str) -> float:
    """SUM's per-sample score upstream: ROUGE-1 F-measure, rouge_score's tokenizer, no stemming."""
    return _scorer(False).score(reference, prediction)["rouge1"].fmeasure


def rouge1_italian(reference: str, prediction: str) -> float:
    """SUM's per-sample score as specified: the same ROUGE-1 on :func:`italian_tokens`."""
    return _scorer(True).score(reference, prediction)["rouge1"].fmeasure


def rouge1_lm_eval_batch(references: Sequence[str], predictions: Sequence[str]) -> list[float]:
    """:func:`rouge1_lm_eval` of each pair (natively, on every core: ``RAYON_NUM_THREADS`` caps it)."""
    return [s["rouge1"].fmeasure for s in _scorer(False).score_batch(list(references), list(predictions))]


def rouge1_italian_batch(references: Sequence[str], predictions: Sequence[str]) -> list[float]:
    """:func:`rouge1_italian` of each pair."""
    return [s["rouge1"].fmeasure for s in _scorer(True).score_batch(list(references), list(predictions))]


def mean(values: Sequence[float]) -> float:
    """A prompt's SUM score from per-sample ROUGE-1: lm-eval's ``mean`` (``sum(arr) / len(arr)``)."""
    if not values:
        raise ValueError("no samples")
    return sum(values) / len(values)


__all__ = [
    "NER_TYPES",
    "NO_ENTITIES",
    "NO_RELATIONS",
    "PRF",
    "SA_POLARITIES",
    "Entity",
    "ItalianTokenizer",
    "Relation",
    "Substitute",
    "accuracy",
    "f1_macro",
    "f1_per_label",
    "italian_tokens",
    "lm_eval_f1",
    "lm_eval_ls_f1",
    "lm_eval_ls_item",
    "lm_eval_ner_f1",
    "lm_eval_ner_labels",
    "lm_eval_rel_f1",
    "lm_eval_rel_labels",
    "ls_f1_distinct",
    "ls_item_distinct",
    "mc_gold",
    "mc_prediction",
    "mean",
    "ner_counts",
    "ner_f1_macro",
    "ner_invalid",
    "parse_ner_answer",
    "parse_ner_target",
    "parse_rel_answer",
    "parse_rel_target",
    "rel_counts",
    "rel_f1",
    "rel_prf",
    "rouge1_italian",
    "rouge1_italian_batch",
    "rouge1_lm_eval",
    "rouge1_lm_eval_batch",
    "sentipolc_f1",
]
