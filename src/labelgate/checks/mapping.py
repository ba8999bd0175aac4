"""One source's labels against a model's predictions: the remap that explains its confusion
matrix, and whether the data proves it.

The remap is the one-to-one map of given classes onto predicted ones that the most rows agree
with (``scipy.optimize.linear_sum_assignment`` on the confusion matrix, maximised). A class the
remap moves, ``i -> j``, is proven when its rows that the model predicts ``j`` outnumber those it
predicts ``i``, and those of any third class, by more than chance allows: a one-sided sign test
of ``j``'s count ``a`` against the largest other ``b`` (conditioned on their sum,
``Binomial(a + b, 1/2)``), at ``alpha / tests``, where ``tests`` counts every
(source, given class, other class) the run could have judged (Bonferroni). Under the null
hypothesis that, for the rows given class ``i``, the model predicts ``i`` at least as often as any
one other class (true of correct labels with uniform noise below ``1 - 1/K`` and a model better
than chance on each class), the probability that a run reports any mapping fault is at most
``alpha``, whatever the number of sources, classes or rows. A class with fewer rows than
``needed`` can never reach that bound: too few to judge.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
import numpy.typing as npt

__all__ = ["ALPHA", "Move", "SourceVerdict", "hypotheses_for", "judge_source", "needed_rows"]

ALPHA = 1e-3  # the family-wise false-alarm rate of one run
SPLIT_SHARE = 0.3  # a split: two predicted classes each hold this share of one given class
RARE_SHARE = 0.5  # ... one of which the source gives to fewer rows than half the median class


@dataclass(frozen=True, slots=True)
class Move:
    """A given class whose rows the model puts in another class.

    Attributes:
        given: the class the data gives.
        to: the class the model predicts for most of them (the remap's target).
        rows: rows given ``given`` predicted ``to``.
        stays: rows given ``given`` predicted ``given``.
        of: rows given ``given`` in the source.
        p: the sign test's p-value (``rows`` against the most rows of any other class,
            ``given`` included).
        proven: ``p`` at or below the run's threshold.
    """

    given: int
    to: int
    rows: int
    stays: int
    of: int
    p: float
    proven: bool


@dataclass(frozen=True, slots=True)
class SourceVerdict:
    """One source judged against the model.

    Attributes:
        rows: rows judged.
        kind: ``none``, ``permutation``, ``swapped pair``, ``shift by one``, ``merge``,
            ``split`` or ``too few to judge``.
        remap: the proven remap, given class -> class (the moves of a permutation kind).
        moves: every class the remap moves with more rows on its target than on itself.
        merges: given classes the model puts, proven, in a class another given class holds.
        splits: (given, a, b): one given class the model divides between a and b, b a class the
            source hardly gives (a hint).
        as_is: the share of rows whose given class the model predicts.
        remapped: the share under the proven remap.
        complete: every move is proven (the remap can be applied to the whole source).
        needed: the fewest rows a move needs to be proven.
    """

    rows: int
    kind: str
    remap: dict[int, int]
    moves: tuple[Move, ...]
    merges: tuple[Move, ...]
    splits: tuple[tuple[int, int, int], ...]
    as_is: float
    remapped: float
    complete: bool
    needed: int


def hypotheses_for(sources: int, k: int) -> int:
    """The hypotheses a run could test: one per (source, given class, other class)."""
    return max(1, sources * k * max(1, k - 1))


def needed_rows(tests: int, alpha: float = ALPHA) -> int:
    """The fewest rows that prove a move when every one of them goes the other way:
    ``2**-m <= alpha / tests``."""
    return math.ceil(math.log2(tests / alpha))


def _sign_p(a: int, b: int) -> float:
    """P(X >= a) for X ~ Binomial(a + b, 1/2): the chance of ``a`` or more of ``a + b`` rows on
    the other class when either is as likely. Exact (a sum of log terms) up to ``EXACT`` rows;
    past that the Chernoff bound ``exp(-m KL(a/m || 1/2))``, never smaller than the exact value,
    so the test stays within its false-alarm rate."""
    if a <= b:
        return 1.0
    m = a + b
    if m <= EXACT:
        logs = _LOG_FACT[m] - _LOG_FACT[a : m + 1] - _LOG_FACT[m - a :: -1] - m * math.log(2)
        top = float(logs.max())
        return min(1.0, math.exp(top) * float(np.exp(logs - top).sum()))
    q = a / m
    kl = q * math.log(2 * q) + (1 - q) * math.log(2 * (1 - q)) if q < 1 else math.log(2)
    return math.exp(-m * kl)


EXACT = 20_000
_LOG_FACT = np.concatenate(([0.0], np.cumsum(np.log(np.arange(1, EXACT + 1, dtype=np.float64)))))


def judge_source(
    confusion: npt.NDArray[np.int64], *, tests: int, alpha: float = ALPHA
) -> SourceVerdict:
    """Judge one source's confusion matrix (given x predicted).

    Args:
        confusion: K x K counts, row = the class the data gives, column = the model's.
        tests: the run's hypotheses (``hypotheses_for``): the Bonferroni divisor.
        alpha: the run's false-alarm rate.
    """
    conf = np.asarray(confusion, dtype=np.int64)
    k = conf.shape[0]
    n = int(conf.sum())
    of = conf.sum(axis=1)
    threshold = alpha / tests
    target = _assignment(conf, of)
    typical = float(np.median(of))
    moves: list[Move] = []
    merges: list[Move] = []
    # Each class's test is asked of the classes that can fail it alone, found for all at once
    # (a loop over K classes per source cost more than the counting at K = 1000).
    classes = np.arange(k)
    stays = np.diagonal(conf)
    # a target the source hardly gives closes no permutation (whose classes all keep their
    # rows): the given class holds two (a split, judged below)
    alone = of[target] < RARE_SHARE * typical
    moved = (of > 0) & (target != classes) & (conf[classes, target] > stays) & ~alone
    others = conf.copy()
    np.fill_diagonal(others, -1)
    top = others.argmax(axis=1)
    elsewhere = (of > 0) & (top != target) & (conf[classes, top] > stays)
    for i in np.flatnonzero(moved | elsewhere).tolist():
        if moved[i]:
            moves.append(_move(conf, i, int(target[i]), int(of[i]), threshold))
        if elsewhere[i]:
            m = _move(conf, i, int(top[i]), int(of[i]), threshold)
            if m.proven:
                merges.append(m)
    proven = {m.given: m.to for m in moves if m.proven}
    complete = bool(proven) and all(m.proven for m in moves)
    agree = int(np.trace(conf))
    remapped = agree + sum(int(conf[i, j] - conf[i, i]) for i, j in proven.items())
    splits = _splits(conf, of, needed_rows(tests, alpha))
    kind = (
        _kind(proven, k)
        if proven
        else ("merge" if merges else "split" if splits else "too few to judge" if moves else "none")
    )
    return SourceVerdict(
        rows=n,
        kind=kind,
        remap=proven,
        moves=tuple(moves),
        merges=tuple(merges),
        splits=splits,
        as_is=agree / n if n else 0.0,
        remapped=remapped / n if n else 0.0,
        complete=complete,
        needed=needed_rows(tests, alpha),
    )


def _assignment(conf: npt.NDArray[np.int64], of: npt.NDArray[np.int64]) -> npt.NDArray[np.intp]:
    """Each given class's target under the one-to-one remap the most rows agree with.

    Where every given class that has rows has one strictly largest count and no two share its
    column, the row maxima are that remap and its only optimum (any other picks an entry below
    some row's maximum), so it is ``linear_sum_assignment``'s answer without the solver; the
    classes without rows take no part in the verdict. Otherwise the solver decides.
    """
    held = np.flatnonzero(of > 0)
    rows = conf[held]
    top = rows.argmax(axis=1)
    best = rows[np.arange(len(held)), top]
    ties = (rows == best[:, None]).sum(axis=1)
    ordered = np.sort(top)  # no column twice (np.unique would import numpy.ma: 40 ms)
    if bool((ties == 1).all()) and bool((ordered[1:] != ordered[:-1]).all()):
        target = np.arange(conf.shape[0])
        target[held] = top
        return target
    from scipy.optimize import linear_sum_assignment

    _, solved = linear_sum_assignment(conf, maximize=True)
    return np.asarray(solved, dtype=np.intp)


def _move(conf: npt.NDArray[np.int64], i: int, j: int, of: int, threshold: float) -> Move:
    """``i -> j`` tested against staying and against every other target: ``j``'s rows against
    the most of ``i``'s own and of any third class's (a weak model that spreads a class over
    two others proves neither)."""
    a, stays = int(conf[i, j]), int(conf[i, i])
    rest = conf[i].copy()
    rest[j] = -1
    p = _sign_p(a, int(rest.max()))
    return Move(i, j, a, stays, of, p, p <= threshold)


def _kind(remap: dict[int, int], k: int) -> str:
    """A proven remap's kind: a swapped pair, a shift by one (each moved class to its
    neighbour, one way round), or a permutation."""
    if len(remap) == 2:
        (a, x), (b, y) = remap.items()
        if x == b and y == a:
            return "swapped pair"
    steps = {(j - i) % k for i, j in remap.items()}
    if k > 2 and len(remap) >= 2 and steps in ({1}, {k - 1}):
        return "shift by one"
    return "permutation"


def _splits(
    conf: npt.NDArray[np.int64], of: npt.NDArray[np.int64], needed: int
) -> tuple[tuple[int, int, int], ...]:
    """Given classes the model divides between two classes, one of which the source hardly
    gives: the source seems to have merged that class into this one."""
    found = []
    typical = float(np.median(of))
    # a class whose second largest count is under the share passes no further: only the rows
    # with two counts at the share's floor (integers: no division of K x K) are sorted and judged
    least = np.floor(SPLIT_SHARE * of).astype(np.int64)
    near = (conf >= least[:, None]).sum(axis=1) >= 2
    for i in np.flatnonzero(near & (of >= 2 * needed)).tolist():
        first, second = (int(c) for c in np.argsort(conf[i])[::-1][:2])
        shares = conf[i, [first, second]] / of[i]
        if shares.min() < SPLIT_SHARE:
            continue
        for rare in (first, second):
            if rare != i and of[rare] < RARE_SHARE * typical and conf[i, rare] >= needed:
                found.append((i, first if rare == second else second, rare))
                break
    return tuple(found)
