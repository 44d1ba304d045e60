"""An upload above ``SPREADWATCH_IMPORT_PART_ROWS`` is merged in parts inside its one transaction, and stores
exactly what one merge of the whole upload stores, with the same counts and notes
(``monitor.services.ingest.stager``, ``.merge``)."""

from __future__ import annotations

import importlib
import random

import pytest
from django.db import connection

from monitor import partitions, services
from monitor.models import Account, Collection, ComputeBatch, Follow, FollowerCount, Publisher, Retweet, Tweet
from tests.webapp import total_by_name

merge = importlib.import_module("monitor.services.ingest.merge")  # the package's name ``merge`` is its function
conflicts = importlib.import_module("monitor.services.ingest.conflicts")

CSV_HEAD = "tweet_id,retweeted_tweet_id,user_id,created_at,followers_count,screen_name,text,label\n"
T0 = 1_600_000_000


def _row(tid, rt, uid, t, followers, name="", text="", label="") -> str:
    return f"{tid},{rt if rt else ''},{uid},{t},{followers},{name},{text},{label}\n"


def _earlier_upload(tmp_path):
    """What the workspace holds before: two of the originals, retweets of them stored later than the big
    upload says, snapshots and follows the big upload repeats, names it changes."""
    tweets = tmp_path / "earlier.csv"
    tweets.write_text(
        CSV_HEAD
        + _row(1, 0, 1, T0, 100, "u1", "stored text", "false")
        + _row(2, 0, 2, T0 + 10, 200, "u2")
        + _row(5001, 1, 10, T0 + 500, 7, "old10")  # the big upload has (1, 10) earlier
        + _row(5002, 2, 11, T0 + 40, 8, "old11")  # ... and (2, 11) later
        + _row(50, 0, 3, T0 + 20, 300, "u3")  # a tweet the big upload does not repeat ...
        + _row(5003, 50, 10, T0 + 60, 7, "old10")  # ... retweeted by an account that gains a follow in it
    )
    follows = tmp_path / "earlier_follows.csv"
    follows.write_text("follower_id,followee_id\n10,1\n11,2\n12,10\n")
    return [tweets, follows]


def _big_upload(tmp_path, seed: int):
    """Originals repeated with other follower counts and other texts, retweets before their original,
    repeated retweets with the earliest in a later row, retweets of a tweet never uploaded, a self-retweet,
    renamed accounts, repeated and self follow edges."""
    rng = random.Random(seed)
    rows = []
    originals = {k: (k, T0 + 10 * (k - 1)) for k in range(1, 7)}  # tweet -> (author, time)
    for k, (uid, t) in originals.items():
        for rep in range(rng.randint(1, 3)):
            text = f"text {rep} of {k}" if rep else ""  # the first row with a text gives it
            label = ("true", "false")[rep - 1] if (k == 3 and rep) else ""
            rows.append(_row(k, 0, uid, t, 100 * k + rng.randint(0, 50), f"u{uid}", text, label))
    next_id = 10_000
    for _ in range(60):
        k = rng.randint(1, 6)
        uid = rng.randint(10, 30)
        t = originals[k][1] + rng.randint(1, 400)
        name = f"n{uid}" if rng.random() < 0.8 else f"renamed{uid}"
        rows.append(_row(next_id, k, uid, t, rng.randint(1, 500), name))
        next_id += 1
    rows.append(_row(next_id, 999, 12, T0 + 5, 9, "n12"))  # a tweet nobody uploads
    rows.append(_row(next_id + 1, 4, 4, T0 + 99, 400, "u4"))  # its author retweets it
    rng.shuffle(rows)  # retweets before their originals, the earliest repeat not first
    tweets = tmp_path / f"big{seed}.csv"
    tweets.write_text(CSV_HEAD + "".join(rows))
    edges = [(rng.randint(1, 30), rng.randint(1, 30)) for _ in range(80)] + [(10, 1), (12, 12), (10, 3)]
    follows = tmp_path / f"big{seed}_follows.csv"
    follows.write_text("follower_id,followee_id\n" + "".join(f"{a},{b}\n" for a, b in edges))
    return [tweets, follows]


