"""``python -m compute stream`` end to end: a replay of the Twitter16 sample checked against batch, the JSON
shape, expired retweets making the check fail with a hint, and bad input exiting 2."""

from __future__ import annotations

import json

from .test_cli import DATA, run_cli


def test_it_replays_twitter16_late_and_in_micro_batches_and_finds_it_equal_to_batch():
    res = run_cli(
        "stream", str(DATA / "twitter16"), "--batch", "300", "--lateness", "86400", "--seed", "5",
        "--hold-seconds", "1e9", "--backend", "cpu", "--output", "json", "--top", "3",
    )  # fmt: skip
    assert res.returncode == 0, res.stderr
    out = json.loads(res.stdout)
    assert out["check"]["edges_equal"] and out["check"]["influence_equal"]
    assert out["check"]["stream_edges"] == out["check"]["batch_edges"] > 1000
    s = out["summary"]
    assert s["micro_batches"] == len(out["batches"]) >= 7 and s["recomputed"] > 0 and s["expired"] == 0
    assert sum(r["retweets"] for r in out["batches"]) == s["retweets"]
    assert [r["user_id"] for r in out["ranking"]] and all(isinstance(r["user_id"], str) for r in out["ranking"])
    table = run_cli("stream", str(DATA / "twitter16"), "--batch", "1000", "--backend", "cpu").stdout
    assert "check against batch: EQUAL" in table and "retweets/s sustained" in table


def test_retweets_that_expire_waiting_make_the_check_fail_and_say_why():
    res = run_cli(
        "stream", str(DATA / "twitter16"), "--batch", "500", "--lateness", "86400", "--seed", "2",
        "--hold-seconds", "60", "--backend", "cpu", check=False,
    )  # fmt: skip
    assert res.returncode == 1
    assert "DIFFERENT" in res.stdout and "raise --hold-seconds above --lateness" in res.stdout


def test_bad_input_exits_2_naming_it(tmp_path):
    res = run_cli("stream", str(tmp_path / "missing.csv"), "--backend", "cpu", check=False)
    assert res.returncode == 2 and "missing.csv" in res.stderr
    res = run_cli("stream", str(DATA / "twitter16"), "--batch", "0", "--backend", "cpu", check=False)
    assert res.returncode == 2 and "batch" in res.stderr


def test_without_numba_the_same_replay_is_still_equal_to_batch():
    import os
    import subprocess
    import sys

    from .test_cli import ROOT

    env = dict(os.environ, PYTHONPATH=str(ROOT), SPREADWATCH_NO_NUMBA="1")
    res = subprocess.run(
        [sys.executable, "-W", "error::RuntimeWarning", "-m", "compute", "stream", str(DATA / "twitter16"), "--batch",
         "400", "--lateness", "3600", "--hold-seconds", "1e9", "--backend", "cpu", "--output", "json"],
        capture_output=True, text=True, env=env, cwd=ROOT, timeout=600,
    )  # fmt: skip
    assert res.returncode == 0, res.stderr
    check = json.loads(res.stdout)["check"]
    assert check["edges_equal"] and check["influence_equal"]
