"""The paper's dev-phase results (Evalita-LLM, Appendix Tables A1–A10; Tables 14, 15, 19).

Transcribed cell by cell from the paper, on its 0–100 scale; ``None`` is the paper's N/A.
Tests reproduce every printed MaxP/AvgP/CPS from the per-prompt scores, and the UI
tests use :func:`write_paper_store` to fill a results store with the six dev LLMs.

The appendix tables name their prompt rows as the paper does (P1…P6 for multiple
choice; P7/P9 for LS and SUM, P8/P10 for NER and REL).  In every table the first
generative row is the harness's prompt ``p1`` and the second ``p2``
(see :mod:`leaderboard.tracks.evalita.definition` for the mapping and the LS labelling quirk).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path

from leaderboard.core.schema import ModelInfo, RunInfo, results_file_path
from leaderboard.tracks.evalita.definition import TASKS
from leaderboard.tracks.evalita.schema import PromptScore, ResultsFile, TaskResult

LLMS: tuple[str, ...] = ("LLM-1", "LLM-2", "LLM-3", "LLM-4", "LLM-5", "LLM-6")
#: The columns of an appendix table: (LLM, num_fewshot) in printed order (ZS then FS per LLM).
APPENDIX_COLUMNS: tuple[tuple[str, int], ...] = tuple((llm, shots) for llm in LLMS for shots in (0, 5))
AGGREGATE_ROWS: tuple[str, ...] = ("MaxP", "AvgP", "CPS")
PAPER_ORG = "paper-dev"

Cell = float | None

# Paper row label → harness prompt id.
_ROW_TO_PROMPT: Mapping[str, str] = {
    **{f"P{i}": f"p{i}" for i in range(1, 7)},
    "P7": "p1",
    "P8": "p1",
    "P9": "p2",
    "P10": "p2",
}


@dataclass(frozen=True)
class AppendixTable:
    """One of Tables A1–A10: rows of 12 cells, (LLM-1 ZS, LLM-1 FS, …, LLM-6 FS)."""

    name: str
    task_id: str
    rows: Mapping[str, tuple[Cell, ...]]

    @property
    def prompt_rows(self) -> tuple[str, ...]:
        return tuple(label for label in self.rows if label not in AGGREGATE_ROWS)

    def prompt_scores(self, llm: str, num_fewshot: int) -> dict[str, Cell]:
        """``{harness prompt id: score}`` (0–100) of one LLM in one setting."""
        column = APPENDIX_COLUMNS.index((llm, num_fewshot))
        return {_ROW_TO_PROMPT[label]: self.rows[label][column] for label in self.prompt_rows}

    def printed(self, aggregate: str, llm: str, num_fewshot: int) -> Cell:
        """The MaxP, AvgP or CPS the paper prints for one LLM in one setting."""
        return self.rows[aggregate][APPENDIX_COLUMNS.index((llm, num_fewshot))]


@dataclass(frozen=True)
class PromptSideTable:
    """Tables 14, 15, 19 (zero-shot): per prompt the six LLMs then MinP, MaxP, AvgP, CPS.

    The MaxP/AvgP/CPS rows (six cells, one per LLM) are the model side.
    """

    name: str
    task_id: str
    rows: Mapping[str, tuple[float, ...]]

    @property
    def prompt_rows(self) -> tuple[str, ...]:
        return tuple(label for label in self.rows if label not in AGGREGATE_ROWS)

    def model_scores(self, label: str) -> tuple[float, ...]:
        return self.rows[label][: len(LLMS)]

    def printed(self, label: str, aggregate: str) -> float:
        """The MinP, MaxP, AvgP or CPS the paper prints for prompt ``label``."""
        return self.rows[label][len(LLMS) + ("MinP", "MaxP", "AvgP", "CPS").index(aggregate)]

    def harness_prompt(self, label: str) -> str:
        return _ROW_TO_PROMPT[label.upper()]


# fmt: off
APPENDIX: tuple[AppendixTable, ...] = (
    AppendixTable(
        "A1",
        "te",
        {
            "P1": (55.00, 57.25, 68.25, 73.75, 45.25, 52.00, 64.50, 73.75, 75.50, 80.75, 64.00, 76.75),
            "P2": (55.00, 57.50, 56.50, 74.00, 55.00, 52.50, 59.00, 74.25, 78.75, 81.50, 69.25, 74.25),
            "P3": (70.25, 58.50, 64.75, 73.00, 55.00, 55.00, 49.25, 68.25, 73.25, 80.25, 60.50, 72.00),
            "P4": (65.00, 61.25, 63.50, 75.25, 55.00, 54.50, 61.25, 66.25, 74.75, 81.75, 61.75, 68.50),
            "P5": (55.75, 51.25, 54.25, 60.00, 55.00, 51.50, 60.50, 66.00, 57.50, 75.75, 49.00, 68.75),
            "P6": (55.00, 49.25, 59.00, 57.75, 55.75, 53.75, 57.75, 67.75, 60.75, 76.25, 45.50, 69.00),
            "MaxP": (70.25, 61.25, 68.25, 75.25, 55.75, 55.00, 64.50, 74.25, 78.75, 81.75, 69.25, 76.75),
            "AvgP": (59.33, 55.83, 61.04, 68.96, 53.50, 53.21, 58.71, 69.38, 70.08, 79.38, 58.33, 71.54),
            "CPS": (62.58, 57.93, 63.33, 70.52, 54.50, 54.01, 60.76, 70.63, 71.93, 79.81, 61.69, 72.75),
        },
    ),
    AppendixTable(
        "A2",
        "sa",
        {
            "P1": (33.06, 66.96, 43.90, 69.38, 36.93, 56.74, 52.99, 69.07, 41.14, 73.96, 41.19, 68.19),
            "P2": (37.19, 67.21, 49.35, 70.19, 36.71, 52.84, 38.69, 68.24, 59.40, 73.82, 49.82, 69.64),
            "P3": (53.33, 72.52, 64.18, 77.39, 43.24, 39.76, 26.27, 67.84, 65.64, 71.32, 69.72, 74.77),
            "P4": (54.35, 71.48, 68.31, 77.39, 46.74, 45.13, 28.31, 67.96, 70.73, 71.62, 72.17, 75.96),
            "P5": (53.28, 68.97, 71.42, 70.38, 53.26, 62.88, 62.34, 69.63, 65.68, 72.25, 67.00, 66.37),
            "P6": (59.26, 70.34, 63.49, 72.84, 59.06, 59.70, 63.08, 72.04, 68.50, 72.56, 66.20, 70.14),
            "MaxP": (59.26, 72.52, 71.42, 77.39, 59.06, 62.88, 63.08, 72.04, 70.73, 73.96, 72.17, 75.96),
            "AvgP": (48.41, 69.58, 60.11, 72.93, 45.99, 52.84, 45.28, 69.13, 61.85, 72.59, 61.02, 70.85),
            "CPS": (52.83, 70.39, 63.34, 73.94, 51.34, 56.57, 51.85, 69.94, 64.45, 72.95, 64.12, 72.07),
        },
    ),
    AppendixTable(
        "A3",
        "hs",
        {
            "P1": (60.85, 41.33, 15.13, 52.79, 59.55, 29.25, 61.45, 48.84, 58.40, 71.31, 0.25, 67.00),
            "P2": (48.78, 40.47, 40.60, 58.57, 32.45, 37.46, 61.79, 53.30, 49.73, 70.48, 2.43, 69.47),
            "P3": (55.05, 61.90, 36.68, 69.96, 61.00, 61.30, 1.94, 65.75, 68.81, 76.20, 42.76, 66.31),
            "P4": (62.68, 63.20, 52.66, 72.22, 61.77, 60.60, 49.84, 66.28, 69.39, 76.01, 62.47, 74.22),
            "P5": (63.58, 34.90, 63.17, 65.97, 62.85, 44.04, 64.24, 54.90, 63.39, 65.92, 63.39, 71.07),
            "P6": (62.43, 39.21, 62.59, 64.43, 44.43, 46.29, 62.96, 54.43, 62.44, 64.97, 66.18, 71.08),
            "MaxP": (63.58, 63.20, 63.17, 72.22, 62.85, 61.30, 64.24, 66.28, 69.39, 76.20, 66.18, 74.22),
            "AvgP": (58.90, 46.84, 45.14, 63.99, 53.68, 46.49, 50.37, 57.25, 62.03, 70.82, 39.58, 69.86),
            "CPS": (60.60, 52.86, 51.78, 66.28, 57.08, 52.22, 55.33, 60.29, 64.28, 72.10, 48.58, 70.98),
        },
    ),
    AppendixTable(
        "A4",
        "at",
        {
            "P1": (22.00, 28.20, 24.40, 35.20, 22.04, 28.00, 26.20, 36.20, 39.00, 44.20, 27.40, 37.20),
            "P2": (23.20, 28.40, 26.00, 35.60, 20.84, 27.00, 24.20, 35.80, 37.40, 44.40, 26.80, 37.60),
            "P3": (31.20, 38.00, 67.00, 70.60, 29.06, 32.00, 53.00, 57.00, 77.70, 75.60, 62.20, 64.80),
            "P4": (30.40, 36.20, 68.60, 69.60, 24.85, 32.60, 51.40, 55.80, 77.20, 75.60, 62.20, 64.40),
            "P5": (25.80, 30.00, 32.40, 36.00, 23.60, 28.80, 34.40, 38.20, 39.80, 44.80, 33.40, 37.60),
            "P6": (24.20, 29.20, 33.00, 35.60, 24.40, 28.20, 34.60, 36.80, 38.80, 43.80, 32.40, 38.20),
            "MaxP": (31.20, 38.00, 68.60, 70.60, 29.06, 32.60, 53.00, 57.00, 77.70, 75.60, 62.20, 64.80),
            "AvgP": (26.13, 31.67, 41.90, 47.10, 24.13, 29.43, 37.30, 43.30, 51.65, 54.73, 40.73, 46.63),
            "CPS": (29.62, 35.59, 50.28, 54.01, 27.63, 31.57, 44.68, 49.19, 57.46, 59.82, 48.85, 53.03),
        },
    ),
    AppendixTable(
        "A5",
        "wic",
        {
            "P1": (66.67, 47.08, 55.18, 59.54, 0.00, 39.41, 62.78, 31.55, 3.92, 55.74, 53.99, 64.52),
            "P2": (66.67, 42.82, 53.23, 60.67, 42.79, 24.85, 30.85, 22.37, 9.16, 50.79, 12.23, 57.78),
            "P3": (7.43, 53.93, 54.55, 58.44, 64.47, 61.81, 32.86, 39.90, 40.12, 61.90, 64.36, 50.69),
            "P4": (26.22, 52.53, 6.87, 58.91, 65.67, 58.15, 63.23, 49.07, 2.37, 48.75, 57.97, 33.93),
            "P5": (66.13, 18.95, 65.39, 52.84, 66.31, 48.78, 66.76, 20.67, 64.86, 59.25, 59.75, 52.81),
            "P6": (66.40, 40.69, 66.93, 56.35, 65.55, 37.50, 64.43, 20.74, 62.10, 59.74, 66.57, 58.45),
            "MaxP": (66.67, 53.93, 66.93, 60.67, 66.31, 61.81, 66.76, 49.07, 64.86, 61.90, 66.57, 64.52),
            "AvgP": (49.92, 42.67, 50.36, 57.79, 50.80, 45.08, 53.49, 30.72, 30.42, 56.03, 52.48, 53.03),
            "CPS": (55.50, 47.86, 55.84, 58.92, 56.02, 51.47, 57.90, 40.06, 42.52, 58.27, 57.19, 57.11),
        },
    ),
    AppendixTable(
        "A6",
        "faq",
        {
            "P1": (28.43, 28.68, 30.42, 29.68, 28.93, 29.18, 29.43, 28.93, 28.93, 27.43, 30.42, 34.16),
            "P2": (28.18, 28.43, 30.42, 29.68, 28.68, 29.43, 28.93, 28.68, 28.18, 27.43, 30.92, 35.41),
            "P3": (35.91, 41.50, 80.30, 94.00, 27.43, 30.92, 31.92, 40.15, 91.27, 98.75, 59.60, 88.78),
            "P4": (38.90, 50.12, 87.78, 93.52, 29.43, 36.16, 57.36, 52.12, 98.00, 98.00, 71.82, 88.28),
            "P5": (28.18, 28.43, 30.92, 29.93, 29.43, 28.43, 29.68, 28.93, 28.33, 27.43, 31.17, 32.92),
            "P6": (27.93, 28.43, 31.17, 29.43, 28.93, 29.43, 29.43, 28.93, 28.68, 27.68, 32.92, 35.16),
            "MaxP": (38.90, 50.12, 87.78, 93.52, 29.43, 36.16, 57.36, 52.12, 98.00, 98.75, 71.82, 88.78),
            "AvgP": (31.26, 34.27, 48.50, 36.03, 28.81, 30.59, 34.46, 34.62, 50.57, 51.12, 42.81, 52.45),
            "CPS": (35.93, 42.17, 53.30, 39.75, 29.25, 34.15, 44.22, 43.00, 51.51, 51.72, 50.98, 56.53),
        },
    ),
    AppendixTable(
        "A7",
        "ls",
        {
            "P7": (0.00, 12.32, 11.09, 29.09, 0.00, 18.51, 2.38, 11.36, 24.62, 21.26, 18.59, 23.55),
            "P9": (0.00, 10.68, 21.53, 31.06, 0.00, 19.62, 2.82, 11.33, 24.19, 22.46, 19.14, 22.52),
            "MaxP": (0.00, 12.32, 21.53, 31.06, 0.00, 19.62, 2.82, 11.36, 24.62, 22.46, 19.14, 23.55),
            "AvgP": (0.00, 11.50, 16.31, 30.08, 0.00, 19.07, 2.60, 11.35, 24.41, 21.86, 18.87, 23.04),
            "CPS": (0.00, 12.22, 20.41, 30.75, 0.00, 19.51, 2.81, 11.36, 24.57, 22.33, 19.09, 23.43),
        },
    ),
    AppendixTable(
        "A8",
        "sum",
        {
            "P7": (0.00, None, 22.31, 19.99, 24.66, 20.46, 26.81, 23.51, 7.98, 30.45, 21.84, 28.32),
            "P9": (0.00, None, 22.19, 20.57, 27.01, 20.73, 27.19, 24.49, 9.83, 26.63, 22.42, 29.36),
            "MaxP": (0.00, 0.00, 22.31, 20.57, 27.01, 20.73, 27.19, 24.49, 9.83, 30.45, 22.42, 29.36),
            "AvgP": (0.00, None, 22.25, 20.28, 25.84, 20.60, 27.00, 24.00, 8.91, 28.54, 22.13, 28.84),
            "CPS": (0.00, None, 22.30, 20.51, 26.69, 20.70, 27.14, 24.37, 9.74, 29.87, 22.35, 29.21),
        },
    ),
    AppendixTable(
        "A9",
        "ner",
        {
            "P8": (20.61, 53.51, 15.51, 68.82, 23.98, 55.35, 39.49, 66.90, 40.46, 38.21, 48.31, 31.43),
            "P10": (7.45, 56.30, 13.12, 80.27, 28.51, 55.35, 40.07, 67.82, 34.91, 32.72, 28.20, 33.20),
            "MaxP": (20.61, 56.30, 15.51, 80.27, 28.51, 55.35, 40.07, 67.82, 40.46, 38.21, 48.31, 33.20),
            "AvgP": (14.03, 54.91, 14.32, 74.55, 26.25, 55.35, 39.78, 67.36, 37.69, 35.47, 38.26, 32.32),
            "CPS": (19.25, 55.51, 15.32, 75.67, 27.86, 55.35, 39.95, 67.51, 39.34, 37.16, 43.45, 32.91),
        },
    ),
    AppendixTable(
        "A10",
        "re",
        {
            "P8": (0.00, 25.24, 14.52, 35.82, 6.66, 28.88, 7.14, 35.88, 30.15, 26.04, 14.25, 43.50),
            "P10": (0.00, 23.30, 15.55, 35.61, 8.40, 28.54, 11.55, 35.90, 28.83, 35.25, 19.92, 40.43),
            "MaxP": (0.00, 25.24, 15.55, 35.82, 8.40, 28.88, 11.55, 35.90, 30.15, 35.25, 19.92, 43.50),
            "AvgP": (0.00, 24.27, 15.04, 35.72, 7.53, 28.71, 9.35, 35.89, 29.49, 30.65, 17.09, 41.97),
            "CPS": (0.00, 25.00, 15.47, 35.78, 8.33, 28.83, 11.30, 35.90, 29.95, 33.63, 19.36, 42.83),
        },
    ),
)

PROMPT_SIDE: tuple[PromptSideTable, ...] = (
    PromptSideTable(
        "14",
        "te",
        {
            "p1": (55.00, 68.25, 45.25, 64.50, 75.50, 64.00, 45.25, 75.50, 62.08, 65.37),
            "p2": (55.00, 56.50, 55.00, 59.00, 78.75, 69.25, 55.00, 78.75, 62.25, 65.76),
            "p3": (70.25, 64.75, 55.00, 49.25, 73.25, 60.50, 49.25, 73.25, 62.17, 65.13),
            "p4": (65.00, 63.50, 55.00, 61.25, 74.75, 61.75, 55.00, 74.75, 63.54, 66.37),
            "p5": (55.75, 54.25, 55.00, 60.50, 57.50, 49.00, 49.00, 60.50, 55.33, 57.37),
            "p6": (55.00, 59.00, 55.75, 57.75, 60.75, 45.50, 45.50, 60.75, 55.63, 57.64),
            "MaxP": (70.25, 68.25, 55.75, 64.50, 78.75, 69.25),
            "AvgP": (59.33, 61.04, 53.50, 58.71, 70.08, 58.33),
            "CPS": (62.58, 63.33, 54.50, 60.76, 71.93, 61.69),
        },
    ),
    PromptSideTable(
        "15",
        "sa",
        {
            "p1": (33.06, 43.90, 36.93, 52.99, 41.14, 41.19, 33.06, 52.99, 41.54, 46.92),
            "p2": (37.19, 49.35, 36.71, 38.69, 59.40, 49.82, 36.71, 59.40, 45.19, 50.96),
            "p3": (53.33, 64.18, 43.24, 26.27, 65.64, 69.72, 26.27, 69.72, 53.73, 58.57),
            "p4": (54.35, 68.31, 46.74, 28.31, 70.73, 72.17, 28.31, 72.17, 56.77, 61.05),
            "p5": (53.28, 71.42, 53.26, 62.34, 65.68, 67.00, 53.26, 71.42, 62.16, 64.81),
            "p6": (59.26, 63.49, 59.06, 63.08, 68.50, 66.20, 59.06, 68.45, 63.27, 64.91),
            "MaxP": (59.26, 71.42, 59.06, 63.08, 70.73, 72.17),
            "AvgP": (48.41, 60.11, 45.99, 45.28, 61.85, 61.02),
            "CPS": (52.83, 63.34, 51.34, 51.85, 64.45, 64.12),
        },
    ),
    PromptSideTable(
        "19",
        "ner",
        {
            "p8": (20.61, 15.51, 23.98, 39.49, 40.46, 48.31, 15.51, 48.31, 31.39, 40.14),
            "p10": (7.45, 13.12, 28.51, 40.07, 34.91, 28.20, 7.45, 40.07, 25.38, 34.18),
            "MaxP": (20.61, 15.51, 28.51, 40.07, 40.46, 48.31),
            "AvgP": (14.03, 14.32, 26.25, 39.78, 37.69, 38.26),
            "CPS": (19.25, 15.32, 27.86, 39.95, 39.34, 43.45),
        },
    ),
)
# fmt: on

APPENDIX_BY_TASK: Mapping[str, AppendixTable] = {table.task_id: table for table in APPENDIX}

# Few-shot runs of the dev LLMs finished a day after the zero-shot ones, so every
# (LLM, setting) gets its own results file name.
_FINISHED_AT = {0: "2025-01-10T12:00:00Z", 5: "2025-01-11T12:00:00Z"}
_PARAMS_B = {"LLM-1": 7.0, "LLM-2": 7.2, "LLM-3": 7.6, "LLM-4": 8.0, "LLM-5": 8.5, "LLM-6": 9.0}


def paper_results(llm: str, num_fewshot: int) -> ResultsFile:
    """The results file of one dev LLM in one setting, scores on the 0–1 scale."""
    tasks = {}
    for table in APPENDIX:
        prompts = {
            prompt_id: PromptScore(score=None if cell is None else round(cell / 100, 6))
            for prompt_id, cell in table.prompt_scores(llm, num_fewshot).items()
        }
        tasks[table.task_id] = TaskResult(metric=TASKS[table.task_id].metric, prompts=prompts)
    finished_at = _FINISHED_AT[num_fewshot]
    return ResultsFile(
        model=ModelInfo(
            id=f"{PAPER_ORG}/{llm}",
            revision="main",
            precision="bfloat16",
            params_b=_PARAMS_B[llm],
            model_type="instruction-tuned",
            license="apache-2.0",
            architecture="LlamaForCausalLM",
        ),
        run=RunInfo(
            num_fewshot=num_fewshot,
            data="hub",
            limit=None,
            harness="lm-eval 0.4.13",
            backend="hf",
            batch_size="auto",
            started_at=finished_at,
            finished_at=finished_at,
            duration_s=0.0,
            hardware="NVIDIA A40 (paper dev phase)",
        ),
        tasks=tasks,
    )


def write_paper_store(results_root: Path) -> list[Path]:
    """Write one results file per (dev LLM, setting) under ``results_root``; return their paths.

    The layout is the results store's: ``<root>/paper-dev/LLM-1/results_<ts>.json``.
    """
    written = []
    for llm, num_fewshot in APPENDIX_COLUMNS:
        results = paper_results(llm, num_fewshot)
        path = results_root / results_file_path(results, _FINISHED_AT[num_fewshot])
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(results.to_json())
        written.append(path)
    return written
