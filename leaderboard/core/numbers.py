"""How every track shows a 0–1 score: one display rounding for all tables and exports."""

from __future__ import annotations

from decimal import ROUND_HALF_UP, Decimal

import numpy as np
from numpy.typing import NDArray

#: A 0–1 score, or ``None`` when it does not exist (never 0).
Score = float | None


def percent(value: Score) -> Score:
    """A 0–1 score as the paper prints it: 0–100 rounded to two decimals, halves up.

    Averages of two-decimal scores often end in an exact 5 (58.895) that binary floats
    store just below (58.894999…); rounding to 9 places first removes that noise, so
    the half goes up as in the paper rather than down as ``round()`` would send it.
    """
    if value is None:
        return None
    exact = Decimal(repr(round(value * 100, 9)))
    return float(exact.quantize(Decimal("0.01"), rounding=ROUND_HALF_UP))


#: How far from a half a value's hundredths must be for the float test to decide its rounding
#: (:func:`percents`): ``round(·, 9)`` moves them by at most 5·10⁻⁸, float products by far less.
_HALF_MARGIN = 1e-6


def percents(values: NDArray[np.floating]) -> list[Score]:
    """:func:`percent` of each value (``None`` for NaN and infinities), without a ``Decimal`` per
    value: the same numbers, bit for bit (``tests/foundation/test_percents.py`` checks it on random
    and edge values).

    A value whose hundredths (``100 · 100 · v``) are not within :data:`_HALF_MARGIN` of a half
    rounds to the nearest integer ``k`` of hundredths whatever the 9-place rounding did, and
    ``k / 100`` (one correctly rounded division) is the float nearest to ``k`` hundredths, which
    is what ``float(Decimal(...))`` gives.  The few near a half (the paper's exact fives among
    them) take :func:`percent` itself.
    """
    v = np.asarray(values, dtype=np.float64)
    finite = np.isfinite(v)
    scaled = v * 100  # what percent computes first, the same float product
    with np.errstate(invalid="ignore", over="ignore"):
        hundredths = scaled * 100
        k = np.floor(hundredths + 0.5)
        near_half = np.abs(hundredths - np.floor(hundredths) - 0.5) < _HALF_MARGIN
    out = k / 100
    # Decimal keeps the sign of a value rounding to zero ("-0.00"): so must the float.
    out = np.where(k == 0, np.copysign(0.0, scaled), out)
    slow = finite & (near_half | (np.abs(scaled) > 1e6))
    result: list[Score] = out.tolist()
    for i in np.flatnonzero(slow).tolist():
        result[i] = percent(float(v[i]))
    for i in np.flatnonzero(~finite).tolist():
        result[i] = None
    return result
