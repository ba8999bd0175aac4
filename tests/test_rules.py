"""The one judge of targets: its fast path, and every array type it judges, agree with it."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from labelgate.core.rules import Status, code_of, failing_codes, judge, judge_one, masks, not_usable

values = st.lists(st.one_of(st.integers(-300, 300), st.sampled_from([-100, 2**62, -(2**62)])))
ks = st.integers(1, 260)
ignores = st.one_of(st.just(-100), st.integers(-5, 260))


@settings(max_examples=200, deadline=None)
@given(values=values, k=ks, ignore=ignores)
def test_fast_path_equals_the_judge(values: list[int], k: int, ignore: int) -> None:
    v = np.array(values, np.int64)
    null = np.array([i % 7 == 3 for i in range(len(v))], bool)
    status = judge(v, k, ignore, null=null)
    fast = not_usable(v, k, ignore, np.empty(len(v), bool), null=null)
    expected = status != Status.USABLE
    assert (fast if fast is not None else np.zeros(len(v), bool)).tolist() == expected.tolist()
    assert [judge_one(x, k, ignore) for x in values] == [
        int(s) for s in judge(v, k, ignore).tolist()
    ]


@settings(max_examples=100, deadline=None)
@given(values=values, k=ks, ignore=ignores)
def test_numpy_pandas_and_torch_are_judged_alike(values: list[int], k: int, ignore: int) -> None:
    torch = pytest.importorskip("torch")
    base = masks(np.array(values, np.int64), k, ignore)
    for other in (pd.Series(values, dtype="int64"), torch.tensor(values, dtype=torch.int64)):
        m = masks(other, k, ignore)
        for a, b in zip(base, m, strict=True):
            assert np.asarray(a).tolist() == np.asarray(b).tolist()


@settings(max_examples=100, deadline=None)
@given(values=st.lists(st.integers(-3, 6), min_size=1, max_size=8), k=st.integers(1, 5))
def test_the_judge_agrees_with_cross_entropy(values: list[int], k: int) -> None:
    torch = pytest.importorskip("torch")
    status = judge(np.array(values, np.int64), k, -100)
    target = torch.tensor(values)
    try:
        loss = torch.nn.functional.cross_entropy(torch.zeros(len(values), k), target)
    except (IndexError, RuntimeError):
        assert (status >= Status.HIGH).any()
        return
    assert not (status >= Status.HIGH).any()
    assert bool(torch.isnan(loss)) == bool((status == Status.IGNORED).all())


def test_codes_follow_the_rule() -> None:
    assert failing_codes(4, -100)[Status.HIGH] == "LG004"
    assert Status.IGNORED not in failing_codes(4, -100)
    assert failing_codes(4, 0)[Status.IGNORED] == "LG006"
    assert [code_of(v, 4, -100) for v in (None, float("nan"), 2.5, 4, -1, 3, -100)] == [
        "LG003",
        "LG003",
        "LG002",
        "LG004",
        "LG005",
        None,
        None,
    ]
