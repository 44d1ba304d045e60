"""The names a part of an import gives its users: the last one seen wins, cut to the column's width."""

from __future__ import annotations

import numpy as np

from monitor.services.ingest.stager import NAME_MAX, NamesSeen, Stager


def _names(*values: str) -> np.ndarray:
    out = np.empty(len(values), object)
    out[:] = values
    return out


def test_the_last_name_a_part_gives_a_user_wins_across_its_chunks():
    st = Stager(None)
    st.name_parts = [
        (np.array([7, 3, 7], np.int64), _names("a", "b", "c")),  # 7 renamed within a chunk
        (np.array([9, 3], np.int64), _names("d", "e")),  # 3 renamed by a later chunk
    ]
    seen = st.names_seen()
    assert seen.ids.tolist() == [3, 7, 9]
    assert seen.names.tolist() == ["e", "c", "d"]
    names, found = seen.of(np.array([1, 3, 7, 9, 10], np.int64))
    assert found.tolist() == [False, True, True, True, False]
    assert names.tolist() == ["", "e", "c", "d", ""]


def test_a_name_longer_than_the_column_is_cut_and_the_others_are_kept_as_given():
    long = "x" * (NAME_MAX + 5)
    seen = NamesSeen(np.array([1, 2, 3], np.int64), _names("short", long, ""))
    assert seen.names.tolist() == ["short", "x" * NAME_MAX, ""]
    assert len(NamesSeen(np.zeros(0, np.int64), np.zeros(0, object))) == 0
    assert NamesSeen(np.zeros(0, np.int64), np.zeros(0, object)).of(np.array([5], np.int64))[0].tolist() == [""]
