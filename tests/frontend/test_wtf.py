"""Who amplifies whom's pages over the thesis' worked example: the account page's two panels (not computed, a
run going with its progress, the lists with their parameters), the publisher page's watch list (who points to
each account, already spreading or not), its one-click alert rule, the downloads, the method's page, and 404
for another workspace's objects.

Follows: a<->b, c->a, c->b, d->b, e->b, e->c, f->e. Walking e's follows, a is the account to follow and its
look-alike; walking a's followers, e and d are its likely next amplifiers (they follow a's followers b and c)."""

from __future__ import annotations

import csv
import io
import json

import pytest
from django.urls import reverse

from monitor import services
from monitor.alerts.models import AlertRule
from monitor.models import ComputeRun
from tests.webapp import THESIS


@pytest.fixture
def thesis(ws_a, import_files):
    c = import_files(ws_a, [THESIS / "tweets.csv", THESIS / "follows.csv"])
    assert c.status == "done", c.error
    return ws_a


@pytest.fixture(autouse=True)
def stored_only(settings):
    """Most tests here follow the lists a run stores: computing them when a page opens is off, except in the tests
    of that, which turn it on."""
    settings.SPREADWATCH_WTF_ON_OPEN_EDGES = 0


def _account(client, ws, twitter_id: int):
    r = client.get(reverse("account", kwargs={"ws": ws.slug, "twitter_id": twitter_id}))
    assert r.status_code == 200
    return r.content.decode()


def _publisher(client, ws, twitter_id: int = 102):
    r = client.get(reverse("publisher", kwargs={"ws": ws.slug, "publisher": twitter_id}))
    assert r.status_code == 200
    return r


def test_it_offers_to_compute_both_panels_on_every_account_page(client, alice, thesis):
    client.force_login(alice)
    page = _account(client, thesis, 105)
    assert "Look-alike accounts" in page and "Likely next amplifiers" in page
    assert page.count("Not computed yet.") == 2
    assert reverse("wtf-docs", kwargs={"ws": thesis.slug}) in page
    assert "Compute look-alikes and likely next amplifiers" in page
    assert "data-progress-url" not in page


def test_an_account_page_opens_with_both_lists_computed_and_offers_to_store_them_with_a_run(
    client, alice, thesis, settings
):
    settings.SPREADWATCH_WTF_ON_OPEN_EDGES = 1_000
    client.force_login(alice)
    r = client.get(reverse("account", kwargs={"ws": thesis.slug, "twitter_id": 101}))  # a
    page = r.content.decode()
    assert "Not computed yet." not in page and "data-progress-url" not in page
    assert page.count("when this page was first opened</span> (exact method") == 2
    assert {e["screen_name"] for e in r.context["wtf"]["amplifiers"]["rows"]} == {"d", "e"}
    assert "Store both lists with a run" in page
    assert 'class="downloads"' not in page  # the downloads are of stored lists: none yet
    assert not ComputeRun.objects.filter(algorithm="wtf").exists()


def test_beyond_the_budget_an_account_page_says_why_its_lists_wait_for_a_run(client, alice, thesis, settings):
    settings.SPREADWATCH_WTF_ON_OPEN_EDGES = 3
    client.force_login(alice)
    page = _account(client, thesis, 105)
    assert page.count("Not computed yet.") == 2
    assert "This workspace's follower graph has more than 3 follows, the most for which a page computes" in page
    assert "Compute look-alikes and likely next amplifiers" in page


def test_it_computes_an_accounts_lists_and_shows_them_with_their_parameters(client, alice, thesis, run_tasks):
    client.force_login(alice)
    url = reverse("account-wtf", kwargs={"ws": thesis.slug, "twitter_id": 105})
    r = run_tasks(client.post, url, {"circle": "50", "top": "5"})
    assert r.status_code == 302 and r["Location"].endswith("/accounts/105/#wtf")
    run = ComputeRun.objects.get(algorithm="wtf")
    assert run.params == {"accounts": ["105"], "direction": "both", "circle": 50, "top": 5}
    assert run.status == "done", run.error
    r = client.get(reverse("account", kwargs={"ws": thesis.slug, "twitter_id": 105}))
    panels = r.context["wtf"]
    assert [e["screen_name"] for e in panels["lookalikes"]["rows"]] == ["a"]
    assert panels["lookalikes"]["result"].direction == "follows"
    assert panels["amplifiers"]["result"].direction == "followers"
    page = r.content.decode()
    assert "Not computed yet." not in page and "Recompute both lists" in page
    assert "circle of trust 4 of 50, K = 5" in page  # e's circle: itself, b, c and a
    assert f"run {run.pk}" in page


