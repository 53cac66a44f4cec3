"""One run as Every Eval Ever records: the aggregate JSON and the instance-level JSONL lines.

Pure: a parsed results file, its figures and items in, JSON-ready dicts out.  The file names
are the datastore's (``<uuid4>.json``, ``<uuid4>_samples.jsonl``); the UUID is derived from the
results file's path, so exporting a store twice writes the same files.
"""

from __future__ import annotations

import hashlib
import json
import re
import uuid
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any

from leaderboard.core.schema import ResultsEnvelope
from leaderboard.eee.model import Figure, Item

#: How the records name their source.
SOURCE_NAME = "Evalita-LLM Leaderboard"
SOURCE_ORGANIZATION = "Evalita-LLM Leaderboard maintainers"
DATASTORE_ROOT = "data"


@dataclass(frozen=True)
class RunRecords:
    """A run's EEE files: ``aggregate`` at ``aggregate_path``, ``lines`` at ``samples_path`` (if any)."""

    aggregate_path: str
    aggregate: dict[str, Any]
    samples_path: str | None
    lines: tuple[dict[str, Any], ...]

    def aggregate_bytes(self) -> bytes:
        return (json.dumps(self.aggregate, ensure_ascii=False, indent=2) + "\n").encode()

    def samples_bytes(self) -> bytes:
        return "".join(json.dumps(line, ensure_ascii=False) + "\n" for line in self.lines).encode()


def record_uuid(results_path: str) -> str:
    """A UUID4-shaped id fixed by the results file's path (the datastore wants UUID4 file names)."""
    digest = hashlib.sha256(results_path.encode()).digest()
    return str(uuid.UUID(bytes=digest[:16], version=4))


def _portable(part: str) -> str:
    """A path component the datastore accepts (its rules: no reserved characters, no trailing dot)."""
    cleaned = re.sub(r'[<>:"\\|?*\x00-\x1f/]', "_", part).rstrip(". ") or "_"
    return cleaned


def datastore_folder(benchmark: str, model_id: str) -> str:
    """``data/<benchmark>/<developer>/<model>``: the developer is the id's prefix, as the datastore files it."""
    developer, _, name = model_id.partition("/")
    if not name:  # a flat id: the datastore would want a developer; the board's ids always have one
        developer, name = "unknown-developer", model_id
    return "/".join((DATASTORE_ROOT, _portable(benchmark), _portable(developer), _portable(name)))


def _strings(values: Mapping[str, Any]) -> dict[str, str]:
    """``additional_details`` hold strings only: numbers as JSON, None left out."""
    out = {}
    for key, value in values.items():
        if value is None:
            continue
        out[key] = value if isinstance(value, str) else json.dumps(value, ensure_ascii=False, sort_keys=True)
    return out


def _epoch(timestamp: str | None) -> str | None:
    if not timestamp:
        return None
    try:
        moment = datetime.fromisoformat(timestamp.replace("Z", "+00:00"))
    except ValueError:
        return None
    return str(int((moment if moment.tzinfo else moment.replace(tzinfo=UTC)).timestamp()))


def _library(results: ResultsEnvelope) -> dict[str, Any]:
    run = results.run
    version = run.versions.get("lm_eval")
    if not version and run.harness and run.harness.startswith("lm-eval "):
        version = run.harness.removeprefix("lm-eval ")
    project = run.versions.get("evalita-llm-leaderboard")
    return {
        "name": "lm_eval",
        "version": version or "unknown",
        "additional_details": _strings({"harness": run.harness, "evalita_llm_leaderboard": project}),
    }


