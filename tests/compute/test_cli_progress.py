"""Progress on stderr from ``python -m compute`` analyses: a run that lasts past ``PROGRESS_AFTER_S`` says which
stage runs (betweenness: the sources done), on a terminal only and never with ``--quiet``. The tests lower the
threshold to 0 s instead of waiting a second, and give stderr a terminal's ``isatty``."""

from __future__ import annotations

import io
import sys

import pytest

from compute import cli, progress

from .test_cli import DATA

EXAMPLE = DATA / "thesis_example"


class _Terminal(io.StringIO):
    def isatty(self) -> bool:
        return True


@pytest.fixture
def follows_file(tmp_path):
    # one weak component of 400 accounts: 256 sampled sources are two waves of source blocks on 2 cores
    path = tmp_path / "follows.txt"
    path.write_text("".join(f"{i} {(i * 7 + 1) % 400}\n{i} {(i + 1) % 400}\n" for i in range(400)))
    return path


def _run(monkeypatch, args: list[str], *, after: float, terminal: bool = True) -> tuple[int, str, str]:
    monkeypatch.setattr(progress, "PROGRESS_AFTER_S", after)
    err = _Terminal() if terminal else io.StringIO()
    out = io.StringIO()
    monkeypatch.setattr(sys, "stderr", err)
    monkeypatch.setattr(sys, "stdout", out)
    rc = cli.main(args)
    return rc, out.getvalue(), err.getvalue()


def test_betweenness_counts_its_sources_on_stderr(monkeypatch, follows_file):
    rc, out, err = _run(monkeypatch, ["network", str(follows_file), "--analysis", "betweenness"], after=0)
    assert rc == 0 and out.splitlines()[0].split() == ["rank", "user_id", "value"]
    assert "network betweenness: computing betweenness 0/256 sources (0%)" in err
    assert "network betweenness: computing betweenness 256/256 sources (100%)" in err
    assert "network betweenness: done [00:" in err


@pytest.mark.parametrize("analysis", ["kcore", "clustering", "components"])
def test_every_network_analysis_names_its_stage(monkeypatch, follows_file, analysis):
    _, _, err = _run(monkeypatch, ["network", str(follows_file), "--analysis", analysis], after=0)
    assert f"network {analysis}: computing {analysis}" in err


def test_influence_max_names_its_stages(monkeypatch):
    args = ["influence-max", str(EXAMPLE / "tweets.csv"), "--follows", str(EXAMPLE / "follows.csv"), "--k", "2",
            "--p", "estimated", "--evaluate", "300", "--backend", "cpu"]  # fmt: skip
    rc, _, err = _run(monkeypatch, args, after=0)
    assert rc == 0
    for stage in ("rebuilding the cascades", "choosing 2 seeds (imm)", "evaluating the spread (300 runs)", "done"):
        assert f"influence-max: {stage}" in err


def test_wtf_names_its_stage(monkeypatch):
    args = ["wtf", str(EXAMPLE / "follows.csv"), "--account", "105", "--backend", "cpu"]
    rc, _, err = _run(monkeypatch, args, after=0)
    assert rc == 0 and "wtf: circle of trust and Money for 1 account(s)" in err


def test_a_run_shorter_than_the_threshold_prints_no_progress(monkeypatch, follows_file):
    _, _, err = _run(monkeypatch, ["network", str(follows_file), "--analysis", "betweenness"], after=60)
    assert "betweenness:" not in err and "\r" not in err


def test_quiet_and_a_redirected_stderr_print_no_progress(monkeypatch, follows_file):
    args = ["network", str(follows_file), "--analysis", "betweenness"]
    _, _, err = _run(monkeypatch, [*args, "--quiet"], after=0)
    assert err == ""
    _, _, err = _run(monkeypatch, args, after=0, terminal=False)  # a log file gets no carriage-return lines
    assert "computing betweenness" not in err and "\r" not in err
    assert "note: sampled 256 sources" in err


def test_rank_says_it_reads_then_computes(monkeypatch):
    args = ["rank", str(DATA / "twitter16")]
    rc, _, err = _run(monkeypatch, args, after=0)
    assert rc == 0 and "rank: reading the input" in err
    assert "rank: rebuilding the cascades and computing influence" in err and "rank: done" in err
    assert err.index("rank: reading the input") < err.index("rank: rebuilding the cascades")