def _stored(ws) -> dict:
    """The workspace's rows by natural key, the collection that stored each by name."""
    return {
        "accounts": sorted(Account.objects.filter(workspace=ws).values_list("twitter_id", "screen_name")),
        "tweets": sorted(
            Tweet.objects.filter(workspace=ws).values_list(
                "tweet_id", "author__twitter_id", "created_at", "text", "label", "author_followers", "collection__name"
            )
        ),
        "retweets": sorted(
            Retweet.objects.filter(tweet__workspace=ws).values_list(
                "tweet__tweet_id",
                "retweeter__twitter_id",
                "retweet_id",
                "created_at",
                "followers_count",
                "collection__name",
            )
        ),
        "snapshots": sorted(
            FollowerCount.objects.filter(account__workspace=ws).values_list(
                "account__twitter_id", "observed_at", "count", "collection__name"
            )
        ),
        "follows": sorted(
            Follow.objects.filter(workspace=ws).values_list("follower__twitter_id", "followee__twitter_id")
        ),
        "publishers": sorted(Publisher.objects.filter(workspace=ws).values_list("account__twitter_id", flat=True)),
    }


def _import(import_files, settings, ws, paths, name, part_rows):
    settings.SPREADWATCH_IMPORT_PART_ROWS = part_rows
    settings.SPREADWATCH_READ_CHUNK_ROWS = 4  # chunks of 4 rows: a part ends every few rows
    c = import_files(ws, paths, name=name)
    assert c.status == Collection.Status.DONE, c.error
    return c


@pytest.mark.parametrize("before", [True, False], ids=["into-stored-rows", "into-an-empty-workspace"])
@pytest.mark.parametrize("seed", [1, 2, 3])
def test_an_upload_merged_in_parts_stores_and_counts_what_one_merge_does(
    ws_a, ws_b, import_files, settings, tmp_path, seed, before
):
    """Into an empty workspace the later parts find the accounts the earlier ones created without asking the
    database (``merge._accounts``): every account of the workspace is one of them."""
    earlier, big = _earlier_upload(tmp_path), _big_upload(tmp_path, seed)
    for ws in (ws_a, ws_b) if before else ():
        _import(import_files, settings, ws, earlier, "earlier", 0)
    whole = _import(import_files, settings, ws_a, big, "big", 0)
    parts = _import(import_files, settings, ws_b, big, "big", 9)

    assert "parts" not in whole.timings and parts.timings["parts"] >= 10  # 150 rows, a part every 9 to 12
    assert parts.counts == whole.counts
    assert parts.report["notes"] == whole.report["notes"]
    assert whole.counts["retweets_of_unknown_tweets"] == 1 and whole.counts["self_retweets"] == 1
    assert whole.counts["duplicate_retweets"] > 0 and whole.counts["self_follows"] >= 1
    assert _stored(ws_b) == _stored(ws_a)
    assert total_by_name(ws_b) == pytest.approx(total_by_name(ws_a), rel=1e-12)
    # the run recomputes the same cascades: a part skips the stored retweets of the accounts an earlier part
    # created, whose tweets it has marked already, but not those of an account from before the import (10 gains
    # the follow 10 -> 3, so its retweet of the earlier tweet 50 of 3 may gain a spreading edge)
    assert _computed(parts) == _computed(whole) and (50 in _computed(parts)) == before


@pytest.mark.skipif(connection.vendor != "postgresql", reason="partitions are PostgreSQL's")
def test_a_workspaces_first_upload_in_parts_indexes_its_new_partitions_once_after_the_last_part(
    ws_a, ws_b, import_files, settings, tmp_path, monkeypatch
):
    """The partitions the import creates are filled by every part without indexes (each later part's checks
    against the earlier parts' rows join them unindexed) and indexed once, after the last part's rows."""
    big = _big_upload(tmp_path, 1)
    events: list[tuple[str, str, int]] = []
    real_copy, real_build = merge._copy, partitions.build_indexes
    part = {"now": 0}

    def copy(m, table, cols, arrays, nulls=None):
        part["now"] = m.st.part
        if len(arrays[0]):
            events.append(("copy", table, m.st.part))
        return real_copy(m, table, cols, arrays, nulls)

    def build(cur, table, ws):
        events.append(("index", table, part["now"]))
        return real_build(cur, table, ws)

    monkeypatch.setattr(merge, "_copy", copy)
    monkeypatch.setattr(partitions, "build_indexes", build)
    whole = _import(import_files, settings, ws_a, big, "big", 0)
    events.clear()
    parts = _import(import_files, settings, ws_b, big, "big", 9)

    last = parts.timings["parts"] - 1
    for table in partitions.TABLES:
        copies = [i for i, e in enumerate(events) if e[:2] == ("copy", table)]
        builds = [i for i, e in enumerate(events) if e[:2] == ("index", table)]
        # the retweets and snapshots come from every part (the follows staged here fit in the last one)
        assert len({events[i][2] for i in copies}) >= (1 if table == "monitor_follow" else 3), table
        assert len(builds) == 1 and builds[0] > copies[-1] and events[builds[0]][2] == last, table
        with connection.cursor() as cur:
            cur.execute("SELECT count(*) FROM pg_indexes WHERE tablename = %s", [partitions.name(table, ws_b.pk)])
            assert cur.fetchone()[0] == len(partitions.TABLES[table])
    assert parts.counts == whole.counts
    assert _stored(ws_b) == _stored(ws_a)