def _model_info(results: ResultsEnvelope) -> dict[str, Any]:
    model, run = results.model, results.run
    developer = model.id.partition("/")[0] if "/" in model.id else None
    info: dict[str, Any] = {
        "name": model.id,
        "id": model.id,
        "inference_platform": "HuggingFace",
        "additional_details": {
            # The worker downloads the weights and runs them itself.
            "deployment_type": "self_deployed",
            "model_availability": "open_weights",
            **_strings(
                {
                    "revision": model.revision,
                    "precision": model.precision,
                    "requested_precision": run.requested_precision,
                    "params_b": model.params_b,
                    "model_type": model.model_type,
                    "license": model.license,
                    "architecture": model.architecture,
                }
            ),
        },
    }
    if developer:
        info["developer"] = developer
    if run.backend:
        info["inference_engine"] = {
            "name": run.backend,
            "version": run.versions.get("transformers") or "unknown",
        }
    return info


def _source_data(figure: Figure, dataset: tuple[str, str | None], data: str | None) -> dict[str, Any]:
    name, repo = figure.dataset or dataset
    if data == "hub" and repo:
        return {"dataset_name": name, "source_type": "hf_dataset", "hf_repo": repo}
    # Sample or local data (or a track's own named set): not the official dataset, said so.
    return {
        "dataset_name": name,
        "source_type": "other",
        "additional_details": {"data": data or "unknown"},
    }


def _uncertainty(figure: Figure) -> dict[str, Any] | None:
    out: dict[str, Any] = {}
    if figure.low is not None and figure.high is not None:
        out["confidence_interval"] = {
            "lower": figure.low,
            "upper": figure.high,
            "confidence_level": figure.level,
            "method": figure.interval_method or "bootstrap",
        }
    if figure.stderr is not None:
        out["standard_error"] = {"value": figure.stderr, "method": "bootstrap"}
    if figure.num_samples is not None:
        out["num_samples"] = figure.num_samples
    return out or None


def _result(
    figure: Figure, results: ResultsEnvelope, dataset: tuple[str, str | None], generation: dict[str, Any]
) -> dict[str, Any]:
    metric: dict[str, Any] = {
        "evaluation_description": figure.description or figure.name,
        "metric_id": figure.metric_id,
        "metric_name": figure.metric_name,
        "metric_unit": "proportion" if figure.max_score == 1.0 and figure.min_score == 0.0 else "points",
        "lower_is_better": figure.lower_is_better,
        "score_type": "continuous",
        "min_score": figure.min_score if figure.min_score is not None else "-Infinity",
        "max_score": figure.max_score if figure.max_score is not None else "Infinity",
    }
    if figure.extra:
        metric["additional_details"] = dict(figure.extra)
    score: dict[str, Any] = {"score": figure.value}
    uncertainty = _uncertainty(figure)
    if uncertainty:
        score["uncertainty"] = uncertainty
    entry: dict[str, Any] = {
        "evaluation_result_id": figure.result_id,
        "evaluation_name": figure.name,
        "source_data": _source_data(figure, dataset, results.run.data),
        "metric_config": metric,
        "score_details": score,
    }
    if results.run.finished_at:
        entry["evaluation_timestamp"] = results.run.finished_at
    if generation:
        entry["generation_config"] = generation
    return entry


def _generation(results: ResultsEnvelope) -> dict[str, Any]:
    run = results.run
    args: dict[str, Any] = {}
    if run.recipe is not None:
        args["execution_command"] = run.recipe.command
    if run.max_gen_toks:
        args["max_tokens"] = int(run.max_gen_toks)
    details = _strings(
        {
            "num_fewshot": run.num_fewshot,
            "chat_template": run.chat_template,
            "batch_size": None if run.batch_size is None else str(run.batch_size),
            "seeds": run.seeds or None,
        }
    )
    out: dict[str, Any] = {}
    if args:
        out["generation_args"] = args
    if details:
        out["additional_details"] = details
    return out


