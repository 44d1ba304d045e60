"""The follower graph as memory-mapped CSR files, one per workspace and follows version (monitor/graph_files.py)."""

from __future__ import annotations

import numpy as np
import pytest

from compute.graphs import graph_from_edges
from compute.structures import FollowerGraph
from monitor import graph_files, services
from monitor.graph_files import Csr, csr_from_edges, follower_csr
from monitor.models import Account, Workspace
from tests.webapp import EXPECTED_TOTAL, THESIS, total_by_name


@pytest.fixture
def graph_dir(settings, tmp_path):
    settings.SPREADWATCH_GRAPH_DIR = tmp_path / "graphs"
    return settings.SPREADWATCH_GRAPH_DIR


@pytest.fixture
def row_reads(graph_dir, follow_row_reads):
    return follow_row_reads


def _stored_edges(ws) -> set[tuple[int, int]]:
    from monitor.models import Follow

    return set(Follow.objects.filter(workspace=ws).values_list("follower_id", "followee_id"))


def _file_edges(ws) -> set[tuple[int, int]]:
    csr = graph_files.load(ws.pk, Workspace.objects.get(pk=ws.pk).follows_token)
    assert csr is not None, "no file for the workspace's current follows version"
    src, dst = csr.edges()
    return set(zip(src.tolist(), dst.tolist()))


def _mapped(a: np.ndarray) -> bool:
    while a is not None and not isinstance(a, np.memmap):
        a = a.base
    return isinstance(a, np.memmap)


def test_the_csr_is_the_one_both_engines_build_from_the_same_edges():
    rng = np.random.default_rng(3)
    fr, fe = rng.integers(100, 140, 500), rng.integers(100, 140, 500)  # duplicates and self-follows among them
    csr = csr_from_edges(fr, fe)
    fg = FollowerGraph.from_edges(fr, fe)
    keep = fr != fe  # graph_from_edges keeps self loops; follows have none (the table's check)
    g = graph_from_edges(fr[keep], fe[keep])
    for a, b in ((csr.ids, fg.user_ids), (csr.indptr, fg.friends_indptr), (csr.indices, fg.friends_indices)):
        assert np.array_equal(a, b)
    assert np.array_equal(csr.ids, g.ids) and np.array_equal(csr.indptr, g.indptr)
    assert np.array_equal(csr.indices, g.indices) and csr.indices.dtype == g.indices.dtype == np.int32
    src, dst = csr.edges()
    assert set(zip(src.tolist(), dst.tolist())) == {(a, b) for a, b in zip(fr.tolist(), fe.tolist()) if a != b}


def test_a_saved_version_is_read_back_mapped_and_only_the_newest_versions_stay(db, graph_dir):
    csr = csr_from_edges(np.array([1, 1, 2]), np.array([2, 3, 3]))
    for i in range(4):
        got = graph_files.save(7, f"token{i}", csr)
        assert all(np.array_equal(a, b) for a, b in zip(got, csr)) and _mapped(got.indices)
    folder = next(graph_dir.iterdir()) / "7"
    assert sorted(p.name for p in folder.iterdir()) == ["token2", "token3"]  # KEEP = 2
    assert graph_files.load(7, "token0") is None and graph_files.load(7, "token3") is not None
    graph_files.drop(7)
    assert graph_files.load(7, "token3") is None


def test_a_mapped_version_is_writable_so_the_kernels_see_the_types_they_were_compiled_for(db, graph_dir):
    got = graph_files.save(3, "t", csr_from_edges(np.array([1, 2]), np.array([2, 3])))
    assert all(a.flags.writeable for a in got) and _mapped(got.indices)
    assert got.indices.tolist() == [1, 2]
    got.indices[0] = 2  # writes a private copy of the page: the file keeps its edges
    assert graph_files.load(3, "t").indices.tolist() == [1, 2]


def test_an_empty_graph_round_trips(db, graph_dir):
    empty = csr_from_edges(np.zeros(0, np.int64), np.zeros(0, np.int64))
    got = graph_files.save(1, "t", empty)
    assert len(got.ids) == 0 and list(got.indptr) == [0] and got.n_edges == 0


def test_an_import_writes_the_version_its_commit_makes_and_runs_read_no_rows(ws_a, import_files, graph_dir, row_reads):
    c = import_files(ws_a, [THESIS / "tweets.csv", THESIS / "follows.csv"])
    assert c.status == "done", c.error
    assert _file_edges(ws_a) == _stored_edges(ws_a) and len(_stored_edges(ws_a)) > 0
    assert row_reads == []  # the compute mapped the import's file
    assert total_by_name(ws_a) == EXPECTED_TOTAL
    csr, token = follower_csr(ws_a.pk)
    assert token == Workspace.objects.get(pk=ws_a.pk).follows_token and _mapped(csr.indices)


