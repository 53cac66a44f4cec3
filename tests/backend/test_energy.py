"""GPU energy from NVML's counter (issue 33), with a fake NVML: counter readings → kWh, the idle
power subtracted, CUDA_VISIBLE_DEVICES and Slurm mapped to NVML indices; "not measured" on CPU."""

from __future__ import annotations

from dataclasses import dataclass, field

import pytest

from backend.energy import EnergyMeter, NoCounter, meter_for, run_gpus
from leaderboard.core.schema import NOT_MEASURED


class NotSupported(Exception):
    """Stands for pynvml.NVMLError_NotSupported."""


@dataclass
class FakeGpu:
    uuid: str
    name: str = "NVIDIA H100 80GB HBM3"
    power_w: float = 70.0
    limit_w: float = 700.0
    counter_mj: float = 1.0e9  # since the driver loaded: never starts at 0
    has_counter: bool = True


@dataclass
class FakeNvml:
    """The pynvml functions the meter calls, over GPUs whose counters a test drives with ``run``."""

    gpus: list[FakeGpu]
    now: float = 0.0
    init_error: Exception | None = None
    calls: list[str] = field(default_factory=list)

    def nvmlInit(self) -> None:
        if self.init_error is not None:
            raise self.init_error

    def nvmlDeviceGetCount(self) -> int:
        return len(self.gpus)

    def nvmlDeviceGetHandleByIndex(self, i: int) -> FakeGpu:
        return self.gpus[i]

    def nvmlDeviceGetUUID(self, gpu: FakeGpu) -> str:
        return gpu.uuid

    def nvmlDeviceGetName(self, gpu: FakeGpu) -> bytes:
        return gpu.name.encode()  # older pynvml answers bytes

    def nvmlDeviceGetEnforcedPowerLimit(self, gpu: FakeGpu) -> int:
        return int(gpu.limit_w * 1000)

    def nvmlSystemGetDriverVersion(self) -> str:
        return "580.65.06"

    def nvmlDeviceGetPowerUsage(self, gpu: FakeGpu) -> int:
        return int(gpu.power_w * 1000)

    def nvmlDeviceGetTotalEnergyConsumption(self, gpu: FakeGpu) -> int:
        if not gpu.has_counter:
            raise NotSupported("Not Supported")
        return int(gpu.counter_mj)

    def run(self, seconds: float, watts: dict[int, float]) -> None:
        """Time passes; GPU i draws watts[i] (the others their idle power)."""
        for i, gpu in enumerate(self.gpus):
            gpu.counter_mj += watts.get(i, gpu.power_w) * seconds * 1000
        self.now += seconds


def _nvml(n: int = 4) -> FakeNvml:
    return FakeNvml([FakeGpu(uuid=f"GPU-{i}aaa{i:04d}-0000-0000-0000-00000000000{i}") for i in range(n)])


def _meter(nvml: FakeNvml, indices: list[int]) -> EnergyMeter:
    return EnergyMeter(nvml, indices, clock=lambda: nvml.now, sleep=lambda s: None)


def test_counter_readings_become_kwh_with_the_idle_power_times_the_duration_subtracted() -> None:
    nvml = _nvml(2)
    meter = _meter(nvml, [0, 1])
    meter.start()  # idle: 70 W each, 140 W together
    meter.begin("model_load")
    nvml.run(60, {0: 170.0, 1: 70.0})  # loading draws 100 W more on GPU 0 for a minute
    meter.end("model_load")
    nvml.run(30, {})  # between phases: idle
    meter.begin("generate_until")
    nvml.run(3600, {0: 570.0, 1: 370.0})  # an hour of generation: 800 W above idle together
    meter.end("generate_until")
    energy = meter.finish()
    assert energy.measured
    gross = (60 * 240 + 30 * 140 + 3600 * 940) / 3.6e6
    idle = 140 * 3690 / 3.6e6
    assert energy.gross_kwh == pytest.approx(gross)
    assert energy.idle_kwh == pytest.approx(idle)
    assert energy.kwh == pytest.approx(gross - idle) == pytest.approx(0.8 + 100 * 60 / 3.6e6)
    assert energy.phases["generate_until"].kwh == pytest.approx(0.8)
    assert energy.phases["model_load"].kwh == pytest.approx(100 * 60 / 3.6e6)
    assert energy.phases["other"].seconds == pytest.approx(30) and energy.phases[
        "other"
    ].kwh == pytest.approx(0)
    assert (energy.gpu_model, energy.gpu_count, energy.power_limit_w, energy.driver) == (
        "NVIDIA H100 80GB HBM3",
        2,
        1400.0,
        "580.65.06",
    )
    assert energy.idle_w == 140.0 and energy.duration_s == pytest.approx(3690)
    assert "kWh (idle" in energy.summary()


