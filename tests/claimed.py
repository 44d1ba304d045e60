"""A tweets CSV for the claim tests of every floor: six original tweets by three publishers over three days, with
texts, truth labels, hashtags and links (the CSV's optional ``hashtags`` / ``urls`` columns), and their retweets.

=====  =========  ==========  =========================================================  =====================
tweet  publisher  day         text                                                       entities
=====  =========  ==========  =========================================================  =====================
1      901 (pa)   2020-03-01  "5G towers cause the virus, share before they delete it"   #5G, news.example.com
2      901 (pa)   2020-03-02  "The virus spreads by 5G. 5G towers again: 5G!"            #5G #covid19
3      902 (pb)   2020-03-02  "Towers cause nothing; the virus is a virus"               fact.check.org
4      902 (pb)   2020-03-03  "Vaccines are safe"                                        #vaccines, www.who.int
5      903 (pc)   2020-03-03  "Cause towers 5G"  (the words of 1, another order)         #covid19
6      903 (pc)   2020-03-03  "Nothing to see here"                                      example.com/story/1
=====  =========  ==========  =========================================================  =====================

Retweets (account 100 + i, at noon of the day after the tweet unless said): tweet 1 by 101, 102, 103; tweet 2 by 101,
104; tweet 3 by 105; tweet 5 by 101, 106; tweet 6 by 107.
"""

from __future__ import annotations

import csv

TWEETS = [
    # tweet_id, user, screen name, day, text, label, hashtags, urls
    (1, 901, "pa", "2020-03-01", "5G towers cause the virus, share before they delete it", "false", "#5G",
     "https://news.example.com/a?x=1"),
    (2, 901, "pa", "2020-03-02", "The virus spreads by 5G. 5G towers again: 5G!", "false", "5G, covid19", ""),
    (3, 902, "pb", "2020-03-02", "Towers cause nothing; the virus is a virus", "true", "", "https://fact.check.org/5g"),
    (4, 902, "pb", "2020-03-03", "Vaccines are safe", "non-rumor", "#vaccines", "https://www.who.int/news"),
    (5, 903, "pc", "2020-03-03", "Cause towers 5G", "unverified", "#COVID19", ""),
    (6, 903, "pc", "2020-03-03", "Nothing to see here", "", "", "http://example.com/story/1"),
]  # fmt: skip
RETWEETS = [(1, 101), (1, 102), (1, 103), (2, 101), (2, 104), (3, 105), (5, 101), (5, 106), (6, 107)]


def claimed_csv(path):
    """Write the CSV at ``path`` and return it."""
    days = {t[0]: t[3] for t in TWEETS}
    with open(path, "w", newline="") as f:
        w = csv.writer(f)
        w.writerow(["tweet_id", "retweeted_tweet_id", "user_id", "created_at", "followers_count", "screen_name",
                    "text", "label", "hashtags", "urls"])  # fmt: skip
        for tid, user, name, day, text, label, tags, urls in TWEETS:
            w.writerow([tid, "", user, f"{day}T08:00:00Z", 1000, name, text, label, tags, urls])
        for i, (tid, user) in enumerate(RETWEETS):
            y, m, d = days[tid].split("-")
            w.writerow([10_000 + i, tid, user, f"{y}-{m}-{int(d) + 1:02d}T12:00:{i:02d}Z", 10 + user % 7, "", "", "",
                        "", ""])  # fmt: skip
    return path
