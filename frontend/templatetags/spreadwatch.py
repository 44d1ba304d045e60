"""Small presentation helpers for the dashboard templates: ``{% load spreadwatch %}``.

Numbers: :func:`influence` rounds a score to what is worth reading. Dates: :func:`utc` prints a ``<time>``
in UTC. Status: :func:`badge`.
"""

from __future__ import annotations

import datetime as dt

from django import template
from django.contrib.humanize.templatetags.humanize import intcomma
from django.utils import timezone
from django.utils.html import format_html
from django.utils.safestring import mark_safe

from monitor.numbers import account_display, percentage, readable

register = template.Library()


# --- numbers ---------------------------------------------------------------------------------------------------


@register.filter
def influence(value) -> str:
    """An influence score or aggregate, rounded to what is worth reading: ``73,165``, ``734``, ``53.8``, ``4.21``,
    ``0.867``, ``0.0012`` (``monitor.numbers.readable``, which the alert texts use too); the exact value is one
    hover away where the template puts it in a ``title``."""
    return readable(value)


@register.filter
def followers(value, unit: str = "followers") -> str:
    """``n_v|followers:tweet.unit``: the follower count the measure used, or ``unknown`` where the data carried
    none (the cascade's unit is then "retweeters": every n_v is 1, which is not anyone's follower count)."""
    if unit == "retweeters" or value is None or value == "":
        return "unknown"
    try:
        return intcomma(round(float(value)))
    except (TypeError, ValueError):
        return "unknown"


@register.filter
def num(value) -> str:
    """A count with thousands separators; ``–`` when there is none (a missing key of a counts dict)."""
    if value is None or value == "":
        return "–"
    return intcomma(value)


@register.filter
def seconds(value) -> str:
    """A duration in seconds, readable: ``12 ms``, ``3.4 s``, ``2 min 5 s``."""
    try:
        s = float(value)
    except (TypeError, ValueError):
        return "–"
    if s < 1:
        return f"{s * 1000:.0f} ms"
    if s < 60:
        return f"{s:.1f} s"
    m, r = divmod(round(s), 60)
    if m < 60:
        return f"{m} min {r} s"
    h, m = divmod(m, 60)
    return f"{h} h {m} min"


@register.filter
def elapsed(start, end=None) -> str:
    """``start|elapsed:end``: the time between two datetimes (until now if ``end`` is empty)."""
    if not start:
        return "–"
    end = end or timezone.now()
    return seconds((end - start).total_seconds())


@register.filter
def percent(value, digits: int = 0) -> str:
    """A fraction 0..1 as a percentage (``monitor.numbers.percentage``: a share that is not whole is never
    rounded to ``100 %`` or ``0 %``, so a summary agrees with the table beside it)."""
    return percentage(value, digits)


@register.filter
def ratio(value, by):
    """``a|ratio:b``: a / b, or ``None`` when b is 0 or either is missing."""
    try:
        return float(value) / float(by) if float(by) else None
    except (TypeError, ValueError):
        return None


@register.filter
def times100(value) -> float:
    try:
        return round(100.0 * float(value), 1)
    except (TypeError, ValueError):
        return 0.0


# --- dates -----------------------------------------------------------------------------------------------------


@register.filter
def utc(value, fmt: str = "minutes") -> str:
    """A datetime or date as ``<time>`` in UTC: ``2016-08-19 14:03`` (``utc:"seconds"``, ``utc:"date"``)."""
    if not value:
        return "–"
    if isinstance(value, dt.datetime):
        if timezone.is_aware(value):
            value = value.astimezone(dt.UTC)
        shown = {
            "date": value.strftime("%Y-%m-%d"),
            "seconds": value.strftime("%Y-%m-%d %H:%M:%S"),
        }.get(fmt, value.strftime("%Y-%m-%d %H:%M"))
        iso = value.isoformat(timespec="seconds")
        return format_html('<time datetime="{}" title="{} UTC">{}</time>', iso, iso, shown)
    if isinstance(value, dt.date):
        return format_html('<time datetime="{}">{}</time>', value.isoformat(), value.isoformat())
    return str(value)


# --- labels ----------------------------------------------------------------------------------------------------