def test_lists_estimated_by_plain_walks_say_how_many(client, alice, thesis, run_tasks):
    params = {"accounts": ["105"], "direction": "both", "method": "walks", "walks": 30000}
    run = run_tasks(services.compute_run_start, workspace=thesis, algorithm="wtf", params=params)
    run.refresh_from_db()
    assert run.status == "done", run.error
    client.force_login(alice)
    page = _account(client, thesis, 105)
    assert page.count("PageRank estimated by 30,000 random walks from the account (no push), not the exact") == 2


def test_lists_estimated_by_a_local_method_say_so_with_its_numbers(client, alice, thesis, run_tasks):
    params = {"accounts": ["105"], "direction": "both", "method": "fora", "epsilon": 1e-4, "walks": 20000}
    run = run_tasks(services.compute_run_start, workspace=thesis, algorithm="wtf", params=params)
    run.refresh_from_db()
    assert run.status == "done", run.error
    client.force_login(alice)
    page = _account(client, thesis, 105)
    assert page.count('class="wtf-method"') == 2, page
    assert "PageRank estimated by fora (ε = 0.0001, 20,000 walks per unit of residual;" in page
    assert "not the exact method" in page
    # a precise run replaces them
    run_tasks(services.compute_run_start, workspace=thesis, algorithm="wtf", params={"accounts": ["105"]})
    page = _account(client, thesis, 105)
    assert "wtf-method" not in page and "PageRank estimated" not in page


def test_it_shows_the_progress_of_a_run_going_and_polls_it(client, alice, thesis, django_capture_on_commit_callbacks):
    client.force_login(alice)
    with django_capture_on_commit_callbacks(execute=False):  # queued, never run
        client.post(reverse("account-wtf", kwargs={"ws": thesis.slug, "twitter_id": 105}))
    run = ComputeRun.objects.get(algorithm="wtf")
    page = _account(client, thesis, 105)
    progress = reverse("wtf-progress", kwargs={"ws": thesis.slug, "pk": run.pk})
    assert f'data-progress-url="{progress}"' in page and "progress.js" in page
    assert "disabled" in page  # no second run while one is going
    d = client.get(progress).json()
    assert d == {
        "run": run.pk,
        "status": "queued",
        "status_display": "Queued",
        "percent": 0.0,
        "stage": "0 of 1 batch of seeds done",
        "active": True,
    }


def test_the_progress_of_another_algorithms_run_is_not_found(client, alice, thesis):
    client.force_login(alice)
    influence = ComputeRun.objects.get(workspace=thesis, algorithm="influence")
    assert client.get(reverse("wtf-progress", kwargs={"ws": thesis.slug, "pk": influence.pk})).status_code == 404


def test_it_says_so_when_the_account_has_no_follows(client, alice, thesis, run_tasks):
    from monitor.models import Account

    Account.objects.create(workspace=thesis, twitter_id=999, screen_name="loner")
    client.force_login(alice)
    run_tasks(client.post, reverse("account-wtf", kwargs={"ws": thesis.slug, "twitter_id": 999}))
    assert _account(client, thesis, 999).count("no follow edge in the workspace") == 2


def test_it_refuses_bad_parameters_with_a_message(client, alice, thesis):
    client.force_login(alice)
    r = client.post(reverse("account-wtf", kwargs={"ws": thesis.slug, "twitter_id": 105}), {"top": "0"}, follow=True)
    assert "K: Ensure this value is greater than or equal to 1." in r.content.decode()
    assert not ComputeRun.objects.filter(algorithm="wtf").exists()


