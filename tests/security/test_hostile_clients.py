"""Hostile or careless clients (issue 20): REST uploads above the in-memory limit, API tokens (hashed, expiring,
scoped to a workspace, void after a password change), rate limits on password resets, API authentication failures
and per username and per address beside per (username, address), rejected uploads deleted from media, the limit
named when an upload has too many files, and a UTF-16 file's encoding named."""

from __future__ import annotations

import datetime as dt
from pathlib import Path

import pytest
from django.conf import settings as django_settings
from django.core.cache import cache
from django.core.files.uploadedfile import SimpleUploadedFile
from django.urls import reverse
from django.utils import timezone
from rest_framework.test import APIClient

from monitor import services
from monitor.models import ApiToken, Collection, Tweet
from tests.webapp import THESIS


@pytest.fixture(autouse=True)
def _clear_cache():
    cache.clear()
    yield
    cache.clear()


def token_client(key: str, ip: str = "203.0.113.9") -> APIClient:
    c = APIClient(REMOTE_ADDR=ip)
    c.credentials(HTTP_AUTHORIZATION=f"Token {key}")
    return c


def media_files(settings) -> list[Path]:
    root = Path(settings.MEDIA_ROOT)
    return sorted(p for p in root.rglob("*") if p.is_file()) if root.exists() else []


# --- uploads -----------------------------------------------------------------------------------------------------


def big_tweets_csv(folder: Path, min_bytes: int) -> Path:
    """The thesis tweets followed by enough unrelated originals to pass ``min_bytes`` (all valid rows)."""
    src = (THESIS / "tweets.csv").read_text()
    path = folder / "big_tweets.csv"
    with open(path, "w") as fh:
        fh.write(src if src.endswith("\n") else src + "\n")
        i = 0
        while fh.tell() < min_bytes:
            fh.write(f"{9_000_000 + i},,{7_000_000 + i % 500},2020-03-01T12:00:00Z,{100 + i % 7},u{i % 500}\n")
            i += 1
    return path


def test_the_api_takes_an_upload_above_the_in_memory_limit(alice, ws_a, tmp_path, django_capture_on_commit_callbacks):
    limit = django_settings.FILE_UPLOAD_MAX_MEMORY_SIZE
    big = big_tweets_csv(tmp_path, limit + 512 * 1024)
    assert big.stat().st_size > limit  # Django streams it to a temporary file, which cannot be deep-copied
    api = token_client(services.api_token_create(user=alice)[1])
    with open(big, "rb") as fh, django_capture_on_commit_callbacks(execute=True):
        r = api.post(
            f"/api/v1/workspaces/{ws_a.slug}/collections/",
            {"files": [fh], "validate_only": True, "mode": "strict"},
            format="multipart",
        )
    assert r.status_code == 201, r.content
    c = Collection.objects.get(pk=r.json()["id"])
    assert c.status == Collection.Status.VALIDATED, c.error
    assert c.report["read"]["n_bad"] == 0 and c.report["read"]["n_good"] > 30_000


def test_a_rejected_upload_leaves_nothing_in_media(ws_a, run_tasks, settings, tmp_path):
    bad = tmp_path / "bad.csv"
    bad.write_text("tweet_id,retweeted_tweet_id,user_id,created_at,followers_count\n1,,2,not a time,5\n")
    c = run_tasks(services.collection_create, workspace=ws_a, files=[bad])
    c.refresh_from_db()
    assert c.status == Collection.Status.FAILED and "bad.csv" in c.error
    assert media_files(settings) == []  # the same bytes would fail the same way: nothing is kept for a retry


def test_an_upload_that_fails_while_stored_leaves_nothing_in_media(ws_a, settings, monkeypatch):
    from monitor.models import CollectionFile

    real_save = CollectionFile.save
    calls = []

    def second_fails(self, *args, **kwargs):
        calls.append(1)
        if len(calls) == 2:
            raise OSError("disk full")
        return real_save(self, *args, **kwargs)

    monkeypatch.setattr(CollectionFile, "save", second_fails)
    with pytest.raises(OSError, match="disk full"):
        services.collection_create(workspace=ws_a, files=[THESIS / "tweets.csv", THESIS / "follows.csv"])
    assert not Collection.objects.filter(workspace=ws_a).exists()
    assert media_files(settings) == []


