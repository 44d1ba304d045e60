"""What the browser tests do on the pages, in a person's steps (upload a collection, wait for it, read a
ranking), and the screenshots they keep."""

from __future__ import annotations

import re
from pathlib import Path

from playwright.sync_api import Locator, Page, expect

ARTIFACTS = Path(__file__).parent / "artifacts"
IMPORT_TIMEOUT_MS = 60_000


def screenshot(page: Page, name: str) -> Path:
    """Save a full-page screenshot as a test artefact (``tests/browser/artifacts/<name>.png``)."""
    ARTIFACTS.mkdir(exist_ok=True)
    path = ARTIFACTS / f"{name}.png"
    page.screenshot(path=str(path), full_page=True)
    return path


def field(page: Page | Locator, label: str) -> Locator:
    """The form field labelled exactly ``label`` (a required field's label ends in an aria-hidden "*")."""
    return page.get_by_label(re.compile(r"^\s*" + re.escape(label) + r"(\s*\*)?\s*$"))


def choose_files(page: Page, ws: str, files: list[Path], **options) -> None:
    """Open the upload page and choose ``files`` with the file input (``set_input_files``)."""
    page.goto(f"/w/{ws}/collections/new/")
    field(page, "Files").set_input_files([str(f) for f in files])
    fill_options(page, **options)


def fill_options(page: Page, *, name: str = "", mode: str = "Strict", validate_only: bool = False) -> None:
    """``mode``: how the radio's label starts ("Strict", "Skip bad records")."""
    if name:
        field(page, "Name").fill(name)
    page.get_by_role("radio", name=re.compile("^" + re.escape(mode))).check()
    field(page, "Validate only").set_checked(validate_only)


def submit_upload(page: Page) -> int:
    """Press Upload and wait for the new collection's page; returns its id."""
    page.get_by_role("button", name="Upload").click()
    page.wait_for_url(re.compile(r"/collections/\d+/$"), timeout=IMPORT_TIMEOUT_MS)
    return int(re.search(r"/collections/(\d+)/$", page.url).group(1))


def wait_until_done(page: Page, status: str = "Done") -> None:
    """The collection page's status badge reaches ``status`` (progress.js reloads the page when it ends)."""
    expect(page.locator("[data-status-badge] .badge")).to_have_text(status, timeout=IMPORT_TIMEOUT_MS)


def upload(page: Page, ws: str, files: list[Path], *, status: str = "Done", **options) -> int:
    choose_files(page, ws, files, **options)
    pk = submit_upload(page)
    wait_until_done(page, status)
    return pk


def ranking_table(page: Page) -> Locator:
    """The ranking table: the table with an "Account" column header."""
    return page.locator("table").filter(has=page.get_by_role("columnheader", name="Account", exact=True))


def ranking_rows(page: Page) -> list[tuple[str, float]]:
    """(account, total) of each row of the ranking table, in order, as the page shows them (the total as the
    number its cell shows: "96.0" -> 96.0)."""
    table = ranking_table(page)
    expect(table).to_have_count(1)
    headers = [h.strip() for h in table.locator("thead th").all_inner_texts()]
    account = headers.index("Account")
    total = next(i for i, h in enumerate(headers) if h.startswith("Total"))
    out = []
    for row in table.locator("tbody tr").all():
        cells = row.locator("td")
        shown = cells.nth(total).inner_text().strip().replace(",", "")
        out.append((cells.nth(account).inner_text().strip(), float(shown)))
    return out