def test_retweets_carried_to_a_later_part_are_not_snapshotted_again(ws_a, ws_b, import_files, settings, tmp_path):
    """Retweets read before their original are carried from part to part; the part that first read them stored
    their follower-count snapshots, so no later part looks them up or rewrites them."""
    rows = [_row(100 + i, 1 + i % 3, 10 + i, T0 + 50 + i, 5 + i, f"n{i}") for i in range(40)]
    rows += [_row(k, 0, k, T0 + k, 100 * k, f"u{k}") for k in (1, 2, 3)]  # the originals come last
    _whole_then_in_parts(import_files, settings, (ws_a, ws_b), tmp_path / "late_originals.csv", rows)
    assert FollowerCount.objects.filter(workspace=ws_b).count() == 43


def test_a_snapshot_an_earlier_part_stored_is_rewritten_only_when_a_later_part_raises_it(
    ws_a, ws_b, import_files, settings, tmp_path
):
    """As a v1.1 retweet embeds its original's author with a count, every part gives the originals' snapshots
    again: unchanged, nothing is rewritten; a higher count is stored, as one merge of the whole upload does."""
    rows = []
    for i in range(40):
        if i % 8 == 0:
            rows.append(_row(1, 0, 1, T0, 100, "u1"))  # the original again, with the count it had
        rows.append(_row(100 + i, 1, 10 + i, T0 + 50 + i, 5, f"n{i}"))
    _whole_then_in_parts(import_files, settings, (ws_a, ws_b), tmp_path / "same.csv", rows)

    raised = tmp_path / "raised.csv"
    raised.write_text(CSV_HEAD + "".join(rows) + _row(1, 0, 1, T0, 150, "u1"))
    ws_c = services.workspace_create(name="Third", slug="third")
    parts = _import(import_files, settings, ws_c, [raised], "raised", 9)
    assert _raises(parts)
    assert FollowerCount.objects.get(workspace=ws_c, account__twitter_id=1).count == 150


@pytest.mark.parametrize(
    "times",
    [(300, 200), (200, 300), (600, 200), (600, 700), (300, 300)],
    ids=["both-earlier-the-later-part-earliest", "both-earlier", "only-the-later-part-earlier", "neither", "same"],
)
def test_a_retweet_stored_before_the_import_given_in_two_parts_counts_as_in_one_merge(
    ws_a, ws_b, import_files, settings, tmp_path, times
):
    """A retweet stored before the import (at T0 + 500) that the upload gives twice, parts apart: one merge counts
    the second as a repeat and the retweet as stored once when the earliest time moves it earlier; the parts
    count the same and store the same time."""
    earlier = tmp_path / "earlier.csv"
    earlier.write_text(CSV_HEAD + _row(1, 0, 1, T0, 100, "u1") + _row(5001, 1, 10, T0 + 500, 7, "old10"))
    for ws in (ws_a, ws_b):
        _import(import_files, settings, ws, [earlier], "earlier", 0)
    filler = [_row(200 + i, 1, 40 + i, T0 + 50 + i, 5, f"n{i}") for i in range(30)]
    rows = [_row(1, 0, 1, T0, 100, "u1"), _row(6001, 1, 10, T0 + times[0], 7, "old10"), *filler]
    rows.append(_row(6002, 1, 10, T0 + times[1], 7, "old10"))
    path = tmp_path / "again.csv"
    path.write_text(CSV_HEAD + "".join(rows))
    whole = _import(import_files, settings, ws_a, [path], "again", 0)
    parts = _import(import_files, settings, ws_b, [path], "again", 9)
    assert parts.timings["parts"] >= 3
    assert whole.counts["duplicate_retweets"] == 1
    assert whole.counts["retweets_stored"] == 30 + (min(times) < 500)
    assert parts.counts == whole.counts
    assert _stored(ws_b) == _stored(ws_a)


