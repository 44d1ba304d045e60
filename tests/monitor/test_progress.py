"""One progress bar over every phase of a collection (``monitor.progress`` and the collection's progress
selector): named phases in order, only forward, and 100 % only once the collection is done."""

from __future__ import annotations

import time

import pytest
from django.core.cache import cache

from monitor import progress as P
from monitor.models import Collection
from monitor.selectors import collection_progress
from tests.webapp import THESIS

NAMES = ["reading", "storing", "computing", "storing results", "aggregates"]


def test_the_phases_are_named_in_order_and_share_the_whole_bar():
    assert [name for name, _ in P.PHASES] == NAMES
    assert sum(share for _, share in P.PHASES) == pytest.approx(100.0)
    assert all(share > 0 for _, share in P.PHASES)


def _walk(n_batches: int) -> list[tuple[str, float]]:
    """Every report a collection makes from the first byte read to its run's last batch stored."""
    seq = [P.import_percent(i / 200) for i in range(201)]
    for done in range(n_batches):
        seq += [P.compute_percent(done, n_batches, phase) for phase in P.COMPUTE_PHASES]
    seq.append(P.compute_percent(n_batches, n_batches))
    return seq


@pytest.mark.parametrize("n_batches", [1, 2, 7])
def test_the_bar_only_moves_forward_through_every_phase_and_never_says_100(n_batches):
    seq = _walk(n_batches)
    percents = [pct for _, pct in seq]
    assert percents == sorted(percents)
    assert max(percents) == P.TOP_WHILE_ACTIVE < 100
    phases = [phase for phase, _ in seq]
    assert [p for i, p in enumerate(phases) if i == 0 or phases[i - 1] != p][:5] == NAMES
    assert phases[0] == "reading" and percents[0] == 0.0


def test_the_import_ends_where_the_compute_begins():
    assert P.import_percent(1.0) == ("storing", 53.0)
    assert P.compute_percent(0, 4) == ("computing", 53.0)
    # reading is the import's first 85 %: the merge starts the storing phase
    assert P.import_percent(P.READ_SHARE)[0] == "storing" and P.import_percent(0.84)[0] == "reading"


def test_an_import_without_a_compute_fills_the_bar_with_its_own_two_phases():
    assert P.import_percent(P.READ_SHARE, computes=False) == ("storing", round(100 * 18 / 53, 1))
    assert P.import_percent(1.0, computes=False) == ("storing", P.TOP_WHILE_ACTIVE)


def test_it_refuses_a_phase_it_does_not_know():
    with pytest.raises(ValueError, match="unknown compute phase 'reading'"):
        P.compute_percent(0, 1, "reading")
    with pytest.raises(ValueError, match="unknown progress phase 'done'"):
        P.phase_percent("done")


def test_a_finished_import_that_still_computes_is_not_done(ws_a, import_files):
    """The defect: the import's last report ("done", 100 %) was shown while the collection still stored and
    computed. Each state of the collection's one bar, read through the selector the page polls."""
    from monitor.services.collections import _progress_reporter
    from monitor.services.runs import run_progress_key

    c = import_files(ws_a, [THESIS / "tweets.csv", THESIS / "follows.csv"])
    run = c.compute_runs.get()
    assert collection_progress(c) | {} == {
        "phase": "done",
        "phase_label": "Done",
        "step": 5,
        "steps": 5,
        "stage": "Done",
        "percent": 100.0,
    }

    Collection.objects.filter(pk=c.pk).update(status=Collection.Status.INGESTING)
    c.refresh_from_db()
    report = _progress_reporter(c)
    report("reading tweets.csv: 5 tweets and retweets, 0 follows", 0.4)
    reading = collection_progress(c)
    report("stored", 1.0)  # the import's last report: reading and storing are over, the compute is not
    stored = collection_progress(c)
    assert (reading["phase"], reading["step"], reading["stage"]) == (
        "reading",
        1,
        "reading tweets.csv: 5 tweets and retweets, 0 follows",
    )
    assert (stored["phase"], stored["phase_label"], stored["step"]) == ("storing", "Storing", 2)
    assert reading["percent"] < stored["percent"] < 100

    Collection.objects.filter(pk=c.pk).update(status=Collection.Status.COMPUTING)
    type(run).objects.filter(pk=run.pk).update(batches_done=0)
    c.refresh_from_db()
    shown = []
    for phase in P.COMPUTE_PHASES:
        cache.set(run_progress_key(run.pk), {"phase": phase, "batch": 0, "done": 0, "at": time.time()})
        shown.append(collection_progress(c))
    assert [s["phase"] for s in shown] == list(P.COMPUTE_PHASES)
    assert [s["step"] for s in shown] == [3, 4, 5]
    assert shown[0]["stage"] == "batch 1 of 1"
    percents = [stored["percent"]] + [s["percent"] for s in shown]
    assert percents == sorted(percents) and percents[-1] < 100

    # a phase reported by a batch counted since then is stale: the next batch waits in "computing"
    type(run).objects.filter(pk=run.pk).update(batches_done=1)
    c.refresh_from_db()
    last = collection_progress(c)
    assert last["stage"] == "finishing the run" and last["percent"] == P.TOP_WHILE_ACTIVE
