"""Who amplifies whom's reads: the account panels (the newest result of each direction, in rank order), the
watch list (the union of the spreaders' lists, who points to each, most pointed-to first, already spreading or
not), the runs going, and the read cache (served from it, and a new result shows at once without a data-version
bump). Rows are written directly where the engine's numbers do not matter."""

from __future__ import annotations

import datetime as dt

import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext
from django.utils import timezone

from monitor import selectors, services
from monitor.models import Account, ComputeBatch, ComputeRun, WtfEntry, WtfResult
from tests.webapp import THESIS


@pytest.fixture(autouse=True)
def stored_only(settings):
    """The panels of stored results alone: computing them when a page opens is off, except where a test turns it on."""
    settings.SPREADWATCH_WTF_ON_OPEN_EDGES = 0


@pytest.fixture
def thesis(ws_a, import_files):
    c = import_files(ws_a, [THESIS / "tweets.csv", THESIS / "follows.csv"])
    assert c.status == "done", c.error
    return ws_a


def acc(ws, name: str) -> Account:
    return Account.objects.get(workspace=ws, screen_name=name)


def result(
    ws, seed: Account, direction: str, lists: dict[str, list[tuple[Account, float]]], *, run=None, top=20, age=0
):
    r = WtfResult.objects.create(
        workspace=ws,
        run=run,
        seed=seed,
        direction=direction,
        circle=1000,
        top=top,
        circle_size=5,
        fingerprint="f",
        computed_at=timezone.now() - dt.timedelta(minutes=age),
    )
    WtfEntry.objects.bulk_create(
        WtfEntry(result=r, list=name, rank=i + 1, account=a, score=s, ppr=0.1)
        for name, rows in lists.items()
        for i, (a, s) in enumerate(rows)
    )
    return r


def watchlist_run(ws, publisher: Account, seeds: list[Account], status="done") -> ComputeRun:
    run = ComputeRun.objects.create(
        workspace=ws,
        algorithm="wtf",
        status=status,
        n_batches=1,
        params={
            "publisher": str(publisher.twitter_id),
            "spreaders": len(seeds),
            "direction": "followers",
            "circle": 1000,
            "top": 20,
        },
    )
    ComputeBatch.objects.create(run=run, index=0, params={"seeds": [s.pk for s in seeds]})
    return run


def test_the_panels_read_the_newest_result_of_each_direction_in_rank_order(thesis):
    a, b, c, d, e = (acc(thesis, n) for n in "abcde")
    result(thesis, e, "follows", {"similarity": [(c, 0.2), (a, 0.5)], "relevance": [(d, 0.9)]}, top=5, age=10)
    result(thesis, e, "follows", {"similarity": [(b, 0.7), (a, 0.3)]}, top=20, age=1)  # newer, other K
    result(thesis, e, "followers", {"relevance": [(d, 0.4), (c, 0.3)], "similarity": [(a, 0.1)]})
    p = selectors.wtf_account(thesis, e)
    assert [(r["screen_name"], r["rank"]) for r in p["lookalikes"]["rows"]] == [("b", 1), ("a", 2)]
    assert p["lookalikes"]["result"].top == 20
    assert [r["screen_name"] for r in p["amplifiers"]["rows"]] == ["d", "c"]  # relevance, not similarity
    assert p["run"] is None
    assert selectors.wtf_account(thesis, a) | {"run": None} == {
        "lookalikes": {"result": None, "rows": [], "previous": False},
        "amplifiers": {"result": None, "rows": [], "previous": False},
        "run": None,
        "on_open": None,
    }


def test_each_row_carries_its_score_relative_to_the_lists_first(thesis):
    # Money's scores sit past the 4th decimal: what a person compares is each one against the first
    a, b, c, e = (acc(thesis, n) for n in "abce")
    result(thesis, e, "followers", {"relevance": [(a, 2.5e-5), (b, 1.0775e-5), (c, 2.5e-5 * 0.999)]})
    rows = selectors.wtf_account(thesis, e)["amplifiers"]["rows"]
    assert [r["score"] for r in rows] == [2.5e-5, 1.0775e-5, 2.5e-5 * 0.999]  # the stored floats, untouched
    assert [round(r["relative"], 6) for r in rows] == [1.0, 0.431, 0.999]