def test_the_publisher_page_builds_its_watch_list(client, alice, thesis, run_tasks):
    client.force_login(alice)
    r = _publisher(client, thesis)
    assert r.context["watchlist"]["run"] is None and "Compute the watch list" in r.content.decode()
    url = reverse("publisher-watchlist", kwargs={"ws": thesis.slug, "publisher": 102})
    r = run_tasks(client.post, url, {"spreaders": "5"})
    assert r.status_code == 302 and r["Location"].endswith("/publishers/102/#watchlist")
    r = _publisher(client, thesis)
    wl = r.context["watchlist"]
    assert [s["screen_name"] for s in wl["spreaders"]] == ["e", "f", "c", "a", "d"]
    # a's followers' circle points to e and d (they follow b and c, not a); both spread b already
    assert [(x["screen_name"], [p["screen_name"] for p in x["pointed_by"]], x["spreading"]) for x in wl["rows"]] == [
        ("e", ["a"], True),
        ("d", ["a"], True),
    ]
    page = r.content.decode()
    # both already spread b: none is a new account to watch, and they are shown apart, counted
    assert [x["screen_name"] for x in wl["already"]] == ["e", "d"] and wl["new"] == []
    assert "Every account on the list already spreads @b" in page and "2 already spread @b: show" in page
    assert "Recompute the watch list" in page
    assert "Alert me when one of them starts spreading" in page


def test_the_watch_list_says_how_many_spreaders_did_not_converge_and_what_to_raise(client, alice, thesis, run_tasks):
    client.force_login(alice)
    url = reverse("publisher-watchlist", kwargs={"ws": thesis.slug, "publisher": 102})
    run_tasks(client.post, url)
    # walking their followers, e and c reach the cycle a <-> b; f, a and d converge within 100 iterations
    page = _publisher(client, thesis).content.decode()
    assert "<strong>Not converged</strong> for 2 of the 5 spreaders" in page
    assert "iteration cap of 100" in page and "set <em>Iteration cap</em> to 150" in page
    assert 'name="max_iter"' in page
    run_tasks(client.post, url, {"max_iter": "150"})
    r = _publisher(client, thesis)
    assert r.context["watchlist"]["params"]["max_iter"] == 150 and "Not converged" not in r.content.decode()


def test_it_shows_scores_relative_to_the_first_with_the_exact_value_at_hand(client, alice, thesis):
    from django.utils import timezone

    from monitor.models import Account, WtfEntry, WtfResult

    e = Account.objects.get(workspace=thesis, twitter_id=105)
    r = WtfResult.objects.create(
        workspace=thesis,
        seed=e,
        direction="followers",
        circle=1000,
        top=20,
        fingerprint="f",
        computed_at=timezone.now(),
    )
    # what printed with 4 decimals read "0.0000" three times
    scores = [2.5e-5, 1.0775e-5, 3.1e-11]
    WtfEntry.objects.bulk_create(
        WtfEntry(result=r, list="relevance", rank=i + 1, account=a, score=s, ppr=4.2e-6)
        for i, (a, s) in enumerate(
            zip(
                Account.objects.filter(workspace=thesis, twitter_id__in=[101, 102, 103]).order_by("twitter_id"),
                scores,
                strict=True,
            )
        )
    )
    client.force_login(alice)
    page = _account(client, thesis, 105)
    assert "0.0000" not in page
    title = "Money relevance (authority score): 2.5e-05 exactly; 100 % of the first account's"
    assert f'<data value="2.5e-05" title="{title}">100</data>' in page
    assert '<data value="1.0775e-05"' in page and "&gt;43.1</data>" not in page and ">43.1</data>" in page
    assert ">1.24 × 10⁻⁴</data>" in page  # 3.1e-11 of 2.5e-5, in per cent
    assert '<data value="4.2e-06" title="personalized PageRank 4.2e-06 exactly">4.20 × 10⁻⁶</data>' in page
    assert "as a percentage of #1" in page


def test_not_converged_says_what_it_means_and_which_parameter_makes_it_converge(client, alice, thesis, run_tasks):
    client.force_login(alice)
    url = reverse("account-wtf", kwargs={"ws": thesis.slug, "twitter_id": 105})
    run_tasks(client.post, url)  # from e, both walks reach the cycle a <-> b: 100 iterations are not enough
    page = _account(client, thesis, 105)
    assert page.count("Not converged:") == 2
    assert "PageRank stopped at its cap of 100 iterations" in page
    assert "within 1.75 × 10⁻⁷ of their limit" in page  # 2 x 0.85^100
    assert page.count("set <em>Iteration cap</em> to 150") == 2 and 'name="max_iter"' in page
    run_tasks(client.post, url, {"max_iter": "150"})
    page = _account(client, thesis, 105)
    assert "Not converged" not in page and page.count("(both converged)") == 2


