"""Finding things in a workspace by what a person types: a Twitter id or the start of one, a screen name
(with or without "@", any case) or the start of one. Accounts, publishers and tweets, a few of each.

A numeric prefix is read as ranges of the ``(workspace, twitter_id)`` / ``(workspace, tweet_id)`` unique
indexes ("12" is 12, 120-129, 1200-1299, ... up to 19 digits) rather than by casting every id to text, which
would scan the workspace's accounts (430K on the 1M-retweet benchmark)."""

from __future__ import annotations

from dataclasses import dataclass, field

from django.db.models import Q

from ..models import Account, Publisher, Tweet, Workspace

MAX_DIGITS = 19  # a signed 64-bit id has at most 19 digits
LIMIT = 20


@dataclass
class SearchResult:
    query: str
    accounts: list[Account] = field(default_factory=list)
    publishers: list[Account] = field(default_factory=list)
    tweets: list[Tweet] = field(default_factory=list)

    @property
    def empty(self) -> bool:
        return not (self.accounts or self.publishers or self.tweets)

    def exact(self) -> Account | Tweet | None:
        """The one thing the query names exactly (an id or a whole screen name), if only one thing does."""
        q = self.query.lstrip("@").lower()
        accounts = [a for a in self.accounts if str(a.twitter_id) == q or a.screen_name.lower() == q]
        tweets = [t for t in self.tweets if str(t.tweet_id) == q]
        found = accounts + tweets
        return found[0] if len(found) == 1 else None


def id_prefix_q(field_name: str, digits: str) -> Q:
    """Rows whose id written in decimal starts with ``digits``: one index range per possible length."""
    value = int(digits)
    q = Q(**{field_name: value})
    if value == 0:
        return q
    for extra in range(1, MAX_DIGITS - len(digits) + 1):
        lo = value * 10**extra
        q |= Q(**{f"{field_name}__gte": lo, f"{field_name}__lt": lo + 10**extra})
    return q


def search(ws: Workspace, query: str, *, limit: int = LIMIT) -> SearchResult:
    """Up to ``limit`` accounts, publishers and tweets matching ``query`` (exact matches first, then by id)."""
    query = (query or "").strip()
    out = SearchResult(query=query)
    term = query.lstrip("@").strip()
    if not term:
        return out
    numeric = term.isdigit() and len(term) <= MAX_DIGITS and not query.startswith("@")
    match = Q(screen_name__istartswith=term)
    if numeric:
        match |= id_prefix_q("twitter_id", term)
    accounts = Account.objects.filter(Q(workspace=ws) & match).only("twitter_id", "screen_name")
    out.accounts = sorted(
        accounts.order_by("twitter_id")[:limit],
        key=lambda a: (str(a.twitter_id) != term and a.screen_name.lower() != term.lower(), a.twitter_id),
    )
    pub_match = Q(account__screen_name__istartswith=term)
    if numeric:
        pub_match |= id_prefix_q("account__twitter_id", term)
    out.publishers = [
        p.account
        for p in Publisher.objects.filter(Q(workspace=ws) & pub_match)
        .select_related("account")
        .order_by("account__twitter_id")[:limit]
    ]
    if numeric:
        out.tweets = list(
            Tweet.objects.filter(Q(workspace=ws) & id_prefix_q("tweet_id", term))
            .select_related("author")
            .only("tweet_id", "created_at", "label", "text", "author__twitter_id", "author__screen_name")
            .order_by("tweet_id")[:limit]
        )
    return out


def account_by_screen_name(ws: Workspace, screen_name: str) -> Account | None:
    """The account with this screen name (any case, "@" or not), or None."""
    name = screen_name.lstrip("@").strip()
    if not name:
        return None
    return Account.objects.filter(workspace=ws, screen_name__iexact=name).order_by("twitter_id").first()
