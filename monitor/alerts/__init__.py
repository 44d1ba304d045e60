"""Influencer alerts: rules an analyst subscribes to, evaluated after every compute run and on a schedule,
delivered to the in-app inbox, by email and to signed webhooks. See :mod:`monitor.alerts.services`."""
