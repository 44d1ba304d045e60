"""The algorithm registry and the contract the runner relies on."""

from __future__ import annotations

import pytest

from monitor import algorithms
from monitor.algorithms import base
from monitor.algorithms.influence import INFLUENCE
from monitor.models import ComputeRun


class Nothing(algorithms.Algorithm):
    name = "nothing"
    label = "Nothing"

    def plan(self, *, run, tweet_pks):
        return []

    def compute(self, *, run, batch, backend, stop):
        return algorithms.BatchOutcome()

    def store(self, *, run, batch, result):
        pass


def test_it_gives_the_influence_measure_by_its_name():
    assert algorithms.get("influence") is INFLUENCE
    assert "influence" in algorithms.names()
    assert ("influence", "Influence measure") in algorithms.choices()


def test_it_names_the_known_algorithms_when_asked_for_an_unknown_one():
    with pytest.raises(algorithms.UnknownAlgorithm, match=r"no algorithm is called 'pagerank' \(known: .*influence"):
        algorithms.get("pagerank")


def test_it_refuses_a_second_algorithm_of_the_same_name():
    with pytest.raises(ValueError, match="an algorithm named 'influence' is registered already"):
        algorithms.register(INFLUENCE)


def test_a_registered_algorithm_is_offered_by_the_run_model(monkeypatch):
    monkeypatch.setitem(base._REGISTRY, "nothing", Nothing())
    assert algorithms.get("nothing").label == "Nothing"
    choices = dict(ComputeRun._meta.get_field("algorithm").choices)
    assert choices["nothing"] == "Nothing" and choices["influence"] == "Influence measure"


def test_the_run_model_offers_exactly_the_registered_algorithms():
    field = ComputeRun._meta.get_field("algorithm")
    assert list(field.choices) == algorithms.choices()
    assert field.default == "influence" and field.default in algorithms.names()
    assert all(len(name) <= field.max_length for name in algorithms.names())


def test_an_algorithm_must_implement_every_step():
    class Incomplete(algorithms.Algorithm):
        name = "incomplete"
        label = "Incomplete"

        def plan(self, *, run, tweet_pks):
            return []

    with pytest.raises(TypeError, match="compute"):
        Incomplete()


def test_a_batch_outcome_sums_the_seconds_of_each_step():
    out = algorithms.BatchOutcome()
    t = out.tick("load_s", 0.0)
    out.tick("load_s", t)
    assert set(out.timings) == {"load_s"} and out.timings["load_s"] >= t


def test_the_run_model_reads_the_one_registry_without_importing_the_algorithms():
    from monitor import algorithm_registry

    field = ComputeRun._meta.get_field("algorithm")
    # migration 0006 names monitor.algorithms.base.choices: the same function, so the field needs no migration
    assert field.choices.func is algorithm_registry.choices is base.choices
    assert base._REGISTRY is algorithm_registry.REGISTRY
