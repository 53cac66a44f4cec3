"""GPU energy of a run from NVML's cumulative energy counter (``nvidia-ml-py``, module ``pynvml``).

What is measured (issue 33), the way AI Energy Score and ML.ENERGY measure it: the GPUs the run
was given (:func:`run_gpus`: ``CUDA_VISIBLE_DEVICES`` and Slurm's allocation mapped to NVML
indices) are read with ``nvmlDeviceGetTotalEnergyConsumption`` (millijoules since the driver
loaded) at the start and end of each phase; their idle power (``nvmlDeviceGetPowerUsage`` sampled
before the model loads) × the phase's wall time is subtracted, and both are recorded.  Without a
counter — a CPU run, no NVML, a GPU or MIG slice that does not report one — the block says
``not measured (no NVML counter)`` and carries no figure: never an estimate dressed as a
measurement.

No torch here: the runner passes its device; tests pass a fake NVML module.
"""

from __future__ import annotations

import logging
import os
import statistics
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any

from leaderboard.core.schema import NOT_MEASURED, PhaseEnergy, RunEnergy

log = logging.getLogger(__name__)

MJ_PER_KWH = 3.6e9  # millijoules in a kilowatt-hour
MW_PER_W = 1000.0


class NoCounter(Exception):
    """NVML cannot give this run an energy counter; the message says why (shown after the note)."""


def not_measured(reason: str) -> RunEnergy:
    return RunEnergy(measured=False, note=f"{NOT_MEASURED}: {reason}" if reason else NOT_MEASURED)


def _split(value: str | None) -> list[str]:
    return [part.strip() for part in (value or "").split(",") if part.strip()]


def _slurm_gpus(env: Mapping[str, str]) -> list[int] | None:
    """The physical GPU indices Slurm gave the step (or the job), None when not under Slurm."""
    for name in ("SLURM_STEP_GPUS", "SLURM_JOB_GPUS"):
        parts = _split(env.get(name))
        if parts and all(p.isdigit() for p in parts):
            return [int(p) for p in parts]
    return None


def run_gpus(nvml: Any, env: Mapping[str, str] | None = None) -> list[int]:
    """The NVML indices of the GPUs this process was given.

    * ``CUDA_VISIBLE_DEVICES`` of UUIDs (``GPU-…``, a unique prefix as CUDA accepts): matched
      against each device's NVML UUID; a MIG slice (``MIG-…``) has no counter of its own.
    * ``CUDA_VISIBLE_DEVICES`` of integers: under Slurm (``SLURM_STEP_GPUS``/``SLURM_JOB_GPUS``,
      physical indices) the i-th visible device is Slurm's i-th GPU (its cgroup renumbers them
      from 0); otherwise CUDA's index is NVML's (both in PCI bus order with
      ``CUDA_DEVICE_ORDER=PCI_BUS_ID``, which the worker's docs ask for on mixed nodes).
    * unset: Slurm's GPUs, else every GPU NVML sees.

    Raises :class:`NoCounter` when the visible devices cannot be mapped.
    """
    env = os.environ if env is None else env
    count = int(nvml.nvmlDeviceGetCount())
    slurm = _slurm_gpus(env)
    visible = env.get("CUDA_VISIBLE_DEVICES")
    if visible is None:
        indices = slurm if slurm is not None else list(range(count))
    else:
        entries = _split(visible)
        if not entries or entries == ["-1"] or entries == ["NoDevFiles"]:
            raise NoCounter("CUDA_VISIBLE_DEVICES hides every GPU")
        if any(e.startswith("MIG-") for e in entries):
            raise NoCounter("a MIG slice has no energy counter of its own")
        if all(e.isdigit() for e in entries):
            numbers = [int(e) for e in entries]
            if slurm is not None and all(n < len(slurm) for n in numbers) and len(slurm) <= count:
                indices = [slurm[n] for n in numbers]
            else:
                indices = numbers
        else:
            uuids = {
                _text(nvml.nvmlDeviceGetUUID(nvml.nvmlDeviceGetHandleByIndex(i))): i for i in range(count)
            }
            indices = []
            for entry in entries:
                wanted = entry if entry.startswith("GPU-") else f"GPU-{entry}"
                matches = [i for u, i in uuids.items() if u.startswith(wanted)]
                if len(matches) != 1:
                    raise NoCounter(f"CUDA_VISIBLE_DEVICES names {entry!r}, which NVML does not see once")
                indices.append(matches[0])
    bad = [i for i in indices if not 0 <= i < count]
    if bad:
        raise NoCounter(f"GPU index {bad[0]} is not among the {count} NVML sees")
    return indices


