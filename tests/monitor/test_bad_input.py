"""Malformed inputs of every format (the corpus in ``tests/data/bad``, described in its README): each one,
uploaded in strict and in skip-bad mode, ends in a clear outcome naming file, line and field, never a 500, and a
failed upload stores nothing. Big inputs (a 2 GB file, a zip bomb) are made at run time in ``tmp_path``.

The corpus table :data:`CASES` is the README's table (:func:`readme_table` writes it; a test keeps them in step).
"""

from __future__ import annotations

import io
import tarfile
import time
import zipfile
from dataclasses import dataclass
from pathlib import Path

import pytest

from tests.webapp import DATA

BAD = DATA / "bad"
S1 = "1050118621198921728"  # the source tweet of the tree cases


@dataclass(frozen=True)
class Ok:
    """The upload is stored (``done``): ``counts`` must match, ``note`` must be among the notes."""

    counts: tuple = ()
    note: str = ""
    n_bad: int = 0  # skip-bad: bad records reported (their first one at ``line`` / ``field``)
    line: int | None = None
    field: str | None = None

    status = "done"


@dataclass(frozen=True)
class Bad:
    """Strict mode stops at a bad record (``failed``, nothing stored): the error names file, line, field."""

    line: int | None
    field: str | None
    text: str

    status = "failed"


@dataclass(frozen=True)
class Whole:
    """A problem of the whole file (cannot tell its format, empty, a tree without ROOT...): ``failed``, nothing
    stored, the error starting with the file's name. Strict mode stops there; skip-bad mode skips the file and
    fails only because nothing else in the upload could be stored (a case with a good file beside the bad one is
    ``done`` in skip-bad mode: see ``csv/one_file_unreadable``)."""

    text: str

    status = "failed"


@dataclass(frozen=True)
class Refused:
    """An archive refused for safety (a link out of it, a device or pipe): ``failed`` in every mode, nothing
    stored, the error starting with the archive's name; skip-bad does not skip it and go on."""

    text: str

    status = "failed"


@dataclass(frozen=True)
class Case:
    path: str  # under tests/data/bad: a file, or a folder (uploaded as a zip of itself)
    wrong: str
    strict: object
    skip: object
    where: str = ""  # folder cases: the member the error names, relative to the folder

    @property
    def upload(self) -> str:
        p = Path(self.path)
        return f"{p.name}.zip" if (BAD / p).is_dir() else p.name

    @property
    def shown(self) -> str:
        """The file name the error must carry, as the analyst uploaded it."""
        if (BAD / self.path).is_dir():
            return f"{self.upload}:{Path(self.path).name}/{self.where}"
        return self.upload


def _skip(line, field, counts=(), n_bad=1):
    return Ok(counts=counts, n_bad=n_bad, line=line, field=field)


