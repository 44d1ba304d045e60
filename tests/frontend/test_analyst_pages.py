"""The analyst's pages over the thesis' worked example: the publisher page (truth-label filter, sortable
columns, share of the publisher's reach, rank over time, reach by label, false claims' spreaders) and the
overview (reach this week vs last, unread alerts).

Tweet 1000 (2020-01-01) is labelled false and recomputed; tweet 2000 (2020-01-02) keeps its label. Totals:
b=118 e=96 f=64 c=32 a=16 d=8; tweet 1000 alone: a=15 b=63 c=28 d=8 e=48 f=32; d took part in tweet 1000 only."""

from __future__ import annotations

import datetime as dt
import json
import re

import pytest
from django.urls import reverse

from monitor import selectors, services
from monitor.models import Account, Tweet
from tests.webapp import THESIS

D1, D2 = dt.date(2020, 1, 1), dt.date(2020, 1, 2)


@pytest.fixture
def labelled(ws_a, import_files, run_tasks):
    import_files(ws_a, [THESIS / "tweets.csv", THESIS / "follows.csv"])
    Tweet.objects.filter(workspace=ws_a, tweet_id=1000).update(label="false")
    run_tasks(services.compute_run_start, workspace=ws_a, backend="cpu")
    return ws_a


@pytest.fixture
def b(labelled):
    return Account.objects.get(workspace=labelled, twitter_id=102)


def _page(client, user, ws, query=None, publisher=102):
    client.force_login(user)
    r = client.get(reverse("publisher", kwargs={"ws": ws.slug, "publisher": publisher}), query or {})
    assert r.status_code == 200
    return r


def _rows(response) -> list[dict]:
    return response.context["page"].rows


def _names(rows) -> list[str]:
    return [r["screen_name"] for r in rows]


def test_it_filters_the_ranking_by_truth_label(client, alice, labelled):
    # the publisher page ranks b's spreaders: b's own reach is shown apart (test_publisher_reach.py)
    every = _page(client, alice, labelled)
    assert {r["screen_name"]: r["total"] for r in _rows(every)} == {
        "e": 96.0,
        "f": 64.0,
        "c": 32.0,
        "a": 16.0,
        "d": 8.0,
    }
    false = _page(client, alice, labelled, {"labels": "false"})
    assert {r["screen_name"]: r["total"] for r in _rows(false)} == {
        "a": 15.0,
        "c": 28.0,
        "d": 8.0,
        "e": 48.0,
        "f": 32.0,
    }
    assert false.context["page"].tweets == 1
    html = false.content.decode()
    assert re.search(r'<input type="checkbox" name="labels" value="false"[^>]*checked', html)
    # several labels at once: false + the other tweet's label is everything again
    other = Tweet.objects.get(workspace=labelled, tweet_id=2000).label
    both = _page(client, alice, labelled, {"labels": ["false", other]})
    assert {r["screen_name"]: r["total"] for r in _rows(both)}["e"] == 96.0
    assert both.context["own_reach"]["reach"] == pytest.approx(118.0)


def test_it_says_when_a_label_filter_matches_nothing(client, alice, labelled):
    r = _page(client, alice, labelled, {"labels": "true"})
    html = r.content.decode()
    assert r.context["page"].total_rows == 0
    assert "Nothing matches these options" in html and "Show every label" in html
    assert 'id="rank-data"' not in html


def test_it_says_when_nothing_is_computed_yet(client, alice, ws_a):
    client.force_login(alice)
    html = client.get(reverse("ranking", kwargs={"ws": ws_a.slug})).content.decode()
    assert "No computed tweets yet" in html