def _whole_then_in_parts(import_files, settings, workspaces, path, rows) -> None:
    """``rows`` as one CSV at ``path``, merged whole into the first workspace and in parts into the second: the
    same rows and counts, and no stored snapshot rewritten."""
    path.write_text(CSV_HEAD + "".join(rows))
    whole = _import(import_files, settings, workspaces[0], [path], path.stem, 0)
    parts = _import(import_files, settings, workspaces[1], [path], path.stem, 9)
    assert parts.timings["parts"] >= 4
    assert not _raises(parts)
    assert parts.counts == whole.counts
    assert _stored(workspaces[1]) == _stored(workspaces[0])


def _raises(c) -> list[str]:
    """The merge's timed statements that raised stored snapshots' counts (PostgreSQL's or SQLite's UPDATE)."""
    return [k for k in c.timings["merge_steps_s"] if k.startswith("update monitor_followercount")]


def _computed(c) -> list[int]:
    """The tweet ids the collection's run computed."""
    pks = [pk for b in ComputeBatch.objects.filter(run__collection=c) for pk in b.tweet_pks]
    return sorted(Tweet.objects.filter(pk__in=pks).values_list("tweet_id", flat=True))


def test_a_part_merged_then_a_bad_record_in_strict_mode_leaves_nothing_stored(ws_a, import_files, settings, tmp_path):
    big = _big_upload(tmp_path, 4)[0]
    bad = tmp_path / "bad.csv"
    bad.write_text(big.read_text() + "77777,0,5,not a time,3,x,,\n")
    settings.SPREADWATCH_IMPORT_PART_ROWS = 9
    settings.SPREADWATCH_READ_CHUNK_ROWS = 4
    c = import_files(ws_a, [bad], name="bad", mode="strict")
    assert c.status == Collection.Status.FAILED
    assert (
        f"bad.csv:{len(bad.read_text().splitlines())}" in c.error
        or f"line {len(bad.read_text().splitlines())}" in c.error
    )
    assert not Account.objects.filter(workspace=ws_a).exists()
    assert not Tweet.objects.filter(workspace=ws_a).exists()


@pytest.mark.parametrize("mode", ["skip-bad", "strict"])
def test_a_conflict_with_a_row_of_an_earlier_part_is_found_and_named_as_in_one_merge(
    ws_a, ws_b, import_files, settings, tmp_path, mode
):
    """The earlier parts' references wait in files (``SpilledSeenTweets``), not in memory."""
    big = _big_upload(tmp_path, 5)[0]
    lines = big.read_text().splitlines(keepends=True)
    # tweet 3 again near the end, by another author: the first row of tweet 3 is parts back
    lines.insert(len(lines) - 2, _row(3, 0, 99, T0 + 20, 5, "x"))
    lines.append(_row(10_500, 4, 20, T0 + 30, 5, "n20") + _row(10_500, 4, 21, T0 + 30, 5, "n21"))
    big.write_text("".join(lines))
    kw = {"name": "big", "mode": mode}
    settings.SPREADWATCH_READ_CHUNK_ROWS = 4
    settings.SPREADWATCH_IMPORT_PART_ROWS = 0
    whole = import_files(ws_a, [big], **kw)
    settings.SPREADWATCH_IMPORT_PART_ROWS = 9
    parts = import_files(ws_b, [big], **kw)
    if mode == "strict":
        assert whole.status == parts.status == Collection.Status.FAILED
        assert parts.error == whole.error and "tweet 3 was read before (line" in whole.error
        return
    assert parts.status == whole.status == Collection.Status.DONE
    assert parts.timings["parts"] > 5 and "duplicate check, spilled" in parts.timings["merge_steps_s"]
    bad = whole.report["read"]
    assert [r["reason"].removeprefix("conflicting duplicate: ") for r in bad["shown"]] == [
        f"tweet 3 was read before (line {next(i for i, x in enumerate(lines) if x.startswith('3,,3,')) + 1}) "
        f"by user 3; here by user 99",
        "tweet 10500 was read before (line " + str(len(lines)) + ") by user 20; here by user 21",
    ]
    assert parts.report["read"] == bad
    assert parts.counts == whole.counts and _stored(ws_b) == _stored(ws_a)


