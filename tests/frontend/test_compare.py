"""The compare page (/w/<slug>/compare/?p=…&p=…) and its CSV: what it shows for two or three publishers, the
picker while fewer than two are chosen, and a clear 400 for publishers that cannot be compared (unknown,
repeated, too many, not an id). The numbers are those worked out by hand in tests/monitor/selectors/test_compare."""

from __future__ import annotations

import csv
import io

import pytest
from django.urls import reverse

from tests.monitor.selectors.test_compare import write_three


@pytest.fixture
def three(ws_a):
    return write_three(ws_a)


def _get(client, alice, ws, query: str, name: str = "compare"):
    client.force_login(alice)
    return client.get(reverse(name, kwargs={"ws": ws.slug}) + query)


def test_it_shows_the_overlap_and_the_shared_accounts(client, alice, ws_a, three):
    r = _get(client, alice, ws_a, "?p=500&p=501&p=502&top=5")
    assert r.status_code == 200
    cmp = r.context["comparison"]
    assert [p.screen_name for p in cmp.publishers] == ["P", "Q", "R"]
    html = r.content.decode()
    assert "Overlap of the top 5" in html and "Shared accounts (5)" in html
    assert "J 0.29" in html  # P and R: {a, d} of 7
    assert r.context["columns"][0]["rows"][0]["shared"] is True  # a, in all three lists
    assert "Download CSV" in html


def test_with_one_publisher_it_offers_the_picker_without_the_chosen_one(client, alice, ws_a, three):
    r = _get(client, alice, ws_a, "?p=500")
    assert r.status_code == 200
    assert r.context["comparison"] is None
    assert [t for t, _ in r.context["choices"]] == [501, 502]
    html = r.content.decode()
    assert "Choose another publisher" in html and 'data-searchable="publishers"' in html
    assert 'name="p" value="500"' in html  # the picker's form keeps the chosen publisher


def test_with_five_publishers_the_picker_is_gone(client, alice, ws_a, three):
    from monitor.models import Publisher

    for n in "abcd":
        Publisher.objects.create(workspace=ws_a, account=three[n])
    r = _get(client, alice, ws_a, "?p=500&p=501&p=502&p=503&p=504")
    assert r.status_code == 200 and r.context["choices"] == []


@pytest.mark.parametrize(
    ("query", "message"),
    [
        ("?p=500&p=999", "999 is not a publisher of this workspace."),
        ("?p=500&p=501&p=500", "Each publisher once: 500 was chosen twice."),
        ("?p=500&p=501&p=502&p=503&p=504&p=505", "Compare at most 5 publishers at once (6 were chosen)."),
        ("?p=500&p=bbc", "“bbc” is not a publisher id"),
        ("?p=500&p=501&window=custom&start=2020-03-02&end=2020-03-01", "The window&#x27;s start is after its end."),
    ],
)
def test_it_says_which_publishers_cannot_be_compared(client, alice, ws_a, three, query, message):
    r = _get(client, alice, ws_a, query)
    assert r.status_code == 400
    html = r.content.decode()
    assert "These publishers cannot be compared" in html and message in html
    assert r.context["comparison"] is None


def test_the_csv_has_each_top_list_with_how_many_lists_each_account_is_in(client, alice, ws_a, three):
    r = _get(client, alice, ws_a, "?p=500&p=501&top=5", name="compare-export")
    assert r.status_code == 200
    assert r["Content-Type"].startswith("text/csv")
    assert r["Content-Disposition"] == 'attachment; filename="newsroom-compare-500-501-top5-total.csv"'
    rows = list(csv.DictReader(io.StringIO(b"".join(r.streaming_content).decode())))
    got = [(x["publisher_screen_name"], x["rank"], x["screen_name"], x["total"], x["in_top_of"]) for x in rows]
    assert got == [
        ("P", "1", "a", "50", "2"),
        ("P", "2", "b", "40", "2"),
        ("P", "3", "c", "30", "2"),
        ("P", "4", "d", "20", "1"),
        ("P", "5", "e", "10", "1"),
        ("Q", "1", "b", "45", "2"),
        ("Q", "2", "a", "35", "2"),
        ("Q", "3", "f", "25", "1"),
        ("Q", "4", "c", "5", "2"),
        ("Q", "5", "g", "4", "1"),
    ]


@pytest.mark.parametrize(
    ("query", "message"),
    [("?p=500", "p: Choose at least 2 publishers to compare."), ("?p=500&p=42", "p: 42 is not a publisher")],
)
def test_the_csv_refuses_what_the_page_refuses(client, alice, ws_a, three, query, message):
    r = _get(client, alice, ws_a, query, name="compare-export")
    assert r.status_code == 400 and message in r.content.decode()


def test_the_publisher_page_links_to_the_comparison(client, alice, ws_a, three):
    client.force_login(alice)
    r = client.get(reverse("publisher", kwargs={"ws": ws_a.slug, "publisher": 500}))
    assert f'href="/w/{ws_a.slug}/compare/?p=500"' in r.content.decode()


@pytest.mark.parametrize(
    "query", ["", "?p=500", "?p=500&p=501&p=502&top=5", "?p=500&p=500", "?p=x", "?p=500&p=501&window=custom"]
)
def test_no_state_of_the_page_shows_template_syntax(client, alice, ws_a, three, query):
    from tests.frontend.test_template_syntax import _leaks

    html = _get(client, alice, ws_a, query).content.decode()
    assert not _leaks(html)


def test_another_workspaces_members_cannot_compare(client, ws_a, three, django_user_model):
    bob = django_user_model.objects.create_user("bob", "bob@example.com", "bob-pass-123")
    client.force_login(bob)
    assert client.get(reverse("compare", kwargs={"ws": ws_a.slug}) + "?p=500&p=501").status_code == 404


def test_the_truth_label_filter_reaches_the_page_and_the_csv(client, alice, ws_a, three):
    from tests.monitor.selectors.test_compare import _false_claim

    _false_claim(ws_a, three)
    r = _get(client, alice, ws_a, "?p=500&p=501&top=5&labels=false")
    assert r.status_code == 200
    assert [x["screen_name"] for x in r.context["comparison"].columns[0].rows] == ["g", "a"]
    assert 'name="labels" value="false"' in r.content.decode()  # the picker's form keeps the filter
    r = _get(client, alice, ws_a, "?p=500&p=501&top=5&labels=false", name="compare-export")
    assert r["Content-Disposition"] == 'attachment; filename="newsroom-compare-500-501-top5-total-false.csv"'
    rows = list(csv.DictReader(io.StringIO(b"".join(r.streaming_content).decode())))
    assert [(x["publisher_screen_name"], x["screen_name"]) for x in rows] == [("P", "g"), ("P", "a"), ("Q", "g")]
