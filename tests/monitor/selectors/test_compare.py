"""Compare publishers (monitor.selectors.compare): the top N of each, the overlap per pair and the shared
accounts, checked against numbers worked out by hand on a small fixture written straight into the daily
aggregates; and the refusals (too few, too many, repeated, unknown)."""

from __future__ import annotations

import datetime as dt

import pytest

from monitor import selectors
from monitor.models import Account, DailyInfluence, Publisher, PublisherDay
from tests.webapp import daily_partition

DAY = dt.date(2020, 3, 1)
# publisher -> spreader -> influence (one day, one tweet each). Top 3 by hand:
#   P: a 50, b 40, c 30 | Q: b 45, a 35, f 25 | R: h 60, f 30, d 25
#   P∩Q = {a, b}: 2, J = 2/4 = 0.5;  P∩R = {}: 0, J = 0/6 = 0;  Q∩R = {f}: 1, J = 1/5 = 0.2
#   shared (in >= 2 top 3): a (P #1, Q #2, R outside with 1.0), b (P #2, Q #1, R none), f (Q #3, R #2, P none)
SCORES = {
    "P": {"a": 50.0, "b": 40.0, "c": 30.0, "d": 20.0, "e": 10.0},
    "Q": {"b": 45.0, "a": 35.0, "f": 25.0, "c": 5.0, "g": 4.0},
    "R": {"h": 60.0, "f": 30.0, "d": 25.0, "a": 1.0},
}


def write_three(ws_a) -> dict[str, Account]:
    """Writes :data:`SCORES` into the daily aggregates of ``ws_a``; the accounts by name (twitter ids 500 + i)."""
    names = ["P", "Q", "R", "a", "b", "c", "d", "e", "f", "g", "h"]
    acc = {n: Account.objects.create(workspace=ws_a, twitter_id=500 + i, screen_name=n) for i, n in enumerate(names)}
    daily_partition(ws_a)
    for pub, scores in SCORES.items():
        p = acc[pub]
        Publisher.objects.create(workspace=ws_a, account=p)
        # the publisher's own influence (its tweets' reach) is in the aggregates too: never one of its spreaders
        own = sum(scores.values()) + 1.0
        PublisherDay.objects.create(workspace=ws_a, publisher=p, day=DAY, tweets=1, reach=own)
        rows = [DailyInfluence(workspace=ws_a, publisher=p, account=p, day=DAY, influence=own, cascades=1)]
        rows += [
            DailyInfluence(workspace=ws_a, publisher=p, account=acc[n], day=DAY, influence=v, cascades=1)
            for n, v in scores.items()
        ]
        DailyInfluence.objects.bulk_create(rows)
    return acc


@pytest.fixture
def three(ws_a):
    return write_three(ws_a)


def _compare(ws, acc, names, **kw):
    pubs = selectors.compare_publishers_get(ws, [acc[n].twitter_id for n in names])
    return selectors.compare_publishers(ws, pubs, **kw)


def test_it_lists_each_publishers_top_spreaders_without_the_publisher(ws_a, three):
    cmp = _compare(ws_a, three, ["P", "Q", "R"], top=3)
    assert [[r["screen_name"] for r in c.rows] for c in cmp.columns] == [
        ["a", "b", "c"],
        ["b", "a", "f"],
        ["h", "f", "d"],
    ]
    assert [r["total"] for r in cmp.columns[0].rows] == [50.0, 40.0, 30.0]
    assert cmp.sizes == [3, 3, 3]


def test_it_counts_the_overlap_and_jaccard_of_each_pair(ws_a, three):
    cmp = _compare(ws_a, three, ["P", "Q", "R"], top=3)
    got = {(p["a"].screen_name, p["b"].screen_name): (p["overlap"], p["jaccard"]) for p in cmp.pairs}
    assert got == {("P", "Q"): (2, 0.5), ("P", "R"): (0, 0.0), ("Q", "R"): (1, 0.2)}
    # the matrix is symmetric, with each list's own length on the diagonal
    assert [[c["overlap"] for c in row] for row in cmp.matrix] == [[3, 2, 0], [2, 3, 1], [0, 1, 3]]
    assert cmp.matrix[2][1]["jaccard"] == pytest.approx(0.2)
    assert cmp.matrix[0][0]["jaccard"] == 1.0