def test_the_spilled_duplicate_checks_timing_counts_the_last_parts_lookups_too(
    ws_b, import_files, settings, tmp_path, monkeypatch
):
    """The chunks read after the last flush look in the spilled runs as well; their seconds are in the timing."""
    from monitor.services import ingest
    from monitor.services.ingest import seen

    final = {}
    last = ingest._Parts.last

    def spy(self):
        last(self)
        final["seconds"] = self.seen.seconds

    monkeypatch.setattr(ingest._Parts, "last", spy)

    class Clock:  # a second per reading: every lookup adds whole seconds, which the timing's rounding keeps
        t = 0.0

        @classmethod
        def perf_counter(cls):
            cls.t += 1.0
            return cls.t

    monkeypatch.setattr(seen, "time", Clock)
    settings.SPREADWATCH_READ_CHUNK_ROWS = 4
    settings.SPREADWATCH_IMPORT_PART_ROWS = 9
    coll = import_files(ws_b, _big_upload(tmp_path, 3)[:1], name="big")  # tweets only: the last chunks look
    assert coll.status == Collection.Status.DONE and coll.timings["parts"] > 5
    assert coll.timings["merge_steps_s"]["duplicate check, spilled"] == final["seconds"] > 0


def test_a_later_part_renames_only_the_accounts_whose_name_changed(
    ws_a, ws_b, import_files, settings, tmp_path, monkeypatch
):
    """Accounts met again in a later part with the name an earlier part stored are not staged for a rename again;
    those given another name are, and the stored names are one merge's."""
    from monitor.services.ingest import stager

    staged = []
    stage_text = stager.Stager.stage_text

    def spy(self, prefix, cols, names, rows):
        if prefix == "renamed":
            staged.append((self.part, [name for _, name in rows]))
        return stage_text(self, prefix, cols, names, rows)

    monkeypatch.setattr(stager.Stager, "stage_text", spy)
    rows = [_row(k, 0, k, T0 + k, 100, f"u{k}") for k in range(1, 4)]
    for i in range(40):  # the same retweeters again and again, under one name, but 17 renamed halfway
        uid = 10 + i % 8
        rows.append(_row(1000 + i, 1 + i % 3, uid, T0 + 100 + i, 5, f"new{uid}" if uid == 17 and i > 20 else f"n{uid}"))
    tweets = tmp_path / "same_names.csv"
    tweets.write_text(CSV_HEAD + "".join(rows))
    whole = _import(import_files, settings, ws_a, [tweets], "names", 0)
    parts = _import(import_files, settings, ws_b, [tweets], "names", 9)

    assert parts.timings["parts"] >= 4 and parts.counts == whole.counts
    assert _stored(ws_b)["accounts"] == _stored(ws_a)["accounts"]
    assert dict(_stored(ws_b)["accounts"])[17] == "new17"
    assert [name for part, names in staged if part > 0 for name in names] == ["new17"]


@pytest.mark.parametrize("before", [True, False], ids=["into-stored-rows", "into-an-empty-workspace"])
def test_later_parts_into_an_empty_workspace_look_up_no_account_in_the_database(
    ws_a, import_files, settings, tmp_path, monkeypatch, before
):
    """Into a workspace with no account before the import, a later part knows every stored account (the earlier
    parts created them): it stages no account to look up. Into one with accounts, every part asks."""
    from monitor.services.ingest.stager import Stager

    staged: list[tuple[str, int]] = []
    real = Stager.stage

    def stage(self, prefix, cols, arrays):
        staged.append((prefix, self.part))
        return real(self, prefix, cols, arrays)

    if before:
        _import(import_files, settings, ws_a, _earlier_upload(tmp_path), "earlier", 0)
    monkeypatch.setattr(Stager, "stage", stage)
    monkeypatch.setattr(merge, "ARRAY_LOOKUP_MAX", 0)  # looked up by a staging table, as a large upload's are
    c = _import(import_files, settings, ws_a, _big_upload(tmp_path, 1), "big", 9)
    looked_up = sorted({part for prefix, part in staged if prefix == "users"})
    if before:
        assert looked_up == list(range(c.timings["parts"]))
    else:
        assert looked_up == [0]