def test_while_a_recompute_runs_the_panels_say_they_show_the_previous_result(
    thesis, django_capture_on_commit_callbacks
):
    a, e = acc(thesis, "a"), acc(thesis, "e")
    done = ComputeRun.objects.create(workspace=thesis, algorithm="wtf", status="done", params={"accounts": ["105"]})
    result(thesis, e, "follows", {"similarity": [(a, 0.5)]}, run=done, age=5)
    assert selectors.wtf_account(thesis, e)["lookalikes"]["previous"] is False
    with django_capture_on_commit_callbacks(execute=False):  # queued, never run
        going = services.compute_run_start(
            workspace=thesis, tweet_pks=[], algorithm="wtf", params={"accounts": ["105"]}
        )
    p = selectors.wtf_account(thesis, e)
    assert p["run"] == going
    assert p["lookalikes"]["previous"] is True and p["lookalikes"]["result"].run_id == done.pk
    assert p["amplifiers"]["previous"] is False  # nothing to show there: no earlier result
    result(thesis, e, "followers", {"relevance": [(a, 0.5)]}, run=going)  # the run's own result is not "previous"
    assert selectors.wtf_account(thesis, e)["amplifiers"]["previous"] is False


def test_the_watch_list_is_the_union_of_the_spreaders_lists_most_pointed_to_first(thesis):
    a, b, c, d, e, f = (acc(thesis, n) for n in "abcdef")
    outsider = Account.objects.create(workspace=thesis, twitter_id=999, screen_name="z")
    run = watchlist_run(thesis, b, [e, f, c])
    result(thesis, e, "followers", {"relevance": [(outsider, 0.5), (d, 0.4), (b, 0.9)]}, run=run)
    result(thesis, f, "followers", {"relevance": [(d, 0.3), (a, 0.2)]}, run=run)
    result(thesis, c, "followers", {"relevance": [(outsider, 0.1)]}, run=run, top=5)  # other K: not this run's
    result(thesis, c, "follows", {"relevance": [(a, 0.9)]}, run=run)  # other direction: not a watch list
    wl = selectors.wtf_watchlist(thesis, b)
    assert wl["run"] == run and wl["active"] is None
    assert [(s["screen_name"], s["computed"]) for s in wl["spreaders"]] == [("e", True), ("f", True), ("c", False)]
    got = [
        (r["screen_name"], [p["screen_name"] for p in r["pointed_by"]], round(r["score"], 6), r["spreading"])
        for r in wl["rows"]
    ]
    # the publisher itself is left out; d is pointed to twice; z and a once, z with the higher score
    assert got == [("d", ["f", "e"], 0.7, True), ("z", ["e"], 0.5, False), ("a", ["f"], 0.2, True)]
    assert [p["rank"] for p in wl["rows"][0]["pointed_by"]] == [1, 2]  # d is first in f's list, second in e's


def test_the_watch_list_keeps_the_accounts_already_spreading_apart_from_the_new_ones(thesis):
    b, d, e, f = (acc(thesis, n) for n in "bdef")
    outsider = Account.objects.create(workspace=thesis, twitter_id=999, screen_name="z")
    run = watchlist_run(thesis, b, [e, f])
    result(thesis, e, "followers", {"relevance": [(d, 0.4), (outsider, 0.3)]}, run=run)
    wl = selectors.wtf_watchlist(thesis, b)
    assert [r["screen_name"] for r in wl["rows"]] == ["d", "z"]  # every account still, for the downloads and alerts
    assert [r["screen_name"] for r in wl["new"]] == ["z"]  # d spreads b already
    assert [r["screen_name"] for r in wl["already"]] == ["d"]