TREE = f"tree/{S1}.txt"
TREE2 = "tree/1050118621198921729.txt"
CASES = [
    # --- tweets CSV -------------------------------------------------------------------------------------------
    Case("csv/truncated_row.csv", "row 4 has 3 of 6 fields", Bad(4, None, "wrong number of fields"),
         _skip(4, None, (("tweets_new", 1), ("retweets_stored", 1)))),
    Case("csv/wrong_type_id.csv", "user_id 'abc'", Bad(4, "user_id", "not an integer id"), _skip(4, "user_id")),
    Case("csv/float_id.csv", "user_id '101.5'", Bad(4, "user_id", "not an integer id"), _skip(4, "user_id")),
    Case("csv/id_too_long.csv", "a 300-digit user_id", Bad(4, "user_id", "id out of range"), _skip(4, "user_id")),
    Case("csv/missing_user_id.csv", "empty user_id", Bad(4, "user_id", "missing required field"),
         _skip(4, "user_id")),
    Case("csv/negative_followers.csv", "followers_count -5", Bad(4, "followers_count", "negative count"),
         _skip(4, "followers_count")),
    Case("csv/nan_followers.csv", "followers_count inf", Bad(4, "followers_count", "not a finite number"),
         _skip(4, "followers_count")),
    Case("csv/absurd_followers.csv", "followers_count 1e300 (above 10**9)",
         Bad(4, "followers_count", "count out of range: '1e300' is more than 1,000,000,000"),
         _skip(4, "followers_count", (("retweets_stored", 1),))),
    Case("csv/unknown_timezone.csv", "created_at '... PST'", Bad(4, "created_at", "unparseable time"),
         _skip(4, "created_at")),
    Case("csv/impossible_date.csv", "created_at 2020-02-30", Bad(4, "created_at", "unparseable time"),
         _skip(4, "created_at")),
    Case("csv/time_before_2006.csv", "a retweet in 1990, before Twitter",
         Bad(4, "created_at", "time out of range: 1990-01-01T00:00:02Z is before Twitter existed (2006-03-21)"),
         _skip(4, "created_at", (("retweets_stored", 1),))),
    Case("csv/time_in_future.csv", "a retweet in 2099",
         Bad(4, "created_at", "time out of range: 2099-01-01T00:00:02Z is in the future"),
         _skip(4, "created_at", (("retweets_stored", 1),))),
    Case("csv/snowflake_from_future.csv", "no created_at column; a tweet id whose snowflake time is in 2078",
         Bad(3, "created_at", "time out of range: 2078-11-02T08:09:46Z is in the future (the snowflake time"),
         _skip(3, "created_at", (("retweets_stored", 1),))),
    Case("csv/duplicate_conflicting.csv", "tweet 1000 twice, other author and time (the first row is kept)",
         Bad(4, "tweet_id", "conflicting duplicate: tweet 1000 was read before (line 2) by user 102; here by user 105"),
         _skip(4, "tweet_id", (("tweets_new", 1), ("retweets_stored", 1)))),
    Case("csv/duplicate_identical.csv", "every row twice, the same (a follower count differs: a snapshot): no-op",
         Ok((("tweets_new", 1), ("retweets_stored", 1))), Ok((("tweets_new", 1), ("retweets_stored", 1)))),
    Case("csv/duplicate_retweet_conflicting.csv", "retweet 1001 of tweet 1000, then 1001 again of tweet 2000",
         Bad(5, "tweet_id",
             "conflicting duplicate: tweet 1001 was read before (line 4) as a retweet of 1000; here it is a "
             "retweet of 2000"),
         _skip(5, "tweet_id", (("tweets_new", 2), ("retweets_stored", 1)))),
    Case("csv/duplicate_across_files", "a.csv and b.csv give tweet 1000 different times",
         Bad(2, "tweet_id",
             "conflicting duplicate: tweet 1000 was read before "
             "(duplicate_across_files.zip:duplicate_across_files/a.csv:2) at 2020-01-01T00:00:00Z; here at "
             "2020-01-01T00:05:00Z"),
         _skip(2, "tweet_id", (("tweets_new", 1), ("retweets_stored", 2))), "b.csv"),
    Case("csv/retweet_of_unknown.csv", "retweet of tweet 9999, not in the upload",
         Ok((("retweets_of_unknown_tweets", 1),), "retweet(s) of tweets not in the workspace were skipped"),
         Ok((("retweets_of_unknown_tweets", 1),), "retweet(s) of tweets not in the workspace were skipped")),
    Case("csv/self_retweet.csv", "the author retweets their own tweet",
         Ok((("self_retweets", 1), ("retweets_stored", 1)), "self-retweet(s) were dropped"),
         Ok((("self_retweets", 1), ("retweets_stored", 1)), "self-retweet(s) were dropped")),
    Case("csv/ties.csv", "two retweets at the same second", Ok((("retweets_stored", 3),)),
         Ok((("retweets_stored", 3),))),
    Case("csv/control_chars.csv", "NUL, ESC and BEL in screen_name (NUL dropped on store)",
         Ok((("retweets_stored", 2),)), Ok((("retweets_stored", 2),))),
    Case("csv/unclosed_quote.csv", "the quote opened in row 4 is never closed (it would swallow row 5)",
         Bad(4, None, "unclosed quote: the quoted field begun on this line runs to the end of the file"),
         _skip(4, None, (("retweets_stored", 2),))),
    Case("csv/long_line.csv", "row 3 is 5 KB long, over the record limit (4 KiB here)",
         Bad(3, None, "record longer than 4,096 bytes"), _skip(3, None, (("retweets_stored", 1),))),
    Case("csv/long_quoted_field.csv", "row 3's quoted field holds 80 lines, 4.9 KB (closed properly)",
         Bad(3, None, "record longer than 4,096 bytes"), _skip(3, None, (("retweets_stored", 1),))),
    Case("csv/latin1_bytes.csv", "Latin-1 byte in row 4", Bad(4, None, "undecodable bytes"), _skip(4, None)),
    Case("csv/missing_column.csv", "no created_at column and ids too small for snowflake times",
         Bad(2, "created_at", "no time"), _skip(2, "created_at")),
    Case("csv/utf8_bom.csv", "UTF-8 BOM (valid)", Ok((("retweets_stored", 1),)), Ok((("retweets_stored", 1),))),
    Case("csv/header_only.csv", "header, no rows (valid, stores nothing)", Ok(), Ok()),
    Case("csv/semicolon_delimiter.csv", "';' delimiter", Whole("cannot tell the format"),
         Whole("cannot tell the format")),
    Case("csv/one_file_unreadable", "a zip of a good tweets.csv and a ';'-separated notes.csv",
         Whole("cannot tell the format"), _skip(None, None, (("retweets_stored", 1),)), "notes.csv"),
    Case("csv/tab_delimiter.csv", "tab delimiter", Whole("cannot tell the format"), Whole("cannot tell the format")),
    Case("csv/utf16_bom.csv", "UTF-16 with BOM", Whole("is UTF-16 (little-endian), not UTF-8"),
         Whole("is UTF-16 (little-endian), not UTF-8")),
    Case("csv/empty.csv", "0 bytes", Whole("empty file"), Whole("empty file")),
    # --- follows CSV / edge list ------------------------------------------------------------------------------
    Case("follows/self_follow.csv", "103 follows 103",
         Ok((("self_follows", 1), ("follows_new", 1)), "self-follow edge(s) were ignored"),
         Ok((("self_follows", 1), ("follows_new", 1)), "self-follow edge(s) were ignored")),
    Case("follows/wrong_type.txt", "followee 'x'", Bad(2, "followee_id", "not an integer id"),
         _skip(2, "followee_id", (("follows_new", 2),))),
    Case("follows/three_columns.txt", "a line of 3 ids", Bad(2, None, "wrong number of fields"),
         _skip(2, None, (("follows_new", 2),))),
    Case("follows/negative_id.csv", "follower -3", Bad(3, "follower_id", "negative id"),
         _skip(3, "follower_id", (("follows_new", 1),))),
    Case("follows/comments_only.txt", "only '#' comments", Bad(None, None, "empty file"), Whole("empty file")),
    Case("follows/long_line.txt", "line 2 is 5 KB of digits", Bad(2, None, "record longer than 4,096 bytes"),
         _skip(2, None, (("follows_new", 2),))),
    # --- v1.1 JSONL -------------------------------------------------------------------------------------------
    Case("v1/truncated_json.jsonl", "line 2 cut in half", Bad(2, None, "invalid JSON"),
         _skip(2, None, (("retweets_stored", 1),))),
    Case("v1/not_an_object.jsonl", "line 2 is a JSON array", Bad(2, None, "expected a JSON object"),
         _skip(2, None)),
    Case("v1/missing_user.jsonl", "a status without user", Bad(2, "user", "missing required field"),
         _skip(2, "user")),
    Case("v1/id_garbage.jsonl", "id_str '12ab'", Bad(2, "id_str", "not an integer id"), _skip(2, "id_str")),
    Case("v1/followers_wrong_type.jsonl", "followers_count 'lots'", Bad(2, "user.followers_count", "not a number"),
         _skip(2, "user.followers_count")),
    Case("v1/negative_followers.jsonl", "followers_count -1", Bad(2, "user.followers_count", "negative count"),
         _skip(2, "user.followers_count")),
    Case("v1/unknown_timezone.jsonl", "created_at '... PST 2018'", Bad(2, "created_at", "unparseable time"),
         _skip(2, "created_at")),
    Case("v1/time_before_2006.jsonl", "a retweet in 1999",
         Bad(2, "created_at", "time out of range: 1999-10-10T20:25:00Z is before Twitter existed"),
         _skip(2, "created_at", (("tweets_new", 1), ("retweets_stored", 0)))),
    Case("v1/time_in_future.jsonl", "a retweet in 2099",
         Bad(2, "created_at", "time out of range: 2099-10-10T20:25:00Z is in the future"),
         _skip(2, "created_at", (("tweets_new", 1), ("retweets_stored", 0)))),
    Case("v1/duplicate_conflicting.jsonl", "the original again with another author and text (the first is kept)",
         Bad(3, "id_str",
             "conflicting duplicate: tweet 1050118621198921728 was read before (line 1) by user 11; here by "
             "user 13"),
         _skip(3, "id_str", (("tweets_new", 1), ("retweets_stored", 1)))),
    Case("v1/absurd_followers.jsonl", "followers_count 10**12",
         Bad(2, "user.followers_count", "count out of range: 1000000000000 is more"),
         _skip(2, "user.followers_count", (("tweets_new", 1), ("retweets_stored", 0)))),
    Case("v1/long_line.jsonl", "line 2 is a 5 KB status (record limit 4 KiB here)",
         Bad(2, None, "record longer than 4,096 bytes"), _skip(2, None, (("tweets_new", 1), ("retweets_stored", 1)))),
    Case("v1/endless_last_line.jsonl", "line 2 runs 6 KB to the end of the file, no newline",
         Bad(2, None, "record longer than 4,096 bytes"), _skip(2, None, (("tweets_new", 1),))),
    Case("v1/self_retweet.jsonl", "the author retweets their own status",
         Ok((("self_retweets", 1),), "self-retweet(s) were dropped"),
         Ok((("self_retweets", 1),), "self-retweet(s) were dropped")),
    Case("v1/control_chars.jsonl", "\\u0000, ESC, BEL in text and screen_name (NUL dropped on store)",
         Ok((("tweets_new", 2),)), Ok((("tweets_new", 2),))),
    Case("v1/only_notices.jsonl", "only delete/limit notices", Whole("not recognisably"),
         Whole("not recognisably")),
    Case("v1/blank_lines_only.jsonl", "only blank lines", Whole("empty file"), Whole("empty file")),
    # --- v2 JSONL ---------------------------------------------------------------------------------------------
    Case("v2/truncated_json.jsonl", "page 2 cut in half", Bad(2, None, "invalid JSON"), _skip(2, None)),
    Case("v2/missing_author_id.jsonl", "a tweet without author_id",
         Bad(1, "data[1].author_id", "missing required field"), _skip(1, "data[1].author_id")),
    Case("v2/bad_created_at.jsonl", "created_at 'yesterday'", Bad(1, "data[1].created_at", "unparseable time"),
         _skip(1, "data[1].created_at")),
    Case("v2/negative_followers.jsonl", "followers_count -7",
         Bad(1, "includes.users[1].public_metrics.followers_count", "negative count"),
         _skip(1, "includes.users[1].public_metrics.followers_count")),
    Case("v2/data_wrong_type.jsonl", "\"data\": \"oops\"", Bad(2, "data", "wrong type"), _skip(2, "data")),
    Case("v2/duplicate_conflicting.jsonl", "page 2 gives the original of page 1 another author",
         Bad(2, "data[0].id",
             "conflicting duplicate: tweet 1050118621198921728 was read before (line 1) by user 11; here by "
             "user 13"),
         _skip(2, "data[0].id", (("tweets_new", 1), ("retweets_stored", 1)))),
    Case("v2/time_in_future.jsonl", "a retweet in 2099",
         Bad(1, "data[1].created_at", "time out of range: 2099-10-10T20:25:00Z is in the future"),
         _skip(1, "data[1].created_at", (("tweets_new", 1), ("retweets_stored", 0)))),
    Case("v2/long_line.jsonl", "page 2 is 5 KB long", Bad(2, None, "record longer than 4,096 bytes"),
         _skip(2, None, (("tweets_new", 1), ("retweets_stored", 1)))),
    Case("v2/retweet_of_unknown.jsonl", "a retweet of a tweet in no page",
         Ok((("retweets_of_unknown_tweets", 1),), "retweet(s) of tweets not in the workspace were skipped"),
         Ok((("retweets_of_unknown_tweets", 1),), "retweet(s) of tweets not in the workspace were skipped")),
    # --- Twitter15/16 trees (uploaded as a zip of the folder) -------------------------------------------------
    Case("trees/no_root", "no ROOT line", Bad(None, None, "no ROOT line"), Whole("no ROOT line"), TREE),
    Case("trees/one_tree_without_root", "two trees, the second without a ROOT line",
         Bad(None, None, "no ROOT line"), _skip(None, None, (("retweets_stored", 1),)), TREE2),
    Case("trees/delay_out_of_range", "a delay of -9,000,000 minutes (2001)",
         Bad(2, "child.delay", "time out of range: a delay of -9000000 minutes puts the tweet at 2001-08-30"),
         _skip(2, "child.delay", (("retweets_stored", 1),)), TREE),
    Case("trees/long_line", "line 2 is 5 KB long", Bad(2, None, "record longer than 4,096 bytes"),
         _skip(2, None, (("retweets_stored", 1),)), TREE),
    Case("trees/two_roots", "two ROOT lines, two publishers", Bad(3, None, "second ROOT line"),
         _skip(3, None, (("retweets_stored", 1),)), TREE),
    Case("trees/malformed_line", "line 3 does not parse", Bad(3, None, "malformed tree line"),
         _skip(3, None, (("retweets_stored", 2),)), TREE),
    Case("trees/bad_delay", "delay 'soon'", Bad(2, "child.delay", "not a number"), _skip(2, "child.delay"), TREE),
    Case("trees/bad_uid", "uid 'u-101'", Bad(2, "child.uid", "not an integer id"), _skip(2, "child.uid"), TREE),
    Case("trees/name_not_an_id", "tree/not_an_id.txt", Bad(None, None, "not a tweet id"), Whole("not a tweet id"),
         "tree/not_an_id.txt"),
    Case("trees/empty_tree", "an empty tree file", Bad(None, None, "empty file"), Whole("empty file"), TREE),
    Case("trees/bad_label_line", "label line 'false <id>' (no colon)", Bad(1, None, "malformed label line"),
         _skip(1, None, (("retweets_stored", 1),)), "label.txt"),
    Case("trees/cycle_and_self_loop", "101 -> 102 -> 101 and 102 -> 102 (messy, not bad)",
         Ok((("retweets_stored", 2), ("follows_new", 3))), Ok((("retweets_stored", 2), ("follows_new", 3)))),
    Case("trees/ties", "three retweeters at the same delay", Ok((("retweets_stored", 3),)),
         Ok((("retweets_stored", 3),))),
    # --- TUDataset (uploaded as a zip of the folder) ----------------------------------------------------------
    Case("tudataset/cycle", "graph 2 is a cycle: no sink", Bad(None, None, "graph 2 has no sink"),
         _skip(None, None, (("given_edges_new", 3),)), "DS_A.txt"),
    Case("tudataset/two_sinks", "graph 2 has two sinks", Bad(None, None, "graph 2 has 2 sinks"),
         _skip(None, None, (("given_edges_new", 3),)), "DS_A.txt"),
    Case("tudataset/self_loop", "a self-loop 4 -> 4 (accepted, stored as a given edge)",
         Ok((("given_edges_new", 6),)), Ok((("given_edges_new", 6),))),
    Case("tudataset/bad_edge", "edge '3, x'", Bad(2, "j", "not an integer id"),
         _skip(2, "j", (("given_edges_new", 4),)), "DS_A.txt"),
    Case("tudataset/edge_out_of_range", "edge to node 99 of 7", Bad(5, None, "node number out of range"),
         _skip(5, None, (("given_edges_new", 4),)), "DS_A.txt"),
    Case("tudataset/node_count_mismatch", "5 node attribute lines, 7 nodes", Bad(None, None, "has 5 node lines"),
         Whole("has 5 node lines"), "DS_node_attributes.txt"),
    Case("tudataset/ties_and_negative_attr", "a follower count of -30", Bad(3, "followers_count", "negative count"),
         _skip(3, "followers_count", (("given_edges_new", 2),)), "DS_node_attributes.txt"),
    Case("tudataset/absurd_followers", "a follower count of 5,000,000,000",
         Bad(3, "followers_count", "count out of range: '5000000000' is more"),
         _skip(3, "followers_count", (("given_edges_new", 2),)),
         "DS_node_attributes.txt"),
    # --- .npz -------------------------------------------------------------------------------------------------
    Case("npz/truncated.npz", "the first half of a spreading-graph archive", Whole("cannot be read (cut short?)"),
         Whole("cannot be read (cut short?)")),
    Case("npz/unknown_arrays.npz", "arrays a, b", Whole("neither a spreading-graph"),
         Whole("neither a spreading-graph")),
    Case("npz/inconsistent_arrays.npz", "edge_src one shorter than edge_dst", Bad(None, None, "bad archive"),
         Whole("bad archive")),
    # --- tar archives: members that are not plain files -------------------------------------------------------
    Case("archive/symlink_outside.tar", "good/tweets.csv beside good/follows.csv, a symlink to /etc/passwd",
         Refused("archive member 'good/follows.csv' links outside the archive"),
         Refused("archive member 'good/follows.csv' links outside the archive")),
    Case("archive/hardlink_outside.tar", "tweets.csv, a hard link to ../../etc/passwd",
         Refused("archive member 'tweets.csv' links outside the archive"),
         Refused("archive member 'tweets.csv' links outside the archive")),
    Case("archive/fifo_member.tar", "tweets.csv, a named pipe", Refused("archive member 'tweets.csv' is a named pipe"),
         Refused("archive member 'tweets.csv' is a named pipe")),
    Case("archive/dangling_symlink.tar", "tweets.csv, a symlink to missing.csv (not in the archive)",
         Whole("the archive holds no input"), Whole("the archive holds no input")),
]  # fmt: skip


