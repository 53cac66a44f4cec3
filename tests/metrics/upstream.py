"""The harness's own Evalita scoring, taken from its task YAMLs as lm-eval 0.4.13 binds it.

``load_yaml`` resolves ``include`` and ``!function`` exactly as the harness does when it builds
a task, so the functions returned here are the ones a run calls, not copies.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import Any

import lm_eval
from lm_eval.api.task import ConfigurableTask
from lm_eval.tasks._yaml_loader import load_yaml

from leaderboard.tracks.evalita.definition import SAMPLE_DATA_DIR

EVALITA_DIR = Path(lm_eval.__file__).resolve().parent / "tasks" / "evalita_llm"
#: The bundled Evalita sample (what the tests build documents from).
SAMPLE_DIR = SAMPLE_DATA_DIR

WIC_PROMPTS = tuple(f"_evalita-mp_wic_p{n}.yaml" for n in range(1, 7))
HS_PROMPTS = tuple(f"_evalita-mp_hs_p{n}.yaml" for n in range(1, 7))
SA_PROMPTS = tuple(f"_evalita-mp_sa_p{n}.yaml" for n in range(1, 7))
NER_PROMPTS = tuple(f"_evalita-mp_ner_{d}_p{n}.yaml" for d in ("adg", "fic", "wn") for n in (1, 2))


def config(yaml_name: str) -> dict[str, Any]:
    return load_yaml(EVALITA_DIR / yaml_name)


def only_metric(yaml_name: str) -> Mapping[str, Any]:
    (metric,) = config(yaml_name)["metric_list"]
    return metric


def ner_scoring(yaml_name: str = "_evalita-mp_ner_adg_p1.yaml") -> tuple[Callable, Callable, Callable]:
    """(process_results, aggregation, doc_to_target) of an upstream NER prompt."""
    cfg = config(yaml_name)
    return cfg["process_results"], only_metric(yaml_name)["aggregation"], cfg["doc_to_target"]


def upstream_ner_f1(golds: Sequence[Sequence[tuple[str, str]]], answers: Sequence[str]) -> float:
    """One domain's NER score by the harness's functions."""
    process_results, aggregate, _ = ner_scoring()
    items = [
        process_results({"entities": [{"entity_text": t, "type": k} for t, k in gold]}, [answer])["f1"]
        for gold, answer in zip(golds, answers, strict=True)
    ]
    return aggregate(items)


def mc_task(yaml_name: str, data_files: Mapping[str, Path], cache_dir: Path) -> ConfigurableTask:
    """An upstream multiple-choice prompt as the harness builds it, reading local JSONL files."""
    cfg = config(yaml_name)
    cfg.update(
        dataset_path="json",
        dataset_name=None,
        dataset_kwargs={
            "data_files": {split: str(path) for split, path in data_files.items()},
            "cache_dir": str(cache_dir),
        },
    )
    return ConfigurableTask(config=cfg)


def loglikelihoods_picking(choice: int, n_choices: int) -> list[tuple[float, bool]]:
    """Harness responses (log-likelihood, is_greedy) under which the model picks ``choice``."""
    return [(-1.0 if i == choice else -5.0 - i, i == choice) for i in range(n_choices)]
