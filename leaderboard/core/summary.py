"""A run's intervals as the results file keeps them: the ``uncertainty`` block (docs/DESIGN.md).

The worker computes every interval once, when it publishes a run, from the run's per-item file
(``items.parquet`` in its details folder, :mod:`leaderboard.core.items`) with the project's
bootstrap (:mod:`leaderboard.core.uncertainty`), and writes them into the results file::

    "uncertainty": {
      "method": "paired item bootstrap (cps-reflected-tie-aware/2)", "items_file": "items.parquet",
      "seed": 20250621, "n_resamples": 1000, "level": 0.95,
      "intervals": {"tasks/wic/prompts/p1": [0.52, 0.61], "tasks/wic/cps": [0.50, 0.58],
                    "mean_cps": [0.41, 0.45]},
      "draws": {"mean_cps": {"key": "<32 hex>", "float32": "<base64>"},
                "mean_cps/tie_aware": {"key": "<32 hex>", "float32": "<base64>"}}
    }

* ``method``: how the intervals were computed.  A track whose figure needs more than the
  percentile interval names its version in brackets (the default track's CPS:
  its ``cps_intervals.METHOD_VERSION``); a block without one (written
  before 2026-11-28) holds percentile intervals and raw draws of the mean CPS, which the app
  no longer pairs with the new ones (their keys differ) — ``python -m backend rescore`` rewrites it.

* ``intervals``: figure → ``[low, high]``, on the figure's own scale (0–1 for scores).  A
  figure is named by its path in the results body (``tasks/<task>/prompts/<prompt>``,
  ``settings/<setting>/sets/<set>/<metric>``) or, for a figure derived at read time, where it
  would sit (``tasks/<task>/cps``, ``mean_cps``).  A figure without an entry has no interval
  (shown as "—"), never a made-up one.
* ``draws``: the resampled values of the figures the app compares runs on (the default
  track's mean CPS, for tiers; reflected, with its tie-aware twin), as base64 of little-endian float32 (4 bytes × ``n_resamples``: about 5 KB);
  ``key`` identifies the resamples (equal keys: the same resamples of the same items, so two
  runs' draws are paired and their difference is the resampled difference).

So the app reads every interval with the results file it reads anyway (no second file per run,
no bootstrap at start) and recomputes only the tiers, from the kept draws.  The per-item file
stays the source of truth: the block is derived from it and the bootstrap settings.
"""

from __future__ import annotations

import base64
import math
from collections.abc import Mapping
from typing import TYPE_CHECKING

from pydantic import BaseModel, ConfigDict, Field, field_validator

if TYPE_CHECKING:  # numpy and the engine are imported when used: the schema stays light to import
    import numpy as np
    from numpy.typing import NDArray

    from leaderboard.core.uncertainty import BootstrapConfig, Interval

#: The per-item file's name in a run's details folder (``leaderboard.core.items`` writes it).
ITEMS_FILE_NAME = "items.parquet"
METHOD = "paired item bootstrap"
#: The most resamples a kept draws vector may hold (a results file stays small).
MAX_KEPT_RESAMPLES = 100_000


def encode_draws(values: NDArray[np.floating]) -> str:
    """Resampled values as base64 of little-endian float32 (what :class:`KeptDraws` holds)."""
    import numpy as np

    return base64.b64encode(np.asarray(values, dtype="<f4").tobytes()).decode("ascii")


def decode_draws(text: str) -> NDArray[np.float64]:
    """The values :func:`encode_draws` wrote, as float64; ``ValueError`` if they are not whole floats."""
    import numpy as np

    return _float32_draws(text).astype(np.float64)


def _float32_draws(text: str) -> NDArray[np.float32]:
    """The float32 values of :func:`encode_draws`'s text, checked (``ValueError`` if not whole, finite floats)."""
    import numpy as np

    raw = base64.b64decode(text, validate=True)
    if len(raw) % 4:
        raise ValueError(f"{len(raw)} bytes are not whole float32 values")
    values = np.frombuffer(raw, dtype="<f4")
    if not np.isfinite(values).all():
        raise ValueError("a resampled value is not a finite number")
    return values


class KeptDraws(BaseModel):
    """One figure's resampled values, and the key of the resamples they come from."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    key: str = Field(min_length=1, max_length=128)
    float32: str = Field(max_length=4 * MAX_KEPT_RESAMPLES * 4 // 3 + 4)

    @field_validator("float32")
    @classmethod
    def _decodes(cls, value: str) -> str:
        _float32_draws(value)  # refused here, not when the tiers are computed (no float64 copy)
        return value

    def values(self) -> NDArray[np.float64]:
        return decode_draws(self.float32)

    def float32_values(self) -> NDArray[np.float32]:
        """The values as stored (read-only float32): half the memory of :meth:`values`, the same
        numbers (every float32 is exactly a float64), for a matrix of many runs' draws."""
        return _float32_draws(self.float32)


class UncertaintySummary(BaseModel):
    """The ``uncertainty`` block of a results file (module docstring)."""

    model_config = ConfigDict(extra="allow", frozen=True)

    method: str = METHOD
    #: The per-item file the intervals come from, in the run's details folder.
    items_file: str = ITEMS_FILE_NAME
    seed: int
    n_resamples: int = Field(ge=2, le=MAX_KEPT_RESAMPLES)
    level: float = Field(gt=0.0, lt=1.0)
    intervals: dict[str, tuple[float, float]] = Field(default_factory=dict)
    draws: dict[str, KeptDraws] = Field(default_factory=dict)

    @field_validator("intervals")
    @classmethod
    def _ordered(cls, value: dict[str, tuple[float, float]]) -> dict[str, tuple[float, float]]:
        for figure, (low, high) in value.items():
            if not (math.isfinite(low) and math.isfinite(high)) or low > high:
                raise ValueError(f"interval of {figure!r} is not [low ≤ high]: [{low}, {high}]")
        return value

    @classmethod
    def build(
        cls,
        config: BootstrapConfig,
        intervals: Mapping[str, Interval],
        draws: Mapping[str, tuple[str, NDArray[np.floating]]] | None = None,
        method: str = METHOD,
    ) -> UncertaintySummary:
        """From computed intervals and ``{figure: (key, resampled values)}``."""
        return cls(
            method=method,
            seed=config.seed,
            n_resamples=config.n_resamples,
            level=config.level,
            intervals={figure: (i.low, i.high) for figure, i in intervals.items()},
            draws={
                figure: KeptDraws(key=key, float32=encode_draws(values))
                for figure, (key, values) in (draws or {}).items()
            },
        )

    def interval(self, figure: str) -> Interval | None:
        """``figure``'s interval, ``None`` when the run has none for it."""
        from leaderboard.core.uncertainty import Interval

        pair = self.intervals.get(figure)
        return None if pair is None else Interval(pair[0], pair[1], self.level)


def figure_path(*parts: str) -> str:
    """The one way a figure's name is built: its path in the results body (``tasks/wic/cps``)."""
    return "/".join(parts)