def test_it_shows_each_accounts_share_of_the_publishers_reach(client, alice, labelled):
    r = _page(client, alice, labelled)
    assert r.context["reach"] == pytest.approx(118.0)  # 63 + 55: the reach of tweets 1000 and 2000
    share = {x["screen_name"]: x["share"] for x in _rows(r)}
    assert "b" not in share  # the publisher's own reach (100 % of it) is shown apart
    assert share["e"] == pytest.approx(96 / 118)
    html = r.content.decode()
    assert "Share of reach" in html and "81.4 %" in html
    # the label filter divides by the reach of the false tweets only
    false = _page(client, alice, labelled, {"labels": "false"})
    assert false.context["reach"] == pytest.approx(63.0)
    assert {x["screen_name"]: x["share"] for x in _rows(false)}["e"] == pytest.approx(48 / 63)


def test_it_sorts_by_a_clicked_column_and_keeps_the_filters_in_the_links(client, alice, labelled):
    by_total = _rows(_page(client, alice, labelled))
    assert _names(by_total) == list("efcad")
    r = _page(client, alice, labelled, {"sort": "cascades"})
    rows = _rows(r)
    # d took part in one cascade, everyone else in two: d is last, the others by total
    assert [(x["screen_name"], x["cascades"]) for x in rows] == [
        ("e", 2),
        ("f", 2),
        ("c", 2),
        ("a", 2),
        ("d", 1),
    ]
    assert [x["rank"] for x in rows] == [1, 2, 3, 4, 5]
    # participation = Σ / T_v: e 48, f 32, c 16, and a tie a = d = 8 broken by first appearance
    part = _rows(_page(client, alice, labelled, {"aggregate": "participation"}))
    assert [(x["screen_name"], x["participation"]) for x in part][:3] == [
        ("e", 48.0),
        ("f", 32.0),
        ("c", 16.0),
    ]
    a, d = (Account.objects.get(workspace=labelled, screen_name=n) for n in "ad")
    assert _names(part)[3:] == (["a", "d"] if a.pk < d.pk else ["d", "a"])
    assert {x["screen_name"]: x["participation"] for x in part}["d"] == 8.0 == part[3]["participation"]
    # the headers are links that keep the filters; the sorted one says so
    html = _page(client, alice, labelled, {"labels": "false", "sort": "cascades", "top": "5"}).content.decode()
    head = html[html.index("<thead>", html.index('class="striped ranking"')) :]
    head = head[: head.index("</thead>")]
    assert head.count("aria-sort") == 1 and re.search(
        r'aria-sort="descending"><a class="sort" href="[^"]*sort=cascades', head
    )
    part_link = re.search(r'href="(\?[^"]*aggregate=participation[^"]*)"', head).group(1)
    assert "labels=false" in part_link and "top=5" in part_link and "sort=" not in part_link


def test_it_paginates_with_the_filters_in_the_links(client, alice, labelled, monkeypatch):
    from frontend.views import rankings

    monkeypatch.setattr(rankings, "PAGE", 2)
    r = _page(client, alice, labelled, {"labels": "false", "sort": "cascades"})
    assert r.context["n_pages"] == 3
    html = r.content.decode()
    nxt = re.search(r'href="\?([^"]*)" rel="next"', html).group(1).replace("&amp;", "&")
    assert "labels=false" in nxt and "sort=cascades" in nxt and nxt.endswith("page=2")
    second = _page(client, alice, labelled, {"labels": "false", "sort": "cascades", "page": 2})
    assert [x["rank"] for x in _rows(second)] == [3, 4]