def test_it_lists_the_shared_accounts_with_their_rank_and_score_under_each(ws_a, three):
    cmp = _compare(ws_a, three, ["P", "Q", "R"], top=3)
    got = {s["screen_name"]: [(c["rank"], c["score"], c["in_top"]) for c in s["cells"]] for s in cmp.shared}
    assert got == {
        "a": [(1, 50.0, True), (2, 35.0, True), (None, 1.0, False)],  # outside R's top 3, with its score there
        "b": [(2, 40.0, True), (1, 45.0, True), (None, None, False)],  # spread none of R's tweets
        "f": [(None, None, False), (3, 25.0, True), (2, 30.0, True)],
    }
    # best mean rank first (a and b tie at 1.5: by id), f (2.5) last
    assert [s["screen_name"] for s in cmp.shared] == ["a", "b", "f"]
    assert all(s["in_top"] == 2 for s in cmp.shared)


def test_a_longer_list_finds_more_shared_accounts(ws_a, three):
    cmp = _compare(ws_a, three, ["P", "Q", "R"], top=5)
    # P: a b c d e | Q: b a f c g | R: h f d a
    shared = {s["screen_name"]: s["in_top"] for s in cmp.shared}
    assert shared == {"a": 3, "b": 2, "c": 2, "d": 2, "f": 2}
    assert cmp.shared[0]["screen_name"] == "a"  # in all three lists
    p_r = next(p for p in cmp.pairs if (p["a"].screen_name, p["b"].screen_name) == ("P", "R"))
    assert (p_r["overlap"], p_r["jaccard"]) == (2, pytest.approx(2 / 7))  # {a, d} of {a..e, h, f}


def test_two_publishers_without_common_spreaders_share_nothing(ws_a, three):
    cmp = _compare(ws_a, three, ["P", "R"], top=3)
    assert cmp.shared == []
    assert cmp.pairs[0]["overlap"] == 0


def test_the_outside_score_follows_the_aggregate(ws_a, three):
    cmp = _compare(ws_a, three, ["P", "Q", "R"], top=3, aggregate="participation")
    a = next(s for s in cmp.shared if s["screen_name"] == "a")
    assert a["cells"][2] == {"rank": None, "score": 1.0, "in_top": False}  # 1.0 over one cascade


def test_a_window_without_data_gives_empty_lists(ws_a, three):
    cmp = _compare(ws_a, three, ["P", "Q"], top=3, window=selectors.Window(dt.date(2021, 1, 1), None))
    assert cmp.sizes == [0, 0] and cmp.shared == [] and cmp.pairs[0]["jaccard"] is None


@pytest.mark.parametrize(
    ("names", "message"),
    [
        (["P"], "at least 2"),
        (["P", "Q", "R", "a", "b", "c"], "at most 5"),
        (["P", "Q", "P"], "500 was chosen twice"),
        (["P", "a"], "503 is not a publisher of this workspace"),
    ],
)
def test_it_refuses_publishers_that_cannot_be_compared(ws_a, three, names, message):
    with pytest.raises(selectors.CompareError, match=message):
        selectors.compare_publishers_get(ws_a, [three[n].twitter_id for n in names])


def test_an_unknown_id_is_named(ws_a, three):
    with pytest.raises(selectors.CompareError, match="123, 456 are not publishers"):
        selectors.compare_publishers_get(ws_a, [500, 123, 456])


def test_a_list_being_chosen_may_have_one_publisher(ws_a, three):
    assert selectors.compare_publishers_get(ws_a, [501], partial=True) == [three["Q"]]


def _false_claim(ws, acc):
    """One false-labelled tweet of P, spread by g (70) and a (5), and one of Q, spread by g (3): by the false
    claims alone, P's top 3 is g, a and Q's is g."""
    from monitor.models import Label

    for pub, scores in (("P", {"g": 70.0, "a": 5.0}), ("Q", {"g": 3.0})):
        p = acc[pub]
        PublisherDay.objects.create(workspace=ws, publisher=p, day=DAY, label=Label.FALSE, tweets=1, reach=100.0)
        DailyInfluence.objects.bulk_create(
            DailyInfluence(
                workspace=ws, publisher=p, account=acc[n], day=DAY, label=Label.FALSE, influence=v, cascades=1
            )
            for n, v in scores.items()
        )


def test_it_compares_the_spreaders_of_one_truth_label(ws_a, three):
    _false_claim(ws_a, three)
    cmp = _compare(ws_a, three, ["P", "Q", "R"], top=3, labels=["false"])
    assert [[r["screen_name"] for r in c.rows] for c in cmp.columns] == [["g", "a"], ["g"], []]
    assert [s["screen_name"] for s in cmp.shared] == ["g"]
    # P ∩ Q = {g} of {g, a}
    assert cmp.pairs[0]["overlap"] == 1 and cmp.pairs[0]["jaccard"] == 0.5
    every = _compare(ws_a, three, ["P", "Q", "R"], top=3)
    assert [r["screen_name"] for r in every.columns[0].rows] == ["g", "a", "b"]  # 70 + 0, 50 + 5, 40
