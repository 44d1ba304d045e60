"""The record limit: a line (or CSV field) longer than ``max_record_bytes`` is a bad record, found without
holding the line, in every reader; memory stays bounded however long the line is."""

from __future__ import annotations

import gzip
import json
import tracemalloc

import pytest

from compute.formats import MAX_RECORD_BYTES, InputError, read
from compute.formats._io import LineBlocks

# test extras, skipped where only the engine's dependencies are installed (the GPU machine: make test-gpu)
pytest.importorskip("hypothesis")
from hypothesis import given, settings
from hypothesis import strategies as st

ORIG = 1050118621198921728
H = "tweet_id,retweeted_tweet_id,user_id,created_at,followers_count,screen_name\n"


def _status(tid: int, uid: int, text: str = "hi") -> str:
    return json.dumps({"id_str": str(tid), "created_at": 1539202764, "text": text,
                       "user": {"id_str": str(uid), "followers_count": 3}})  # fmt: skip


# --- LineBlocks: every boundary, checked against splitting the whole file --------------------------------------


def _expected(data: bytes, limit: int) -> tuple[list[tuple[int, bytes]], list[int]]:
    """(kept non-empty lines with their numbers, numbers of the lines over the limit), the obvious way."""
    parts = data.split(b"\n")
    if parts and parts[-1] == b"":
        parts.pop()
    kept = [(i, p) for i, p in enumerate(parts, 1) if p and len(p) <= limit]
    return kept, [i for i, p in enumerate(parts, 1) if len(p) > limit]


@settings(max_examples=300, deadline=None)
@given(
    lengths=st.lists(st.integers(0, 40), max_size=12),
    limit=st.integers(1, 25),
    block=st.integers(1, 30),
    final_newline=st.booleans(),
)
def test_line_blocks_report_exactly_the_lines_past_the_limit(tmp_path_factory, lengths, limit, block, final_newline):
    data = b"\n".join(bytes([97 + i % 26]) * n for i, n in enumerate(lengths))
    if final_newline and data:
        data += b"\n"
    p = tmp_path_factory.mktemp("lb") / "f.txt"
    p.write_bytes(data)
    want_lines, want_long = _expected(data, limit)

    got_long: list[int] = []
    lb = LineBlocks(p, block_size=block, max_line=limit, too_long=got_long.append)
    assert [(n, bytes(x)) for n, x in lb.lines()] == want_lines
    assert got_long == want_long

    # the block iterator: whole lines, the right first line number, the long lines left out
    got_long.clear()
    seen = []
    for blk, first in LineBlocks(p, block_size=block, max_line=limit, too_long=got_long.append):
        assert blk.endswith(b"\n") or not data.endswith(b"\n") or blk == b""
        seen += [(first + k, x) for k, x in enumerate(blk.split(b"\n")) if x]
    assert seen == want_lines
    assert got_long == want_long


def test_line_blocks_without_a_limit_keep_a_long_line_whole(tmp_path):
    p = tmp_path / "f.txt"
    p.write_bytes(b"a\n" + b"x" * 100 + b"\nb\n")
    assert [bytes(x) for _, x in LineBlocks(p, block_size=7).lines()] == [b"a", b"x" * 100, b"b"]
    with pytest.raises(ValueError, match="too_long"):
        LineBlocks(p, max_line=10)


# --- every reader -------------------------------------------------------------------------------------------------


def _cases(tmp_path):
    long = "x" * 5000
    csv = tmp_path / "t.csv"
    csv.write_text(H + f"1000,,102,2020-01-01T00:00:00Z,2,b\n1001,1000,104,2020-01-01T00:00:01Z,8,{long}\n"
                   "1002,1000,101,2020-01-01T00:00:02Z,1,a\n")  # fmt: skip
    v1 = tmp_path / "t.jsonl"
    v1.write_text(_status(ORIG, 1) + "\n" + _status(ORIG + 1, 2, long) + "\n" + _status(ORIG + 2, 3) + "\n")
    v2 = tmp_path / "t2.jsonl"
    tw = {"id": str(ORIG), "author_id": "11", "created_at": "2018-10-10T20:19:24Z", "text": "a"}
    v2.write_text("\n".join(json.dumps(dict(tw, id=str(ORIG + k), text=t)) for k, t in enumerate(["a", long, "c"])))
    follows = tmp_path / "f.txt"
    follows.write_text("1 2\n" + "3" * 5000 + " 4\n5 6\n")
    return {"csv": csv, "v1": v1, "v2": v2, "follows": follows}