COUNT_LABELS = {
    "records_read": "Records read (lines of the files)",
    "rows_read": "Rows staged (older imports: a v1.1 retweet's line counted twice)",
    "missing_times": "Rows without a time (skipped)",
    "accounts_new": "New accounts",
    "accounts_renamed": "Known accounts renamed",
    "tweets_in_upload": "Original tweets in the upload",
    "tweets_new": "New original tweets",
    "duplicate_originals": "Originals already known",
    "retweets_in_upload": "Retweets in the upload",
    "retweets_new": "New retweets",
    "retweets_stored": "Retweets stored",
    "retweets_of_unknown_tweets": "Retweets of unknown tweets (skipped)",
    "self_retweets": "Self-retweets (dropped)",
    "duplicate_retweets": "Repeated retweets (earliest kept)",
    "follower_counts_new": "New follower-count snapshots",
    "follows_in_upload": "Follow edges in the upload",
    "follows_new": "New follow edges",
    "self_follows": "Self-follows (ignored)",
    "given_edges_new": "New given spreading edges",
    "publishers_new": "New publishers",
}

TIMING_LABELS = {
    "files_s": "Storing the files",
    "read_s": "Reading",
    "merge_s": "Storing",
    "merge_steps_s": "Storing, step by step",
    "load_tweets_s": "Loading tweets",
    "load_follows_s": "Loading follows",
    "graph_s": "Building the graph",
    "build_s": "Building cascades",
    "forward_s": "Forward phase",
    "backward_s": "Backward phase",
    "forward_backward_s": "Forward and backward phases",
    "graph_kept": "Batches that found the follower graph kept",
    "parts": "Parts merged",
    "collect_s": "Collecting results",
    "store_s": "Storing results",
    "total_s": "Total",
}


def _humanize_key(key: str) -> str:
    key = str(key)
    if key.endswith("_s"):
        key = key[:-2]
    return key.replace("_", " ").replace("-", " ").strip().capitalize()


@register.filter
def count_label(key) -> str:
    return COUNT_LABELS.get(key, _humanize_key(key))


@register.filter
def timing_label(key) -> str:
    return TIMING_LABELS.get(key, _humanize_key(key))


@register.simple_tag
def run_described(run):
    """``{% run_described r as d %}``: the run's input, parameters and results in its algorithm's words
    (``monitor.selectors.run_description``), for the runs table."""
    from monitor.selectors import run_description

    return run_description(run)


@register.simple_tag
def badge(status, label=None, kind: str = "s", title: str = ""):
    """``{% badge c.status c.get_status_display %}``: a coloured pill, one class per value. ``kind`` picks the
    palette: ``s`` statuses, ``l`` truth labels, ``r`` cascade roles; ``title`` is a tooltip."""
    status = str(status or "unknown")
    if title:
        return format_html(
            '<span class="badge {}-{}" title="{}">{}</span>', kind, status.replace(" ", "-"), title, label or status
        )
    return format_html('<span class="badge {}-{}">{}</span>', kind, status.replace(" ", "-"), label or status)


@register.simple_tag(takes_context=True)
def account_link(context, twitter_id, screen_name=""):
    """A link to an account's page, showing ``@screen_name`` or the numeric id."""
    from django.urls import reverse

    ws = context.get("ws")
    shown = account_display(twitter_id, screen_name)
    if ws is None:
        return shown
    url = reverse("account", kwargs={"ws": ws.slug, "twitter_id": twitter_id})
    if screen_name:
        return format_html('<a href="{}">{}</a>', url, shown)
    return format_html('<a href="{}" class="mono">{}</a>', url, shown)


# --- analyst pages: sortable headers, week-over-week change, shares ---------------------------------------------


@register.simple_tag(takes_context=True)
def sort_th(context, key: str, label: str, title: str = ""):
    """A numeric column header of a ranking table. With ``sort_links`` in the context (column -> URL) the
    header is a link that orders the table by the column; the column ordered by (``sort``, else ``aggregate``)
    is highlighted and carries ``aria-sort``."""
    current = context.get("sort") or context.get("aggregate")
    links = context.get("sort_links") or {}
    active = key == current
    cls = "num hl" if active else "num"
    aria = mark_safe(' aria-sort="descending"') if active else ""
    if key in links:
        arrow = mark_safe(' <span class="sort-arrow" aria-hidden="true">▼</span>') if active else ""
        hint = "" if active else mark_safe('<span class="visually-hidden"> (sort by this column)</span>')
        inner = format_html('<a class="sort" href="{}" title="{}">{}{}{}</a>', links[key], title, label, arrow, hint)
    else:
        inner = format_html('<abbr title="{}">{}</abbr>', title, label) if title else label
    return format_html('<th scope="col" class="{}"{}>{}</th>', cls, aria, inner)


