"""Unknown values are not shown as data (issue 19, defect 7): a follower count the data did not carry says
"unknown" (Twitter15/16 carry none: the measure uses n_v = 1 there); an account without a screen name is its
bare id, never "@<id>"; numbers are formatted one way; exports round their floats for reading in CSV and keep
full precision in JSON."""

from __future__ import annotations

import csv
import io
import json
import re
import shutil

import pytest
from django.urls import reverse

from frontend.templatetags.spreadwatch import followers
from monitor import exports, selectors
from monitor.alerts import rules as alert_rules
from monitor.models import Account, CascadeInfluence, Tweet, account_display
from tests.webapp import THESIS

TWITTER16 = THESIS.parent / "twitter16"


@pytest.fixture
def twitter16(ws_a, import_files, tmp_path):
    archive = shutil.make_archive(str(tmp_path / "twitter16"), "zip", TWITTER16)
    c = import_files(ws_a, [archive])
    assert c.status == c.Status.DONE, c.error
    return ws_a


def _cells(html: str, header: str) -> list[str]:
    """The text of every cell of the column headed ``header`` (its <abbr> text) in the page's first such table."""
    table = next(t for t in re.findall(r"<table.*?</table>", html, re.S) if f">{header}</abbr>" in t)
    heads = re.findall(r"<th[^>]*>(.*?)</th>", table.split("<tbody>")[0], re.S)
    i = next(k for k, h in enumerate(heads) if f">{header}<" in h)
    rows = re.findall(r"<tr[^>]*>(.*?)</tr>", table.split("<tbody>")[1], re.S)
    return [re.sub(r"<[^>]+>", "", re.findall(r"<td[^>]*>(.*?)</td>", r, re.S)[i - 1 if "<th" in r else i]).strip()
            for r in rows]  # fmt: skip


def test_it_says_followers_unknown_on_the_tweet_page_where_the_data_has_no_counts(client, alice, twitter16):
    t = Tweet.objects.filter(workspace=twitter16, unit="retweeters").order_by("-n_participants").first()
    assert t is not None and CascadeInfluence.objects.filter(tweet=t, followers=1.0).exists()
    client.force_login(alice)
    html = client.get(reverse("tweet", kwargs={"ws": twitter16.slug, "tweet_id": t.tweet_id})).content.decode()
    shown = _cells(html, "Followers")
    assert shown and set(shown) == {"unknown"}, shown[:5]


def test_it_says_followers_unknown_on_the_account_page(client, alice, twitter16):
    ci = CascadeInfluence.objects.filter(tweet__workspace=twitter16).exclude(role="publisher").first()
    client.force_login(alice)
    url = reverse("account", kwargs={"ws": twitter16.slug, "twitter_id": ci.account.twitter_id})
    shown = _cells(client.get(url).content.decode(), "Followers")
    assert shown and set(shown) == {"unknown"}


def test_it_shows_known_follower_counts_as_numbers(client, alice, ws_a, import_files):
    import_files(ws_a, [THESIS / "tweets.csv", THESIS / "follows.csv"])
    client.force_login(alice)
    html = client.get(reverse("tweet", kwargs={"ws": ws_a.slug, "tweet_id": 1000})).content.decode()
    assert sorted(_cells(html, "Followers"), key=int) == ["1", "2", "4", "8", "16", "32"]


def test_the_followers_filter():
    assert followers(1.0, "retweeters") == "unknown"
    assert followers(1969.0, "followers") == "1,969"
    assert followers(None, "followers") == "unknown"


def test_an_account_without_a_screen_name_is_its_bare_id_everywhere(client, alice, twitter16):
    assert account_display(7900962, "") == "7900962"
    assert account_display(7900962, "nasa") == "@nasa"
    acc = Account.objects.filter(workspace=twitter16, screen_name="").first()
    assert str(acc) == str(acc.twitter_id)
    # the alert texts name accounts the same way
    assert alert_rules.account_name(acc) == str(acc.twitter_id)
    assert alert_rules.account_name({"twitter_id": acc.twitter_id, "screen_name": ""}) == str(acc.twitter_id)
    client.force_login(alice)
    for url in (
        reverse("ranking", kwargs={"ws": twitter16.slug}),
        reverse("publisher", kwargs={"ws": twitter16.slug, "publisher": acc.twitter_id}),
        reverse("alert-rule-new", kwargs={"ws": twitter16.slug}),
    ):
        html = client.get(url).content.decode()
        assert not re.search(r"@\d{3,}\b", html), url


def test_the_cascade_explorer_formats_numbers_like_the_pages():
    from pathlib import Path

    js = (Path(__file__).resolve().parents[2] / "frontend/static/frontend/cascade.js").read_text()
    # a bare toLocaleString() follows the browser's locale: "154.967" in German for 154,967
    assert "toLocaleString()" not in js
    assert "followers unknown" in js


def test_the_csv_export_rounds_and_the_json_keeps_full_precision(alice, ws_a, import_files, tmp_path):
    import_files(ws_a, [THESIS / "tweets.csv", THESIS / "follows.csv"])
    pub = selectors.account_get(ws_a, 102)
    rows = list(csv.DictReader(io.StringIO("".join(exports.ranking_csv(ws_a, publisher=pub, aggregate="mean")))))
    page = selectors.ranking(ws_a, publisher=pub, aggregate="mean", limit=100)
    exact = {str(r["twitter_id"]): r for r in page.rows}
    for row in rows:
        for col in ("total", "mean", "participation"):
            shown = row[col]
            assert len(shown.replace("-", "").replace(".", "").lstrip("0")) <= 6, (col, shown)
            assert "e" not in shown.lower(), shown
            assert float(shown) == pytest.approx(exact[row["twitter_id"]][col], rel=1e-5)
    doc = json.loads("".join(exports.ranking_json(ws_a, publisher=pub, aggregate="mean")))
    for r in doc["rows"]:
        for col in ("total", "mean", "participation"):
            assert r[col] == exact[r["twitter_id"]][col]  # bit for bit


@pytest.mark.parametrize(
    "x, shown",
    [
        (0.0, "0"),
        (118.0, "118"),
        (73.33333333333333, "73.3333"),
        (0.000123456789, "0.000123457"),
        (1234567.89, "1234568"),
        (-2.5, "-2.5"),
        (59.0, "59"),
    ],
)
def test_the_csv_number_format(x, shown):
    assert exports.csv_number(x) == shown


def test_the_graph_export_leaves_unknown_follower_counts_out(twitter16):
    t = Tweet.objects.filter(workspace=twitter16, unit="retweeters").first()
    gexf = "".join(exports.cascade_gexf(t))
    assert 'for="followers"' not in gexf
    graphml = "".join(exports.cascade_graphml(t))
    assert 'key="n_followers"' not in graphml.split("<graph ", 1)[1]
