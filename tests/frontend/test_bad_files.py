"""Binary and wrongly encoded uploads (issue 19, defect 8): said plainly, without mojibake or the API's wording
("pass format= ..."), and with no retry or "skip bad records" advice that cannot succeed with the same files."""

from __future__ import annotations

import pytest
from django.core.exceptions import ValidationError
from django.urls import reverse

from compute.formats.detect import detect_format, not_text_reason
from monitor import services

PNG = b"\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR\x00\x00\x00\x10\x00\x00\x00\x10\x08\x06\x00\x00\x00\x1f\xf3\xffa" * 20
CSV_HEAD = "tweet_id,retweeted_tweet_id,user_id,created_at,followers_count,screen_name\n"


@pytest.mark.parametrize(
    "data, words",
    [
        (PNG, "a PNG image"),
        (b"%PDF-1.7\n%\xe2\xe3\xcf\xd3\n1 0 obj\n<<>>\nendobj\n" + b"\x00" * 40, "a PDF document"),
        (bytes(range(256)) * 8, "a binary file"),
        ((CSV_HEAD + "1,,2,2020-01-01T00:00:00Z,3,zoë\n").encode("utf-16"), "UTF-16"),  # with its BOM
        ((CSV_HEAD + "1,,2,2020-01-01T00:00:00Z,3,zoë\n").encode("utf-16-le"), "UTF-16"),  # without
        ((CSV_HEAD + "1,,2,2020-01-01T00:00:00Z,3,zo\xeb\n").encode("latin-1"), "not UTF-8"),
    ],
)
def test_it_names_what_the_file_is(data, words):
    reason = not_text_reason(data)
    assert reason and words in reason, reason
    assert "\ufffd" not in reason and "pass format" not in reason


def test_text_is_text():
    assert not_text_reason((CSV_HEAD + "1,,2,2020-01-01T00:00:00Z,3,zoë\n").encode()) is None
    assert not_text_reason(b"") is None
    # a multi-byte character cut at the end of the sample is not an encoding error
    assert not_text_reason(("x" * 10 + "ë").encode()[:-1]) is None


def test_detection_says_it_plainly(tmp_path):
    p = tmp_path / "tweets.jsonl"
    p.write_bytes(PNG)
    with pytest.raises(ValueError) as e:
        detect_format(p)
    assert "PNG image" in str(e.value) and "\ufffd" not in str(e.value) and "pass format" not in str(e.value)


def test_an_unrecognised_text_file_is_not_told_to_pass_format(tmp_path):
    p = tmp_path / "notes.txt"
    p.write_text("hello there\n")
    with pytest.raises(ValueError) as e:
        detect_format(p)
    assert "pass format" not in str(e.value) and "hello there" in str(e.value)


@pytest.mark.parametrize("fmt", ["auto", "v1"])
@pytest.mark.parametrize("mode", ["strict", "skip-bad"])
def test_a_binary_upload_fails_plainly_with_no_retry(client, alice, ws_a, import_files, tmp_path, fmt, mode):
    p = tmp_path / "tweets.jsonl"
    p.write_bytes(PNG)
    c = import_files(ws_a, [p], format=fmt, mode=mode)
    assert c.status == c.Status.FAILED
    assert "tweets.jsonl" in c.error and "PNG image" in c.error, c.error
    assert "\ufffd" not in c.error and "pass format" not in c.error
    client.force_login(alice)
    html = client.get(reverse("collection", kwargs={"ws": ws_a.slug, "pk": c.pk})).content.decode()
    assert "Retry import" not in html
    assert "upload again with “Skip bad records”" not in html  # the advice; the mode itself is listed
    assert "Upload a corrected file" in html
    with pytest.raises(ValidationError):
        services.collection_retry(collection=c)


def test_a_failure_a_retry_can_mend_still_offers_it(client, alice, ws_a, monkeypatch, import_files, tmp_path):
    # a failure of the machinery, not of the files (here: the database refusing the merge)
    from monitor.services import ingest

    def boom(*a, **k):
        raise RuntimeError("connection lost")

    monkeypatch.setattr(ingest, "merge", boom)
    from tests.webapp import THESIS

    c = import_files(ws_a, [THESIS / "tweets.csv"])
    assert c.status == c.Status.FAILED
    client.force_login(alice)
    html = client.get(reverse("collection", kwargs={"ws": ws_a.slug, "pk": c.pk})).content.decode()
    assert "Retry import" in html
