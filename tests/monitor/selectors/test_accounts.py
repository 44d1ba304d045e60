"""An account's page reads its per-cascade rows (the daily aggregates have no index leading with the account):
its sums per publisher, per day and in all agree with the daily aggregates', for every window."""

from __future__ import annotations

import datetime as dt
import shutil

import pytest
from django.db.models import Sum

from monitor import selectors
from monitor.models import Account, DailyInfluence
from tests.webapp import THESIS

TWITTER16 = THESIS.parent / "twitter16"


def _from_days(ws, account, window) -> tuple[dict, dict, float, int]:
    rows = DailyInfluence.objects.filter(workspace=ws, account=account).filter(window.filter())
    per_pub = {
        r["publisher__twitter_id"]: (r["total"], r["n"])
        for r in rows.values("publisher__twitter_id").annotate(total=Sum("influence"), n=Sum("cascades"))
    }
    per_day = {
        r["day"]: (r["total"], r["n"]) for r in rows.values("day").annotate(total=Sum("influence"), n=Sum("cascades"))
    }
    totals = rows.aggregate(total=Sum("influence"), n=Sum("cascades"))
    return per_pub, per_day, totals["total"] or 0.0, totals["n"] or 0


def _close(mine: dict, want: dict) -> None:
    assert set(mine) == set(want)
    for k, (total, n) in mine.items():
        assert total == pytest.approx(want[k][0], rel=1e-12) and n == want[k][1], k


def test_it_sums_an_accounts_cascades_like_the_daily_aggregates_in_every_window(ws_a, import_files, tmp_path):
    import_files(ws_a, [shutil.make_archive(str(tmp_path / "twitter16"), "zip", TWITTER16)])
    lo, hi = selectors.data_span(ws_a)
    windows = [selectors.Window(), selectors.Window(lo + dt.timedelta(days=(hi - lo).days // 2), hi)]
    busiest = (
        DailyInfluence.objects.filter(workspace=ws_a)
        .values("account")
        .annotate(n=Sum("cascades"))
        .order_by("-n", "account")[:5]
    )
    accounts = list(Account.objects.filter(pk__in=[r["account"] for r in busiest]))
    assert len(accounts) == 5
    for window in windows:
        for account in accounts:
            got = selectors.account_summary(ws_a, account, window=window)
            per_pub, per_day, total, n = _from_days(ws_a, account, window)
            _close({r["publisher__twitter_id"]: (r["total"], r["n_cascades"]) for r in got["per_publisher"]}, per_pub)
            _close({r["day"]: (r["total"], r["n_cascades"]) for r in got["per_day"]}, per_day)
            assert got["total"] == pytest.approx(total, rel=1e-12) and got["n_cascades"] == n
