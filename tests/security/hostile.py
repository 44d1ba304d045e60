"""A workspace whose uploaded text is hostile: screen names, tweet text, labels, the collection's and an alert
rule's names are HTML/script injections and template syntax. Every result the pages show is computed on it (the
influence run, a network run, a counter-campaign plan, who-amplifies-whom lists and a watch list), so every page
family and every export has the names to show. Used by ``test_escaping.py`` and ``test_csv_formulas.py``."""

from __future__ import annotations

import csv
from dataclasses import dataclass
from pathlib import Path

import pytest

from tests.webapp import THESIS

from .helpers import Objects

#: screen name by Twitter id (the thesis example's accounts a..f are 101..106; b, 102, is the publisher)
NAMES = {
    101: "<script>alert(1)</script>",
    102: '{{ 7|add:35 }}{% now "Y" %}',  # template syntax; no "/" so /accounts/<name>/ routes
    103: '"><img src=x onerror=alert(3)>',
    104: "'><svg onload=alert(4)>",
    105: "</script><script>alert(5)</script>",
    106: "{% debug %}<b>bold</b>",
}
TEXT = '<b>bold</b><script>alert("text")</script> {{ 7|add:35 }} {% csrf_token %} "><img src=x onerror=alert(6)>'
LABEL = "<i>label</i>"
COLLECTION = '<script>alert("collection")</script>{% now "Y" %}'
RULE = '"><img src=x onerror=alert("rule")>'
#: the strings whose raw form in HTML would be markup (template syntax is not HTML: its check is separate)
MARKUP = [s for s in [*NAMES.values(), TEXT, LABEL, COLLECTION, RULE] if "<" in s]


#: spreadsheet formulas (OWASP's CSV injection list): the first characters = + - @ tab CR. Tab and CR cannot
#: come through a CSV upload (its reader strips names): they are written to the accounts afterwards.
FORMULAS = {
    101: '=HYPERLINK("http://evil.example/","x")',
    102: "+cmd|'-C calc'!A0",  # no "/": /accounts/<name>/ must route
    103: "-2+3+cmd|' /C calc'!A0",
    104: "@SUM(1+1)*cmd|' /C calc'!A0",
    105: "@e",  # stripped of whitespace on upload; becomes TAB below
    106: "@f",  # ... CR
}
FORMULAS_AFTER = {105: "\t=1+1+cmd|' /C calc'!A0", 106: "\r=1+1+cmd|' /C calc'!A0"}


def write_files(folder: Path, names: dict[int, str] = NAMES) -> list[Path]:
    """The thesis example with the hostile names, text on every tweet and a label on the originals."""
    rows = list(csv.DictReader((THESIS / "tweets.csv").open()))
    out = folder / "hostile_tweets.csv"
    with out.open("w", newline="") as fh:
        w = csv.writer(fh)
        w.writerow(
            [
                "tweet_id",
                "retweeted_tweet_id",
                "user_id",
                "created_at",
                "followers_count",
                "screen_name",
                "text",
                "label",
            ]
        )
        for r in rows:
            original = not r["retweeted_tweet_id"]
            w.writerow(
                [
                    r["tweet_id"],
                    r["retweeted_tweet_id"],
                    r["user_id"],
                    r["created_at"],
                    r["followers_count"],
                    names[int(r["user_id"])],
                    TEXT,
                    LABEL if original else "",
                ]
            )
    return [out, THESIS / "follows.csv"]


def _done(run):
    run.refresh_from_db()
    assert run.status == run.Status.DONE, run.error
    return run


@dataclass
class Hostile:
    """The crawl's :class:`Objects` once per run page family (the influence run, the network run, the plan)."""

    objects: list[Objects]
    ws: object


def build(ws, alice, import_files, run_tasks, folder: Path, names: dict[int, str], collection: str = COLLECTION):
    """Workspace ``ws`` with the upload of ``names``, every algorithm's results and an alert."""
    from monitor import services
    from monitor.alerts import services as alerts
    from monitor.selectors import account_get

    c = import_files(ws, write_files(folder, names), name=collection, user=alice)
    assert c.status == c.Status.DONE, c.error
    b = account_get(ws, 102)
    assert b.screen_name == names[102]
    rule = alerts.rule_create(workspace=ws, owner=alice, name=RULE, kind="top_k", k=3, publisher=b)
    created = alerts.evaluate_workspace(workspace_id=ws.pk)
    assert created, "the rule raised no alert"

    def run(algorithm, **params):
        r = run_tasks(services.compute_run_start, workspace=ws, backend="cpu", algorithm=algorithm, params=params)
        r.refresh_from_db()
        assert r.status == r.Status.DONE, r.error
        return r.pk

    network = run("network", samples=0)
    plan = run("influence_max", publisher=b.pk, k=2, p=0.3, evaluate=500, batches=1)
    wtf = run("wtf", accounts=["105"], direction="both", circle=50, top=5)
    run("wtf", publisher="102", direction="followers", spreaders=5)  # b's watch list
    base = dict(
        ws=ws, collection=c.pk, rule=rule, alert=created[0].pk, wtf_run=wtf, account=105, account_name=names[102]
    )
    return Hostile([Objects(run=r, **base) for r in (c.compute_runs.get().pk, network, plan)], ws)


@pytest.fixture
def hostile(ws_a, alice, import_files, run_tasks, tmp_path) -> Hostile:
    """Workspace A with the hostile upload (:data:`NAMES`...), every algorithm's results and an alert."""
    return build(ws_a, alice, import_files, run_tasks, tmp_path, NAMES)


@pytest.fixture
def formulas(ws_a, alice, import_files, run_tasks, tmp_path) -> Hostile:
    """Workspace A whose screen names are spreadsheet formulas (:data:`FORMULAS`), with every result."""
    from monitor.cache import bump_data_version
    from monitor.models import Account

    h = build(ws_a, alice, import_files, run_tasks, tmp_path, FORMULAS, collection="=1+1")
    for tid, name in FORMULAS_AFTER.items():
        Account.objects.filter(workspace=ws_a, twitter_id=tid).update(screen_name=name)
    bump_data_version(ws_a.pk)
    return h