def test_the_idle_baseline_is_the_median_of_its_samples_so_one_spike_does_not_set_it() -> None:
    nvml = _nvml(1)
    readings = iter([70.0, 400.0, 71.0, 69.0, 70.0])

    def power(gpu: FakeGpu) -> int:
        return int(next(readings) * 1000)

    nvml.nvmlDeviceGetPowerUsage = power  # type: ignore[method-assign]
    meter = _meter(nvml, [0])
    meter.start()
    nvml.run(3600, {0: 70.0})
    assert meter.finish().idle_kwh == pytest.approx(0.070)


def test_a_counter_that_stops_answering_mid_run_makes_the_block_not_measured() -> None:
    nvml = _nvml(1)
    meter = _meter(nvml, [0])
    meter.start()
    nvml.gpus[0].has_counter = False
    meter.begin("loglikelihood")
    energy = meter.finish()
    assert not energy.measured and energy.kwh is None
    assert energy.note.startswith(NOT_MEASURED) and "NotSupported" in energy.note


@pytest.mark.parametrize(
    ("env", "expected"),
    [
        ({}, [0, 1, 2, 3]),
        ({"CUDA_VISIBLE_DEVICES": "2"}, [2]),
        ({"CUDA_VISIBLE_DEVICES": "1,3"}, [1, 3]),
        # Slurm's cgroup renumbers the allocated GPUs from 0: CUDA's 0 is Slurm's first GPU.
        ({"CUDA_VISIBLE_DEVICES": "0", "SLURM_STEP_GPUS": "3"}, [3]),
        ({"CUDA_VISIBLE_DEVICES": "0,1", "SLURM_JOB_GPUS": "1,2"}, [1, 2]),
        ({"SLURM_JOB_GPUS": "2"}, [2]),
        ({"CUDA_VISIBLE_DEVICES": "GPU-2aaa0002-0000-0000-0000-000000000002"}, [2]),
        ({"CUDA_VISIBLE_DEVICES": "GPU-3aaa"}, [3]),  # a unique prefix, as CUDA accepts
    ],
)
def test_visible_devices_and_slurm_allocations_map_to_nvml_indices(
    env: dict[str, str], expected: list[int]
) -> None:
    assert run_gpus(_nvml(4), env) == expected


@pytest.mark.parametrize(
    ("env", "reason"),
    [
        ({"CUDA_VISIBLE_DEVICES": ""}, "hides every GPU"),
        ({"CUDA_VISIBLE_DEVICES": "MIG-abc"}, "MIG"),
        ({"CUDA_VISIBLE_DEVICES": "GPU-9"}, "does not see"),
        ({"CUDA_VISIBLE_DEVICES": "7"}, "not among the 4"),
    ],
)
def test_devices_that_cannot_be_mapped_are_refused_with_the_reason(env: dict[str, str], reason: str) -> None:
    with pytest.raises(NoCounter, match=reason):
        run_gpus(_nvml(4), env)


def test_a_cuda_run_measures_the_visible_device_it_names() -> None:
    nvml = _nvml(4)
    meter = meter_for(
        "cuda:1", nvml_loader=lambda: nvml, env={"CUDA_VISIBLE_DEVICES": "2,3"}, sleep=lambda s: None
    )
    assert isinstance(meter, EnergyMeter) and meter.indices == [3]


def test_an_unrestricted_process_measures_only_the_gpu_cuda_runs_on_not_the_whole_machine() -> None:
    nvml = _nvml(4)
    meter = meter_for("cuda", nvml_loader=lambda: nvml, env={}, sleep=lambda s: None)
    assert isinstance(meter, EnergyMeter) and meter.indices == [0]
    given = meter_for("cuda", nvml_loader=lambda: nvml, env={"SLURM_JOB_GPUS": "1,2"}, sleep=lambda s: None)
    assert isinstance(given, EnergyMeter) and given.indices == [1, 2]


def test_a_cpu_run_says_not_measured_and_carries_no_figure() -> None:
    energy = meter_for("cpu").finish()
    assert not energy.measured
    assert energy.note.startswith("not measured (no NVML counter)")
    assert (energy.kwh, energy.gross_kwh, energy.idle_kwh, energy.gpu_model) == (None, None, None, None)
    assert energy.summary() == energy.note


@pytest.mark.parametrize(
    ("nvml", "reason"),
    [
        (FakeNvml([FakeGpu("GPU-0", has_counter=False)]), "NotSupported"),
        (FakeNvml([FakeGpu("GPU-0")], init_error=RuntimeError("Driver Not Loaded")), "Driver Not Loaded"),
    ],
)
def test_a_gpu_without_a_counter_or_driver_is_not_measured_either(nvml: FakeNvml, reason: str) -> None:
    energy = meter_for("cuda", nvml_loader=lambda: nvml, env={}, sleep=lambda s: None).finish()
    assert not energy.measured and energy.note.startswith(NOT_MEASURED) and reason in energy.note


def test_without_nvidia_ml_py_it_says_so() -> None:
    def missing() -> None:
        raise ImportError("No module named 'pynvml'")

    energy = meter_for("cuda", nvml_loader=missing, env={}).finish()
    assert energy.note == f"{NOT_MEASURED}: nvidia-ml-py is not installed"