def test_while_a_recompute_runs_the_lists_shown_are_named_the_previous_result(
    client, alice, thesis, run_tasks, django_capture_on_commit_callbacks
):
    client.force_login(alice)
    run_tasks(client.post, reverse("account-wtf", kwargs={"ws": thesis.slug, "twitter_id": 105}))
    run_tasks(client.post, reverse("publisher-watchlist", kwargs={"ws": thesis.slug, "publisher": 102}))
    first_account, first_list = ComputeRun.objects.filter(algorithm="wtf").order_by("pk")
    with django_capture_on_commit_callbacks(execute=False):  # queued, never run
        client.post(reverse("account-wtf", kwargs={"ws": thesis.slug, "twitter_id": 105}))
        client.post(reverse("publisher-watchlist", kwargs={"ws": thesis.slug, "publisher": 102}))
    going_account, going_list = ComputeRun.objects.filter(algorithm="wtf").order_by("pk")[2:]
    page = _account(client, thesis, 105)
    assert page.count("<mark>Previous result</mark>") == 2
    assert page.count(f"Run {going_account.pk}</a> is recomputing it and replaces it when it finishes") == 2
    assert (
        f'by <a href="{reverse("run", kwargs={"ws": thesis.slug, "pk": first_account.pk})}">run {first_account.pk}</a>'
        in page
    )
    r = _publisher(client, thesis)
    assert r.context["watchlist"]["run"] == first_list and r.context["watchlist"]["active"] == going_list
    page = r.content.decode()
    assert "<mark>Previous result</mark>" in page
    assert f"run {first_list.pk}</a>, finished" in page
    assert f"Run {going_list.pk}</a> is recomputing it and replaces it when it finishes." in page
    assert "2 already spread @b: show" in page  # the previous list, whole, not the new run's empty one


def test_the_publisher_page_reads_its_watch_list_in_a_few_queries(
    client, alice, thesis, run_tasks, django_assert_max_num_queries
):
    client.force_login(alice)
    url = reverse("publisher", kwargs={"ws": thesis.slug, "publisher": 102})
    run_tasks(client.post, reverse("publisher-watchlist", kwargs={"ws": thesis.slug, "publisher": 102}))
    # the page's 18 without a list (test_analyst_pages: 15, the user's notices, where the follower graph came
    # from and the rank chart's account names), and the list's runs, rule, newest result, batches, spreaders,
    # results, entries and spreading accounts (two: the cascades they took part in, then their rows), whatever the
    # list's length: the read cache is off in the tests
    with django_assert_max_num_queries(18 + 10):
        assert client.get(url).status_code == 200


def test_the_watch_list_subscribes_its_alert_once(client, alice, thesis, run_tasks):
    client.force_login(alice)
    run_tasks(client.post, reverse("publisher-watchlist", kwargs={"ws": thesis.slug, "publisher": 102}))
    url = reverse("publisher-watchlist-alert", kwargs={"ws": thesis.slug, "publisher": 102})
    client.post(url)
    client.post(url)
    rule = AlertRule.objects.get()
    assert rule.owner == alice and rule.publisher.twitter_id == 102 and rule.name == "Watch list of @b"
    assert (
        "You are alerted when an account on this list starts spreading" in _publisher(client, thesis).content.decode()
    )


def test_it_downloads_the_lists_and_the_watch_list(client, alice, thesis, run_tasks):
    client.force_login(alice)
    run_tasks(client.post, reverse("account-wtf", kwargs={"ws": thesis.slug, "twitter_id": 101}))
    run_tasks(client.post, reverse("publisher-watchlist", kwargs={"ws": thesis.slug, "publisher": 102}))

    def get(name, fmt, **kw) -> str:
        r = client.get(reverse(name, kwargs={"ws": thesis.slug, "fmt": fmt, **kw}))
        assert r.status_code == 200 and "attachment" in r["Content-Disposition"]
        return b"".join(r.streaming_content).decode()

    rows = list(csv.DictReader(io.StringIO(get("account-wtf-export", "csv", twitter_id=101))))
    amplifiers = [
        (r["twitter_id"], r["rank"]) for r in rows if r["direction"] == "followers" and r["list"] == "relevance"
    ]
    assert amplifiers == [("105", "1"), ("104", "2")]
    data = json.loads(get("account-wtf-export", "json", twitter_id=101))
    assert data["account"] == "101" and {r["direction"] for r in data["results"]} == {"follows", "followers"}
    wl = list(csv.DictReader(io.StringIO(get("publisher-watchlist-export", "csv", publisher=102))))
    assert [(r["twitter_id"], r["pointed_by"], r["already_spreading"]) for r in wl] == [
        ("105", "101:1", "yes"),
        ("104", "101:2", "yes"),
    ]
    data = json.loads(get("publisher-watchlist-export", "json", publisher=102))
    assert [a["twitter_id"] for a in data["accounts"]] == ["105", "104"] and data["params"]["spreaders"] == 20


