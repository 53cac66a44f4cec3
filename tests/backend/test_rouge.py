"""Offline ROUGE: ``evaluate.load("rouge")`` resolves to our script and scores exactly like ``rouge_score``.

The end-to-end check runs in a subprocess, as the worker does: ``HF_MODULES_CACHE`` and
``HF_EVALUATE_OFFLINE`` are read when ``evaluate`` is imported.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest
from rouge_score import rouge_scorer, tokenize

from backend.tracks.evalita.offline_rouge import ROUGE_CACHE_NAME, ROUGE_SCRIPT, install_offline_rouge
from leaderboard.tracks.evalita.specified import ItalianTokenizer

REPO_ROOT = Path(__file__).resolve().parents[2]

# (reference, prediction): Italian summaries with accents, apostrophes, numbers, case.
PAIRS = [
    (
        "Per sei settimane la linea 4 dei bus cambierà percorso a causa dei lavori in via Garibaldi.",
        "La linea 4 cambierà percorso per sei settimane per i lavori alla rete fognaria.",
    ),
    (
        "Stagione estiva da record in Romagna, con presenze in crescita dell'otto per cento.",
        "In Romagna è stata un'estate da record: le presenze sono cresciute dell'8%.",
    ),
    ("La città è più bella perché è pulita.", "La citta e piu bella perche e pulita."),
    ("Ritrovato il cane Birillo dopo tre settimane.", "Nessuna parola in comune qui."),
    ("Università di Bologna: è la più antica.", "UNIVERSITÀ DI BOLOGNA, LA PIÙ ANTICA"),
]
TYPES = ["rouge1", "rouge2", "rougeL", "rougeLsum"]
#: Environments whose modules cache the worker computes without importing evaluate.
CACHE_ENVS = [
    {},
    {"XDG_CACHE_HOME": "/xdg"},
    {"HF_HOME": "~/hf", "XDG_CACHE_HOME": "/xdg"},
    {"HF_MODULES_CACHE": "/modules", "HF_HOME": "/hf"},
]


def direct(reference: str, prediction: str) -> dict[str, float]:
    """``rouge_score`` with the defaults the upstream metric uses (no stemmer, default tokenizer)."""
    scores = rouge_scorer.RougeScorer(TYPES, use_stemmer=False).score(reference, prediction)
    return {key: value.fmeasure for key, value in scores.items()}


@pytest.fixture(scope="module")
def offline_results(tmp_path_factory: pytest.TempPathFactory) -> dict:
    cache = tmp_path_factory.mktemp("hf-modules")
    script = textwrap.dedent(
        """
        import json, sys
        from backend.tracks.evalita.offline_rouge import install_offline_rouge
        install_offline_rouge()  # default: evaluate's own HF_MODULES_CACHE
        import evaluate
        from lm_eval.tasks.evalita_llm import sum_utils  # runs evaluate.load("rouge") on import
        pairs = json.loads(sys.argv[1])
        rouge = evaluate.load("rouge", keep_in_memory=True)
        out = {
            "single": [rouge.compute(predictions=[p], references=[r]) for r, p in pairs],
            "lists": rouge.compute(predictions=[p for _, p in pairs], references=[r for r, _ in pairs],
                                   use_aggregator=False),
            "multi_ref": rouge.compute(predictions=[pairs[0][1]], references=[[pairs[0][0], pairs[1][0]]]),
            "harness": [sum_utils.process_results_sum({"target": r}, [p])["rouge1"] for r, p in pairs],
            "module": type(sum_utils.rouge).__module__,
        }
        # The worker finds the cache before importing evaluate: its rule against evaluate.config's own.
        import importlib, os
        from backend.tracks.evalita.offline_rouge import modules_cache_from_env
        out["rules"] = []
        for case in json.loads(sys.argv[2]):
            for name in ("HF_MODULES_CACHE", "HF_HOME", "XDG_CACHE_HOME"):
                os.environ.pop(name, None)
            os.environ.update(case)
            out["rules"].append([str(modules_cache_from_env(case)), str(importlib.reload(evaluate.config).HF_MODULES_CACHE)])
        print(json.dumps(out, default=float))
        """
    )
    env = {k: v for k, v in os.environ.items() if not k.startswith("HF_")}
    env.update(
        HF_MODULES_CACHE=str(cache),
        HF_EVALUATE_OFFLINE="1",
        HF_HUB_OFFLINE="1",
        HF_DATASETS_OFFLINE="1",
        PYTHONPATH=str(REPO_ROOT),
    )
    proc = subprocess.run(
        [sys.executable, "-c", script, json.dumps(PAIRS), json.dumps(CACHE_ENVS)],
        cwd=cache,  # no ./rouge folder can shadow the cache
        env=env,
        capture_output=True,
        text=True,
        timeout=240,
    )
    assert proc.returncode == 0, proc.stderr[-3000:]
    results = json.loads(proc.stdout.strip().splitlines()[-1])
    results["cache"] = str(cache)
    return results


def test_evaluate_load_rouge_resolves_to_the_installed_script_offline(offline_results: dict) -> None:
    assert ROUGE_CACHE_NAME in offline_results["module"]
    installed = list(Path(offline_results["cache"]).rglob("rouge.py"))
    assert [p.read_bytes() for p in installed] == [ROUGE_SCRIPT.read_bytes()]


def test_the_worker_finds_evaluates_modules_cache_without_importing_it(offline_results: dict) -> None:
    assert len(offline_results["rules"]) == len(CACHE_ENVS)
    for ours, evaluates in offline_results["rules"]:
        assert ours == evaluates


def test_offline_scores_equal_rouge_score_on_italian_pairs(offline_results: dict) -> None:
    checked = 0
    for (reference, prediction), got in zip(PAIRS, offline_results["single"], strict=True):
        want = direct(reference, prediction)
        assert got == pytest.approx(want, abs=1e-12), (reference, prediction)
        checked += 1
    assert checked == len(PAIRS)
    lists = offline_results["lists"]
    for key in TYPES:
        assert lists[key] == pytest.approx([direct(r, p)[key] for r, p in PAIRS], abs=1e-12)


def test_several_references_take_the_best_match(offline_results: dict) -> None:
    scorer = rouge_scorer.RougeScorer(TYPES, use_stemmer=False)
    want = scorer.score_multi([PAIRS[0][0], PAIRS[1][0]], PAIRS[0][1])
    assert offline_results["multi_ref"] == pytest.approx({k: v.fmeasure for k, v in want.items()}, abs=1e-12)


def test_harness_sum_hook_scores_rouge1_like_rouge_score(offline_results: dict) -> None:
    want = [direct(r, p)["rouge1"] for r, p in PAIRS]
    assert offline_results["harness"] == pytest.approx(want, abs=1e-12)
    assert 0 < want[0] < 1 and want[3] == 0


def test_default_tokenizer_drops_accented_letters_as_upstream_does() -> None:
    # Kept on purpose: published Evalita-LLM ROUGE scores were computed this way.
    assert tokenize.tokenize("La città è più bella, perché sì!", None) == [
        "la",
        "citt",
        "pi",
        "bella",
        "perch",
        "s",
    ]
    # So an accent typed as a plain vowel counts as a different word ("perché" → "perch" vs "perche"):
    # reference [la citt pi bella perch pulita], prediction [la citta e piu bella perche e pulita].
    reference, prediction = PAIRS[2]
    assert direct(reference, prediction)["rouge1"] == pytest.approx(2 * 3 / (6 + 8))
    # ... and a lone accented word ("è") is not a token at all.
    assert direct(*PAIRS[4])["rouge1"] == 1.0


def test_the_as_specified_italian_tokenizer_keeps_accents() -> None:
    tokens = ItalianTokenizer().tokenize("La città è più bella, dell'UNIVERSITÀ perché_sì!")
    assert tokens == ["la", "città", "è", "più", "bella", "dell", "università", "perché", "sì"]
    scorer = rouge_scorer.RougeScorer(["rouge1"], tokenizer=ItalianTokenizer())
    # The reference's "è" now counts: 6 of its 7 words are in the 6-word prediction.
    assert scorer.score(*PAIRS[4])["rouge1"].fmeasure == pytest.approx(2 * 6 / (7 + 6))
    assert scorer.score(*PAIRS[2])["rouge1"].fmeasure == pytest.approx(3 / 8)


def test_install_is_idempotent(tmp_path: Path) -> None:
    first = install_offline_rouge(tmp_path)
    stamp = first.stat().st_mtime_ns
    second = install_offline_rouge(tmp_path)
    assert first == second and second.stat().st_mtime_ns == stamp
    assert first.parent.parent.name == ROUGE_CACHE_NAME and len(first.parent.name) == 64
    assert (tmp_path / "evaluate_modules" / "__init__.py").is_file()