def _zip_folder(folder: Path, dest: Path) -> Path:
    with zipfile.ZipFile(dest, "w") as zf:
        for p in sorted(folder.rglob("*")):
            zf.write(p, p.relative_to(folder.parent))
    return dest


def _stored(ws) -> dict[str, int]:
    from monitor.models import Account, Follow, GivenEdge, Retweet, Tweet

    return {
        "tweets": Tweet.objects.filter(workspace=ws).count(),
        "retweets": Retweet.objects.filter(tweet__workspace=ws).count(),
        "follows": Follow.objects.filter(workspace=ws).count(),
        "accounts": Account.objects.filter(workspace=ws).count(),
        "given_edges": GivenEdge.objects.filter(tweet__workspace=ws).count(),
    }


NOTHING = {"tweets": 0, "retweets": 0, "follows": 0, "accounts": 0, "given_edges": 0}


def _upload_path(case: Case, tmp_path: Path) -> Path:
    src = BAD / case.path
    return _zip_folder(src, tmp_path / case.upload) if src.is_dir() else src


#: The corpus is uploaded with this record limit, so its over-long lines stay a few KB.
RECORD_LIMIT = 4096


@pytest.mark.parametrize("mode", ["strict", "skip-bad"])
@pytest.mark.parametrize("case", CASES, ids=[c.path for c in CASES])
def test_every_bad_input_has_a_clear_outcome(ws_a, import_files, tmp_path, settings, case, mode):
    from monitor.models import Collection

    settings.SPREADWATCH_MAX_RECORD_BYTES = RECORD_LIMIT
    expect = case.strict if mode == "strict" else case.skip
    c = import_files(ws_a, [_upload_path(case, tmp_path)], mode=mode)
    assert c.status == expect.status, (c.status, c.error, c.report)
    # never our storage path, never a bare exception class: the file as uploaded
    assert str(tmp_path) not in c.error and "media/uploads" not in c.error, c.error
    if isinstance(expect, Refused):
        assert c.error.startswith(f"{case.shown}: "), c.error
        assert expect.text in c.error and "skip-bad" not in c.error, c.error
    if isinstance(expect, Whole):
        assert c.error.startswith(f"{case.shown}: "), c.error
        assert expect.text in c.error, c.error
        # skip-bad skipped the file and found nothing else to store; strict stopped at it
        assert c.error.endswith("nothing else in the upload could be stored)") == (mode == "skip-bad"), c.error
    elif isinstance(expect, Bad):
        where = case.shown if expect.line is None else f"{case.shown}:{expect.line}"
        assert c.error.startswith(f"{where}: "), c.error
        if expect.field:
            assert f"field '{expect.field}'" in c.error, c.error
        assert expect.text in c.error, c.error
        shown = c.report["read"]["shown"][0]
        assert (shown["path"], shown["line"], shown["field"]) == (case.shown, expect.line, expect.field)
        assert "nothing was stored" in c.report["notes"][0]
    if c.status == Collection.Status.FAILED:
        assert _stored(ws_a) == NOTHING, "a failed upload stored something"
        return
    assert c.error == ""
    read = c.report["read"]
    assert read["n_bad"] == expect.n_bad, read
    if expect.n_bad:
        first = read["shown"][0]
        assert (first["path"], first["line"], first["field"]) == (case.shown, expect.line, expect.field), first
        assert first["reason"]
    for key, n in expect.counts:
        assert c.counts.get(key, 0) == n, (key, c.counts)
    if expect.note:
        assert any(expect.note in note for note in c.report["notes"]), c.report["notes"]


