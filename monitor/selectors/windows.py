"""Time windows of UTC days, the span of days with data, and the SQL pieces every daily-aggregate read shares
(the WHERE of a workspace, publisher, window and labels; the first day of a day, week or month)."""

from __future__ import annotations

import datetime as dt
from dataclasses import dataclass

from django.db import connection
from django.db.models import Max, Min, Q

from ..cache import cached
from ..models import Account, PublisherDay, Workspace


@dataclass(frozen=True)
class Window:
    """An inclusive range of UTC days; ``None`` ends are open."""

    start: dt.date | None = None
    end: dt.date | None = None

    def filter(self, field: str = "day") -> Q:
        q = Q()
        if self.start:
            q &= Q(**{f"{field}__gte": self.start})
        if self.end:
            q &= Q(**{f"{field}__lte": self.end})
        return q

    def cache_key(self) -> str:
        """How the read cache names this window in its keys (``monitor.cache``)."""
        return f"W:{self.start}:{self.end}"


#: the open window, every day (the default of the reads that take a window)
ALL_TIME = Window()


@cached
def data_span(ws: Workspace, publisher: Account | None = None) -> tuple[dt.date | None, dt.date | None]:
    qs = PublisherDay.objects.filter(workspace=ws)
    if publisher is not None:
        qs = qs.filter(publisher=publisher)
    agg = qs.aggregate(lo=Min("day"), hi=Max("day"))
    return agg["lo"], agg["hi"]


#: the window presets of the ranking page, as days counted back from the newest day with data
PRESET_DAYS = {"7d": 7, "30d": 30, "90d": 90, "365d": 365}


def window_for_preset(
    preset: str, span: tuple[dt.date | None, dt.date | None], start: dt.date | None = None, end: dt.date | None = None
) -> tuple[Window, str]:
    """The window a preset selects, and the preset it stands for. Presets count back from the newest day with
    data (collections are often historical, so 'the last 30 days' of the calendar would be empty); ``custom``
    is ``start``..``end``; ``all`` (or a preset over a scope without data) is the open window."""
    _lo, hi = span
    if preset == "custom":
        return Window(start, end), "custom"
    if preset != "all" and hi is not None:
        return Window(hi - dt.timedelta(days=PRESET_DAYS[preset] - 1), hi), preset
    return Window(), "all"


def covers_all_time(ws: Workspace, window: Window) -> bool:
    """Whether the window holds every day with data (an open window, or a preset reaching past both ends)."""
    if not window.start and not window.end:
        return True
    lo, hi = data_span(ws)
    return lo is None or ((not window.start or window.start <= lo) and (not window.end or window.end >= hi))


# --- periods: the buckets of a rank chart, and the shared WHERE of the daily-aggregate reads -------------------

BUCKETS = ("day", "week", "month")


def bucket_for(window: Window, span: tuple[dt.date | None, dt.date | None], asked: str) -> str:
    """The rank chart's period: as asked, or (``auto``) days for up to 6 weeks, weeks up to about a year and
    a half, else months."""
    if asked in BUCKETS:
        return asked
    lo, hi = window.start or span[0], window.end or span[1]
    days = (hi - lo).days + 1 if lo and hi else 0
    return "day" if days <= 42 else "week" if days <= 550 else "month"


def period_sql(bucket: str) -> str:
    """SQL for the first day of ``d.day``'s period (weeks start on Monday, like ISO weeks)."""
    if bucket not in BUCKETS:
        raise ValueError(f"bucket must be one of {', '.join(BUCKETS)}")
    if bucket == "day":
        return "d.day"
    if connection.vendor == "postgresql":
        return f"CAST(date_trunc('{bucket}', d.day) AS date)"
    if connection.vendor == "sqlite":
        # 'weekday 0' moves forward to the Sunday ending the ISO week (or stays on it); 6 days back is its Monday
        return "date(d.day, 'weekday 0', '-6 days')" if bucket == "week" else "date(d.day, 'start of month')"
    raise NotImplementedError(f"rank_history: no period expression for {connection.vendor}")


def as_date(value) -> dt.date:
    """A period as the database returns it (a date, a datetime or an ISO string) as a date."""
    if isinstance(value, dt.datetime):
        return value.date()
    if isinstance(value, dt.date):
        return value
    return dt.date.fromisoformat(str(value)[:10])


def daily_where(
    ws: Workspace, publisher: Account | None, window: Window, labels: list[str] | None
) -> tuple[list[str], list]:
    """The WHERE of a read of the daily aggregates (aliased ``d``: ``monitor_dailyinfluence`` and
    ``monitor_publisherday`` have the same filter columns) as (conditions to AND, their parameters)."""
    where = ["d.workspace_id = %s"]
    params: list = [ws.pk]
    if publisher is not None:
        where.append("d.publisher_id = %s")
        params.append(publisher.pk)
    if window.start:
        where.append("d.day >= %s")
        params.append(window.start)
    if window.end:
        where.append("d.day <= %s")
        params.append(window.end)
    if labels:
        where.append("d.label IN (" + ", ".join(["%s"] * len(labels)) + ")")
        params.extend(labels)
    return where, params