def test_it_ranks_the_top_accounts_per_day(labelled, b):
    h = selectors.rank_history(labelled, publisher=b, top=10, bucket="day")
    assert h["periods"] == [D1, D2]
    ranks = {s["screen_name"]: s["ranks"] for s in h["series"]}
    assert ranks["b"] == [1, 1]
    assert ranks["e"] == [2, 2] and ranks["f"] == [3, 3]
    assert ranks["d"] == [6, None]  # d took no part in tweet 2000
    assert h["ranked"] == [6, 5]
    scores = {s["screen_name"]: s["scores"] for s in h["series"]}
    assert scores["b"] == [63.0, 55.0] and scores["d"] == [8.0, None]
    # each series names its account (read by key after the ranking query)
    assert {s["screen_name"]: s["twitter_id"] for s in h["series"]}["b"] == b.twitter_id
    assert all(s["account"] == Account.objects.get(twitter_id=s["twitter_id"]).pk for s in h["series"])
    # the top N is the window's, in ranking order; ranks within a period are among every account
    top3 = selectors.rank_history(labelled, publisher=b, top=3, bucket="day")
    assert [s["screen_name"] for s in top3["series"]] == ["b", "e", "f"] and top3["ranked"] == [6, 5]
    # one week and one month hold both days; mean divides by the period's T
    week = selectors.rank_history(labelled, publisher=b, aggregate="mean", bucket="week")
    assert week["periods"] == [dt.date(2019, 12, 30)]
    assert {s["screen_name"]: s["scores"] for s in week["series"]}["b"] == [59.0]
    month = selectors.rank_history(labelled, publisher=b, bucket="month", labels=["false"])
    assert month["periods"] == [D1] and {s["screen_name"]: s["ranks"] for s in month["series"]}["d"] == [6]


def test_it_draws_the_rank_chart_from_a_data_island_with_a_table_fallback(client, alice, labelled):
    r = _page(client, alice, labelled, {"top": "5", "bucket": "day"})
    html = r.content.decode()
    island = re.search(r'<script id="rank-data" type="application/json">(.*?)</script>', html, re.S).group(1)
    data = json.loads(island)
    assert data["periods"] == ["2020-01-01", "2020-01-02"] and data["bucket"] == "day"
    assert [s["name"] for s in data["series"]] == ["@e", "@f", "@c", "@a", "@d"]  # b's spreaders
    assert data["series"][0]["ranks"] == [1, 1]
    assert "vendor/chart.umd.min.js" in html and "rank-chart.js" in html
    fallback = html[html.index('<details class="chart-table">') :]
    assert "<table" in fallback[: fallback.index("</details>")]
    # the automatic period for a two-day window is the day
    assert _page(client, alice, labelled).context["bucket"] == "day"


def test_it_splits_the_reach_by_truth_label(client, alice, labelled, b):
    other = Tweet.objects.get(workspace=labelled, tweet_id=2000).label
    split = {r["label"]: r for r in selectors.reach_by_label(labelled, publisher=b)}
    assert split["false"]["tweets"] == 1 and split["false"]["reach"] == pytest.approx(63.0)
    assert split[other]["reach"] == pytest.approx(55.0)
    assert split["false"]["share"] == pytest.approx(63 / 118)
    r = _page(client, alice, labelled)
    html = r.content.decode()
    assert "Reach by truth label" in html and 'class="label-split"' in html
    # who carries the false claims: the top 5 of tweet 1000
    assert [(x["screen_name"], x["total"]) for x in r.context["false_top"]] == [
        ("e", 48.0),
        ("f", 32.0),
        ("c", 28.0),
        ("a", 15.0),
        ("d", 8.0),
    ]
    assert "Who carries the false claims" in html


def test_it_shows_the_unit_of_the_score(client, alice, labelled):
    r = _page(client, alice, labelled)
    unit = r.context["page"].unit
    assert unit == "followers reached"
    assert r.content.decode().count(unit) >= 4


def test_it_compares_the_publishers_reach_this_week_with_last(client, alice, labelled):
    weeks = selectors.publishers_reach_weeks(labelled, 10)
    assert weeks["this"] == (dt.date(2019, 12, 27), D2) and weeks["last"] == (
        dt.date(2019, 12, 20),
        dt.date(2019, 12, 26),
    )
    [row] = weeks["rows"]
    assert row["twitter_id"] == 102 and row["this_reach"] == pytest.approx(118.0) and row["this_tweets"] == 2
    assert row["last_reach"] == 0.0 and row["last_tweets"] == 0 and row["change"] is None
    client.force_login(alice)
    r = client.get(reverse("overview", kwargs={"ws": labelled.slug}))
    html = r.content.decode()
    assert "this week vs last" in html and 'class="chg new"' in html
    # a week later with no new data, last week holds both tweets and this week is empty for b
    later = selectors.publishers_reach_weeks(labelled, 10, end=D2 + dt.timedelta(days=7))
    assert later["rows"][0]["this_reach"] == 0.0 and later["rows"][0]["last_reach"] == pytest.approx(118.0)
    assert later["change"] == pytest.approx(-1.0)