@pytest.mark.parametrize("case", CASES, ids=[c.path for c in CASES])
def test_a_validation_fails_where_every_import_fails_for_safety_and_reports_the_rest(
    ws_a, import_files, tmp_path, settings, case
):
    """A validation reads as skip-bad does and stores nothing. An archive refused for safety (a link out of it, a
    device or pipe) fails it with the importing path's error; anything else ends "validated" with the bad records
    listed, a whole-file problem as one record naming the file (``test_ingest``'s
    ``test_a_validation_reports_whole_file_problems_instead_of_failing``)."""
    settings.SPREADWATCH_MAX_RECORD_BYTES = RECORD_LIMIT
    upload = _upload_path(case, tmp_path)
    checked = import_files(ws_a, [upload], validate_only=True)
    assert _stored(ws_a) == NOTHING, "a validation stored something"
    if isinstance(case.skip, Refused):
        imported = import_files(ws_a, [upload], mode="strict")
        assert imported.status == "failed" and imported.error.startswith(f"{case.shown}: ")
        assert (checked.status, checked.error) == ("failed", imported.error), (checked.status, checked.report)
        return
    assert checked.status == "validated", (checked.status, checked.error)
    shown = checked.report["read"]["shown"]
    if isinstance(case.skip, Whole):
        assert any(r["path"] == case.shown and case.skip.text in r["reason"] for r in shown), shown
    elif isinstance(case.skip, Ok) and case.skip.n_bad:
        assert (shown[0]["path"], shown[0]["line"], shown[0]["field"]) == (case.shown, case.skip.line, case.skip.field)


