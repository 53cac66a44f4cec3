"""Where users see what a run cost (issue 33): the model page's cost rows, the contents table's
columns and the EEE record — energy in kWh or "not measured", Wh per 1,000 scored items, tokens."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from eval_queue.storage import LocalStorage
from eval_queue.vocabulary import RunRef
from leaderboard.core.contents import rows_of
from leaderboard.core.schema import NOT_MEASURED, PhaseEnergy, RunCost, RunEnergy, TaskTokens
from leaderboard.eee.export import run_records
from leaderboard.tracks.evalita.app import views
from leaderboard.tracks.evalita.app.records import load_results
from tests.contents.store import evalita_file

MEASURED = RunEnergy(
    measured=True,
    note="NVML cumulative energy counter",
    kwh=0.5,
    gross_kwh=0.7,
    idle_kwh=0.2,
    idle_w=70.0,
    duration_s=3600.0,
    phases={"generate_until": PhaseEnergy(seconds=3000.0, gross_kwh=0.6, idle_kwh=0.15, kwh=0.45)},
    gpu_model="NVIDIA H100 80GB HBM3",
    gpu_count=1,
    power_limit_w=700.0,
    driver="580.65.06",
)
TOKENS = {
    "t1": TaskTokens(input=900, output=0, requests=30),
    "t2": TaskTokens(input=100, output=40, reasoning=10, requests=5),
}


def _cost(energy: RunEnergy | None) -> RunCost:
    return RunCost(
        gpus=1,
        gpu_hours=1.0,
        input_tokens=1000,
        output_tokens=40,
        reasoning_tokens=10,
        task_tokens=TOKENS,
        scored_items=2000,
        energy=energy,
    )


def _shown(tmp_path: Path, cost: RunCost) -> dict[str, str]:
    store = LocalStorage(tmp_path / "results")
    path, results = evalita_file("org/a")
    results = results.model_copy(update={"run": results.run.model_copy(update={"cost": cost})})
    store.write(path, results.to_json())
    board = views.Board(load_results(store))
    table = views.run_metadata_view(board, RunRef("org/a", "a" * 40, "bfloat16"))
    return dict(zip(table["Field"], table["0-shot"], strict=True))


def test_a_measured_run_shows_its_kwh_the_idle_it_subtracted_wh_per_thousand_items_and_tokens(
    tmp_path: Path,
) -> None:
    shown = _shown(tmp_path, _cost(MEASURED))
    assert shown["Energy, GPUs (NVML counter, idle subtracted)"] == (
        "0.5000 kWh (idle 0.2000 kWh subtracted) on 1 × NVIDIA H100 80GB HBM3"
    )
    assert shown["Energy per 1,000 scored items (Wh)"] == "250.000 (2,000 items)"
    assert shown["Tokens in / out / reasoning (the run's tokenizer)"] == "1,000 / 40 / 10"


@pytest.mark.parametrize(
    ("energy", "said", "per_items"),
    [
        (
            RunEnergy(measured=False, note=f"{NOT_MEASURED}: the run used the CPU"),
            f"{NOT_MEASURED}: the run used the CPU",
            "not measured",
        ),
        (None, "not recorded (a run made before energy was measured)", "—"),
    ],
)
def test_a_run_without_a_counter_says_not_measured_and_shows_no_figure(
    tmp_path: Path, energy: RunEnergy | None, said: str, per_items: str
) -> None:
    shown = _shown(tmp_path, _cost(energy))
    assert shown["Energy, GPUs (NVML counter, idle subtracted)"] == said
    assert shown["Energy per 1,000 scored items (Wh)"] == per_items


def test_the_contents_row_and_the_eee_record_carry_the_same_figures(tmp_path: Path) -> None:
    path, results = evalita_file("org/a")
    results = results.model_copy(update={"run": results.run.model_copy(update={"cost": _cost(MEASURED)})})
    (row,) = rows_of(results, path, "v1")
    assert (row["input_tokens"], row["output_tokens"], row["reasoning_tokens"], row["scored_items"]) == (
        1000,
        40,
        10,
        2000,
    )
    assert row["energy_kwh"] == 0.5 and row["energy_idle_kwh"] == 0.2 and row["wh_per_1000_items"] == 250.0
    assert row["gpu_model"] == "NVIDIA H100 80GB HBM3" and row["energy_note"] == MEASURED.note
    facts = run_records(results, path, None).aggregate["source_metadata"]["additional_details"]
    assert json.loads(facts["energy_kwh"]) == 0.5 and json.loads(facts["wh_per_1000_items"]) == 250.0
    assert json.loads(facts["task_tokens"])["t2"] == {
        "input": 100,
        "output": 40,
        "reasoning": 10,
        "requests": 5,
    }
    cpu = results.model_copy(
        update={
            "run": results.run.model_copy(
                update={"cost": _cost(RunEnergy(measured=False, note=NOT_MEASURED))}
            )
        }
    )
    (cpu_row,) = rows_of(cpu, path, "v1")
    assert cpu_row["energy_kwh"] is None and cpu_row["energy_note"] == NOT_MEASURED


def test_the_energy_plot_keeps_the_runs_measured_on_the_most_common_gpu_model_only(tmp_path: Path) -> None:
    from leaderboard.tracks.evalita.app import plots
    from leaderboard.tracks.evalita.app.views.energy import WH_PER_1000, energy_points
    from leaderboard.tracks.evalita.vocabulary import Setting

    store = LocalStorage(tmp_path / "results")
    a100 = MEASURED.model_copy(update={"gpu_model": "NVIDIA A100-SXM4-80GB"})
    cpu = RunEnergy(measured=False, note=NOT_MEASURED)
    for i, energy in enumerate((MEASURED, MEASURED.model_copy(update={"kwh": 1.0}), a100, cpu)):
        path, results = evalita_file(f"org/m{i}", 0.3 + i / 10)
        results = results.model_copy(update={"run": results.run.model_copy(update={"cost": _cost(energy)})})
        store.write(path, results.to_json())
    board = views.Board(load_results(store))
    ranking = views.ranking_view(board, Setting.of_fewshot(0), views.RankingFilters(show_noncomparable=True))
    measured = energy_points(board, ranking.table, 0)
    assert measured.gpu_model == "NVIDIA H100 80GB HBM3" and measured.left_out == 2
    assert sorted(measured.points[views.MODEL]) == ["org/m0", "org/m1"]
    assert sorted(measured.points[WH_PER_1000]) == [250.0, 500.0]
    figure = plots.cps_vs_energy(measured.points, measured.gpu_model, WH_PER_1000)
    assert figure is not None and "H100" in figure.layout.title.text and len(figure.data[0].x) == 2
    assert plots.cps_vs_energy(measured.points.iloc[0:0], "x", WH_PER_1000) is None
