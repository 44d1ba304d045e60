"""The issue's correctness property: a collection replayed as a stream -- shuffled within a bounded lateness
window, cut into random micro-batches, each applied with ``apply_events`` -- ends in exactly the edges (spreading
graphs), per-cascade influence, tweet outcomes and daily aggregates of a batch upload of the same records (in
arrival order) through the normal upload + compute path. On small generated collections (hypothesis: a few
examples, each one hits PostgreSQL) and on the bundled Twitter16 sample (tests/data/twitter16)."""

from __future__ import annotations

import itertools
import random
import tarfile

import numpy as np
import pytest
from django.db.models import Sum
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from compute.formats import read
from compute.tables import NO_TWEET
from monitor import services
from monitor.models import StreamArrival, StreamEvent
from monitor.services.stream.apply import apply_events
from tests.monitor.services.stream.test_apply import add_events, assert_same, snapshot, write_upload
from tests.webapp import DATA

pytestmark = pytest.mark.services

_n = itertools.count()
T0 = 1_600_000_000


def replay(ws, timed: list[tuple[float, dict]], rnd: random.Random, *, window: float, max_batch: int) -> list[dict]:
    """Stream ``timed`` records (time, record) into ``ws``: each arrives at its time plus up to ``window`` seconds
    of lateness, and they are applied in random micro-batches of 1..``max_batch``. Returns them in arrival order."""
    keyed = sorted(((t + rnd.uniform(0, window), k) for k, (t, _) in enumerate(timed)))
    arrival = [timed[k][1] for _, k in keyed]
    ids = add_events(ws, arrival)
    i = 0
    while i < len(ids):
        n = rnd.randint(1, max_batch)
        apply_events(workspace_id=ws.pk, event_ids=ids[i : i + n])
        i += n
    return arrival


def fresh_workspaces():
    k = next(_n)
    return (
        services.workspace_create(name=f"Stream {k}", slug=f"stream-{k}"),
        services.workspace_create(name=f"Batch {k}", slug=f"batch-{k}"),
    )


@st.composite
def collections(draw) -> list[tuple[float, dict]]:
    """A few cascades among a handful of users: ties in time, repeated retweeters, self-retweets, an unknown
    original, follows in both directions, labels and follower counts."""
    users = list(range(101, 101 + draw(st.integers(3, 7))))
    user = st.sampled_from(users)
    timed: list[tuple[float, dict]] = []
    for k in range(draw(st.integers(1, 3))):
        oid, t0 = 1000 * (k + 1), T0 + 86_400 * draw(st.integers(0, 1)) + 10 * k
        orig = {"tweet_id": oid, "user_id": draw(user), "created_at": t0, "followers_count": draw(st.integers(0, 50))}
        label = draw(st.sampled_from([None, "false", "true"]))
        if label:
            orig["label"] = label
        timed.append((t0, orig))
        for j in range(draw(st.integers(0, 6))):
            t = t0 + draw(st.integers(0, 4))  # 0: a tie with the original; equal times give no edge
            rt = {"tweet_id": oid + j + 1, "retweeted_tweet_id": oid, "user_id": draw(user), "created_at": t,
                  "followers_count": draw(st.integers(0, 50))}  # fmt: skip
            timed.append((t, rt))
    if draw(st.booleans()):  # a retweet whose original never comes: it waits (the upload skips it)
        orphan = {"tweet_id": 99_001, "retweeted_tweet_id": 99_000, "user_id": users[0], "created_at": T0}
        timed.append((T0 + 5, orphan))
    pairs = draw(st.sets(st.tuples(user, user).filter(lambda p: p[0] != p[1]), max_size=12))
    span = max(t for t, _ in timed) - T0 + 1
    for a, b in sorted(pairs):
        timed.append((T0 + draw(st.integers(0, int(span))), {"follower": a, "followee": b}))
    return timed


@settings(
    max_examples=6,
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)
@given(timed=collections(), rnd=st.randoms(use_true_random=False), window=st.sampled_from([0, 3, 30]))
def test_a_replayed_generated_collection_ends_as_its_batch_upload(db, import_files, tmp_path, timed, rnd, window):
    ws_s, ws_b = fresh_workspaces()
    arrival = replay(ws_s, timed, rnd, window=window, max_batch=4)
    c = import_files(ws_b, write_upload(tmp_path / ws_b.slug, arrival))
    assert c.status == c.Status.DONE, c.error
    assert_same(snapshot(ws_s), snapshot(ws_b))
    left = set(StreamEvent.objects.filter(workspace=ws_s).values_list("status", flat=True))
    assert left <= {StreamEvent.Status.APPLIED, StreamEvent.Status.WAITING}


def twitter16_records(rnd: random.Random) -> list[tuple[float, dict]]:
    """The bundled Twitter16 sample's trees as stream records: originals and retweets as the tweets CSV's fields
    (a tree's retweets have no id of their own: 0), the tree edges as follow records arriving at random times."""
    r = read(DATA / "twitter16")
    tw = r.tweets
    timed = []
    for tid, rt, uid, t in zip(tw.tweet_id.tolist(), tw.retweeted_tweet_id.tolist(), tw.user_id.tolist(),
                               tw.created_at.tolist()):  # fmt: skip
        rec = {"tweet_id": tid, "user_id": uid, "created_at": repr(t)}
        if rt != NO_TWEET:
            rec["retweeted_tweet_id"] = rt
        elif tid in r.labels:
            rec["label"] = r.labels[tid]
        timed.append((t, rec))
    lo, hi = float(np.min(tw.created_at)), float(np.max(tw.created_at))
    for a, b in zip(r.follows.follower_id.tolist(), r.follows.followee_id.tolist()):
        timed.append((rnd.uniform(lo, hi), {"follower": a, "followee": b}))
    return timed


@pytest.mark.parametrize("seed", [0, 1])
def test_the_bundled_twitter16_sample_replayed_ends_as_its_upload(db, import_files, tmp_path, seed):
    rnd = random.Random(seed)
    ws_s, ws_b = fresh_workspaces()
    records = twitter16_records(rnd)
    replay(ws_s, records, rnd, window=3_600, max_batch=600)
    # the batch side uploads the sample's own files (the trees folder, as a tar archive)
    archive = tmp_path / "twitter16.tar"
    with tarfile.open(archive, "w") as tar:
        tar.add(DATA / "twitter16", arcname="twitter16")
    c = import_files(ws_b, [archive])
    assert c.status == c.Status.DONE, c.error
    stream, batch = snapshot(ws_s), snapshot(ws_b)
    assert len(batch["edges"]) == 20 and sum(map(len, batch["edges"].values())) > 1_000
    assert_same(stream, batch)
    # every event applied cleanly (and so deleted), each counted once in the Live page's arrivals
    assert not StreamEvent.objects.filter(workspace=ws_s).exists()
    assert StreamArrival.objects.filter(workspace=ws_s).aggregate(n=Sum("events"))["n"] == len(records)