@register.simple_tag
def change(now, before, digits: int = 0):
    """``{% change this_week last_week %}``: the relative change as an arrow and a percentage (``▲ 12 %``),
    ``new`` when there was nothing before, ``–`` when there is nothing either time. The words are there for
    screen readers ("up 12 %")."""
    try:
        now, before = float(now or 0.0), float(before or 0.0)
    except (TypeError, ValueError):
        return "–"
    if before == 0:
        if now == 0:
            return mark_safe(
                '<span class="chg flat">–<span class="visually-hidden"> no reach either week</span></span>'
            )
        return mark_safe(
            '<span class="chg new">new<span class="visually-hidden">: no reach the week before</span></span>'
        )
    rel = (now - before) / before
    pct = f"{100 * abs(rel):.{int(digits)}f} %"
    if abs(rel) < 0.005:
        return format_html('<span class="chg flat">= <span class="visually-hidden">unchanged, </span>{}</span>', pct)
    word, arrow, cls = ("up", "▲", "up") if rel > 0 else ("down", "▼", "down")
    return format_html(
        '<span class="chg {}"><span aria-hidden="true">{}</span><span class="visually-hidden">{}</span> {}</span>',
        cls,
        arrow,
        word,
        pct,
    )


@register.filter
def share(value) -> str:
    """A share 0..1 as a percentage with what is worth reading: ``100 %``, ``81.4 %``, ``0.42 %``, ``<0.01 %``."""
    if value is None or value == "":
        return "–"
    try:
        x = 100.0 * float(value)
    except (TypeError, ValueError):
        return "–"
    if x == 0:
        return "0 %"
    if x.is_integer():
        return f"{x:.0f} %"
    if x >= 99.95:  # not 100 %: the rest is someone else's (monitor.numbers.percentage)
        return percentage(value, 1)
    if x >= 1:
        return f"{x:.1f} %"
    if x >= 0.01:
        return f"{x:.2f} %"
    return "<0.01 %"


# --- rendered fragments, per data version ------------------------------------------------------------------------


class _ReadCacheNode(template.Node):
    def __init__(self, nodelist, name: str, version, vary_on) -> None:
        self.nodelist, self.name, self.version, self.vary_on = nodelist, name, version, vary_on

    def render(self, context) -> str:
        from monitor.cache import fragment_key, get_or_build, read_cache_seconds

        version = self.version.resolve(context)
        ttl = read_cache_seconds()
        if not version or ttl <= 0:
            return self.nodelist.render(context)
        version = str(version)
        key = fragment_key(version, self.name, *(v.resolve(context) for v in self.vary_on))
        return get_or_build(key, lambda: self.nodelist.render(context), ttl=ttl, ws_pk=int(version.partition(":")[0]))


@register.tag
def read_cache(parser, token):
    """``{% read_cache "name" data_version vary_on… %}…{% endread_cache %}``: the block rendered once per name,
    data version and ``vary_on`` values and kept with the workspace's cached reads (``monitor.cache``: same
    lifetime, pruned with its version). Without a data version (the read cache is off) it renders every time.
    Django's ``{% cache %}`` would name the entry by a digest only, which the pruning cannot tell apart."""
    bits = token.split_contents()
    if len(bits) < 3:
        raise template.TemplateSyntaxError(f"{bits[0]} takes a quoted name and a data version")
    name = bits[1]
    if not (len(name) >= 2 and name[0] == name[-1] and name[0] in "\"'"):
        raise template.TemplateSyntaxError(f"{bits[0]}: the name must be quoted, not {name}")
    nodelist = parser.parse((f"end{bits[0]}",))
    parser.delete_first_token()
    return _ReadCacheNode(
        nodelist, name[1:-1], parser.compile_filter(bits[2]), [parser.compile_filter(b) for b in bits[3:]]
    )