def _text(value: Any) -> str:
    return value.decode() if isinstance(value, bytes) else str(value)


@dataclass
class _Phase:
    seconds: float = 0.0
    gross_mj: float = 0.0


@dataclass
class EnergyMeter:
    """Reads the counters of ``indices`` at the run's start, each phase's start and end, and its end.

    ``begin(name)``/``end(name)`` bracket a phase (a phase may recur: its figures add up);
    ``finish()`` returns the run's :class:`RunEnergy`.  Any NVML error after the start makes the
    block "not measured" with the error, rather than a partial figure.
    """

    nvml: Any
    indices: list[int]
    clock: Callable[[], float] = time.monotonic
    idle_samples: int = 5
    idle_interval_s: float = 0.2
    sleep: Callable[[float], None] = time.sleep
    _handles: list[Any] = field(default_factory=list)
    _idle_w: float = 0.0
    _start: tuple[float, float] | None = None
    _open: dict[str, tuple[float, float]] = field(default_factory=dict)
    _phases: dict[str, _Phase] = field(default_factory=dict)
    _failure: str | None = None
    _facts: dict[str, Any] = field(default_factory=dict)

    def _counter_mj(self) -> float:
        return float(sum(self.nvml.nvmlDeviceGetTotalEnergyConsumption(h) for h in self._handles))

    def _power_w(self) -> float:
        return sum(self.nvml.nvmlDeviceGetPowerUsage(h) for h in self._handles) / MW_PER_W

    def start(self) -> None:
        """Read the devices' facts, their idle power (median of a few samples) and the counters."""
        self._handles = [self.nvml.nvmlDeviceGetHandleByIndex(i) for i in self.indices]
        self._counter_mj()  # raises NotSupported on a GPU without a counter: caught by the caller
        names = {_text(self.nvml.nvmlDeviceGetName(h)) for h in self._handles}
        limits = [self.nvml.nvmlDeviceGetEnforcedPowerLimit(h) / MW_PER_W for h in self._handles]
        self._facts = {
            "gpu_model": ", ".join(sorted(names)),
            "gpu_count": len(self._handles),
            "power_limit_w": round(sum(limits), 1),
            "driver": _text(self.nvml.nvmlSystemGetDriverVersion()),
            "nvml_indices": list(self.indices),
        }
        samples = []
        for i in range(max(self.idle_samples, 1)):
            if i:
                self.sleep(self.idle_interval_s)
            samples.append(self._power_w())
        # The median: one sample caught in a clock-boost spike does not set the baseline.
        self._idle_w = statistics.median(samples)
        self._start = (self.clock(), self._counter_mj())

    def _read(self) -> tuple[float, float] | None:
        if self._failure is not None:
            return None
        try:
            return self.clock(), self._counter_mj()
        except Exception as exc:  # an NVML error mid-run: the whole block becomes "not measured"
            self._failure = f"NVML failed during the run ({type(exc).__name__}: {exc})"
            return None

    def begin(self, name: str) -> None:
        reading = self._read()
        if reading is not None:
            self._open[name] = reading

    def end(self, name: str) -> None:
        started = self._open.pop(name, None)
        reading = self._read()
        if started is None or reading is None:
            return
        phase = self._phases.setdefault(name, _Phase())
        phase.seconds += reading[0] - started[0]
        phase.gross_mj += max(reading[1] - started[1], 0.0)

    def _energy(self, seconds: float, gross_mj: float) -> PhaseEnergy:
        gross = gross_mj / MJ_PER_KWH
        idle = self._idle_w * seconds / 3.6e6  # W·s → kWh
        return PhaseEnergy(
            seconds=round(seconds, 3),
            gross_kwh=round(gross, 9),
            idle_kwh=round(idle, 9),
            kwh=round(max(gross - idle, 0.0), 9),
        )

    def finish(self) -> RunEnergy:
        end = self._read()
        if self._failure is not None or end is None or self._start is None:
            return not_measured(self._failure or "the meter was not started")
        seconds, gross_mj = end[0] - self._start[0], max(end[1] - self._start[1], 0.0)
        total = self._energy(seconds, gross_mj)
        phases = {name: self._energy(p.seconds, p.gross_mj) for name, p in self._phases.items()}
        other_s = seconds - sum(p.seconds for p in self._phases.values())
        other_mj = gross_mj - sum(p.gross_mj for p in self._phases.values())
        if other_s > 0:
            phases["other"] = self._energy(other_s, max(other_mj, 0.0))
        return RunEnergy(
            measured=True,
            note="NVML cumulative energy counter (nvmlDeviceGetTotalEnergyConsumption); idle power × time subtracted",
            kwh=total.kwh,
            gross_kwh=total.gross_kwh,
            idle_kwh=total.idle_kwh,
            idle_w=round(self._idle_w, 3),
            duration_s=total.seconds,
            phases=phases,
            **self._facts,
        )


