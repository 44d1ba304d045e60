"""The admin's base classes for big tables: a paginator that estimates an unfiltered count, the changelist
settings of tables of millions of rows, and view-only rows the services write. ``monitor/admin.py`` and
``monitor/admin_analyses.py`` build on them."""

from __future__ import annotations

from django.contrib import admin
from django.core.paginator import Paginator
from django.db import connections
from django.db.models import QuerySet
from django.utils.functional import cached_property

__all__ = ["BigTableAdmin", "EngineRowsAdmin", "EstimatedCountPaginator"]


class EstimatedCountPaginator(Paginator):
    """Counts an unfiltered changelist with PostgreSQL's estimate (``pg_class.reltuples``, kept by ANALYZE and
    autovacuum; summed over the partitions of a partitioned table) once the table is large; ``COUNT(*)`` reads
    every row. Filtered lists, small tables, tables never analyzed and other databases are counted exactly. The
    last page numbers may then be approximate."""

    estimate_above = 100_000

    @cached_property
    def count(self) -> int:
        qs = self.object_list
        if isinstance(qs, QuerySet) and not qs.query.where and not qs.query.distinct:
            connection = connections[qs.db]
            if connection.vendor == "postgresql":
                with connection.cursor() as cur:
                    # a table partitioned by workspace (monitor/partitions.py) has its rows, and estimates, in
                    # its partitions
                    cur.execute(
                        """SELECT CASE WHEN c.relkind = 'p' THEN
                               (SELECT sum(greatest(p.reltuples, 0)) FROM pg_inherits i
                                JOIN pg_class p ON p.oid = i.inhrelid WHERE i.inhparent = c.oid)
                               ELSE c.reltuples END::bigint
                           FROM pg_class c WHERE c.oid = to_regclass(%s)""",
                        [qs.model._meta.db_table],
                    )
                    row = cur.fetchone()
                if row and row[0] is not None and row[0] >= self.estimate_above:
                    return int(row[0])
        return super().count


class BigTableAdmin(admin.ModelAdmin):
    """Changelist settings for tables of millions of rows."""

    list_per_page = 50
    show_full_result_count = False
    paginator = EstimatedCountPaginator
    sortable_by = ("id",)
    search_help_text = "Twitter ids and screen names match exactly."


class EngineRowsAdmin(BigTableAdmin):
    """Rows only the services write (recomputed by every run): view-only, never added or deleted here."""

    def has_add_permission(self, request, obj=None) -> bool:
        return False

    def has_change_permission(self, request, obj=None) -> bool:
        return False

    def has_delete_permission(self, request, obj=None) -> bool:
        return False
