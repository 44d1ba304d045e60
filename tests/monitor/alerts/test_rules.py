"""Each rule kind fires when its condition holds and stays quiet below its threshold (PostgreSQL under
``make test``)."""

from __future__ import annotations

import pytest

from monitor import selectors
from monitor import services as monitor_services
from monitor.alerts import services
from monitor.alerts.kinds import CLAIM_KINDS
from monitor.alerts.models import Alert, AlertRule
from monitor.models import Publisher, Tweet
from tests.webapp import THESIS

from .helpers import DAY2, rising_ranks

Kind = AlertRule.Kind


@pytest.fixture
def thesis(ws_a, alice, import_files):
    c = import_files(ws_a, [THESIS / "tweets.csv", THESIS / "follows.csv"])
    assert c.status == c.Status.DONE, c.error
    return ws_a


def rule(ws, owner, kind, **params) -> AlertRule:
    return services.rule_create(workspace=ws, owner=owner, name=f"{kind} rule", kind=kind, **params)


def fired(ws, r: AlertRule) -> dict[str, Alert]:
    created = services.evaluate_workspace(workspace_id=ws.pk)
    assert all(a.rule_id == r.pk for a in created)
    return {a.account.screen_name: a for a in Alert.objects.filter(rule=r).select_related("account")}


def test_it_fires_top_k_for_accounts_entering_the_top_k(ws_a, alice):
    acc = rising_ranks(ws_a)
    r = rule(ws_a, alice, Kind.TOP_K, publisher=acc["p"], k=2, window_days=1)
    got = fired(ws_a, r)
    assert set(got) == {"x6", "x5"}  # top 2 on day 2; x1 and x2 held it on day 1
    assert (got["x6"].rank, got["x6"].value, got["x6"].window_start, got["x6"].window_end) == (1, 100.0, DAY2, DAY2)
    assert "entered the top 2" in got["x6"].message


def test_it_does_not_fire_top_k_when_the_top_k_is_unchanged(ws_a, alice):
    acc = rising_ranks(ws_a)
    r = rule(ws_a, alice, Kind.TOP_K, publisher=acc["p"], k=6, window_days=1)
    assert fired(ws_a, r) == {}


def test_it_fires_top_k_for_any_publisher_of_the_workspace(thesis, alice):
    # the two days together against the two empty days before them: the whole top 3 is new
    r = rule(thesis, alice, Kind.TOP_K, k=3, window_days=2)
    assert set(fired(thesis, r)) == {"b", "e", "f"}


def test_it_fires_influence_threshold_above_the_threshold_only(thesis, alice):
    r = rule(thesis, alice, Kind.INFLUENCE_THRESHOLD, threshold=90, window_days=2)
    got = fired(thesis, r)
    assert {n: a.value for n, a in got.items()} == {"b": 118.0, "e": 96.0}
    quiet = rule(thesis, alice, Kind.INFLUENCE_THRESHOLD, threshold=118, window_days=2)
    services.evaluate_workspace(workspace_id=thesis.pk)
    assert not Alert.objects.filter(rule=quiet).exists()


def test_it_fires_influence_threshold_on_the_rules_aggregate_and_window(thesis, alice):
    b = selectors.account_get(thesis, 102)
    # the last day of data only (2020-01-02): e 48, f 32 are spreaders; mean over T=1
    r = rule(thesis, alice, Kind.INFLUENCE_THRESHOLD, publisher=b, threshold=40, window_days=1, aggregate="mean")
    assert {n: a.value for n, a in fired(thesis, r).items()} == {"b": 55.0, "e": 48.0}


def test_it_fires_rank_rise_at_least_n_places(ws_a, alice):
    acc = rising_ranks(ws_a)
    r = rule(ws_a, alice, Kind.RANK_RISE, publisher=acc["p"], places=3, window_days=1)
    got = fired(ws_a, r)
    assert set(got) == {"x6", "x5"}
    assert (got["x6"].previous_rank, got["x6"].rank, got["x6"].previous_value) == (6, 1, 10.0)
    assert (got["x5"].previous_rank, got["x5"].rank) == (5, 2)


def test_it_does_not_fire_rank_rise_below_n_places(ws_a, alice):
    acc = rising_ranks(ws_a)
    r = rule(ws_a, alice, Kind.RANK_RISE, places=6, window_days=1)  # x6 rose 5
    assert fired(ws_a, r) == {}
    assert acc  # the data is there: a smaller N fires
    r.places = 5
    r.save()
    assert set(fired(ws_a, r)) == {"x6"}


