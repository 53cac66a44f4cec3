"""The contamination tables (pandas, no gradio): one row per run and set, with the reference band.

The band of a set is drawn from the *other* models' CoDeC scores on the same set and data (each
model's latest run counted once); a model is never its own reference.  The one rule of a flag
is :attr:`OrderResult.flagged` (Holm-adjusted p below 1 %).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass

import pandas as pd

from eval_queue.vocabulary import short_revision
from leaderboard.tracks.contamination.definition import EVIDENCE, NO_EVIDENCE
from leaderboard.tracks.contamination.metrics import Band, BandPosition, band_position, reference_band
from leaderboard.tracks.contamination.schema import ContaminationResults
from leaderboard.tracks.contamination.suite import suite_sets

#: Column names of :func:`set_table` (export and tab share them).
COLUMNS = (
    "model",
    "revision",
    "precision",
    "data",
    "set",
    "items",
    "order_p",
    "order_p_holm",
    "order_shards",
    "order_permutations",
    "evidence",
    "codec",
    "codec_low",
    "codec_high",
    "band_low",
    "band_high",
    "band_models",
    "band_position",
    "order_tokens",
    "codec_tokens",
    "run_minutes",
    "comparable",
    "results_path",
)
PERCENT_COLUMNS = frozenset({"codec", "codec_low", "codec_high", "band_low", "band_high"})
POSITION_TEXT: Mapping[BandPosition, str] = {
    BandPosition.ABOVE: "above the board's band",
    BandPosition.WITHIN: "within the board's band",
    BandPosition.BELOW: "below the board's band",
    BandPosition.NO_REFERENCE: "no reference yet",
}


def set_label(set_id: str) -> str:
    labels = {s.id: s.label for s in suite_sets()}
    return labels.get(set_id, set_id)


def p_text(p: float | None) -> str:
    """A p-value as shown: three significant digits, tiny ones as a bound (never rounded to 0.00)."""
    if p is None:
        return "—"
    if p < 1e-6:
        return "< 1e-6"
    return f"{p:.3g}"


@dataclass(frozen=True)
class _Latest:
    stamp: str
    score: float


def _latest_scores(records: Sequence[ContaminationResults]) -> dict[tuple[str, str], dict[str, float]]:
    """(set, data) → model → the CoDeC score of the model's latest run on that set and data."""
    latest: dict[tuple[str, str], dict[str, _Latest]] = {}
    for record in records:
        for set_id, result in record.sets.items():
            if result.codec is None:
                continue
            by_model = latest.setdefault((set_id, record.run.data), {})
            stamp = record.run.finished_at or ""
            seen = by_model.get(record.model.id)
            if seen is None or stamp > seen.stamp:
                by_model[record.model.id] = _Latest(stamp, result.codec.score)
    return {key: {m: v.score for m, v in models.items()} for key, models in latest.items()}


def band_for(
    scores: Mapping[tuple[str, str], Mapping[str, float]], set_id: str, data: str, model: str
) -> Band | None:
    """The band of the other models' scores on ``set_id`` and ``data`` (None: too few of them)."""
    others = [score for name, score in scores.get((set_id, data), {}).items() if name != model]
    return reference_band(others)


