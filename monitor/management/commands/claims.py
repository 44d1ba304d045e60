"""``manage.py claims``: the tweet search and claims from the command line (docs/claims.md), for a workspace given
by its slug.

    manage.py claims search <ws> "<query>" [--sort relevance|newest|oldest|reach] [--limit N] [--output table|json]
    manage.py claims list <ws> [--output table|json]
    manage.py claims save <ws> "<name>" "<query>" [--user USERNAME]
    manage.py claims show <ws> "<name or id>" [--part timeline|spreaders|publishers] [--output table|json]
    manage.py claims pairs <ws> [--force]     # build the phrase search's index of common word pairs now

Reads go through ``monitor.selectors`` and ``save`` through ``monitor.services``, as the pages and the API do, so
the command answers what they show. A bad query, an unknown workspace or claim ends with a message naming it and
exit status 1; nothing is written then.
"""

from __future__ import annotations

import json

from django.contrib.auth import get_user_model
from django.core.exceptions import ValidationError
from django.core.management.base import BaseCommand, CommandError

from monitor import selectors, services
from monitor.models import Label, Workspace

PARTS = ("timeline", "spreaders", "publishers")


def _workspace(slug: str) -> Workspace:
    ws = Workspace.objects.filter(slug=slug).first()
    if ws is None:
        raise CommandError(f"no workspace with the slug {slug!r}")
    return ws


def _table(rows: list[dict], columns: list[str]) -> str:
    cells = [[str(r.get(c, "")) for c in columns] for r in rows]
    widths = [max([len(c), *(len(row[i]) for row in cells)]) for i, c in enumerate(columns)]
    line = "  ".join(c.ljust(w) for c, w in zip(columns, widths, strict=True))
    body = ["  ".join(v.ljust(w) for v, w in zip(row, widths, strict=True)) for row in cells]
    return "\n".join([line, *body])


class Command(BaseCommand):
    help = "Search a workspace's tweets, and list, save and read claims (docs/claims.md)."

    def add_arguments(self, parser):
        sub = parser.add_subparsers(dest="action", required=True)
        search = sub.add_parser("search", help="the tweets a query finds")
        search.add_argument("ws")
        search.add_argument("query")
        search.add_argument("--sort", choices=selectors.claims_sorts(), default="relevance")
        search.add_argument("--limit", type=int, default=20)
        search.add_argument("--output", choices=("table", "json"), default="table")
        listing = sub.add_parser("list", help="the workspace's claims")
        listing.add_argument("ws")
        listing.add_argument("--output", choices=("table", "json"), default="table")
        save = sub.add_parser("save", help="save a query as a claim")
        save.add_argument("ws")
        save.add_argument("name")
        save.add_argument("query")
        save.add_argument("--user", help="the username it is saved by (default: none)")
        show = sub.add_parser("show", help="a claim's timeline, spreaders or publishers")
        show.add_argument("ws")
        show.add_argument("claim", help="its name or id")
        show.add_argument("--part", choices=PARTS, default="timeline")
        show.add_argument("--output", choices=("table", "json"), default="table")
        pairs = sub.add_parser(
            "pairs", help="build or switch the workspace's index of common word pairs now (as the beat task does)"
        )
        pairs.add_argument("ws")
        pairs.add_argument("--force", action="store_true", help="check it even if its data did not change")

    def handle(self, *args, action: str, **o):
        ws = _workspace(o["ws"])
        getattr(self, f"_{action}")(ws, o)

    def _out(self, rows: list[dict], columns: list[str], output: str) -> None:
        if output == "json":
            self.stdout.write(json.dumps(rows, default=str, indent=1))
        else:
            self.stdout.write(_table(rows, columns))

    def _search(self, ws, o) -> None:
        if not 1 <= o["limit"] <= 1000:
            raise CommandError("--limit: between 1 and 1000")
        hits = selectors.tweet_search(ws, o["query"], sort=o["sort"], limit=o["limit"])
        if hits.error:
            raise CommandError(f"query: {hits.error}")
        rows = [
            {
                "tweet_id": str(t.tweet_id),
                "author": t.author.screen_name or str(t.author.twitter_id),
                "created_at": t.created_at.strftime("%Y-%m-%d %H:%M"),
                "label": t.label,
                "reach": t.reach,
                "text": " ".join(t.text.split())[:80],
            }
            for t in hits.rows
        ]
        self._out(rows, ["tweet_id", "author", "created_at", "label", "reach", "text"], o["output"])
        if o["output"] == "table":
            more = f"more than {hits.total:,}" if hits.capped else f"{hits.total:,}"
            self.stderr.write(f"{more} tweets match ({hits.query.describe()})")

    def _pairs(self, ws, o) -> None:
        out = services.search_pairs_refresh(workspace_id=ws.pk, force=o["force"])
        if "skipped" in out:
            self.stdout.write(f"nothing done: {out['skipped']}")
            return
        for w in out["workspaces"]:
            what = {
                "built": f"built {w.get('index')} over {w['lexemes']} common words in {w.get('seconds')} s",
                "kept": f"kept its index of {w['lexemes']} common words (no new common word)",
                "small": "no index: too few tweets for a phrase search to need one",
                "unchanged": "no change since the last check (--force checks again)",
            }[w["action"]]
            self.stdout.write(f"{ws.slug}: {what}")
        for name in out["dropped"]:
            self.stdout.write(f"dropped {name} (no workspace uses it)")

    def _list(self, ws, o) -> None:
        rows = [{"id": c.pk, "name": c.name, "query": c.query, "tracked": len(c.tracked or [])}
                for c in selectors.claims_of(ws)]  # fmt: skip
        self._out(rows, ["id", "name", "query", "tracked"], o["output"])

    def _save(self, ws, o) -> None:
        user = None
        if o["user"]:
            user = get_user_model().objects.filter(username=o["user"]).first()
            if user is None:
                raise CommandError(f"--user: no user {o['user']!r}")
        try:
            claim = services.claim_create(workspace=ws, user=user, name=o["name"], query=o["query"])
        except ValidationError as e:
            raise CommandError("; ".join(f"{k}: {' '.join(v)}" for k, v in e.message_dict.items())) from None
        self.stdout.write(f"saved claim {claim.pk}: {claim.name}")

    def _show(self, ws, o) -> None:
        key = o["claim"]
        claim = next((c for c in selectors.claims_of(ws) if c.name == key or str(c.pk) == key), None)
        if claim is None:
            raise CommandError(f"no claim named {key!r} in {ws.slug}")
        try:
            if o["part"] == "timeline":
                rows = [{**{k: r[k] for k in ("day", "tweets", "retweets", "reach")}, **r["by_label"]}
                        for r in selectors.claim_timeline(ws, claim.query)]  # fmt: skip
                columns = ["day", "tweets", "retweets", "reach", *Label.values]
            elif o["part"] == "spreaders":
                rows = selectors.claim_spreaders(ws, claim.query)
                columns = ["rank", "twitter_id", "screen_name", "total", "cascades"]
            else:
                rows = selectors.claim_publishers(ws, claim.query)
                columns = ["twitter_id", "screen_name", "tweets", "false", "reach"]
        except (selectors.QueryError, selectors.ClaimTooBroad) as e:
            raise CommandError(f"claim {claim.name!r}: {e}") from None
        self._out(rows, columns, o["output"])