def test_it_fires_cascade_reach_once_per_tweet_above_r(thesis, alice):
    r = rule(thesis, alice, Kind.CASCADE_REACH, reach=60, window_days=7)  # reaches: 1000 -> 63, 2000 -> 55
    got = list(Alert.objects.filter(rule=r))
    assert got == []
    created = services.evaluate_workspace(workspace_id=thesis.pk)
    assert [(a.tweet.tweet_id, a.account.screen_name, a.value) for a in created] == [(1000, "b", 63.0)]
    r.reach = 50
    r.save()
    again = services.evaluate_workspace(workspace_id=thesis.pk)
    assert sorted(a.tweet.tweet_id for a in again) == [2000]  # 1000 not again


def test_it_does_not_fire_cascade_reach_below_r_or_for_unmonitored_publishers(thesis, alice):
    r = rule(thesis, alice, Kind.CASCADE_REACH, reach=63, window_days=7)
    assert services.evaluate_workspace(workspace_id=thesis.pk) == []
    r.reach = 10
    r.save()
    Publisher.objects.filter(workspace=thesis).update(monitored=False)
    assert services.evaluate_workspace(workspace_id=thesis.pk) == []


def test_it_fires_false_spreader_at_count_false_cascades(thesis, alice):
    Tweet.objects.filter(workspace=thesis, tweet_id__in=[1000, 2000]).update(label="false")
    r = rule(thesis, alice, Kind.FALSE_SPREADER, count=2, window_days=7)
    got = fired(thesis, r)
    assert {n: a.value for n, a in got.items()} == {"a": 2.0, "c": 2.0, "e": 2.0, "f": 2.0}  # not b: publisher


def test_it_does_not_fire_false_spreader_below_count(thesis, alice):
    Tweet.objects.filter(workspace=thesis, tweet_id=1000).update(label="false")
    r = rule(thesis, alice, Kind.FALSE_SPREADER, count=2, window_days=7)
    assert fired(thesis, r) == {}
    r.count = 1
    r.save()
    assert set(fired(thesis, r)) == {"a", "c", "d", "e", "f"}


def test_it_raises_nothing_for_a_workspace_without_data(ws_a, alice):
    claim = monitor_services.claim_create(workspace=ws_a, user=alice, name="A claim", query="virus")
    for kind in Kind.values:
        rule(ws_a, alice, kind, **({"claim": claim} if kind in CLAIM_KINDS else {}))
    assert services.evaluate_workspace(workspace_id=ws_a.pk) == []


def _watch_list(ws, run_tasks, publisher: int = 102) -> None:
    from monitor import services as monitor_services

    run = run_tasks(
        monitor_services.compute_run_start,
        workspace=ws,
        tweet_pks=[],
        algorithm="wtf",
        params={"publisher": str(publisher), "spreaders": 5},
    )
    run.refresh_from_db()
    assert run.status == "done", run.error


@pytest.fixture
def d_starts_on_day_2(ws_a, alice, import_files, tmp_path):
    """The thesis with d's retweet moved from tweet 1000 (day 1) to tweet 2000 (day 2): d starts spreading b on
    day 2, while e, the other account on b's watch list, spread b on both days."""
    text = (THESIS / "tweets.csv").read_text()
    text = text.replace("1001,1000,104,2020-01-01T00:00:01Z,8,d", "2005,2000,104,2020-01-02T00:00:05Z,8,d")
    (tmp_path / "tweets.csv").write_text(text)
    c = import_files(ws_a, [tmp_path / "tweets.csv", THESIS / "follows.csv"])
    assert c.status == c.Status.DONE, c.error
    return ws_a


def test_it_fires_watchlist_spreader_when_an_account_on_the_list_starts_spreading(d_starts_on_day_2, alice, run_tasks):
    ws = d_starts_on_day_2
    _watch_list(ws, run_tasks)
    assert [r["screen_name"] for r in selectors.wtf_watchlist(ws, selectors.account_get(ws, 102))["rows"]] == ["e", "d"]
    r = rule(ws, alice, Kind.WATCHLIST_SPREADER, publisher=selectors.account_get(ws, 102), window_days=1)
    got = fired(ws, r)
    assert set(got) == {"d"}  # e spread b on day 1 already: it did not start in the window
    a = got["d"]
    assert (a.value, str(a.window_start), str(a.window_end)) == (1.0, "2020-01-02", "2020-01-02")
    assert a.message == (
        "@d, on the watch list of @b (a likely next amplifier of @a), started spreading it: 1 cascade in "
        "2020-01-02..2020-01-02, the first on 2020-01-02"
    )


