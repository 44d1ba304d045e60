from __future__ import annotations

import bz2

import numpy as np
import pytest

from compute.formats import InputError, iter_follows, read
from compute.formats._io import parse_int_block
from compute.tables import concat_follows

from .conftest import THESIS

# test extras, skipped where only the engine's dependencies are installed (the GPU machine: make test-gpu)
pytest.importorskip("hypothesis")
from hypothesis import given, settings
from hypothesis import strategies as st


def test_it_reads_a_follows_csv(fdata):
    res = read("follows/follows.csv")
    assert res.format == "follows" and res.tweets is None
    assert res.follows.follower_id.tolist() == [102, 103, 101]
    assert res.follows.followee_id.tolist() == [101, 101, 102]


def test_it_finds_follow_columns_by_name(fdata):
    f = read("follows/reordered.csv").follows
    assert f.follower_id.tolist() == [102, 103] and f.followee_id.tolist() == [101, 101]


def test_it_reads_a_whitespace_edge_list_with_comments(fdata):
    res = read("follows/edges.txt")
    assert res.follows.follower_id.tolist() == [1, 3, 5, 7]
    assert res.follows.followee_id.tolist() == [2, 4, 6, 8]
    assert res.report.n_good == 4


def test_it_names_the_first_bad_edge_line(fdata):
    with pytest.raises(InputError, match=r"^follows/bad_edges.txt:2: wrong number of fields: expected 2, got 1"):
        read("follows/bad_edges.txt")


def test_it_skips_bad_edge_lines(fdata):
    res = read("follows/bad_edges.txt", mode="skip-bad")
    assert res.follows.follower_id.tolist() == [1, 10]
    assert [str(r) for r in res.report.shown] == [
        "follows/bad_edges.txt:2: wrong number of fields: expected 2, got 1: '3'",
        "follows/bad_edges.txt:3: field 'followee_id': not an integer id: 'x'",
        "follows/bad_edges.txt:4: field 'followee_id': negative id: '-6'",
        "follows/bad_edges.txt:5: wrong number of fields: expected 2, got 3: '7 8 9'",
        "follows/bad_edges.txt:7: field 'followee_id': id out of range: '99999999999999999999'",
    ]


def test_it_refuses_an_empty_follows_file(tmp_path):
    p = tmp_path / "f.txt"
    p.write_text("# only a comment\n\n")
    with pytest.raises(InputError, match="empty file"):
        read(p, "follows")


def test_it_reads_the_thesis_follows():
    f = read(THESIS / "follows.csv").follows
    pairs = set(zip(f.follower_id.tolist(), f.followee_id.tolist()))
    assert (102, 101) in pairs and (106, 105) in pairs and len(pairs) == 8


def test_it_streams_a_large_edge_list_in_chunks(tmp_path):
    rng = np.random.default_rng(3)
    e = rng.integers(0, 2**62, size=(250_000, 2))
    p = tmp_path / "big.txt.bz2"
    text = "# big\n" + "\n".join(f"{a}\t{b}" for a, b in e.tolist()) + "\n"
    p.write_bytes(bz2.compress(text.encode()))
    chunks = list(iter_follows(p, chunk_size=60_000))
    assert len(chunks) >= 3
    got = concat_follows(chunks)
    assert np.array_equal(got.follower_id, e[:, 0]) and np.array_equal(got.followee_id, e[:, 1])


_TOKEN = st.one_of(
    st.integers(0, 2**63 - 1).map(str),
    st.sampled_from(["", "-1", "x", "1.5", "99999999999999999999", "9223372036854775808", "+3", "#c"]),
)
_SEP = st.sampled_from([" ", "\t", ",", ", ", "  ", ",,"])


@settings(max_examples=300, deadline=None)
@given(
    st.lists(
        st.lists(_TOKEN, min_size=0, max_size=3).flatmap(
            lambda toks: st.tuples(st.just(toks), st.lists(_SEP, min_size=len(toks), max_size=len(toks)))
        ),
        max_size=8,
    ),
    st.sampled_from(["\n", "\r\n"]),
)
def test_it_parses_plain_blocks_fast_and_sends_the_rest_to_the_careful_path(lines, eol):
    """The block parser (NumPy passes or the numba kernel, which agree) either returns exactly what a
    line-by-line parse gives, or declines."""
    text = eol.join("".join(t + s for t, s in zip(toks, seps)).rstrip(" ,") for toks, seps in lines) + eol
    got = parse_int_block(text.encode(), 2, use_numba=False)
    compiled = parse_int_block(text.encode(), 2)  # the numba kernel where numba is installed
    assert (got is None) == (compiled is None), text
    if got is not None:
        assert got.tolist() == compiled.tolist()
    expected = []
    ok = True
    for line in text.splitlines():
        parts = [p for p in line.replace(",", " ").split()]
        if not line.strip():
            continue
        bad_commas = ",," in line or line.strip().startswith(",") or line.strip().endswith(",")
        if len(parts) != 2 or bad_commas or not all(p.isdigit() and int(p) < 2**63 - 1 for p in parts):
            ok = False
            break
        expected.append([int(p) for p in parts])
    if got is not None:
        assert ok, text
        assert got.tolist() == expected
