"""The input formats' registry: every entry is complete, detection finds each format by its own hooks only, and
``read`` dispatches on the registry (a format missing from it, or a reader table kept beside it, fails here)."""

from __future__ import annotations

from pathlib import Path

import pytest

from compute.formats import AUTO, FORMATS, FormatSpec, detect_format, format_choices, read
from compute.formats.registry import KINDS

from .conftest import FDATA, THESIS


def _npz(tmp: Path) -> Path:
    from compute.collection import save_collection
    from compute.generators import twitter_collection

    tweets, graph = twitter_collection(scale=0.0005, seed=3)
    save_collection(tmp / "coll.npz", tweets, graph)
    return tmp / "coll.npz"


#: a good input of every registered format; a format added to the registry needs one here
SAMPLES = {
    "csv": lambda tmp: FDATA / "csv" / "good.csv",
    "follows": lambda tmp: THESIS / "follows.csv",
    "v1": lambda tmp: FDATA / "v1" / "good.jsonl",
    "v2": lambda tmp: FDATA / "v2" / "good.jsonl",
    "trees": lambda tmp: FDATA / "trees" / "good",
    "tudataset": lambda tmp: FDATA / "tudataset" / "good",
    "npz": _npz,
}


def test_it_has_a_sample_for_every_registered_format():
    assert set(SAMPLES) == set(FORMATS)


@pytest.mark.parametrize("name", list(FORMATS))
def test_it_describes_every_format_completely(name):
    spec = FORMATS[name]
    assert isinstance(spec, FormatSpec) and spec.name == name and name != AUTO
    assert spec.label and callable(spec.reader)
    assert spec.holds and spec.holds <= KINDS, spec.holds
    assert spec.sniff.path or spec.sniff.json or spec.sniff.line, f"{name}: no detection hook"
    if spec.text:
        assert spec.has_tweets


def test_it_offers_auto_then_every_format_in_registry_order():
    assert format_choices() == [(AUTO, "Detect from the content"), *((s.name, s.label) for s in FORMATS.values())]


def _accepted_by(path: Path) -> set[str]:
    """Every format whose own hook accepts ``path`` (its whole-input hook, or its hook on the first line)."""
    out = {s.name for s in FORMATS.values() if s.sniff.path and s.sniff.path(path)}
    if path.is_file() and not out:
        import json

        first = next(ln.strip() for ln in path.read_bytes().splitlines() if ln.strip())
        if first.startswith(b"{"):
            out = {s.name for s in FORMATS.values() if s.sniff.json and s.sniff.json(json.loads(first))}
        else:
            out = {s.name for s in FORMATS.values() if s.sniff.line and s.sniff.line(first)}
    return out


@pytest.mark.parametrize("name", list(SAMPLES))
def test_it_detects_each_format_by_its_own_hooks_only(name, tmp_path):
    path = SAMPLES[name](tmp_path)
    assert _accepted_by(path) == {name}
    assert detect_format(path) == name


@pytest.mark.parametrize("name", list(SAMPLES))
def test_it_reads_each_format_as_its_registry_entry_says(name, tmp_path):
    path = SAMPLES[name](tmp_path)
    spec = FORMATS[name].of(path)
    res = read(path, name)
    assert res.format == name and res.report.n_bad == 0
    assert (res.tweets is not None) == spec.has_tweets
    assert (res.follows is not None) == ("follows" in spec.holds)
    assert (res.graphs is not None) == ("graphs" in spec.holds)
    assert (res.follower_graph is not None) == ("follower_graph" in spec.holds)
    if spec.text:
        assert res.tweets.screen_name is not None


@pytest.mark.parametrize("name", list(SAMPLES))
def test_tweets_have_entity_columns_only_where_the_format_carries_them(name, tmp_path):
    res = read(SAMPLES[name](tmp_path), name)
    if res.tweets is not None:
        has = name in ("v1", "v2")  # the samples' CSV has no hashtags or urls column
        assert (res.tweets.hashtags is not None) == has and (res.tweets.urls is not None) == has


def test_it_narrows_npz_to_what_the_archive_holds(tmp_path):
    from compute.structures import save_archive

    coll = FORMATS["npz"].of(_npz(tmp_path))
    assert coll.streams and coll.has_tweets and coll.has_follows
    save_archive(read(FDATA / "tudataset" / "good").graphs, tmp_path / "graphs.npz")
    graphs = FORMATS["npz"].of(tmp_path / "graphs.npz")
    assert not graphs.streams and graphs.holds == {"graphs"}
