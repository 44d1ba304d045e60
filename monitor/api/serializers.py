"""API representations. Twitter ids are strings: JavaScript numbers lose digits past 2**53."""

from __future__ import annotations

from rest_framework import serializers

from ..models import Collection, ComputeRun, Workspace


class WorkspaceSerializer(serializers.ModelSerializer):
    class Meta:
        model = Workspace
        fields = ["slug", "name", "created_at"]


class CollectionSerializer(serializers.ModelSerializer):
    files = serializers.SerializerMethodField()
    progress = serializers.SerializerMethodField()

    class Meta:
        model = Collection
        fields = [
            "id",
            "name",
            "status",
            "format",
            "mode",
            "validate_only",
            "compute",
            "counts",
            "report",
            "error",
            "timings",
            "files",
            "progress",
            "created_at",
            "started_at",
            "finished_at",
        ]

    def get_files(self, obj: Collection) -> list[dict]:
        return [{"name": f.original_name, "size": f.size, "format": f.format} for f in obj.files.all()]

    def get_progress(self, obj: Collection) -> dict:
        from ..services import collection_progress

        return collection_progress(obj)


class CollectionUploadSerializer(serializers.Serializer):
    files = serializers.ListField(child=serializers.FileField(), allow_empty=False)
    name = serializers.CharField(required=False, allow_blank=True, max_length=200)
    mode = serializers.ChoiceField(choices=Collection.Mode.choices, default=Collection.Mode.STRICT)
    validate_only = serializers.BooleanField(default=False)
    compute = serializers.BooleanField(default=True)
    format = serializers.ChoiceField(
        choices=["auto", "csv", "follows", "v1", "v2", "trees", "tudataset", "npz"], default="auto"
    )


class ComputeRunSerializer(serializers.ModelSerializer):
    class Meta:
        model = ComputeRun
        fields = [
            "id",
            "status",
            "aggregate",
            "orphans",
            "backend",
            "n_batches",
            "batches_done",
            "n_cascades",
            "n_nodes",
            "n_edges",
            "devices",
            "timings",
            "notes",
            "error",
            "created_at",
            "started_at",
            "finished_at",
            "collection",
        ]


class RankingRowSerializer(serializers.Serializer):
    rank = serializers.IntegerField()
    twitter_id = serializers.CharField()
    screen_name = serializers.CharField()
    total = serializers.FloatField()
    mean = serializers.FloatField()
    participation = serializers.FloatField()
    cascades = serializers.IntegerField()