class NullMeter:
    """A run without a counter: phases are ignored and ``finish`` says why nothing was measured."""

    def __init__(self, reason: str) -> None:
        self.reason = reason

    def begin(self, name: str) -> None:
        pass

    def end(self, name: str) -> None:
        pass

    def finish(self) -> RunEnergy:
        return not_measured(self.reason)


def _import_nvml() -> Any:
    import pynvml

    return pynvml


def meter_for(
    device: str,
    *,
    nvml_loader: Callable[[], Any] = _import_nvml,
    env: Mapping[str, str] | None = None,
    **meter_options: Any,
) -> EnergyMeter | NullMeter:
    """A started meter for a run on ``device`` (``cpu``, ``cuda``, ``cuda:N``), or a :class:`NullMeter`.

    ``cuda:N`` measures the N-th visible GPU; ``cuda`` every GPU the process was given
    (``CUDA_VISIBLE_DEVICES`` or Slurm's allocation) — or, when nothing restricts what the process
    sees (every GPU of the machine, perhaps other users'), only the first, the one ``cuda`` runs on.
    """
    if not device.startswith("cuda"):
        return NullMeter("the run used the CPU")
    try:
        nvml = nvml_loader()
    except ImportError:
        return NullMeter("nvidia-ml-py is not installed")
    try:
        nvml.nvmlInit()
    except Exception as exc:  # NVMLError_LibraryNotFound, DriverNotLoaded…: no counter to read
        return NullMeter(f"NVML could not start ({type(exc).__name__}: {exc})")
    env = os.environ if env is None else env
    try:
        indices = run_gpus(nvml, env)
        if "CUDA_VISIBLE_DEVICES" not in env and _slurm_gpus(env) is None:
            indices = indices[:1]
        _, _, ordinal = device.partition(":")
        if ordinal:
            if not ordinal.isdigit() or int(ordinal) >= len(indices):
                raise NoCounter(f"{device} is not among the {len(indices)} visible GPU(s)")
            indices = [indices[int(ordinal)]]
        if not indices:
            raise NoCounter("no GPU is visible to the run")
        meter = EnergyMeter(nvml, indices, **meter_options)
        meter.start()
    except NoCounter as exc:
        return NullMeter(str(exc))
    except Exception as exc:  # NVMLError_NotSupported on the counter (pre-Volta GPUs), permissions…
        return NullMeter(f"{type(exc).__name__}: {exc}")
    log.info(
        "energy: NVML counter of GPU(s) %s (%s), idle %.1f W",
        indices,
        meter._facts.get("gpu_model"),
        meter._idle_w,
    )
    return meter