def test_too_many_files_says_the_limit_on_the_page_and_in_the_api(client, alice, ws_a):
    n = django_settings.DATA_UPLOAD_MAX_NUMBER_FILES + 1
    files = [SimpleUploadedFile(f"f{i}.csv", b"a,b\n1,2\n") for i in range(n)]
    client.force_login(alice)
    r = client.post(reverse("upload", kwargs={"ws": ws_a.slug}), {"files": files, "mode": "strict"})
    assert r.status_code == 400
    assert f"at most {n - 1} files" in r.content.decode() and "zip or tar" in r.content.decode()
    api = token_client(services.api_token_create(user=alice)[1])
    files = [SimpleUploadedFile(f"f{i}.csv", b"a,b\n1,2\n") for i in range(n)]
    r = api.post(f"/api/v1/workspaces/{ws_a.slug}/collections/", {"files": files}, format="multipart")
    assert r.status_code == 400 and f"at most {n - 1} files" in r.json()["files"][0]
    assert not Collection.objects.filter(workspace=ws_a).exists()


@pytest.mark.parametrize("codec", ["utf-16", "utf-16-le"])
def test_a_utf16_file_is_refused_naming_its_encoding(ws_a, run_tasks, tmp_path, codec):
    f = tmp_path / "tweets16.csv"
    f.write_bytes((THESIS / "tweets.csv").read_text().encode(codec))
    c = run_tasks(services.collection_create, workspace=ws_a, files=[f])
    c.refresh_from_db()
    assert c.status == Collection.Status.FAILED
    assert c.error.startswith("tweets16.csv") and "UTF-16" in c.error and "UTF-8" in c.error, c.error
    assert not Tweet.objects.filter(workspace=ws_a).exists()


# --- API tokens --------------------------------------------------------------------------------------------------


def test_a_token_is_stored_hashed_and_works_until_revoked(alice, ws_a):
    token, key = services.api_token_create(user=alice, name="ci")
    assert key not in {token.key_hash, token.prefix} and key.startswith(token.prefix)
    assert ApiToken.objects.filter(key_hash__contains=key).count() == 0
    api = token_client(key)
    assert api.get("/api/v1/workspaces/").status_code == 200
    assert api.delete(f"/api/v1/tokens/{token.pk}/").status_code == 204
    r = api.get("/api/v1/workspaces/")
    assert r.status_code == 401 and "revoked" in r.json()["detail"]


def test_a_password_change_revokes_the_users_tokens(client, alice, ws_a):
    _, key = services.api_token_create(user=alice)
    api = token_client(key)
    assert api.get("/api/v1/workspaces/").status_code == 200
    alice.set_password("a-New-passw0rd-42")
    alice.save()
    assert api.get("/api/v1/workspaces/").status_code == 401
    assert ApiToken.objects.get(user=alice).revoked_at is not None


def test_a_password_changed_behind_the_orms_back_voids_the_token_too(alice, ws_a):
    from django.contrib.auth.hashers import make_password

    _, key = services.api_token_create(user=alice)
    type(alice).objects.filter(pk=alice.pk).update(password=make_password("another-passw0rd-7"))
    r = token_client(key).get("/api/v1/workspaces/")
    assert r.status_code == 401 and "password changed" in r.json()["detail"]


def test_an_expired_token_is_refused(alice, ws_a):
    token, key = services.api_token_create(user=alice, days=1)
    ApiToken.objects.filter(pk=token.pk).update(expires_at=timezone.now() - dt.timedelta(seconds=1))
    r = token_client(key).get("/api/v1/workspaces/")
    assert r.status_code == 401 and "expired" in r.json()["detail"]


