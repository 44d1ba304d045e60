"""The publisher page shows the publisher's own reach apart from the ranking of the accounts that spread its
tweets (issue 19, defect 5): the publisher is not "#1 of its own spreaders with 100 % share"."""

from __future__ import annotations

import json
import re

import pytest
from django.urls import reverse

from monitor import selectors
from tests.webapp import THESIS


@pytest.fixture
def loaded(ws_a, import_files):
    import_files(ws_a, [THESIS / "tweets.csv", THESIS / "follows.csv"])
    return ws_a


def _page(client, alice, ws, params=None):
    client.force_login(alice)
    r = client.get(reverse("publisher", kwargs={"ws": ws.slug, "publisher": 102}), params or {})
    assert r.status_code == 200
    return r


def test_the_publisher_is_not_ranked_among_its_own_spreaders(client, alice, loaded):
    r = _page(client, alice, loaded)
    rows = r.context["page"].rows
    assert [x["screen_name"] for x in rows] == list("efcad")
    assert [x["rank"] for x in rows] == [1, 2, 3, 4, 5]
    assert r.context["page"].total_rows == 5
    share = {x["screen_name"]: x["share"] for x in rows}
    assert share["e"] == pytest.approx(96 / 118) and max(share.values()) < 1.0


def test_the_publishers_own_reach_is_shown_apart(client, alice, loaded):
    r = _page(client, alice, loaded)
    own = r.context["own_reach"]
    assert own == {"tweets": 2, "reach": pytest.approx(118.0), "per_tweet": pytest.approx(59.0)}
    html = r.content.decode()
    box = re.search(r'<section class="own-reach".*?</section>', html, re.S).group(0)
    assert "118" in box and "59.0" in box and "2 computed tweets" in box
    table = html[html.index('<table class="striped ranking">') :]
    table = table[: table.index("</table>")]
    assert "@b<" not in table and "100 %" not in table


def test_the_chart_and_the_false_claims_box_leave_the_publisher_out(client, alice, loaded, run_tasks):
    from monitor import services
    from monitor.models import Tweet

    Tweet.objects.filter(workspace=loaded, tweet_id=1000).update(label="false")
    run_tasks(services.compute_run_start, workspace=loaded, backend="cpu")
    r = _page(client, alice, loaded, {"top": "5", "bucket": "day"})
    island = re.search(r'<script id="rank-data" type="application/json">(.*?)</script>', r.content.decode(), re.S)
    assert "@b" not in [s["name"] for s in json.loads(island.group(1))["series"]]
    assert r.context["false_top"] and "b" not in [x["screen_name"] for x in r.context["false_top"]]


def test_the_all_publishers_ranking_and_the_api_are_unchanged(client, alice, loaded):
    # across publishers b is ranked by what it spread, its own tweets included; the API keeps every row
    page = selectors.ranking(loaded, aggregate="total")
    assert page.rows[0]["screen_name"] == "b"
    assert selectors.ranking(loaded, publisher=selectors.account_get(loaded, 102)).rows[0]["screen_name"] == "b"


@pytest.mark.parametrize("cache_seconds", [0, 60], ids=["from the daily rows", "from the all-time snapshot"])
def test_the_overview_and_the_all_publishers_ranking_leave_the_publisher_out_like_its_page(
    client, alice, loaded, settings, cache_seconds
):
    # issue 40: the overview listed b, the only publisher, as its own #1 (its score was its tweets' reach)
    # while b's page leaves it out; one rule: a publisher's influence on its own tweets is not spreading
    settings.SPREADWATCH_READ_CACHE_SECONDS = cache_seconds
    client.force_login(alice)
    r = client.get(reverse("overview", kwargs={"ws": loaded.slug}))
    assert r.status_code == 200
    assert [x["screen_name"] for x in r.context["top"].rows] == list("efcad")
    assert "@b<" not in r.content.decode().split("Top spreaders", 1)[1].split("</table>", 1)[0]
    r = client.get(reverse("ranking", kwargs={"ws": loaded.slug}), {"top": "5", "bucket": "day", "history": "1"})
    assert [x["screen_name"] for x in r.context["page"].rows] == list("efcad")
    assert r.context["page"].total_rows == 5
    assert max(x["share"] for x in r.context["page"].rows) < 1.0
    island = re.search(r'<script id="rank-data" type="application/json">(.*?)</script>', r.content.decode(), re.S)
    assert "@b" not in [x["name"] for x in json.loads(island.group(1))["series"]]
