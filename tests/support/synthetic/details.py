"""A synthetic store of runs *with per-sample details*, for rescoring benchmarks and tests.

``write_synthetic_store(root, n_models, items)``: ``n_models`` models × both settings, every task
and prompt, ``items`` documents per prompt (NER: per domain).  Each model has a skill; each
(model, prompt) a bias (multiple choice: a favourite option it picks when it does not know, as
small models do; generation: how much it over-generates).  The answers are made up around those,
the gold is shared by every model (the same documents), and each prompt's lm-eval score in the
results file is computed from the very details written (lm-eval's metrics, reimplemented:
:mod:`leaderboard.tracks.evalita.metric_sets`), so that rescoring reproduces them and the
as-specified set has real differences to show.  The files carry no as-specified block, as runs
published before issue 20: ``python -m backend rescore --all`` fills them.
"""

from __future__ import annotations

import json
import random
from dataclasses import dataclass
from pathlib import Path

from leaderboard.core.items import ITEMS_FILE_NAME, RunItems, items_to_parquet
from leaderboard.core.schema import ModelInfo, details_dir, results_file_path
from leaderboard.core.summary import METHOD, KeptDraws, UncertaintySummary
from leaderboard.tracks.evalita import specified
from leaderboard.tracks.evalita.definition import NER_PARTS, SUITE, TaskKind, TaskSpec
from leaderboard.tracks.evalita.metric_sets import METRIC_SETS, MetricSet, prompt_score
from leaderboard.tracks.evalita.schema import (
    DetailRecord,
    EvalitaRunInfo,
    ResultsFile,
    TaskResult,
    details_file_name,
    parse_details,
)
from leaderboard.tracks.evalita.uncertainty import (
    EVALITA_METRICS,
    MEAN_CPS_TIE_FIGURE,
    evalita_run_items,
    evalita_summary,
)
from tests.support.synthetic.results import SYNTHETIC_TYPES, synthetic_model

LM_EVAL = METRIC_SETS[MetricSet.LM_EVAL]
_N_CHOICES = {"wic": 2, "te": 2, "sa": 4, "hs": 2, "faq": 4, "at": 5}
_PEOPLE = ["Mario Rossi", "Giulia Bianchi", "Alcide De Gasperi", "Niccolò Ammaniti", "Luca Verdi"]
_PLACES = ["Roma", "Milano", "Forlì", "Cantù", "Trento", "Napoli"]
_ORGS = ["Comune di Roma", "Università di Padova", "Camera dei Deputati", "Fiat"]
_WORDS = [
    "città",
    "perché",
    "più",
    "già",
    "così",
    "però",
    "governo",
    "sindaco",
    "comune",
    "legge",
    "lavori",
    "strada",
    "scuola",
    "festa",
    "mercato",
    "ospedale",
    "università",
    "qualità",
    "società",
    "attività",
    "età",
    "virtù",
    "caffè",
    "tribù",
    "è",
    "e",
    "la",
    "il",
    "di",
    "per",
    "con",
    "una",
    "nuovo",
    "anno",
    "giorno",
    "settimana",
    "mese",
    "progetto",
    "cittadini",
    "sicurezza",
    "servizio",
    "treno",
    "autobus",
    "piazza",
]
_SYNONYMS = [
    "semplice",
    "facile",
    "chiaro",
    "modesto",
    "umile",
    "sobrio",
    "esiguo",
    "scarso",
    "piccolo",
    "modico",
    "genuino",
    "essenziale",
]
_TESTS = ["emoglobina", "glicemia", "TC", "temperatura", "piastrine", "creatinina"]


@dataclass(frozen=True)
class Documents:
    """The gold of one task's documents, shared by every model: (part, gold) per item."""

    items: list[tuple[str | None, object]]


def _documents(task: TaskSpec, items: int, rng: random.Random) -> Documents:
    if task.kind is TaskKind.MULTIPLE_CHOICE:
        k = _N_CHOICES[task.id]
        return Documents([(None, rng.randrange(k)) for _ in range(items)])
    if task.id == "ner":
        pool = [(p, "PER") for p in _PEOPLE] + [(p, "LOC") for p in _PLACES] + [(o, "ORG") for o in _ORGS]
        return Documents(
            [(part, rng.sample(pool, rng.randint(0, 3))) for part in NER_PARTS for _ in range(items)]
        )
    if task.id == "re":
        return Documents(
            [
                (
                    None,
                    [(f"{rng.randint(1, 300)} mg/dl", rng.choice(_TESTS)) for _ in range(rng.randint(0, 2))],
                )
                for _ in range(items)
            ]
        )
    if task.id == "ls":
        return Documents(
            [
                (None, [(w, rng.randint(1, 3)) for w in rng.sample(_SYNONYMS, rng.randint(2, 5))])
                for _ in range(items)
            ]
        )
    return Documents([(None, " ".join(rng.choices(_WORDS, k=25))) for _ in range(items)])  # sum


