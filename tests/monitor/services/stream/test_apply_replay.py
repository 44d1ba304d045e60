"""The issue's correctness property: a collection replayed as a stream -- shuffled within a bounded lateness
window, cut into random micro-batches, each applied with ``apply_events`` -- ends in exactly the edges (spreading
graphs), per-cascade influence, tweet outcomes and daily aggregates of a batch upload of the same records (in
arrival order) through the normal upload + compute path. On small generated collections (hypothesis: a few
examples, each one hits PostgreSQL) and on the bundled Twitter16 sample (tests/data/twitter16)."""

from __future__ import annotations

import itertools
import json
import random
import tarfile
import time

import numpy as np
import pytest
from django.db.models import Sum
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from compute.formats import read
from compute.tables import NO_TWEET
from monitor import services
from monitor.models import StreamArrival, StreamEvent
from monitor.services.stream import stream_accept
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


# --- v1.1 statuses through the intake: the consumer builds its micro-batches from the rows the intake kept ------


def _v1_time(t: float) -> str:
    return time.strftime("%a %b %d %H:%M:%S +0000 %Y", time.gmtime(t))


def as_v1_lines(timed: list[tuple[float, dict]]) -> list[tuple[float, str]]:
    """The collection as the NDJSON lines a v1.1 stream sends: each retweet embeds its original (so a retweet
    whose original is not in the collection cannot be sent, and is left out), follows as follow records."""
    originals = {r["tweet_id"]: r for _, r in timed if "follower" not in r and not r.get("retweeted_tweet_id")}

    def status(r: dict) -> dict:
        st = {
            "id_str": str(r["tweet_id"]),
            "created_at": _v1_time(r["created_at"]),
            "text": f"status {r['tweet_id']}",
            "user": {
                "id_str": str(r["user_id"]),
                "screen_name": f"user{r['user_id']}",
                "followers_count": r.get("followers_count", 0),
            },
            "entities": {
                "hashtags": [{"text": f"Tag{r['tweet_id'] % 3}"}],
                "urls": [{"expanded_url": f"https://www.site{r['tweet_id'] % 2}.org/s/{r['tweet_id']}"}],
            },
        }
        return st  # (a retweet's own entities are those of its original; only the original's are stored)

    out = []
    for t, r in timed:
        if "follower" in r:
            out.append((t, json.dumps({"follower_id": r["follower"], "followee_id": r["followee"]})))
        elif r.get("retweeted_tweet_id"):
            if r["retweeted_tweet_id"] in originals:
                out.append(
                    (t, json.dumps(dict(status(r), retweeted_status=status(originals[r["retweeted_tweet_id"]]))))
                )
        else:
            out.append((t, json.dumps(status(r))))
    return out


@settings(
    max_examples=5,
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)
@given(timed=collections(), rnd=st.randoms(use_true_random=False), window=st.sampled_from([0, 30]))
def test_v1_statuses_accepted_by_the_intake_end_as_their_batch_upload_read_from_rows_or_bodies(
    db, import_files, tmp_path, timed, rnd, window
):
    lines = as_v1_lines(timed)
    keyed = sorted((t + rnd.uniform(0, window), k) for k, (t, _) in enumerate(lines))
    arrival = [lines[k][1] for _, k in keyed]
    requests, cuts = [], []  # the same requests and micro-batches for both stream workspaces
    i = 0
    while i < len(arrival):
        n = rnd.randint(1, 3)
        requests.append(arrival[i : i + n])
        i += n
    ws_rows, ws_batch = fresh_workspaces()
    ws_bodies = services.workspace_create(name=f"Bodies {ws_rows.pk}", slug=f"bodies-{ws_rows.pk}")
    ids: dict[int, list[int]] = {ws_rows.pk: [], ws_bodies.pk: []}
    for ws in (ws_rows, ws_bodies):
        for req in requests:
            acc = stream_accept(workspace=ws, lines=list(enumerate(req, 1)))
            ids[ws.pk] += list(
                StreamEvent.objects.filter(workspace=ws, pk__gte=acc.first_id, pk__lte=acc.last_id)
                .order_by("pk")
                .values_list("pk", flat=True)
            )
    statuses_kept = StreamEvent.objects.filter(workspace=ws_rows).exclude(kind=StreamEvent.Kind.FOLLOW)
    assert all(r is not None for r in statuses_kept.values_list("rows", flat=True))
    StreamEvent.objects.filter(workspace=ws_bodies).update(rows=None)  # as events stored before the rows were
    i = 0
    while i < len(ids[ws_rows.pk]):
        cuts.append((i, i + rnd.randint(1, 5)))
        i = cuts[-1][1]
    for ws in (ws_rows, ws_bodies):
        for a, b in cuts:
            apply_events(workspace_id=ws.pk, event_ids=ids[ws.pk][a:b])
    tweets = tmp_path / "statuses.jsonl"
    tweets.write_text("".join(line + "\n" for line in arrival if '"follower_id"' not in line))
    follows = tmp_path / "follows.csv"
    follows.write_text(
        "follower_id,followee_id\n" + "".join(f"{r['follower']},{r['followee']}\n" for _, r in timed if "follower" in r)
    )
    upload = [p for p in (tweets, follows) if len(p.read_text().splitlines()) > (1 if p == follows else 0)]
    if upload:
        c = import_files(ws_batch, upload)
        assert c.status == c.Status.DONE, c.error
    batch = snapshot(ws_batch)
    assert all(t[7] and t[8] and t[9] for t in batch["tweets"].values())  # each original's hashtag, link, domains
    assert_same(snapshot(ws_rows), batch)
    assert_same(snapshot(ws_bodies), batch)
    assert not StreamEvent.objects.filter(workspace__in=[ws_rows, ws_bodies]).exists()
