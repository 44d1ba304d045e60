from __future__ import annotations

import gzip
import shutil

import pytest

from compute.formats import FORMATS, detect_format, read

from .conftest import THESIS, TWITTER16


@pytest.mark.parametrize(
    ("path", "expected"),
    [
        ("csv/good.csv", "csv"),
        ("csv/bom.csv", "csv"),
        ("csv/reordered.csv", "csv"),
        ("follows/follows.csv", "follows"),
        ("follows/reordered.csv", "follows"),
        ("follows/edges.txt", "follows"),
        ("follows/bad_edges.txt", "follows"),
        ("v1/good.jsonl", "v1"),
        ("v1/bad.jsonl", "v1"),
        ("v2/good.jsonl", "v2"),
        ("v2/bad.jsonl", "v2"),
        ("trees/good", "trees"),
        ("trees/good/tree", "trees"),
        ("trees/good/tree/1050118621198921728.txt", "trees"),
        ("tudataset/good", "tudataset"),
        ("tudataset/good/DS", "tudataset"),
        ("tudataset/good/DS_A.txt", "tudataset"),
        ("tudataset/good/DS_graph_indicator.txt", "tudataset"),
    ],
)
def test_it_detects_each_format(fdata, path, expected):
    assert detect_format(path) == expected
    assert expected in FORMATS


def test_it_detects_the_shared_samples():
    assert detect_format(TWITTER16) == "trees"
    assert detect_format(THESIS / "tweets.csv") == "csv"
    assert detect_format(THESIS / "follows.csv") == "follows"


def test_it_judges_by_content_not_by_name(fdata, tmp_path):
    for src, name, expected in [
        ("v1/good.jsonl", "tweets.csv", "v1"),
        ("csv/good.csv", "data.jsonl", "csv"),
        ("v2/good.jsonl", "x.txt", "v2"),
        ("follows/edges.txt", "y.json", "follows"),
    ]:
        shutil.copy(fdata / src, tmp_path / name)
        assert detect_format(tmp_path / name) == expected


def test_it_looks_inside_compressed_files(fdata, tmp_path):
    p = tmp_path / "statuses"
    p.write_bytes(gzip.compress((fdata / "v1/good.jsonl").read_bytes()))
    assert detect_format(p) == "v1"
    assert len(read(p).tweets) == 6


def test_it_passes_over_stream_notices_and_bad_lines(tmp_path):
    p = tmp_path / "s.jsonl"
    p.write_text('{"limit": {"track": 5}}\n{"id": \n{"id_str": "1", "user": {"id": 2}}\n')
    assert detect_format(p) == "v1"


@pytest.mark.parametrize(
    ("content", "message"),
    [
        (b"", "empty file"),
        (b"\n  \n", "empty file"),
        (b"hello world\nthis is prose\n", "cannot tell the format from the first line 'hello world'"),
        (b'{"name": "not a tweet"}\n', "not recognisably Twitter API v1.1 or v2"),
        (b"a,b,c\n1,2,3\n", "cannot tell the format"),
    ],
)
def test_it_refuses_unknown_content_clearly(tmp_path, content, message):
    p = tmp_path / "x.dat"
    p.write_bytes(content)
    with pytest.raises(ValueError, match=message):
        detect_format(p)


def test_it_refuses_unknown_folders_and_missing_paths(tmp_path):
    (tmp_path / "notes.md").write_text("hi")
    with pytest.raises(ValueError, match="cannot tell the format of this folder"):
        detect_format(tmp_path)
    with pytest.raises(FileNotFoundError):
        detect_format(tmp_path / "nope.csv")


@pytest.mark.parametrize("mode, suffix", [("w", ".tar"), ("w:xz", ".tar.xz"), ("zip", ".zip")])
def test_an_archive_given_to_the_command_line_is_named_and_its_unpacking_asked_for(tmp_path, mode, suffix):
    import tarfile
    import zipfile

    from compute.formats.detect import detect_format

    inner = tmp_path / "tweets.csv"
    inner.write_text("tweet_id,retweeted_tweet_id,user_id,created_at\n1,,2,2020-01-01T00:00:00Z\n")
    path = tmp_path / f"collection{suffix}"
    if mode == "zip":
        with zipfile.ZipFile(path, "w") as zf:
            zf.write(inner, "tweets.csv")
    else:
        with tarfile.open(path, mode) as tf:
            tf.add(inner, "tweets.csv")
    with pytest.raises(ValueError) as e:
        detect_format(path)
    if mode == "zip":  # a zip may be a Spreadwatch .npz: said so, and how to read any other zip
        assert "neither a spreading-graph nor a collection archive" in str(e.value), e.value
        assert "unpack it and name the files inside" in str(e.value), e.value
    else:
        assert "this is a tar archive: unpack it and name the files inside" in str(e.value), e.value
    assert "binary file" not in str(e.value)