def test_an_import_frees_its_staged_rows_when_it_ends_without_waiting_for_the_collector(
    ws_a, import_files, settings, tmp_path, monkeypatch
):
    """The stager and the parts' merge refer to each other while the import runs; when it ends nothing may keep
    them alive until a pass of the cyclic collector (rare in a worker whose start-up objects are frozen): the
    last part's names and columns (hundreds of MB at the 10M benchmark) stayed under the compute that follows."""
    import gc
    import weakref

    from monitor.services.ingest.stager import Stager

    made: list[weakref.ref] = []
    real = Stager.__init__

    def init(self, *a, **kw):
        real(self, *a, **kw)
        made.append(weakref.ref(self))

    monkeypatch.setattr(Stager, "__init__", init)
    gc.disable()
    try:
        _import(import_files, settings, ws_a, _big_upload(tmp_path, 1), "big", 9)
        assert made and all(ref() is None for ref in made)
    finally:
        gc.enable()


@pytest.mark.parametrize("before", [True, False], ids=["into-stored-rows", "into-an-empty-workspace"])
def test_later_parts_into_an_empty_workspace_check_their_rows_against_the_earlier_parts_in_memory(
    ws_a, ws_b, import_files, settings, tmp_path, monkeypatch, before
):
    """Into a workspace with no account before the import, the stored rows are the earlier parts': a later part
    stages no follow to check (the follower graph's kept parts answer), no snapshot (the hashes of the earlier
    parts' keys; the originals' authors', given again by every part, are kept whole), only the retweets given
    again, and for conflicts only the ids of the earlier parts' originals; the rows stored are one merge's.
    Into one with rows, every part asks the table."""
    from monitor.graph_files import ImportedFollows
    from monitor.services.ingest.stager import Stager

    rows = [_row(k, 0, k, T0 + 10 * (k - 1), 100, f"u{k}") for k in (1, 2, 3, 4)]  # first: no retweet carried
    for i in range(60):
        if i % 6 == 0:
            rows.append(_row(1 + i % 4, 0, 1 + i % 4, T0 + 10 * (i % 4), 100, f"u{1 + i % 4}"))  # an original again
        rows.append(_row(100 + i, 1 + i % 4, 10 + i % 25, T0 + 50 + i, 5 + i % 7, f"n{i % 25}"))
    files = [tmp_path / f"{name}.csv" for name in ("tweets1", "follows1", "tweets2", "follows2")]
    files[0].write_text(CSV_HEAD + "".join(rows[:30]))
    # retweeted again, by accounts that did not retweet the same tweet before the import
    again = [_row(900 + i, 1 + i % 4, 10 + i % 25, T0 + 900 + i, 5, f"n{i % 25}") for i in range(2, 7)]
    files[2].write_text(CSV_HEAD + "".join(rows[30:] + again))
    # follow edges in two files with tweet rows between them: parts apart; the second file repeats most of the first
    edges = [(10 + i % 25, 1 + i % 4) for i in range(50)] + [(10 + i % 20, 11 + i % 13) for i in range(40)]
    files[1].write_text("follower_id,followee_id\n" + "".join(f"{a},{b}\n" for a, b in edges[:70]))
    files[3].write_text("follower_id,followee_id\n" + "".join(f"{a},{b}\n" for a, b in edges[::-1]))
    staged: list[tuple[str, int, int]] = []
    found: list[int] = []
    real_stage, real_stored = Stager.stage, ImportedFollows.stored

    def stage(self, prefix, cols, arrays):
        staged.append((prefix, self.part, len(arrays[0])))
        return real_stage(self, prefix, cols, arrays)

    def stored(self, follower, followee):
        out = real_stored(self, follower, followee)
        found.append(int(out.sum()))
        return out

    if before:
        for ws in (ws_a, ws_b):
            _import(import_files, settings, ws, _earlier_upload(tmp_path), "earlier", 0)
    whole = _import(import_files, settings, ws_a, files, "repeats", 0)
    monkeypatch.setattr(Stager, "stage", stage)
    monkeypatch.setattr(ImportedFollows, "stored", stored)
    monkeypatch.setattr(conflicts, "ARRAY_LOOKUP_MAX", 0)  # staged, as a large upload's tweets are
    parts = _import(import_files, settings, ws_b, files, "repeats", 9)

    assert parts.timings["parts"] >= 5 and parts.counts == whole.counts
    assert _stored(ws_b) == _stored(ws_a)
    follows_staged = [n for prefix, part, n in staged if prefix == "folold" and part > 0]
    snapshots_staged = sum(n for prefix, part, n in staged if prefix == "fcold" and part > 0)
    retweets_staged = sum(n for prefix, part, n in staged if prefix == "rtold" and part > 0)
    tweets_checked = [(part, n) for prefix, part, n in staged if prefix == "chk"]  # ids checked for conflicts
    repeated = sum(1 for i in range(60) if i % 6 == 0)  # the originals given again, some in the first part
    if before:
        assert follows_staged and not found
        assert snapshots_staged > 4 * repeated  # every snapshot of an account stored before its part
        assert retweets_staged > 4 * len(again)
        assert tweets_checked[0][0] == 0 and sum(n for _, n in tweets_checked) > 60
    else:
        assert not follows_staged and sum(found) == len(set(edges[:70]))  # the second file's repeats, all found
        # the later parts' snapshots are all of accounts an earlier part created; the originals' given again are
        # found whole in memory, the others' hashes are not among the stored ones: the table is not asked
        assert snapshots_staged == 0
        assert retweets_staged == len(again) == whole.counts["duplicate_retweets"]  # only those given again
        # a first upload has no stored tweet to conflict with; the later parts, only the earlier parts' originals
        assert tweets_checked and all(part > 0 and n <= 4 for part, n in tweets_checked)


