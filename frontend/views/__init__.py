"""The dashboard's views, one module per page family: small functions that read through ``monitor.selectors``
(``monitor.alerts.selectors``), write through ``monitor.services`` (``monitor.alerts.services``) and render.

* :mod:`.overview` — home and a workspace's overview
* :mod:`.rankings` — the ranking of all publishers or one publisher's spreaders
* :mod:`.accounts` — an account's page
* :mod:`.cascades` — a tweet's page and the cascade explorer
* :mod:`.collections` — uploads, a collection's page, its progress, cancel and retry
* :mod:`.runs` — compute runs: list, page, a new run, cancel and retry
* :mod:`.network` — network analytics: the Network page, a component, a neighbourhood, their downloads
* :mod:`.alerts` — the inbox, the rules and the rule form
* :mod:`.exports` — the downloads (CSV, JSON, GEXF, GraphML)
"""
