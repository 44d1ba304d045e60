"""How who-amplifies-whom's scores read on a page (docs/wtf.md). Money's scores and personalized PageRanks are
shares of a random walk's mass: small numbers that differ past the 4th decimal, so printed with a fixed number of
decimals a list's lower half reads "0.0000" for every account. Here they are shown with 3 significant digits —
relative to the list's first account ("43.1" = 43.1 % of #1's score) or in scientific notation — and every value
carries its exact stored float in a ``<data value>`` and a tooltip."""

from __future__ import annotations

import math

from django import template
from django.utils.html import format_html
from django.utils.safestring import SafeString

register = template.Library()

_SUPERSCRIPT = str.maketrans("-0123456789", "⁻⁰¹²³⁴⁵⁶⁷⁸⁹")


@register.filter
def sig3(value) -> str:
    """``value`` with 3 significant digits: plain between 0.001 and 1,000 ("100", "43.1", "0.512", "0.00123"),
    else scientific ("1.23 × 10⁻⁵"); "0" for zero and "—" for none."""
    if value is None or value == "":
        return "—"
    v = float(value)
    if v == 0:
        return "0"
    if not math.isfinite(v):
        return str(v)
    text = f"{v:#.3g}"  # '#' keeps the trailing zeros of 3 digits ("50.0") and the exponent form below 1e-4
    if "e" not in text and abs(v) < 1e-3:
        text = f"{v:#.2e}"
    if "e" in text:
        mantissa, exponent = text.split("e")
        return f"{mantissa.rstrip('.')} × 10{str(int(exponent)).translate(_SUPERSCRIPT)}"
    return text.rstrip(".")


@register.simple_tag
def exact(value, what: str = "") -> SafeString:
    """A value in scientific notation with 3 significant digits, the exact float in its tooltip and ``data``."""
    if value is None:
        return format_html("—")
    return format_html('<data value="{}" title="{}{} exactly">{}</data>', repr(float(value)), what, value, sig3(value))


@register.simple_tag
def relative_score(score, relative, what: str = "score") -> SafeString:
    """A list's score as a percentage of its first account's (``relative`` = score / first, from the selector),
    3 significant digits; the exact score in the tooltip and ``data``. Without a first (``relative`` None) the
    score itself, in scientific notation."""
    if relative is None or relative == "":  # "": a row without it (the template's missing variable)
        return exact(score, f"{what}: ")
    pct = sig3(100.0 * float(relative))
    return format_html(
        '<data value="{}" title="{}: {} exactly; {} % of the first account\'s">{}</data>',
        repr(float(score)),
        what,
        score,
        pct,
        pct,
    )


#: PageRank's damping: the engine's default, which the app's runs never change (``monitor.algorithms.wtf``)
PPR_DAMPING = 0.85


@register.simple_tag
def ppr_error_bound(iterations) -> str:
    """How far, in sum (L1), a personalized PageRank stopped after ``iterations`` updates can be from its limit:
    each update is ``d`` times a column-stochastic map plus the restart, so the distance shrinks at least ``d``
    times per update from at most 2 (the start ``e_s`` and the limit are both probability vectors)."""
    return sig3(2.0 * PPR_DAMPING ** int(iterations))