def test_a_later_import_builds_on_the_version_before(ws_a, import_files, graph_dir, row_reads):
    import_files(ws_a, [THESIS / "tweets.csv"])  # no follows: the first run builds the empty version from rows
    assert len(row_reads) == 1
    c = import_files(ws_a, [THESIS / "follows.csv"])
    assert c.status == "done", c.error
    assert _file_edges(ws_a) == _stored_edges(ws_a) and len(row_reads) == 1
    assert total_by_name(ws_a) == EXPECTED_TOTAL  # the run saw the new follows


def test_without_the_version_before_on_this_machine_the_first_reader_builds_it(
    ws_a, import_files, graph_dir, row_reads
):
    import_files(ws_a, [THESIS / "tweets.csv"], compute=False)
    graph_files.drop(ws_a.pk)  # as on a machine that never saw the workspace
    c = import_files(ws_a, [THESIS / "follows.csv"])
    assert c.status == "done", c.error
    assert len(row_reads) == 1  # the run read the rows once and wrote the version
    assert _file_edges(ws_a) == _stored_edges(ws_a)
    follower_csr(ws_a.pk)
    assert len(row_reads) == 1


def test_an_import_in_parts_writes_every_part_s_follows(ws_a, import_files, graph_dir, settings):
    settings.SPREADWATCH_IMPORT_PART_ROWS = 5  # the thesis' example in several parts
    c = import_files(ws_a, [THESIS / "follows.csv", THESIS / "tweets.csv"])
    assert c.status == "done", c.error
    assert c.timings["parts"] > 1
    assert _file_edges(ws_a) == _stored_edges(ws_a)
    assert total_by_name(ws_a) == EXPECTED_TOTAL


def test_a_write_that_commits_while_the_rows_are_read_is_not_kept_under_the_older_version(
    ws_a, import_files, graph_dir, monkeypatch
):
    import_files(ws_a, [THESIS / "tweets.csv", THESIS / "follows.csv"], compute=False)
    graph_files.drop(ws_a.pk)
    tokens = iter(["old", "new"])
    monkeypatch.setattr(graph_files, "follows_token", lambda cur, ws: next(tokens))
    csr, token = follower_csr(ws_a.pk)
    assert token == "" and csr.n_edges == len(_stored_edges(ws_a))
    assert graph_files.load(ws_a.pk, "old") is None


def test_purging_a_workspace_removes_its_files(ws_a, import_files, graph_dir, run_tasks):
    import_files(ws_a, [THESIS / "tweets.csv", THESIS / "follows.csv"])
    assert any((graph_dir).rglob("indices.npy"))
    run_tasks(services.workspace_purge, workspace=ws_a)
    assert not any((graph_dir).rglob("indices.npy"))


def test_a_graph_folder_that_cannot_be_written_costs_speed_not_a_result(
    ws_a, import_files, graph_dir, settings, tmp_path
):
    blocker = tmp_path / "not-a-folder"
    blocker.write_text("")
    settings.SPREADWATCH_GRAPH_DIR = blocker / "graphs"  # mkdir fails: a file is in the way
    c = import_files(ws_a, [THESIS / "tweets.csv", THESIS / "follows.csv"])
    assert c.status == "done", c.error
    assert total_by_name(ws_a) == EXPECTED_TOTAL
    assert Account.objects.filter(workspace=ws_a).exists()


def test_an_imports_graph_file_is_written_while_its_compute_is_planned(
    ws_a, import_files, graph_dir, row_reads, monkeypatch
):
    """The file is built in a thread while the import's last statements run (the planner statistics, the run's
    plan), and is there before the import commits: the run maps it and reads no follow rows."""
    import threading

    from monitor.algorithms.influence import Influence

    planned, order = threading.Event(), []
    real_csr, real_plan = graph_files._imported_csr, Influence.plan

    def csr(follows):
        planned.wait(timeout=10)  # built before the plan, as it was, it waits here in vain
        order.append("graph file")
        return real_csr(follows)

    def plan(self, **kwargs):
        order.append("plan")
        planned.set()
        return real_plan(self, **kwargs)

    monkeypatch.setattr(graph_files, "_imported_csr", csr)
    monkeypatch.setattr(Influence, "plan", plan)
    c = import_files(ws_a, [THESIS / "tweets.csv", THESIS / "follows.csv"])
    assert c.status == "done", c.error
    assert order[:2] == ["plan", "graph file"]
    assert "follower graph file" in c.timings["merge_steps_s"]  # timed (its seconds can round to 0)
    assert _file_edges(ws_a) == _stored_edges(ws_a) and row_reads == []
    assert total_by_name(ws_a) == EXPECTED_TOTAL
    assert not [t for t in threading.enumerate() if t.name.startswith("graph-file")]