def test_the_downloads_keep_the_full_scores_in_the_stored_order(client, alice, thesis):
    from django.utils import timezone

    from monitor.models import Account, ComputeBatch, WtfEntry, WtfResult

    b, e = (Account.objects.get(workspace=thesis, twitter_id=t) for t in (102, 105))
    x, y, z = (Account.objects.create(workspace=thesis, twitter_id=t, screen_name=f"u{t}") for t in (7, 8, 9))
    run = ComputeRun.objects.create(
        workspace=thesis,
        algorithm="wtf",
        status="done",
        params={"publisher": "102", "spreaders": 1, "direction": "followers", "circle": 1000, "top": 20},
    )
    ComputeBatch.objects.create(run=run, index=0, params={"seeds": [e.pk]})
    r = WtfResult.objects.create(
        workspace=thesis,
        run=run,
        seed=e,
        direction="followers",
        circle=1000,
        top=20,
        fingerprint="f",
        computed_at=timezone.now(),
    )
    # equal to 4 decimals (and to 6 significant digits): only the full floats order them, z's id the highest
    scores = {z: 3.0000041e-5, x: 3.0000012e-5, y: 3.0000012e-5}
    WtfEntry.objects.bulk_create(
        WtfEntry(result=r, list="relevance", rank=i + 1, account=a, score=s) for i, (a, s) in enumerate(scores.items())
    )
    client.force_login(alice)

    def get(name, fmt, **kw) -> str:
        return b"".join(
            client.get(reverse(name, kwargs={"ws": thesis.slug, "fmt": fmt, **kw})).streaming_content
        ).decode()

    rows = list(csv.DictReader(io.StringIO(get("account-wtf-export", "csv", twitter_id=105))))
    assert [(r["twitter_id"], float(r["score"])) for r in rows] == [
        ("9", 3.0000041e-5),
        ("7", 3.0000012e-5),
        ("8", 3.0000012e-5),
    ]
    wl = list(csv.DictReader(io.StringIO(get("publisher-watchlist-export", "csv", publisher=b.twitter_id))))
    assert [(r["twitter_id"], float(r["score"])) for r in wl] == [
        ("9", 3.0000041e-5),
        ("7", 3.0000012e-5),
        ("8", 3.0000012e-5),
    ]
    data = json.loads(get("publisher-watchlist-export", "json", publisher=b.twitter_id))
    assert [a["score"] for a in data["accounts"]] == [3.0000041e-5, 3.0000012e-5, 3.0000012e-5]


def test_the_method_page_shows_docs_wtf(client, alice, thesis):
    client.force_login(alice)
    r = client.get(reverse("wtf-docs", kwargs={"ws": thesis.slug}))
    assert r.status_code == 200 and "Money" in r.content.decode()


def test_another_workspaces_accounts_are_not_found(client, bob, thesis):
    client.force_login(bob)
    for name, kw in (
        ("account-wtf", {"twitter_id": 105}),
        ("publisher-watchlist", {"publisher": 102}),
        ("publisher-watchlist-alert", {"publisher": 102}),
    ):
        assert client.post(reverse(name, kwargs={"ws": "lab", **kw})).status_code == 404
        assert client.post(reverse(name, kwargs={"ws": thesis.slug, **kw})).status_code == 404
    assert not ComputeRun.objects.filter(algorithm="wtf").exists() and not AlertRule.objects.exists()
    run = services.compute_run_start(workspace=thesis, tweet_pks=[], algorithm="wtf", params={"accounts": ["105"]})
    assert client.get(reverse("wtf-progress", kwargs={"ws": "lab", "pk": run.pk})).status_code == 404
