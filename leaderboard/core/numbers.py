"""How every track shows a 0–1 score: one display rounding for all tables and exports."""

from __future__ import annotations

from decimal import ROUND_HALF_UP, Decimal

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