def test_the_watch_list_orders_by_the_stored_score_not_a_rounded_one(thesis):
    b, e = acc(thesis, "b"), acc(thesis, "e")
    x, y, z = (
        Account.objects.create(workspace=thesis, twitter_id=t, screen_name=n) for t, n in ((7, "x"), (8, "y"), (9, "z"))
    )
    run = watchlist_run(thesis, b, [e])
    # equal to 4 decimals, and z's id is the highest: only the full floats put z first and y last
    result(thesis, e, "followers", {"relevance": [(z, 3.00004e-5), (x, 3.00002e-5), (y, 3.00002e-5)]}, run=run)
    assert [r["screen_name"] for r in selectors.wtf_watchlist(thesis, b)["rows"]] == ["z", "x", "y"]


def test_while_a_recompute_runs_the_watch_list_is_the_previous_runs_named_as_such(
    thesis, django_capture_on_commit_callbacks
):
    b, d, e, f = (acc(thesis, n) for n in "bdef")
    outsider = Account.objects.create(workspace=thesis, twitter_id=999, screen_name="z")
    first = watchlist_run(thesis, b, [e, f])
    result(thesis, e, "followers", {"relevance": [(d, 0.4)]}, run=first, age=5)
    result(thesis, f, "followers", {"relevance": [(outsider, 0.3)]}, run=first, age=5)
    going = watchlist_run(thesis, b, [e, f], status="running")
    wl = selectors.wtf_watchlist(thesis, b)
    assert wl["run"] == first and wl["active"] == going and wl["previous"] is True
    assert [r["screen_name"] for r in wl["rows"]] == ["d", "z"] and wl["recomputed"] == 0
    # the new run's first batch replaced f's list: still the previous run's list, saying how much is new
    WtfResult.objects.filter(seed=f).update(run=going)
    assert selectors.wtf_watchlist(thesis, b)["recomputed"] == 1
    ComputeRun.objects.filter(pk=going.pk).update(status="done")
    wl = selectors.wtf_watchlist(thesis, b)
    assert (wl["run"], wl["active"], wl["previous"], wl["recomputed"]) == (going, None, False, 0)


def test_a_first_watch_list_run_shows_its_list_as_it_fills_in(thesis):
    b, d, e = (acc(thesis, n) for n in "bde")
    going = watchlist_run(thesis, b, [e], status="running")
    result(thesis, e, "followers", {"relevance": [(d, 0.4)]}, run=going)
    wl = selectors.wtf_watchlist(thesis, b)
    assert (wl["run"], wl["active"], wl["previous"]) == (going, going, False)
    assert [r["screen_name"] for r in wl["rows"]] == ["d"]


def test_the_watch_list_reads_as_many_queries_for_31_accounts_as_for_1(thesis):
    b, c, d, e, f = (acc(thesis, n) for n in "bcdef")
    extra = [Account.objects.create(workspace=thesis, twitter_id=900 + i, screen_name=f"x{i}") for i in range(30)]

    def queries(lists_e, lists_f) -> tuple[int, int]:
        WtfResult.objects.all().delete()
        run = watchlist_run(thesis, b, [e, f, c])
        result(thesis, e, "followers", {"relevance": lists_e}, run=run)
        result(thesis, f, "followers", {"relevance": lists_f}, run=run)
        with CaptureQueriesContext(connection) as q:
            wl = selectors.wtf_watchlist(thesis, b)
        return len(wl["rows"]), len(q.captured_queries)

    one = queries([(d, 0.1)], [])
    many = queries([(x, 1.0 / (i + 1)) for i, x in enumerate(extra[:20])], [(x, 0.5) for x in extra[10:]] + [(d, 0.1)])
    assert (one[0], many[0]) == (1, 31)
    assert one[1] == many[1] <= 9


