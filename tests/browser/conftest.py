"""Browser tests: Playwright drives Debian's Chromium (``/usr/bin/chromium``, installed by ``make test`` when
missing; ``playwright install`` is never run) against pytest-django's ``live_server``.

Every test here is marked ``browser`` and uses a transactional database: the live server answers from its own
thread and connection, so the data must be committed. Celery runs eagerly (``tests.webapp._eager_celery``): an
upload is imported and computed inside the upload request
(``test_upload_progress.py`` turns on the demo's background mode instead). Screenshots of the main pages are written to
``tests/browser/artifacts/`` (ignored by git) for a person to look at.
"""

from __future__ import annotations

import os
import shutil

import pytest

CHROMIUM_ARGS = [
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
]
TIMEOUT_MS = 10_000


def chromium_path() -> str | None:
    found = os.environ.get("SPREADWATCH_CHROMIUM") or shutil.which("chromium") or "/usr/bin/chromium"
    return found if os.access(found, os.X_OK) else None


class _Chromium:
    """The session's Playwright and Chromium, stopped as soon as the last browser test of the run is done.

    Playwright's sync API marks its asyncio loop as running in the main thread for as long as it is started.
    Django then refuses ORM calls from that thread (SynchronousOnlyOperation), which the tests' fixtures make
    (they create users and import collections), so DJANGO_ALLOW_ASYNC_UNSAFE is set while, and only while,
    Playwright runs; the tests after the browser tests see neither the loop nor the variable."""

    def __init__(self):
        self._pw = None
        self._browser = None
        self._env = None

    def start(self):
        from playwright.sync_api import sync_playwright

        exe = chromium_path()
        if exe is None:
            pytest.fail(
                "Chromium is not installed (/usr/bin/chromium): `make test` installs it (apt-get install chromium)"
            )
        self._pw = sync_playwright().start()
        self._env = os.environ.get("DJANGO_ALLOW_ASYNC_UNSAFE")
        os.environ["DJANGO_ALLOW_ASYNC_UNSAFE"] = "true"
        try:
            self._browser = self._pw.chromium.launch(executable_path=exe, args=CHROMIUM_ARGS, headless=True)
        except BaseException:
            self.stop()
            raise
        return self._browser

    def stop(self):
        if self._pw is None:
            return
        try:
            if self._browser is not None:
                self._browser.close()
        finally:
            self._pw.stop()
            self._pw = self._browser = None
            if self._env is None:
                os.environ.pop("DJANGO_ALLOW_ASYNC_UNSAFE", None)
            else:
                os.environ["DJANGO_ALLOW_ASYNC_UNSAFE"] = self._env


_chromium = _Chromium()
_last_browser_test: str | None = None


def _is_browser_test(item) -> bool:
    return item.get_closest_marker("browser") is not None


@pytest.hookimpl(trylast=True)  # after -m / -k deselected what will not run
def pytest_collection_modifyitems(session, config, items):
    global _last_browser_test
    browser_tests = [item.nodeid for item in items if _is_browser_test(item)]
    _last_browser_test = browser_tests[-1] if browser_tests else None


@pytest.hookimpl(wrapper=True)
def pytest_runtest_teardown(item, nextitem):
    try:
        return (yield)
    finally:
        if item.nodeid == _last_browser_test:
            _chromium.stop()


@pytest.fixture(scope="session")
def browser():
    """One headless Chromium (Debian's, never a downloaded one) for the session's browser tests; each test
    gets a fresh context (cookies, storage) from ``page``."""
    try:
        yield _chromium.start()
    finally:
        _chromium.stop()


@pytest.fixture
def page(browser, live_server):
    """A page in a fresh context whose relative URLs go to the live server. Uncaught JavaScript errors of the
    pages fail the test."""
    # reduced motion: the charts draw without animating, so the screenshots show them settled
    context = browser.new_context(
        base_url=live_server.url, viewport={"width": 1280, "height": 900}, reduced_motion="reduce"
    )
    context.set_default_timeout(TIMEOUT_MS)
    p = context.new_page()
    errors: list[str] = []
    p.on("pageerror", lambda exc: errors.append(f"{p.url}: {exc}"))
    yield p
    context.close()
    assert not errors, "JavaScript errors on the pages:\n" + "\n".join(errors)


@pytest.fixture
def login(page, alice):
    """``login()`` logs alice in through the login form; returns the page."""

    def go(username: str = "alice", password: str = "alice-pass-123"):
        page.goto("/login/")
        page.get_by_label("Username").fill(username)
        page.get_by_label("Password").fill(password)
        page.get_by_role("button", name="Log in").click()
        page.wait_for_load_state()
        return page

    return go


@pytest.fixture(autouse=True)
def _webhooks_to_localhost(settings):
    """The tests' webhook receivers listen on 127.0.0.1: allow private addresses."""
    settings.SPREADWATCH_WEBHOOK_ALLOW_PRIVATE = True