def _mc_record(
    doc_id: int, gold: int, k: int, skill: float, favourite: int, rng: random.Random
) -> DetailRecord:
    picked = gold if rng.random() < skill else (favourite if rng.random() < 0.7 else rng.randrange(k))
    choices = [f"opzione {i}" for i in range(k)]
    lls = [-1.0 if i == picked else -2.0 - rng.random() for i in range(k)]
    return DetailRecord(
        doc_id=doc_id,
        input=f"documento {doc_id}",
        answer=choices[picked],
        target=choices[gold],
        score=float(picked == gold),
        choices=choices,
        loglikelihoods=lls,
        gold=gold,
    )


def _ner_answer(gold: list, skill: float, extra: float, rng: random.Random) -> str:
    named = [f"{t}${k}" for t, k in gold if rng.random() < skill]
    while rng.random() < extra:
        named.append(f"{rng.choice(_PLACES + _PEOPLE)}${rng.choice(['PER', 'LOC', 'ORG'])}")
    rng.shuffle(named)
    return ", ".join(named) if named else rng.choice(["&&NOENT&&", ""])


def _re_answer(gold: list, skill: float, extra: float, rng: random.Random) -> str:
    found = [f"{r}${t}" for r, t in gold if rng.random() < skill]
    while rng.random() < extra:
        found.append(f"{rng.randint(1, 300)} mg/dl${rng.choice(_TESTS)}")
    return "%".join(found) if found else "&&NOREL&&"


def _ls_answer(gold: list, skill: float, rng: random.Random) -> str:
    words = [w for w, _ in gold if rng.random() < skill]
    others = [w for w in _SYNONYMS if w not in words]  # a word named twice counts twice upstream (F1 > 1)
    words += rng.sample(others, min(len(others), rng.randint(0, 10 - len(words))))
    return ", ".join(words[:10])


def _sum_answer(reference: str, skill: float, rng: random.Random) -> str:
    out = []
    for word in reference.split()[:20]:
        if rng.random() > skill:
            word = rng.choice(_WORDS)
        elif rng.random() < 0.3:  # the accent dropped, as a careless (or ASCII-only) model writes it
            word = word.translate(str.maketrans("àèéìòù", "aeeiou"))
        out.append(word)
    return " ".join(out)


def _gen_record(
    task: TaskSpec,
    doc_id: int,
    part: str | None,
    gold: object,
    skill: float,
    extra: float,
    rng: random.Random,
) -> DetailRecord:
    if task.id == "ner":
        assert isinstance(gold, list)
        answer = _ner_answer(gold, skill, extra, rng)
        target = ",".join(f"{t}${k}" for t, k in gold) or "&&NOENT&&"
        structured = [[t, k] for t, k in gold]
    elif task.id == "re":
        assert isinstance(gold, list)
        answer = _re_answer(gold, skill, extra, rng)
        target = "%".join(f"{r}${t}" for r, t in gold) or "&&NOENT&&"
        structured = [[r, t] for r, t in gold]
    elif task.id == "ls":
        assert isinstance(gold, list)
        answer = _ls_answer(gold, skill, rng)
        target = ", ".join(w for w, _ in gold)
        structured = [[w, c] for w, c in gold]
    else:
        assert isinstance(gold, str)
        return DetailRecord(
            doc_id=doc_id, input=f"articolo {doc_id}", answer=_sum_answer(gold, skill, rng), target=gold
        )
    record = DetailRecord(
        doc_id=doc_id, input=f"testo {doc_id}", answer=answer, target=target, gold=structured
    )
    return record.model_copy(update={"part": part}) if part else record


def _prompt_records(task: TaskSpec, docs: Documents, skill: float, rng: random.Random) -> list[DetailRecord]:
    prompt_skill = min(0.98, max(0.02, rng.gauss(skill, 0.12)))
    if task.kind is TaskKind.MULTIPLE_CHOICE:
        k = _N_CHOICES[task.id]
        favourite = rng.randrange(k)
        return [
            _mc_record(i, int(gold), k, prompt_skill, favourite, rng)
            for i, (_, gold) in enumerate(docs.items)
        ]
    extra = rng.uniform(0.0, 0.6)
    return [
        _gen_record(task, i, part, gold, prompt_skill, extra, rng)
        for i, (part, gold) in enumerate(docs.items)
    ]


def _lines(records: list[DetailRecord]) -> bytes:
    return "".join(
        json.dumps(r.model_dump(mode="json", exclude_none=True), ensure_ascii=False) + "\n" for r in records
    ).encode()


def _harness_value(task: TaskSpec, record: DetailRecord) -> object:
    """What lm-eval's ``process_results`` keeps for the record (its sample value), from the details."""
    if task.kind is TaskKind.MULTIPLE_CHOICE:
        assert isinstance(record.gold, int) and record.loglikelihoods
        pred = specified.mc_prediction(record.loglikelihoods)
        return float(pred == record.gold) if task.id in ("te", "faq", "at") else [record.gold, pred]
    if task.id == "sum":
        return specified.rouge1_lm_eval(record.target, record.answer)
    assert isinstance(record.gold, list)
    if task.id == "ls":
        return list(specified.lm_eval_ls_item([(str(w), int(c)) for w, c in record.gold], record.answer))
    gold = [(str(a), str(b)) for a, b in record.gold]
    labels = specified.lm_eval_ner_labels if task.id == "ner" else specified.lm_eval_rel_labels
    return list(labels(gold, record.answer))