def test_a_graph_file_that_fails_fails_its_import_whole(ws_a, import_files, graph_dir, monkeypatch):
    import threading

    def broken(follows):
        raise RuntimeError("the graph file broke")

    monkeypatch.setattr(graph_files, "_imported_csr", broken)
    c = import_files(ws_a, [THESIS / "tweets.csv", THESIS / "follows.csv"])
    assert c.status == "failed" and "the graph file broke" in c.error
    assert not Account.objects.filter(workspace=ws_a).exists()  # rolled back: nothing half-written
    assert not [t for t in threading.enumerate() if t.name.startswith("graph-file")]
    monkeypatch.undo()
    again = import_files(ws_a, [THESIS / "tweets.csv", THESIS / "follows.csv"])  # the worker lives on
    assert again.status == "done", again.error
    assert total_by_name(ws_a) == EXPECTED_TOTAL


def test_self_follows_alone_give_their_accounts_and_no_edge():
    csr = csr_from_edges(np.array([4, 2, 4]), np.array([4, 2, 4]))
    assert csr.ids.tolist() == [2, 4] and csr.indptr.tolist() == [0, 0, 0] and csr.n_edges == 0


def test_csr_edges_of_a_graph_with_isolated_rows():
    csr = Csr(np.array([5, 6, 9]), np.array([0, 0, 2, 2]), np.array([0, 2], np.int32))
    src, dst = csr.edges()
    assert src.tolist() == [6, 6] and dst.tolist() == [5, 9]


def test_the_follows_an_import_keeps_are_the_edges_it_was_given_whatever_their_pks(monkeypatch):
    """A part's edges are kept as 64-bit keys of offsets from a window's start where they fit in it, as int64 pks
    where they do not; the version written is the CSR of the version before and every part's edges, self-follows
    and duplicates dropped."""
    rng = np.random.default_rng(5)
    before = (rng.integers(10, 60, 300), rng.integers(10, 60, 300))
    near = (rng.integers(2**40, 2**40 + 90, 400), rng.integers(2**40, 2**40 + 90, 400))  # offsets within uint32
    far = (np.array([7, 2**33 + 7, 7, 7]), np.array([2**33 + 7, 7, 7, 2**33 + 7]))  # a span over 2**32, a self-follow
    written = {}
    monkeypatch.setattr(graph_files, "follows_token", lambda cur, ws: "t")
    monkeypatch.setattr(graph_files, "save", lambda ws, token, csr: written.setdefault(token, csr))
    follows = graph_files.ImportedFollows()
    follows.ws, follows.base = 1, csr_from_edges(*before)
    for fr, fe in (near, far, near):
        follows.add(fr, fe)
    assert len(follows.kept.runs) == 1 and len(follows.kept.wide) == 1  # the two near parts: one run
    follows.finish(None)
    assert len(follows.kept) == 0 and not follows.kept.runs and not follows.kept.wide
    expected = csr_from_edges(*(np.concatenate([b, n, f, n]) for b, n, f in zip(before, near, far, strict=True)))
    assert all(np.array_equal(a, b) for a, b in zip(written["t"], expected, strict=True))
    assert {(int(a), int(b)) for a, b in zip(*written["t"].edges())} == {
        (a, b) for a, b in zip(*(np.concatenate(c).tolist() for c in zip(before, near, far))) if a != b
    }


def test_the_follows_an_import_kept_answer_which_edges_a_part_added():
    """A later part of an import into a workspace with no follows asks the kept parts, not the table: the answer is
    exactly the parts' edges, whatever their offsets and order; a part kept as int64 pks, or no base, cannot
    answer (None: the table is asked)."""
    rng = np.random.default_rng(7)
    follows = graph_files.ImportedFollows()
    follows.base = Csr(np.zeros(0, np.int64), np.zeros(1, np.int64), np.zeros(0, np.int32))
    low = (rng.integers(100, 160, 500), rng.integers(100, 160, 500))
    high = (rng.integers(2**40, 2**40 + 50, 300), rng.integers(2**40, 2**40 + 50, 300))  # unsorted, a far base
    for fr, fe in (low, high):
        follows.add(fr, fe)
    added = {(int(a), int(b)) for part in (low, high) for a, b in zip(*part)}
    asked = (
        np.concatenate([rng.integers(90, 170, 3000), rng.integers(2**40 - 5, 2**40 + 60, 2000), [100, 2**40]]),
        np.concatenate([rng.integers(90, 170, 3000), rng.integers(2**40 - 5, 2**40 + 60, 2000), [2**40, 100]]),
    )
    found = follows.stored(*asked)
    expected = [(int(a), int(b)) in added for a, b in zip(*asked)]
    assert found.tolist() == expected and 0 < sum(expected) < len(expected)

    follows.add(np.array([7, 2**33 + 7]), np.array([2**33 + 7, 7]))  # a span over 2**32: int64 pks
    assert follows.stored(*asked) is None
    assert graph_files.ImportedFollows().stored(*asked) is None  # not started: nothing kept