def test_it_finds_the_runs_going_for_an_account_and_a_publisher(thesis, django_capture_on_commit_callbacks):
    b, e = acc(thesis, "b"), acc(thesis, "e")
    with django_capture_on_commit_callbacks(execute=False):
        mine = services.compute_run_start(workspace=thesis, tweet_pks=[], algorithm="wtf", params={"accounts": ["105"]})
        wl = services.compute_run_start(workspace=thesis, tweet_pks=[], algorithm="wtf", params={"publisher": "102"})
    assert selectors.wtf_active_run(thesis, account=e) == mine
    assert selectors.wtf_active_run(thesis, account=b) is None
    assert selectors.wtf_active_run(thesis, publisher=b) == wl
    assert selectors.wtf_watchlist(thesis, b)["active"] == wl
    ComputeRun.objects.filter(pk=mine.pk).update(status="done")
    assert selectors.wtf_active_run(thesis, account=e) is None


def test_the_panels_come_from_the_cache_and_a_new_result_shows_at_once(thesis, settings):
    settings.SPREADWATCH_READ_CACHE_SECONDS = 60
    a, c, e = acc(thesis, "a"), acc(thesis, "c"), acc(thesis, "e")
    result(thesis, e, "follows", {"similarity": [(a, 0.5)]}, age=5)
    first = selectors.wtf_account(thesis, e)
    with CaptureQueriesContext(connection) as q:
        again = selectors.wtf_account(thesis, e)
    assert again["lookalikes"]["rows"] == first["lookalikes"]["rows"]
    assert len(q.captured_queries) == 2  # the newest result's time and the runs going: never cached
    WtfResult.objects.filter(seed=e).delete()
    result(thesis, e, "follows", {"similarity": [(c, 0.6)]})  # no data-version bump
    assert [r["screen_name"] for r in selectors.wtf_account(thesis, e)["lookalikes"]["rows"]] == ["c"]


def test_a_watch_list_the_previous_code_cached_is_not_read(thesis, settings):
    from monitor.cache import cached
    from monitor.selectors.wtf import wtf_marker

    settings.SPREADWATCH_READ_CACHE_SECONDS = 60
    b, d, e = (acc(thesis, n) for n in "bde")
    outsider = Account.objects.create(workspace=thesis, twitter_id=999, screen_name="z")
    run = watchlist_run(thesis, b, [e])
    result(thesis, e, "followers", {"relevance": [(d, 0.4), (outsider, 0.3)]}, run=run)

    # what the code before the already-spreading groups cached, under the key it used (its function's name)
    def _watchlist(ws, publisher, run, marker) -> dict:
        return {"params": run.params, "spreaders": [], "rows": [], "computed_at": None}

    cached(_watchlist)(thesis, b, run, wtf_marker(thesis))
    wl = selectors.wtf_watchlist(thesis, b)
    assert [r["screen_name"] for r in wl["new"]] == ["z"] and [r["screen_name"] for r in wl["already"]] == ["d"]


# --- the panels computed when the page opens ---------------------------------------------------------------------


def _lists(panels: dict) -> dict:
    return {
        k: [(r["screen_name"], r["rank"], r["score"], r["ppr"]) for r in panels[k]["rows"]]
        for k in ("lookalikes", "amplifiers")
    }


def test_panels_without_a_stored_result_are_computed_when_the_page_opens_as_a_run_with_the_defaults_stores(
    thesis, settings, run_tasks
):
    settings.SPREADWATCH_WTF_ON_OPEN_EDGES = 1_000
    e = acc(thesis, "e")
    now = selectors.wtf_account(thesis, e)
    follows = len((THESIS / "follows.csv").read_text().splitlines()) - 1
    assert now["on_open"] == {"edges": follows, "budget": 1_000, "computed": True}
    for key, direction in (("lookalikes", "follows"), ("amplifiers", "followers")):
        r = now[key]["result"]
        assert r.pk is None and r.run_id is None and r.direction == direction and r.in_graph
        assert (r.circle, r.top, r.max_iter, r.n_edges) == (1000, 20, 100, follows)
    assert [r["screen_name"] for r in now["lookalikes"]["rows"]] == ["a"]
    assert now["amplifiers"]["rows"] == []  # nobody follows e's followers' circle without following e already

    run = run_tasks(
        services.compute_run_start, workspace=thesis, tweet_pks=[], algorithm="wtf", params={"accounts": ["105"]}
    )
    stored = selectors.wtf_account(thesis, e)
    assert stored["on_open"] is None and stored["lookalikes"]["result"].run_id == run.pk
    assert _lists(stored) == _lists(now)
    # a's amplifiers, computed on open: d and e follow a's followers b and c
    amplifiers = selectors.wtf_account(thesis, acc(thesis, "a"))["amplifiers"]["rows"]
    assert {r["screen_name"] for r in amplifiers} == {"d", "e"}


