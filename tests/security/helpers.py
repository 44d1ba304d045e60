"""The project's URL patterns, walked from the root resolver, and workspace A's objects to fill them with."""

from __future__ import annotations

import re
from dataclasses import dataclass

import pytest
from django.urls import URLPattern, URLResolver, get_resolver

from tests.webapp import THESIS


@dataclass(frozen=True)
class Pattern:
    name: str | None  # with its namespaces, e.g. "api:collection"
    route: str  # the full route, for messages
    namespace: str  # "" for none
    params: tuple[str, ...]


def _params(p) -> tuple[str, ...]:
    pat = p.pattern
    if hasattr(pat, "converters"):
        names = list(pat.converters)
        if names:
            return tuple(names)
    regex = getattr(pat, "regex", None)
    return tuple(regex.groupindex) if regex is not None else ()


def walk(patterns=None, prefix: str = "", ns: str = "", params: tuple[str, ...] = ()) -> list[Pattern]:
    out = []
    for p in get_resolver().url_patterns if patterns is None else patterns:
        if isinstance(p, URLResolver):
            sub = f"{ns}:{p.namespace}" if ns and p.namespace else (p.namespace or ns)
            out += walk(p.url_patterns, prefix + str(p.pattern), sub, params + _params(p))
        elif isinstance(p, URLPattern):
            name = f"{ns}:{p.name}" if ns and p.name else p.name
            out.append(Pattern(name, prefix + str(p.pattern), ns, params + _params(p)))
    return out


@dataclass
class Objects:
    """Workspace A's objects (the thesis example, alice's rule and its alerts)."""

    ws: object
    collection: int
    run: int
    rule: object
    alert: int
    wtf_run: int = 0  # a who-amplifies-whom run (queued)
    tweet: int = 1000
    account: int = 102
    account_name: str = "b"
    publisher: int = 102


@pytest.fixture
def objs(ws_a, alice, import_files) -> Objects:
    from monitor.alerts import services as alerts
    from monitor.selectors import account_get

    c = import_files(ws_a, [THESIS / "tweets.csv", THESIS / "follows.csv"])
    assert c.status == c.Status.DONE, c.error
    rule = alerts.rule_create(
        workspace=ws_a, owner=alice, name="top 3 of b", kind="top_k", k=3, publisher=account_get(ws_a, 102)
    )
    created = alerts.evaluate_workspace(workspace_id=ws_a.pk)
    assert created, "the rule raised no alert"
    from monitor.services import compute_run_start

    # queued, not run: the test's transaction never commits, so its batch is never sent
    wtf = compute_run_start(workspace=ws_a, tweet_pks=[], algorithm="wtf", params={"accounts": ["102"]})
    return Objects(
        ws=ws_a, collection=c.pk, run=c.compute_runs.get().pk, rule=rule, alert=created[0].pk, wtf_run=wtf.pk
    )


A_MARKERS = re.compile(r"newsroom|Newsroom")