def test_a_workspace_token_reads_only_its_workspace(alice, ws_a, ws_b):
    services.membership_add(workspace=ws_b, user=alice)
    _, key = services.api_token_create(user=alice, workspace=ws_a)
    api = token_client(key)
    assert [w["slug"] for w in api.get("/api/v1/workspaces/").json()] == [ws_a.slug]
    assert api.get(f"/api/v1/workspaces/{ws_a.slug}/collections/").status_code == 200
    assert api.get(f"/api/v1/workspaces/{ws_b.slug}/collections/").status_code == 404  # alice's, not this token's
    assert api.get("/api/v1/tokens/").status_code == 403  # nor does it manage her other credentials
    _, wide = services.api_token_create(user=alice)
    assert token_client(wide).get(f"/api/v1/workspaces/{ws_b.slug}/collections/").status_code == 200


def test_tokens_are_made_from_a_session_not_from_another_token(client, alice, ws_a):
    client.force_login(alice)
    r = client.post(
        "/api/v1/tokens/", {"name": "feed", "workspace": ws_a.slug, "days": 7}, content_type="application/json"
    )
    assert r.status_code == 201, r.content
    key = r.json()["key"]
    assert r.json()["workspace"] == ws_a.slug and "key" not in client.get("/api/v1/tokens/").json()[0]
    r = token_client(key).post("/api/v1/tokens/", {"name": "more"}, format="json")
    assert r.status_code == 403


# --- rate limits -------------------------------------------------------------------------------------------------


def _login(client, password, user="alice", ip="203.0.113.7"):
    return client.post(reverse("login"), {"username": user, "password": password}, REMOTE_ADDR=ip)


def test_failures_for_one_username_from_many_addresses_lock_it(client, alice, settings):
    settings.SPREADWATCH_LOGIN_MAX_FAILURES = 10
    settings.SPREADWATCH_LOGIN_MAX_FAILURES_PER_USER = 6
    for i in range(6):  # two per address: far below the per-address limit
        assert _login(client, "wrong", ip=f"198.51.100.{i // 2 + 1}").status_code == 200
    r = _login(client, "alice-pass-123", ip="192.0.2.200")  # a fresh address, the right password
    assert r.status_code == 429 and "for this user" in r.content.decode()


def test_spraying_many_usernames_from_one_address_is_locked(client, alice, django_user_model, settings):
    settings.SPREADWATCH_LOGIN_MAX_FAILURES_PER_ADDRESS = 12
    for i in range(12):  # 12 usernames, once each
        _login(client, "Winter2026!", user=f"user{i}", ip="203.0.113.50")
    r = _login(client, "alice-pass-123", ip="203.0.113.50")
    assert r.status_code == 429 and "from your address" in r.content.decode()
    assert _login(client, "alice-pass-123", ip="203.0.113.51").status_code == 302  # another address is not


def test_password_reset_requests_are_limited(client, alice, settings, mailoutbox):
    settings.SPREADWATCH_PASSWORD_RESET_MAX = 5
    codes = [
        client.post(reverse("password_reset"), {"email": "alice@example.com"}, REMOTE_ADDR="203.0.113.8").status_code
        for _ in range(8)
    ]
    assert codes == [302] * 5 + [429] * 3
    assert len(mailoutbox) == 5
    # from other addresses, for the same email: still limited (per email)
    r = client.post(reverse("password_reset"), {"email": "alice@example.com"}, REMOTE_ADDR="198.51.100.77")
    assert r.status_code == 429 and "Too many password-reset requests" in r.content.decode()
    assert len(mailoutbox) == 5


def test_api_authentication_failures_are_limited_per_address(alice, ws_a, settings):
    settings.SPREADWATCH_LOGIN_MAX_FAILURES_PER_ADDRESS = 5
    _, key = services.api_token_create(user=alice)
    guesses = [token_client(f"sw_guess{i}", ip="203.0.113.66").get("/api/v1/workspaces/").status_code for i in range(7)]
    assert guesses == [401] * 5 + [429] * 2
    assert token_client(key, ip="203.0.113.66").get("/api/v1/workspaces/").status_code == 429  # not even a good key
    assert token_client(key, ip="203.0.113.67").get("/api/v1/workspaces/").status_code == 200