def test_it_fires_watchlist_spreader_for_every_publisher_with_a_watch_list(d_starts_on_day_2, alice, run_tasks):
    _watch_list(d_starts_on_day_2, run_tasks)
    r = rule(d_starts_on_day_2, alice, Kind.WATCHLIST_SPREADER, window_days=1)
    assert set(fired(d_starts_on_day_2, r)) == {"d"}


def test_it_does_not_fire_watchlist_spreader_for_accounts_that_spread_before_the_window(thesis, alice, run_tasks):
    # d spread b on day 1 only, e on both days: neither starts on day 2
    _watch_list(thesis, run_tasks)
    b = selectors.account_get(thesis, 102)
    assert [r["screen_name"] for r in selectors.wtf_watchlist(thesis, b)["rows"]] == ["e", "d"]
    assert fired(thesis, rule(thesis, alice, Kind.WATCHLIST_SPREADER, publisher=b, window_days=1)) == {}


def test_it_does_not_fire_watchlist_spreader_without_a_watch_list(d_starts_on_day_2, alice):
    b = selectors.account_get(d_starts_on_day_2, 102)
    assert fired(d_starts_on_day_2, rule(d_starts_on_day_2, alice, Kind.WATCHLIST_SPREADER, publisher=b)) == {}


@pytest.fixture
def planted(ws_a, alice, import_files, tmp_path):
    from tests.coordinated import coordinated_csv

    c = import_files(ws_a, [coordinated_csv(tmp_path / "tweets.csv")[0]])
    assert c.status == c.Status.DONE, c.error
    return ws_a


def _publisher(ws, twitter_id: int = 900):
    return Publisher.objects.get(workspace=ws, account__twitter_id=twitter_id).account


def test_it_fires_coordinated_cluster_for_a_new_cluster_of_at_least_members(planted, alice):
    from tests.coordinated import PLANTED

    r = rule(planted, alice, Kind.COORDINATED_CLUSTER, publisher=_publisher(planted), members=5)
    alerts = fired(planted, r)
    assert len(alerts) == 1
    (a,) = alerts.values()
    assert a.value == 5.0 and a.account.twitter_id in PLANTED
    assert (
        a.message.startswith("A new coordinated cluster of 5 accounts (")
        and "(501, 502, 503 and 2 more) spread 900 in 2019-12-26..2020-01-01" in a.message
    )
    assert "within 60 s of each other (at least 5 accounts)" in a.message
    any_publisher = rule(planted, alice, Kind.COORDINATED_CLUSTER, members=5)
    assert len(fired(planted, any_publisher)) == 1  # every monitored publisher's, the same cluster


def test_it_does_not_fire_coordinated_cluster_below_members_or_for_a_cluster_seen_before(planted, alice, import_files,
                                                                                       tmp_path):  # fmt: skip
    from tests.coordinated import coordinated_csv

    r = rule(planted, alice, Kind.COORDINATED_CLUSTER, publisher=_publisher(planted), members=6)
    assert fired(planted, r) == {}
    # the same five accounts did the same in the previous window (a week before): not a new cluster
    earlier = import_files(planted, [coordinated_csv(tmp_path / "earlier.csv", first_tweet=3000, date="2019-12-20")[0]])
    assert earlier.status == earlier.Status.DONE, earlier.error
    r5 = rule(planted, alice, Kind.COORDINATED_CLUSTER, publisher=_publisher(planted), members=5)
    assert fired(planted, r5) == {}


def test_coordinated_cluster_skips_a_window_beyond_its_pairs(planted, alice, monkeypatch, caplog):
    from monitor.alerts import rules

    monkeypatch.setattr(rules, "CLUSTER_MAX_PAIRS", 3)
    r = rule(planted, alice, Kind.COORDINATED_CLUSTER, publisher=_publisher(planted), members=2)
    assert fired(planted, r) == {}
    assert "co-retweet pairs, more than 3: not evaluated" in caplog.text