def _outcome(case: Case, expect) -> str:
    """One cell of the README table: what ``expect`` promises, in words."""
    if isinstance(expect, Refused):
        return f"failed: `{case.shown}: …{expect.text}…`; refused in every mode"
    if isinstance(expect, Whole):
        skipped = " (skip-bad skipped it; nothing else to store)" if expect is case.skip else ""
        return f"failed: `{case.shown}: …{expect.text}…`{skipped}"
    if isinstance(expect, Bad):
        where = case.shown if expect.line is None else f"{case.shown}:{expect.line}"
        field = f" field `{expect.field}`" if expect.field else ""
        return f"failed at `{where}`{field}: {expect.text}; nothing stored"
    parts = ["done"]
    if expect.n_bad:
        where = case.shown if expect.line is None else f"{case.shown}:{expect.line}"
        field = f" field `{expect.field}`" if expect.field else ""
        parts.append(f"{expect.n_bad} bad at `{where}`{field}")
    if expect.counts:
        parts.append(", ".join(f"{k}={n}" for k, n in expect.counts))
    if expect.note:
        parts.append(f"note “{expect.note}”")
    return "; ".join(parts)


def readme_table() -> str:
    """The README's table of cases, made from :data:`CASES` (print it to refresh the README)."""
    rows = ["| case | format | what is wrong | strict | skip-bad |", "| --- | --- | --- | --- | --- |"]
    for c in CASES:
        cells = [f"`{c.path}`", c.path.split("/")[0], c.wrong, _outcome(c, c.strict), _outcome(c, c.skip)]
        rows.append("| " + " | ".join(x.replace("|", "\\|") for x in cells) + " |")
    return "\n".join(rows) + "\n"