@pytest.mark.skipif(connection.vendor != "postgresql", reason="row locks are PostgreSQL's")
def test_a_later_part_rewrites_an_earlier_parts_original_only_when_it_brings_what_the_row_lacks(
    ws_a, ws_b, import_files, settings, tmp_path
):
    """A later part gives the earlier parts' originals again: it writes only those it brings a text or label for
    that no earlier part gave (``INSERT ... ON CONFLICT DO UPDATE`` locks every row it finds, whatever its
    ``WHERE``: the 10M benchmark's later parts locked 200-250K unchanged originals each), and never a follower
    count: one merge of the whole upload keeps the first row's (none, for tweet 4). The rows are one merge's."""
    settings.SPREADWATCH_READ_CHUNK_ROWS = 4
    first = [
        _row(1, 0, 1, T0, 100, "u1", "one", "false"),
        _row(2, 0, 2, T0 + 10, 200, "u2"),
        _row(3, 0, 3, T0 + 20, 300, "u3"),  # no text yet
        _row(4, 0, 4, T0 + 30, "", "u4"),  # no follower count yet
    ]
    retweets = [_row(100 + i, 1 + i % 4, 10 + i, T0 + 100 + i, 5, f"n{i}") for i in range(12)]
    again = [
        _row(1, 0, 1, T0, 150, "u1"),  # nothing new: its text and count are stored
        _row(2, 0, 2, T0 + 10, 250, "u2", "", "unknown"),
        _row(3, 0, 3, T0 + 20, 300, "u3", "three arrives", "true"),
        _row(4, 0, 4, T0 + 30, 400, "u4"),
    ]
    path = tmp_path / "tweets.csv"
    path.write_text(CSV_HEAD + "".join(first + retweets + again + retweets[:2]))
    settings.SPREADWATCH_IMPORT_PART_ROWS = 0
    whole = import_files(ws_a, [path], name="repeats", compute=False)
    settings.SPREADWATCH_IMPORT_PART_ROWS = 9
    parts = import_files(ws_b, [path], name="repeats", compute=False)

    assert whole.status == parts.status == Collection.Status.DONE, (whole.error, parts.error)
    assert parts.timings["parts"] >= 2 and parts.counts == whole.counts
    assert _stored(ws_b) == _stored(ws_a)
    stored = {t: (text, label, f) for t, _, _, text, label, f, _ in _stored(ws_b)["tweets"]}
    assert stored[3] == ("three arrives", "true", 300.0) and stored[4][2] is None and stored[1][:2] == ("one", "false")
    with connection.cursor() as cur:  # a row locked keeps its locker in xmax; 3 is rewritten (a new version)
        cur.execute("SELECT tweet_id FROM monitor_tweet WHERE workspace_id = %s AND xmax::text <> '0'", [ws_b.pk])
        assert {t for (t,) in cur.fetchall()} <= {3}
