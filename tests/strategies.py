"""Hypothesis strategies shared by the tests: label arrays drawn around PyTorch's edges."""

from __future__ import annotations

from dataclasses import dataclass

from hypothesis import strategies as st


@dataclass(frozen=True)
class LabelCase:
    """A label array with the settings it is judged under."""

    labels: list[int]
    k: int
    batch_size: int
    ignore_index: int
    drop_last: bool
    weights: list[float] | None


def edge_values(k: int, ignore_index: int) -> st.SearchStrategy[int]:
    """Values at the edges of the valid range, plus ordinary in-range ones."""
    return st.one_of(
        st.sampled_from([ignore_index, -1, 0, k - 1, k, k + 1]),
        st.integers(min_value=0, max_value=k - 1),
        st.integers(min_value=0, max_value=k - 1),
    )


@st.composite
def label_cases(draw: st.DrawFn, *, weighted: bool = False) -> LabelCase:
    k = draw(st.integers(min_value=1, max_value=6))
    ignore_index = draw(st.sampled_from([-100, -100, -1, 255]))
    labels = draw(st.lists(edge_values(k, ignore_index), min_size=1, max_size=60))
    weights = None
    if weighted:
        weights = draw(st.lists(st.sampled_from([0.0, 0.0, 0.5, 1.0, 2.0]), min_size=k, max_size=k))
    return LabelCase(
        labels=labels,
        k=k,
        batch_size=draw(st.integers(min_value=1, max_value=9)),
        ignore_index=ignore_index,
        drop_last=draw(st.booleans()),
        weights=weights,
    )


@dataclass(frozen=True)
class TokenCase:
    rows: list[list[int]]
    k: int
    batch_size: int
    ignore_index: int


@st.composite
def token_cases(draw: st.DrawFn) -> TokenCase:
    k = draw(st.integers(min_value=1, max_value=5))
    ignore_index = draw(st.sampled_from([-100, -100, -1]))
    row = st.lists(edge_values(k, ignore_index), min_size=1, max_size=6)
    # Rows of only ignore_index are common in token data (special tokens, truncation).
    ignored_row = st.lists(st.just(ignore_index), min_size=1, max_size=6)
    rows = draw(st.lists(st.one_of(row, ignored_row), min_size=1, max_size=30))
    return TokenCase(rows, k, draw(st.integers(min_value=1, max_value=6)), ignore_index)
