"""How numbers and accounts are written for people, the same on every page, in alert texts and in CSV exports.

* :func:`readable` rounds a score to what is worth reading (``73,165``, ``734``, ``53.8``, ``4.21``, ``0.867``,
  ``0.0012``); the dashboard's ``influence`` filter and the JavaScript of the charts write the same.
* :func:`csv_number` keeps six significant digits and never uses an exponent (a spreadsheet reads it as it
  is); the JSON exports and the API keep every digit.
* :func:`account_display`: ``@screen_name`` when the data carried one, else the bare Twitter id: ``@7900962``
  would read as a screen name that nobody has.
"""

from __future__ import annotations

import math

CSV_SIGNIFICANT = 6


def _grouped(n: int) -> str:
    return f"{n:,}"


def readable(value) -> str:
    """A score rounded to what is worth reading; ``–`` for none."""
    if value is None or value == "":
        return "–"
    try:
        x = float(value)
    except (TypeError, ValueError):
        return str(value)
    if math.isnan(x):
        return "–"
    if x == 0:
        return "0"
    a = abs(x)
    if a >= 100:
        return _grouped(round(x))
    if a >= 10:
        return f"{x:.1f}"
    if a >= 1:
        return f"{x:.2f}"
    if a >= 0.01:
        return f"{x:.3f}"
    return f"{x:.2g}"


def percentage(fraction, digits: int = 0) -> str:
    """A fraction 0..1 as a percentage with ``digits`` decimals, one rule on every page: a share that is not
    whole is never written as a whole one. ``0.9993`` is ``99.9 %`` (not ``100 %``, beside a table's 99.9 %),
    ``0.0004`` is ``0.04 %`` (not ``0 %``): more decimals, up to three more, then ``>99.99 %`` / ``<0.01 %``-style
    bounds. ``–`` for none."""
    if fraction is None or fraction == "":
        return "–"
    try:
        x = 100.0 * float(fraction)
    except (TypeError, ValueError):
        return "–"
    if math.isnan(x):
        return "–"
    d = max(0, int(digits))
    for extra in range(4):
        text = f"{x:.{d + extra}f}"
        whole = float(text)
        if (whole == 100.0 and x < 100.0) or (whole == 0.0 and x > 0.0):
            continue
        return f"{text} %"
    bound = 10.0 ** -(d + 3)
    return f">{100.0 - bound:.{d + 3}f} %" if x < 100.0 and x > 50.0 else f"<{bound:.{d + 3}f} %"


def csv_number(x: float) -> str:
    """``x`` to :data:`CSV_SIGNIFICANT` significant digits, without an exponent or trailing zeros."""
    x = float(x)
    if x == 0 or not math.isfinite(x):
        return "0" if x == 0 else repr(x)
    decimals = CSV_SIGNIFICANT - 1 - math.floor(math.log10(abs(x)))
    if decimals <= 0:
        return str(round(x))
    text = f"{x:.{decimals}f}"
    return text.rstrip("0").rstrip(".") if "." in text else text


def account_display(twitter_id, screen_name: str | None) -> str:
    """``@screen_name``, else the Twitter id as it is (no "@": it is not a name)."""
    return f"@{screen_name}" if screen_name else str(twitter_id)