def test_the_corpus_has_at_least_40_cases_and_the_readme_table_is_theirs():
    readme = (BAD / "README.md").read_text()
    assert len(CASES) >= 40
    on_disk = {str(p.relative_to(BAD)) for p in BAD.glob("*/*")}
    assert on_disk == {c.path for c in CASES}
    assert readme_table() in readme, "refresh the README table: print(tests.monitor.test_bad_input.readme_table())"
    assert sum(p.stat().st_size for p in BAD.rglob("*") if p.is_file()) < 200_000


def test_control_characters_are_stored_without_nul(ws_a, import_files):
    from monitor.models import Account, Tweet

    c = import_files(ws_a, [BAD / "v1" / "control_chars.jsonl"])
    assert c.status == "done", c.error
    assert Account.objects.get(workspace=ws_a, twitter_id=14).screen_name == "name"
    assert Tweet.objects.get(workspace=ws_a, tweet_id=1050121000000000000).text == "nul esc\x1b bell\x07"


# --- extremely long strings ---------------------------------------------------------------------------------


@pytest.mark.parametrize("mode", ["strict", "skip-bad"])
def test_extremely_long_strings(ws_a, import_files, tmp_path, mode):
    from monitor.models import Account, Tweet

    # a CSV field of 1 MB (under the reader's 64 MB field limit): stored, the name cut to the column's 64
    big = tmp_path / "long_field.csv"
    big.write_text(
        "tweet_id,retweeted_tweet_id,user_id,created_at,followers_count,screen_name\n"
        "1000,,102,2020-01-01T00:00:00Z,2,b\n"
        f"1001,1000,104,2020-01-01T00:00:01Z,8,{'x' * (1 << 20)}\n"
    )
    c = import_files(ws_a, [big], mode=mode)
    assert c.status == "done", c.error
    assert Account.objects.get(workspace=ws_a, twitter_id=104).screen_name == "x" * 64
    # a v2 tweet of 60 K characters and a 500-character user name: stored (the name cut to the column's 64)
    v2 = tmp_path / "long_text.jsonl"
    tweet = (
        f'{{"id": "{S1}", "author_id": "11", "created_at": "2018-10-10T20:19:24.000Z", "text": "{"y" * 60000}", '
        f'"edit_history_tweet_ids": ["{S1}"]}}'
    )
    user = f'{{"id": "11", "username": "{"n" * 500}", "public_metrics": {{"followers_count": 5}}}}'
    v2.write_text(f'{{"data": [{tweet}], "includes": {{"users": [{user}]}}}}\n')
    c = import_files(ws_a, [v2], mode=mode)
    assert c.status == "done", c.error
    assert len(Tweet.objects.get(workspace=ws_a, tweet_id=int(S1)).text) == 60000
    assert Account.objects.get(workspace=ws_a, twitter_id=11).screen_name == "n" * 64


# --- a 2 GB file --------------------------------------------------------------------------------------------


def _sparse(path: Path, size: int, head: bytes = b"") -> Path:
    with open(path, "wb") as f:
        f.write(head)
        f.seek(size - 1)
        f.write(b"\n")
    return path


def test_a_2gb_upload_over_the_limit_is_refused_before_anything_is_stored(ws_a, tmp_path, settings):
    from django.core.exceptions import ValidationError

    from monitor import services
    from monitor.models import Collection

    huge = _sparse(tmp_path / "huge.csv", 2 * 1024**3)  # sparse: no disk, no time
    settings.SPREADWATCH_UPLOAD_MAX_BYTES = 1024**3
    with pytest.raises(ValidationError) as exc:
        services.collection_create(workspace=ws_a, files=[huge])
    assert "files" in exc.value.message_dict
    assert "2,147,483,648 bytes" in exc.value.message_dict["files"][0]
    assert not Collection.objects.filter(workspace=ws_a).exists()


