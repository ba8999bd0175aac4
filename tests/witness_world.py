"""A generated world for the witness tests: K Gaussian classes, a nearest-centroid model trained
on a trusted sample, and sources whose labels carry planted mapping faults and uniform noise."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np
import numpy.typing as npt

I64 = npt.NDArray[np.int64]


@dataclass(frozen=True)
class World:
    """K classes in ``dim`` dimensions and a model trained on a trusted sample of them."""

    centers: npt.NDArray[np.float64]
    centroids: npt.NDArray[np.float64]

    @property
    def k(self) -> int:
        return len(self.centers)

    def sample(self, n: int, rng: np.random.Generator) -> tuple[I64, npt.NDArray[np.float64]]:
        """``n`` rows: their true classes and points."""
        truth = rng.integers(0, self.k, n)
        return truth, self.centers[truth] + rng.normal(size=(n, self.centers.shape[1]))

    def logits(self, x: npt.NDArray[np.float64]) -> npt.NDArray[np.float64]:
        """The model's logits: minus half the squared distance to each class's centroid (a
        Gaussian classifier with identity covariance)."""
        d = ((x[:, None, :] - self.centroids[None, :, :]) ** 2).sum(axis=2)
        return -0.5 * d

    def predict(self, x: npt.NDArray[np.float64]) -> I64:
        return self.logits(x).argmax(axis=1)


def make_world(k: int, seed: int, *, dim: int = 16, spread: float = 3.0, train: int = 50) -> World:
    """K classes; the model's centroids are means of ``train`` trusted rows per class (never the
    rows it will judge: its predictions on them are out of sample)."""
    rng = np.random.default_rng(seed)
    centers = rng.normal(0.0, spread, (k, dim))
    truth = np.repeat(np.arange(k), train)
    x = centers[truth] + rng.normal(size=(len(truth), dim))
    centroids = np.stack([x[truth == c].mean(axis=0) for c in range(k)])
    return World(centers, centroids)


def plant(kind: str, k: int, rng: np.random.Generator) -> I64:
    """A mapping fault, true class -> given class: ``permutation`` (random, no class fixed where
    K allows), ``swap`` (one pair), ``shift`` (given = true + 1 mod K), ``merge`` (one class given
    as another), ``none``."""
    f = np.arange(k)
    if kind == "permutation":
        while True:
            f = rng.permutation(k)
            if k < 3 or not np.any(f == np.arange(k)):
                return f
    if kind == "swap":
        a, b = rng.choice(k, 2, replace=False)
        f[a], f[b] = b, a
    elif kind == "shift":
        f = (f + 1) % k
    elif kind == "merge":
        a, b = rng.choice(k, 2, replace=False)
        f[a] = b
    return f


def noisy(
    given: I64, noise: float, k: int, rng: np.random.Generator
) -> tuple[I64, npt.NDArray[np.bool_]]:
    """Uniform label noise: each label replaced, with probability ``noise``, by a class drawn
    uniformly; which rows were touched."""
    touched = rng.random(len(given)) < noise
    out = given.copy()
    out[touched] = rng.integers(0, k, int(touched.sum()))
    return out, touched


def confusion(given: I64, predicted: I64, k: int) -> I64:
    return np.bincount(given * k + predicted, minlength=k * k).reshape(k, k).astype(np.int64)


@dataclass(frozen=True)
class Case:
    """A generated label file of several sources and the model's logits on its rows."""

    truth: I64
    given: I64
    noise: npt.NDArray[np.bool_]
    sources: list[str]
    logits: npt.NDArray[np.float64]
    faults: dict[str, I64]


def make_case(
    world: World,
    faults: dict[str, str],
    *,
    rows: int,
    noise: float,
    seed: int,
) -> Case:
    """One source per entry of ``faults`` (name -> planted kind), ``rows`` rows each."""
    rng = np.random.default_rng(seed)
    parts = []
    planted: dict[str, I64] = {}
    for name, kind in faults.items():
        truth, x = world.sample(rows, rng)
        f = plant(kind, world.k, rng)
        planted[name] = f
        given, touched = noisy(f[truth], noise, world.k, rng)
        parts.append((truth, given, touched, [name] * rows, world.logits(x)))
    return Case(
        np.concatenate([p[0] for p in parts]),
        np.concatenate([p[1] for p in parts]),
        np.concatenate([p[2] for p in parts]),
        [s for p in parts for s in p[3]],
        np.concatenate([p[4] for p in parts]),
        planted,
    )


def write_case(case: Case, folder: Any, *, shuffle_predictions: bool = True) -> tuple[str, str]:
    """``data.parquet`` (id, label, source) and ``pred.parquet`` (id and K logit columns, in
    another row order), as paths."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    n, k = case.logits.shape
    data, pred = f"{folder}/data.parquet", f"{folder}/pred.parquet"
    ids = np.arange(n) * 7 + 3
    pq.write_table(pa.table({"id": ids, "label": case.given, "source": case.sources}), data)
    order = np.random.default_rng(0).permutation(n) if shuffle_predictions else np.arange(n)
    columns = {f"logit_{i}": case.logits[order, i] for i in range(k)}
    pq.write_table(pa.table({"id": ids[order], **columns}), pred)
    return data, pred