@pytest.mark.parametrize("fmt", ["csv", "v1", "v2", "follows"])
def test_every_reader_reports_a_long_line_and_reads_on(tmp_path, json_backend, fmt):
    p = _cases(tmp_path)[fmt]
    n = 3 if fmt == "csv" else 2  # the long line (after the CSV's header)
    with pytest.raises(InputError, match=rf"^{p}:{n}: record longer than 4,096 bytes$"):
        read(p, fmt, max_record_bytes=4096)
    res = read(p, fmt, mode="skip-bad", max_record_bytes=4096)
    assert [str(r) for r in res.report.shown] == [f"{p}:{n}: record longer than 4,096 bytes"]
    lines = res.follows if fmt == "follows" else res.tweets.lines
    assert len(lines) == 2
    # the default limit (16 MiB) takes the same line (a 5,000-digit follower id is bad for another reason)
    whole = read(p, fmt, mode="skip-bad")
    assert not any("record longer" in str(r) for r in whole.report.shown) and MAX_RECORD_BYTES == 16 << 20
    if fmt == "follows":
        assert [str(r)[len(str(p)) :] for r in whole.report.shown] == [
            ":2: field 'follower_id': id out of range: '33333333333333333333333333333333333333333333333333333333..."
        ]


def test_trees_and_tudataset_lines_are_bounded_too(tmp_path):
    s1 = "1050118621198921728"
    tree = tmp_path / "t" / "tree"
    tree.mkdir(parents=True)
    lines = [f"['ROOT', 'ROOT', '0.0']->['1', '{s1}', '0.0']", f"['1', '{s1}', '0.0']->['2', '{s1}', '{'1' * 300}']",
             f"['1', '{s1}', '0.0']->['3', '{s1}', '2.0']"]  # fmt: skip
    (tree / f"{s1}.txt").write_text("\n".join(lines) + "\n")
    with pytest.raises(InputError, match=r"tree/1050118621198921728.txt:2: record longer than 100 bytes$"):
        read(tmp_path / "t", max_record_bytes=100)
    res = read(tmp_path / "t", mode="skip-bad", max_record_bytes=100)
    assert sorted(res.tweets.user_id.tolist()) == [1, 3]
    ds = tmp_path / "ds"
    ds.mkdir()
    (ds / "DS_A.txt").write_text("2, 1\n3, 1\n")
    (ds / "DS_graph_indicator.txt").write_text("1\n1\n1\n")
    (ds / "DS_node_labels.txt").write_text("10\n" + "1" * 300 + "\n12\n")
    with pytest.raises(InputError, match=r"DS_node_labels.txt:2: record longer than 100 bytes$"):
        read(ds, max_record_bytes=100)


def test_it_refuses_a_limit_below_one():
    with pytest.raises(ValueError, match="max_record_bytes must be positive"):
        read("x.csv", "csv", max_record_bytes=0)


# --- an endless line is never held whole ------------------------------------------------------------------------


def _endless(path, head: str, size: int):
    """``head`` then ``size`` bytes of one line (sparse: no disk, no time), then a newline and one more line."""
    tail = "\n" + head.splitlines()[-1] + "\n"
    with open(path, "wb") as f:
        f.write(head.encode())
        f.seek(len(head) + size)
        f.write(tail.encode())
    return path


@pytest.mark.parametrize("fmt", ["csv", "v1", "follows"])
def test_an_endless_line_is_skipped_in_bounded_memory(tmp_path, fmt):
    head = {"csv": H + "1000,,102,2020-01-01T00:00:00Z,2,b\n", "v1": _status(ORIG, 1) + "\n", "follows": "1 2\n"}[fmt]
    n = head.count("\n") + 1  # the endless line
    p = _endless(tmp_path / "big", head, 300 << 20)
    tracemalloc.start()
    try:
        with pytest.raises(InputError, match=rf":{n}: record longer than 1,048,576 bytes$"):
            read(p, fmt, max_record_bytes=1 << 20)
        _, peak_strict = tracemalloc.get_traced_memory()
        tracemalloc.reset_peak()
        res = read(p, fmt, mode="skip-bad", max_record_bytes=1 << 20)
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert [r.line for r in res.report.shown] == [n]
    # the line after the endless one is read (a duplicate of line 1: identical, so no conflict)
    assert (len(res.follows) if fmt == "follows" else len(res.tweets)) == 2
    # a 4 MiB read block plus the 1 MiB limit, a few times over: never the 300 MiB line
    assert peak < 40 << 20 and peak_strict < 40 << 20, (peak, peak_strict)


def test_an_endless_line_in_a_gzip_file_is_bounded_too(tmp_path):
    p = tmp_path / "big.jsonl.gz"
    with gzip.open(p, "wb", compresslevel=1) as f:
        f.write((_status(ORIG, 1) + "\n").encode())
        f.write(b"{" + b" " * (64 << 20))
    with pytest.raises(InputError, match=r"big.jsonl.gz:2: record longer than 1,048,576 bytes$"):
        read(p, "v1", max_record_bytes=1 << 20)
    assert len(read(p, "v1", mode="skip-bad", max_record_bytes=1 << 20).tweets) == 1