@pytest.mark.parametrize("mode", ["strict", "skip-bad"])
def test_a_2gb_file_of_zeros_fails_fast_without_being_read_whole(ws_a, tmp_path, mode):
    """The format is told from the first MB: 2 GB of NUL bytes fail at detection, in well under a second."""
    from django.db import transaction

    from monitor.models import Collection
    from monitor.services.ingest import load_files
    from monitor.services.uploads import UploadError

    huge = _sparse(tmp_path / "zeros.bin", 2 * 1024**3, b"\0" * 4096)
    c = Collection.objects.create(workspace=ws_a, name="zeros", mode=mode)
    t = time.perf_counter()
    with pytest.raises(UploadError) as exc, transaction.atomic():
        load_files([(huge, "zeros.bin", "auto")], workspace_id=ws_a.pk, collection_id=c.pk, mode=mode, store=True)
    assert time.perf_counter() - t < 5
    assert str(exc.value).startswith("zeros.bin: cannot tell the format"), exc.value
    assert _stored(ws_a) == NOTHING


@pytest.mark.parametrize("fmt", ["csv", "v1"])
@pytest.mark.parametrize("mode", ["strict", "skip-bad"])
def test_a_2gb_endless_line_is_a_bad_record_never_read_whole(ws_a, tmp_path, fmt, mode):
    """Valid first lines, then one line of 2 GB (sparse: NUL bytes) and a last good line. Strict mode stops
    once the line passes the record limit (16 MiB); skip-bad mode skips the line in blocks, in bounded memory,
    and stores the rest."""
    import resource

    from django.db import transaction

    from compute.formats import InputError
    from monitor.models import Collection
    from monitor.services.ingest import load_files

    if fmt == "csv":
        head = b"tweet_id,retweeted_tweet_id,user_id,created_at,followers_count\n1000,,102,2020-01-01T00:00:00Z,2\n"
        last = b"1001,1000,104,2020-01-01T00:00:01Z,8\n"
        n = 3
    else:
        head = f'{{"id_str": "{S1}", "created_at": 1539202764, "user": {{"id": 11, "followers_count": 5}}}}\n'.encode()
        last = (
            b'{"id_str": "1050120030000000000", "created_at": 1539203100, "user": {"id": 12, "followers_count": 3},'
            b' "retweeted_status": ' + head.strip() + b"}\n"
        )
        n = 2
    path = tmp_path / f"endless.{fmt}"
    with open(path, "wb") as f:
        f.write(head)
        f.seek(len(head) + 2 * 1024**3)
        f.write(b"\n" + last)
    c = Collection.objects.create(workspace=ws_a, name="endless", mode=mode)
    rss = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    t = time.perf_counter()
    if mode == "strict":
        with pytest.raises(InputError) as exc, transaction.atomic():
            load_files([(path, path.name, "auto")], workspace_id=ws_a.pk, collection_id=c.pk, mode=mode, store=True)
        assert str(exc.value) == f"{path.name}:{n}: record longer than 16,777,216 bytes"
        assert time.perf_counter() - t < 5
        assert _stored(ws_a) == NOTHING
    else:
        with transaction.atomic():
            res = load_files(
                [(path, path.name, "auto")], workspace_id=ws_a.pk, collection_id=c.pk, mode=mode, store=True
            )
        assert [str(r) for r in res.report.shown] == [f"{path.name}:{n}: record longer than 16,777,216 bytes"]
        assert res.counts["retweets_stored"] == 1
        assert time.perf_counter() - t < 60
    # ru_maxrss is in KiB: the 2 GB line never came close to memory
    assert resource.getrusage(resource.RUSAGE_SELF).ru_maxrss - rss < 300 * 1024


# --- archives: zip bomb, limits, path traversal ------------------------------------------------------------


def _zip_bomb(dest: Path, gib: float = 1.0) -> Path:
    zero = bytes(1 << 20)
    with (
        zipfile.ZipFile(dest, "w", zipfile.ZIP_DEFLATED, compresslevel=9) as zf,
        zf.open("tweets.csv", "w", force_zip64=True) as f,
    ):
        f.write(b"tweet_id,retweeted_tweet_id,user_id,created_at,followers_count\n")
        for _ in range(int(gib * 1024)):
            f.write(zero)
    return dest


@pytest.fixture(scope="module")
def zip_bomb(tmp_path_factory) -> Path:
    return _zip_bomb(tmp_path_factory.mktemp("bomb") / "bomb.zip")


@pytest.mark.parametrize("mode", ["strict", "skip-bad"])
def test_a_zip_bomb_is_refused_before_extraction(ws_a, import_files, zip_bomb, mode):
    assert zip_bomb.stat().st_size < 2 * 1024**2  # 1 GiB of zeros in ~1 MB
    t = time.perf_counter()
    c = import_files(ws_a, [zip_bomb], mode=mode)
    assert time.perf_counter() - t < 10
    assert c.status == "failed"
    assert c.error.startswith("bomb.zip: archive member 'tweets.csv' would unpack 1,073,741,"), c.error
    assert "zip bomb" in c.error
    assert _stored(ws_a) == NOTHING


