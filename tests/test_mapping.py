"""labelgate.checks.mapping: planted mapping faults found, clean sources with uniform noise never
reported, the stated false-alarm rate held at the null's boundary, and the remap reported always
the planted one."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from labelgate.checks.mapping import hypotheses_for, judge_source, needed_rows
from tests.witness_world import confusion, make_world, noisy, plant

REPORTED = ("permutation", "swapped pair", "shift by one")


def _judge(k: int, kind: str, rows: int, noise: float, seed: int, spread: float = 1.0):  # type: ignore[no-untyped-def]
    world = make_world(k, seed % 7, spread=spread)
    rng = np.random.default_rng(seed)
    truth, x = world.sample(rows, rng)
    f = plant(kind, k, rng)
    given_, _ = noisy(f[truth], noise, k, rng)
    verdict = judge_source(confusion(given_, world.predict(x), k), tests=hypotheses_for(4, k))
    return verdict, {int(f[t]): t for t in range(k)}  # given -> true: the remap to find


class TestCleanSources:
    @pytest.mark.parametrize("k", [2, 3, 5, 10])
    @pytest.mark.parametrize("noise", [0.0, 0.1, 0.2, 0.3])
    def test_uniform_noise_is_never_a_mapping_fault(self, k: int, noise: float) -> None:
        for seed, rows in enumerate((30, 200, 2000)):
            for spread in (0.6, 1.0, 2.0):  # models from 63% to 100% accurate
                v, _ = _judge(k, "none", rows, noise, seed, spread)
                assert v.kind in ("none", "too few to judge") and not v.remap and not v.merges

    def test_the_false_alarm_rate_holds_at_the_nulls_boundary(self) -> None:
        """Two classes whose rows the model puts in either class with equal chance: the
        boundary of the null hypothesis, where the sign test's p-values are as small as the null
        allows. At alpha 0.1 the share of sources reported (a remap or a merge) stays within
        alpha, and is not far below it (the test is not vacuous)."""
        rng = np.random.default_rng(0)
        alarms = 0
        trials = 800
        for _ in range(trials):
            m = rng.integers(10, 300, 2)
            a, b = rng.binomial(m, 0.5)
            conf = np.array([[m[0] - a, a], [b, m[1] - b]], dtype=np.int64)
            v = judge_source(conf, tests=hypotheses_for(1, 2), alpha=0.1)
            alarms += bool(v.remap or v.merges)
        rate = alarms / trials
        assert 0.02 < rate <= 0.1 + 3 * np.sqrt(0.1 * 0.9 / trials)


class TestPlantedFaults:
    @pytest.mark.parametrize("kind", ["permutation", "swap", "shift"])
    @pytest.mark.parametrize("k", [3, 5, 10])
    def test_found_at_enough_rows_through_30_percent_noise(self, kind: str, k: int) -> None:
        for seed in range(3):
            v, truth = _judge(k, kind, 200 * k, 0.3, seed)
            assert v.complete and v.remap == {g: t for g, t in truth.items() if g != t}
            assert v.kind in REPORTED

    def test_kinds_are_named(self) -> None:
        assert _judge(5, "swap", 1000, 0.1, 1)[0].kind == "swapped pair"
        assert _judge(5, "shift", 1000, 0.1, 1)[0].kind == "shift by one"
        assert _judge(6, "permutation", 1000, 0.1, 2)[0].kind in ("permutation", "shift by one")

    def test_a_class_merged_into_another_is_a_split_hint(self) -> None:
        v, _ = _judge(5, "merge", 2000, 0.2, 3)
        assert v.kind == "split" and not v.remap and v.splits

    def test_two_given_classes_the_model_sees_as_one_are_a_merge(self) -> None:
        conf = np.array([[5, 90, 0], [2, 100, 1], [0, 3, 95]], dtype=np.int64)
        v = judge_source(conf, tests=hypotheses_for(1, 3))
        assert v.kind == "merge" and [(m.given, m.to) for m in v.merges] == [(0, 1)]

    def test_a_few_rows_are_too_few_to_judge(self) -> None:
        conf = np.array([[1, 3], [4, 0]], dtype=np.int64)
        v = judge_source(conf, tests=hypotheses_for(1, 2))
        assert v.kind == "too few to judge" and not v.remap
        assert v.needed == needed_rows(hypotheses_for(1, 2)) and v.needed > 4


@settings(max_examples=40, deadline=None)
@given(
    k=st.integers(2, 8),
    kind=st.sampled_from(["permutation", "swap", "shift", "none"]),
    rows=st.integers(20, 1500),
    noise=st.floats(0.0, 0.3),
    seed=st.integers(0, 10_000),
)
def test_the_remap_reported_is_the_planted_one(
    k: int, kind: str, rows: int, noise: float, seed: int
) -> None:
    v, truth = _judge(k, kind, rows, noise, seed, spread=0.8)
    for g, t in v.remap.items():
        assert truth[g] == t


@settings(max_examples=300, deadline=None)
@given(
    st.integers(2, 8).flatmap(
        lambda k: st.lists(
            st.lists(st.integers(0, 6), min_size=k, max_size=k), min_size=k, max_size=k
        )
    )
)
def test_the_assignment_is_the_solvers_wherever_the_verdict_reads_it(rows: list[list[int]]) -> None:
    """Where the row maxima already form a permutation the solver is not called; its answer and
    the shortcut's agree on every class that has rows (the only ones a verdict reads), and the
    shortcut's total is the solver's optimum."""
    from scipy.optimize import linear_sum_assignment

    from labelgate.checks.mapping import _assignment

    conf = np.array(rows, dtype=np.int64)
    of = conf.sum(axis=1)
    got = _assignment(conf, of)
    _, want = linear_sum_assignment(conf, maximize=True)
    held = of > 0
    assert conf[held, got[held]].sum() == conf[np.arange(len(conf)), want].sum()
    strict = all((r == r.max()).sum() == 1 for r in conf[held])
    if strict and len(set(conf[held].argmax(axis=1))) == int(held.sum()):
        assert (got[held] == want[held]).all()