#: Made-up clusters where the real data have them (WiC's lemmas, LS's target words), so that
#: the per-item files of the synthetic store are resampled by cluster as real ones are.
_CLUSTERS = {"wic": ("lemma", 3), "ls": ("lexelt", 2)}


def lm_eval_run_items(folder: Path) -> RunItems:
    """A run's lm-eval per-item data, as the worker builds them from the harness's samples, here
    from the run's details (the sample value each record implies) through the worker's own
    :func:`~leaderboard.tracks.evalita.uncertainty.evalita_run_items`."""
    samples: dict[str, list[dict[str, object]]] = {}
    for task in SUITE:
        metric = EVALITA_METRICS[task.id]
        for prompt in task.prompts:
            records = parse_details((folder / details_file_name(task.id, prompt.id)).read_bytes(), task.id)
            for harness in prompt.harness_tasks:
                samples[harness.name] = [
                    {
                        "doc_id": r.doc_id,
                        metric.sample_key: _harness_value(task, r),
                        **(
                            {"doc": {_CLUSTERS[task.id][0]: f"c{r.doc_id // _CLUSTERS[task.id][1]}"}}
                            if task.id in _CLUSTERS
                            else {}
                        ),
                    }
                    for r in records
                    if getattr(r, "part", None) == harness.part
                ]
    return evalita_run_items(samples)


def old_style(summary: UncertaintySummary) -> UncertaintySummary:
    """A block as written before the calibrated intervals: no method version, no tie-aware draws,
    the mean CPS's draws under another key (what the app no longer pairs)."""
    draws = {
        figure: KeptDraws(key="0" * 32, float32=kept.float32)
        for figure, kept in summary.draws.items()
        if figure != MEAN_CPS_TIE_FIGURE
    }
    return summary.model_copy(update={"method": METHOD, "draws": draws})


@dataclass(frozen=True)
class SyntheticStore:
    results_files: int
    details_files: int
    details_lines: int


def write_synthetic_store(
    root: Path, n_models: int, items: int = 20, seed: int = 11, *, per_item: bool = False
) -> SyntheticStore:
    """Write ``root/results`` and ``root/details`` (see the module docstring).

    With ``per_item``, each run also gets what the worker writes since the intervals: its
    per-item file (:func:`lm_eval_run_items`) and the results' ``uncertainty`` block from it.
    """
    rng = random.Random(seed)
    documents = {task.id: _documents(task, items, random.Random(f"{seed}-{task.id}")) for task in SUITE}
    results_files = details_files = lines = 0
    for i in range(n_models):
        skill = rng.uniform(0.25, 0.85)
        params = round(rng.choice([0.5, 1.1, 3.0, 7.2, 8.0, 13.0, 34.0, 70.0]) * rng.uniform(0.9, 1.1), 2)
        model = ModelInfo(
            id=synthetic_model(i),
            revision=f"{i:040x}",
            precision="bfloat16",
            params_b=params,
            model_type=SYNTHETIC_TYPES[i % len(SYNTHETIC_TYPES)],
            license="apache-2.0",
        )
        for k, finished in ((0, "2025-05-01T10:00:00Z"), (5, "2025-05-02T10:00:00Z")):
            folder = details_dir(model.id, finished, model.precision, k)
            tasks = {}
            for task in SUITE:
                prompts = {}
                for prompt in task.prompts:
                    records = _prompt_records(
                        task, documents[task.id], min(0.95, skill + 0.05 * (k == 5)), rng
                    )
                    prompts[prompt.id] = prompt_score(prompt, LM_EVAL.metrics[task.id], records)
                    path = root / "details" / folder / details_file_name(task.id, prompt.id)
                    path.parent.mkdir(parents=True, exist_ok=True)
                    path.write_bytes(_lines(records))
                    details_files += 1
                    lines += len(records)
                tasks[task.id] = TaskResult(metric=task.metric, prompts=prompts)
            run = EvalitaRunInfo(
                num_fewshot=k, data="hub", harness="lm-eval 0.4.13", finished_at=finished, details_path=folder
            )
            results = ResultsFile(model=model, run=run, tasks=tasks)
            if per_item:
                run_items = lm_eval_run_items(root / "details" / folder)
                (root / "details" / folder / ITEMS_FILE_NAME).write_bytes(items_to_parquet(run_items))
                published = {t: {p: s.score for p, s in r.prompts.items()} for t, r in tasks.items()}
                summary = evalita_summary(run_items, published)
                results = results.model_copy(update={"uncertainty": summary})
            path = root / "results" / results_file_path(results, finished)
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_bytes(results.to_json())
            results_files += 1
    return SyntheticStore(results_files, details_files, lines)