def _zip_members(dest: Path, members: dict[str, bytes]) -> Path:
    with zipfile.ZipFile(dest, "w", zipfile.ZIP_DEFLATED) as zf:
        for name, data in members.items():
            zf.writestr(name, data)
    return dest


def _tar_members(dest: Path, members: dict[str, bytes], mode: str = "w:gz") -> Path:
    with tarfile.open(dest, mode) as tf:
        for name, data in members.items():
            info = tarfile.TarInfo(name)
            info.size = len(data)
            tf.addfile(info, io.BytesIO(data))
    return dest


GOOD_CSV = (DATA / "thesis_example" / "tweets.csv").read_bytes()


@pytest.mark.parametrize("kind", ["zip", "tar"])
def test_an_archive_over_the_size_or_member_limits_is_refused(ws_a, import_files, tmp_path, settings, kind):
    make = _zip_members if kind == "zip" else _tar_members
    members = {f"part{i}.csv": GOOD_CSV for i in range(6)}
    settings.SPREADWATCH_ARCHIVE_MAX_MEMBERS = 5
    c = import_files(ws_a, [make(tmp_path / f"many.{kind}", members)])
    assert c.status == "failed" and c.error == f"many.{kind}: the archive has 6 members; the limit is 5", c.error
    settings.SPREADWATCH_ARCHIVE_MAX_MEMBERS = 100_000
    settings.SPREADWATCH_ARCHIVE_MAX_BYTES = 5 * len(GOOD_CSV)
    c = import_files(ws_a, [make(tmp_path / f"big.{kind}", members)])
    assert c.status == "failed" and c.error.startswith(f"big.{kind}: the archive would unpack to "), c.error
    assert _stored(ws_a) == NOTHING
    # within the limits the same archive imports
    settings.SPREADWATCH_ARCHIVE_MAX_BYTES = 6 * len(GOOD_CSV)
    c = import_files(ws_a, [make(tmp_path / f"ok.{kind}", members)], compute=False)
    assert c.status == "done", c.error


def test_a_tar_bomb_is_refused_by_its_overall_ratio(ws_a, import_files, tmp_path, settings):
    # a tar's members are compressed as one stream: the ratio is the whole archive's (64 MB of zeros)
    settings.SPREADWATCH_ARCHIVE_MAX_RATIO = 100
    c = import_files(ws_a, [_tar_members(tmp_path / "bomb.tar.gz", {"tweets.csv": bytes(64 << 20)})])
    assert c.status == "failed" and c.error.startswith("bomb.tar.gz: the archive would unpack 67,108,864 bytes")
    assert "archive bomb" in c.error
    assert _stored(ws_a) == NOTHING


@pytest.mark.parametrize("kind", ["zip", "tar"])
@pytest.mark.parametrize("name", ["../evil.csv", "/tmp/evil.csv", "ok/../../evil.csv"])
@pytest.mark.parametrize("mode", ["strict", "skip-bad"])
def test_a_member_outside_the_archive_is_refused(ws_a, import_files, tmp_path, kind, name, mode):
    make = _zip_members if kind == "zip" else _tar_members
    upload = make(tmp_path / f"evil.{kind}", {"tweets.csv": GOOD_CSV, name: GOOD_CSV})
    c = import_files(ws_a, [upload], mode=mode)
    assert c.status == "failed"
    assert c.error == f"evil.{kind}: archive member {name!r} points outside the archive", c.error
    assert _stored(ws_a) == NOTHING
    assert not (tmp_path / "evil.csv").exists()


# --- the web upload never answers 500 -----------------------------------------------------------------------


@pytest.mark.parametrize(
    "path",
    ["csv/control_chars.csv", "csv/empty.csv", "v1/truncated_json.jsonl", "npz/truncated.npz", "trees/no_root"],
)
@pytest.mark.parametrize("mode", ["strict", "skip-bad"])
def test_the_upload_page_never_answers_500(
    ws_a, alice, client, tmp_path, path, mode, django_capture_on_commit_callbacks
):
    from monitor.models import Collection

    case = next(c for c in CASES if c.path == path)
    client.force_login(alice)
    with django_capture_on_commit_callbacks(execute=True), open(_upload_path(case, tmp_path), "rb") as fh:
        r = client.post(f"/w/{ws_a.slug}/collections/new/", {"files": [fh], "format": "auto", "mode": mode})
    if path == "csv/empty.csv":  # the form refuses an empty file itself: the page again, with the reason
        assert r.status_code == 200 and b"The submitted file is empty" in r.content
        assert not Collection.objects.filter(workspace=ws_a).exists()
        return
    assert r.status_code == 302, r.content[:2000]
    c = Collection.objects.get(workspace=ws_a)
    expect = case.strict if mode == "strict" else case.skip
    assert c.status == expect.status, c.error
    page = client.get(r["Location"])
    assert page.status_code == 200
    if c.status == "failed":
        assert _stored(ws_a) == NOTHING


@pytest.mark.parametrize("suffix", ["gz", "bz2", "xz"])
def test_a_compressed_csv_is_read_not_taken_for_a_tar(ws_a, import_files, tmp_path, suffix):
    import bz2
    import gzip
    import lzma

    opener = {"gz": gzip.open, "bz2": bz2.open, "xz": lzma.open}[suffix]
    path = tmp_path / f"tweets.csv.{suffix}"
    with opener(path, "wb") as f:
        f.write(GOOD_CSV)
    c = import_files(ws_a, [path], compute=False)
    assert c.status == "done", c.error
    assert c.counts["retweets_stored"] == 9