def test_it_keeps_the_overview_sections(client, alice, labelled):
    client.force_login(alice)
    html = client.get(reverse("overview", kwargs={"ws": labelled.slug})).content.decode()
    for heading in ("Top spreaders", "Publishers", "Recent collections", "Recent compute runs"):
        assert heading in html


def test_it_counts_the_users_unread_alerts(client, alice, labelled, b, django_user_model):
    from monitor.alerts.models import Alert, AlertRule

    mine = AlertRule.objects.create(workspace=labelled, owner=alice, name="top 3", kind="top_k", k=3)
    other_user = django_user_model.objects.create_user("carol", "carol@example.com", "carol-pass-123")
    theirs = AlertRule.objects.create(workspace=labelled, owner=other_user, name="theirs", kind="top_k")
    for i, (rule, read) in enumerate([(mine, False), (mine, False), (mine, True), (theirs, False)]):
        Alert.objects.create(
            rule=rule,
            workspace=labelled,
            account=b,
            window_start=D1 - dt.timedelta(days=i),
            window_end=D2,
            value=1.0,
            message=f"alert {i}",
            read_at=None if not read else dt.datetime(2020, 1, 3, tzinfo=dt.UTC),
        )
    client.force_login(alice)
    r = client.get(reverse("overview", kwargs={"ws": labelled.slug}))
    assert r.context["alerts"]["unread"] == 2
    assert "unread alerts from your rules" in r.content.decode()


def test_it_keeps_the_publisher_page_to_a_few_queries(client, alice, labelled, django_assert_max_num_queries):
    client.force_login(alice)
    url = reverse("publisher", kwargs={"ws": labelled.slug, "publisher": 102})
    # 15, one for the watch list's runs (who amplifies whom: tests/frontend/test_wtf.py counts a computed one),
    # one for the user's notices (issue 20), shown on every page of the workspace, and one over the workspace's
    # uploads for the watch list's notice on where the follower graph came from (issue 40), and one for the rank
    # chart's account names, read by key after its ranking (joined, they hashed the whole account table)
    with django_assert_max_num_queries(19):
        assert (
            client.get(url, {"labels": ["false", "unknown"], "sort": "cascades", "bucket": "week"}).status_code == 200
        )
    with django_assert_max_num_queries(19):
        assert client.get(url, {"aggregate": "mean"}).status_code == 200


def test_it_rejects_an_unknown_label_or_chart_size(client, alice, labelled):
    client.force_login(alice)
    url = reverse("publisher", kwargs={"ws": labelled.slug, "publisher": 102})
    assert client.get(url, {"labels": "satire"}).status_code == 400
    assert client.get(url, {"top": "7"}).status_code == 400


def test_it_labels_every_control(client, alice, labelled):
    html = _page(client, alice, labelled).content.decode()
    for control in re.findall(r"<(?:select|input)\b[^>]*>", html):
        if 'type="hidden"' in control:
            continue
        cid = re.search(r'id="([^"]+)"', control)
        assert cid, control
        assert f'for="{cid.group(1)}"' in html, control


def test_it_draws_the_all_publishers_rank_chart_on_request(client, alice, ws_a, import_files):
    import_files(ws_a, [THESIS / "tweets.csv", THESIS / "follows.csv"])
    client.force_login(alice)
    url = reverse("ranking", kwargs={"ws": ws_a.slug})
    first = client.get(url).content.decode()
    assert "Draw rank over time" in first and 'id="rank-data"' not in first
    drawn = client.get(url, {"history": "1"}).content.decode()
    assert 'id="rank-data"' in drawn and "Draw rank over time" not in drawn
    # one publisher's page draws it at once
    assert (
        'id="rank-data"'
        in client.get(reverse("publisher", kwargs={"ws": ws_a.slug, "publisher": 102})).content.decode()
    )