def test_a_panel_computed_on_open_is_computed_once_per_data_version(thesis, settings, monkeypatch):
    from monitor.algorithms import wtf_graph as wtf

    settings.SPREADWATCH_WTF_ON_OPEN_EDGES = 1_000
    settings.SPREADWATCH_READ_CACHE_SECONDS = 60
    calls = []
    real = wtf.compute_on_open
    monkeypatch.setattr(wtf, "compute_on_open", lambda *a, **kw: calls.append(a) or real(*a, **kw))
    e = acc(thesis, "e")
    first = selectors.wtf_account(thesis, e)
    assert _lists(selectors.wtf_account(thesis, e)) == _lists(first) and len(calls) == 1
    from monitor.cache import bump_data_version

    bump_data_version(thesis.pk)  # an import or a run: the follower graph may have changed
    selectors.wtf_account(thesis, e)
    assert len(calls) == 2


def test_beyond_the_budget_the_panels_wait_for_a_run_and_say_why(thesis, settings):
    settings.SPREADWATCH_WTF_ON_OPEN_EDGES = 3  # the worked example has 8 follows: counted up to 4
    p = selectors.wtf_account(thesis, acc(thesis, "e"))
    assert p["on_open"] == {"edges": 4, "budget": 3, "computed": False}
    assert p["lookalikes"] == p["amplifiers"] == {"result": None, "rows": [], "previous": False}
    settings.SPREADWATCH_WTF_ON_OPEN_EDGES = 0  # off: nothing said either
    assert selectors.wtf_account(thesis, acc(thesis, "e"))["on_open"] is None


def test_a_stored_result_is_shown_as_stored_and_only_the_other_direction_is_computed_on_open(thesis, settings):
    settings.SPREADWATCH_WTF_ON_OPEN_EDGES = 1_000
    b, e = acc(thesis, "b"), acc(thesis, "e")
    stored = result(thesis, e, "follows", {"similarity": [(b, 0.7)]})
    p = selectors.wtf_account(thesis, e)
    assert p["lookalikes"]["result"] == stored and [r["screen_name"] for r in p["lookalikes"]["rows"]] == ["b"]
    assert p["amplifiers"]["result"].pk is None and p["on_open"]["computed"]


def test_an_account_outside_the_follower_graph_gets_panels_that_say_so(thesis, settings):
    settings.SPREADWATCH_WTF_ON_OPEN_EDGES = 1_000
    outsider = Account.objects.create(workspace=thesis, twitter_id=999, screen_name="z")
    p = selectors.wtf_account(thesis, outsider)
    assert p["lookalikes"]["result"].in_graph is False and p["amplifiers"]["result"].in_graph is False
    assert p["lookalikes"]["rows"] == p["amplifiers"]["rows"] == []


def test_without_the_graph_file_the_budget_counts_the_rows_and_a_page_never_builds_a_bigger_graph(
    thesis, settings, monkeypatch
):
    from monitor import graph_files
    from monitor.algorithms import wtf_graph as wtf

    monkeypatch.setattr(graph_files, "load", lambda ws, token: None)  # this machine has no copy of the graph
    monkeypatch.setattr(wtf, "load_graph", lambda ws: pytest.fail("a graph over the budget was read"))
    settings.SPREADWATCH_WTF_ON_OPEN_EDGES = 7
    assert selectors.wtf_account(thesis, acc(thesis, "e"))["on_open"] == {"edges": 8, "budget": 7, "computed": False}