def set_table(
    records: Mapping[str, ContaminationResults], include_noncomparable: bool = True
) -> pd.DataFrame:
    """One row per (run, set), newest runs first, sets in the suite's order."""
    runs = list(records.values())
    scores = _latest_scores(runs)
    order = {s.id: n for n, s in enumerate(suite_sets())}
    rows = []
    for path, record in sorted(records.items(), key=lambda kv: kv[1].run.finished_at or "", reverse=True):
        if not include_noncomparable and not record.comparable:
            continue
        minutes = round(record.run.duration_s / 60, 2) if record.run.duration_s is not None else None
        for set_id in sorted(record.sets, key=lambda s: order.get(s, len(order))):
            result = record.sets[set_id]
            codec, test = result.codec, result.order
            band = band_for(scores, set_id, record.run.data, record.model.id)
            position = band_position(codec.low, codec.high, band) if codec else BandPosition.NO_REFERENCE
            rows.append(
                {
                    "model": record.model.id,
                    "revision": short_revision(record.model.revision),
                    "precision": record.model.precision,
                    "data": record.run.data + (f" (limit {record.run.limit})" if record.run.limit else ""),
                    "set": set_label(set_id),
                    "items": result.n_items,
                    "order_p": p_text(test.p_value if test else None),
                    "order_p_holm": p_text(test.p_holm if test else None),
                    "order_shards": test.shards if test else None,
                    "order_permutations": test.permutations if test else None,
                    "evidence": EVIDENCE
                    if test and test.flagged
                    else (NO_EVIDENCE if test else "too few items"),
                    "codec": codec.score * 100 if codec else None,
                    "codec_low": codec.low * 100 if codec else None,
                    "codec_high": codec.high * 100 if codec else None,
                    "band_low": band.low * 100 if band else None,
                    "band_high": band.high * 100 if band else None,
                    "band_models": band.models if band else 0,
                    "band_position": POSITION_TEXT[position],
                    "order_tokens": test.tokens if test else None,
                    "codec_tokens": codec.tokens if codec else None,
                    "run_minutes": minutes,
                    "comparable": record.comparable,
                    "results_path": path,
                }
            )
    frame = pd.DataFrame(rows, columns=list(COLUMNS))
    for column in (
        "items",
        "order_shards",
        "order_permutations",
        "band_models",
        "order_tokens",
        "codec_tokens",
    ):
        frame[column] = frame[column].astype("Int64")
    return frame


#: The tab's headings of :func:`set_table`'s columns (the tab hides what only the export needs).
SHOWN = {
    "model": "model",
    "revision": "revision",
    "data": "data",
    "set": "set",
    "items": "items",
    "order_p": "order test p",
    "order_p_holm": "p (Holm)",
    "codec": "CoDeC %",
    "codec_ci": "CoDeC 95 % CI",
    "band": "others' band (models)",
    "band_position": "CoDeC vs other models",
    "order_tokens": "tokens (order)",
    "codec_tokens": "tokens (CoDeC)",
    "run_minutes": "run minutes",
    "evidence": "order test says",
}


def _range_text(low: object, high: object, suffix: str = "") -> str:
    if pd.isna(low) or pd.isna(high):  # type: ignore[arg-type]
        return "—"
    return f"{float(low):.1f}–{float(high):.1f}{suffix}"  # type: ignore[arg-type]


def shown_table(frame: pd.DataFrame) -> pd.DataFrame:
    """The tab's view of :func:`set_table`: intervals and the band as short text, the wording last."""
    shown = frame.assign(
        codec_ci=[
            _range_text(lo, hi) for lo, hi in zip(frame["codec_low"], frame["codec_high"], strict=True)
        ],
        band=[
            _range_text(lo, hi, f" ({n})")
            for lo, hi, n in zip(frame["band_low"], frame["band_high"], frame["band_models"], strict=True)
        ],
    )
    return shown[list(SHOWN)].rename(columns=SHOWN)


def model_evidence(
    records: Mapping[str, ContaminationResults], model: str, revision: str | None
) -> pd.DataFrame:
    """The evidence panel of a model's page: its latest run's sets (any revision when ``revision`` is None)."""
    frame = set_table(records)
    mask = frame["model"] == model
    if revision is not None:
        mask &= frame["revision"] == short_revision(revision)
    mine = frame[mask]
    if mine.empty:
        return shown_table(mine).drop(columns=["model", "revision"])
    latest = mine[mine["results_path"] == mine.iloc[0]["results_path"]]
    return shown_table(latest).drop(columns=["model", "revision"])


def task_evidence(records: Mapping[str, ContaminationResults], task: str) -> pd.DataFrame:
    """The evidence panel of a task's page: every model's latest run on the task's sets (NER: its domains)."""
    labels = {s.label for s in suite_sets() if s.task == task}
    frame = set_table(records)
    frame = frame[frame["set"].isin(labels)]
    latest = frame.drop_duplicates(subset=["model", "set", "data"], keep="first")  # newest first already
    return shown_table(latest)