def run_details(results: ResultsEnvelope, path: str, setting: str | None) -> dict[str, str]:
    """The board's run facts an EEE reader may want (strings): where, what, comparable, what it cost."""
    run = results.run
    cost = run.cost
    facts: dict[str, Any] = {
        "track": results.track,
        "setting": setting,
        "results_path": path,
        "details_path": run.details_path,
        "comparable": results.comparable,
        "data": run.data,
        "limit": run.limit,
        "device": run.device,
        "hardware": run.hardware,
        "duration_s": run.duration_s,
        "request_id": run.request_id,
    }
    if cost is not None:
        facts |= {
            "gpus": cost.gpus,
            "gpu_hours": cost.gpu_hours,
            "tokens": cost.tokens,
            "input_tokens": cost.input_tokens,
            "output_tokens": cost.output_tokens,
            "reasoning_tokens": cost.reasoning_tokens,
            "task_tokens": {t: v.model_dump() for t, v in cost.task_tokens.items()}
            if cost.task_tokens
            else None,
            "scored_items": cost.scored_items,
            "energy": cost.energy_text,
            "energy_kwh": cost.kwh,
            "wh_per_1000_items": cost.wh_per_thousand_items,
        }
    return _strings(facts)


def aggregate_record(
    results: ResultsEnvelope,
    path: str,
    *,
    benchmark: str,
    dataset: tuple[str, str | None],
    figures: Sequence[Figure],
    schema_version: str,
    retrieved_at: str,
    samples: tuple[str, int, str] | None,
    setting: str | None = None,
) -> dict[str, Any]:
    """The aggregate record of one run.  ``samples``: (repo path, rows, sha256) of its JSONL, if any."""
    generation = _generation(results)
    record: dict[str, Any] = {
        "schema_version": schema_version,
        "evaluation_id": f"{benchmark}/{results.model.id}/{record_uuid(path)}",
        "retrieved_timestamp": retrieved_at,
        "source_metadata": {
            "source_name": SOURCE_NAME,
            "source_type": "evaluation_run",
            "source_organization_name": SOURCE_ORGANIZATION,
            "evaluator_relationship": "third_party",
            "additional_details": run_details(results, path, setting),
        },
        "model_info": _model_info(results),
        "eval_library": _library(results),
        "evaluation_results": [_result(f, results, dataset, generation) for f in figures],
    }
    started = _epoch(results.run.started_at)
    if started is not None:
        record["evaluation_timestamp"] = started
    if samples is not None:
        samples_path, rows, checksum = samples
        record["detailed_evaluation_results"] = {
            "format": "jsonl",
            "file_path": samples_path,
            "hash_algorithm": "sha256",
            "checksum": checksum,
            "total_rows": rows,
        }
    return record


def instance_lines(
    items: Iterable[Item], figure: Figure, *, evaluation_id: str, model_id: str, schema_version: str
) -> list[dict[str, Any]]:
    """The instance-level lines of one figure's items."""
    lines = []
    for item in items:
        reference = list(item.references)
        correct = item.correct if item.correct is not None else item.score > 0
        extracted = (
            item.extracted if item.extracted is not None else (item.outputs[0] if item.outputs else "")
        )
        line: dict[str, Any] = {
            "schema_version": schema_version,
            "evaluation_id": evaluation_id,
            "model_id": model_id,
            "evaluation_name": figure.name,
            "evaluation_result_id": figure.result_id,
            "sample_id": item.sample_id,
            "sample_hash": hashlib.sha256(
                json.dumps([item.raw_input, reference], ensure_ascii=False).encode()
            ).hexdigest(),
            "interaction_type": "single_turn",
            "input": {
                "raw": item.raw_input,
                "reference": reference,
                "choices": list(item.choices) if item.choices is not None else None,
            },
            "output": {
                "raw": list(item.outputs),
                "reasoning_trace": [item.reasoning] if item.reasoning else None,
            },
            "messages": None,
            "answer_attribution": [
                {
                    "turn_idx": 0,
                    "source": "output.raw",
                    "extracted_value": extracted,
                    "extraction_method": item.extraction_method,
                    "is_terminal": True,
                }
            ],
            "evaluation": {"score": item.score, "is_correct": bool(correct)},
            "metadata": dict(item.metadata) or None,
        }
        lines.append(line)
    return lines
