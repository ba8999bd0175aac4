"""The witness (LG049) measured: recall of planted mapping faults, false alarms on clean sources,
and the smallest source size at which each kind is found.

    python benchmarks/witness_recall.py [--repeat 20] [--seed 0]

The world is the tests' (``tests/witness_world.py``): K Gaussian classes in 16 dimensions, a
nearest-centroid model fitted on 50 trusted rows per class (``--spread`` sets how far apart
the classes are, so how accurate the model is), its predictions on each source's
rows out of sample. Each source of R rows gets a planted fault (a random permutation with no
class fixed, one swapped pair, a shift by one mod K, one class merged into another) and uniform
label noise; it is judged as one of 4 sources of a run (the Bonferroni divisor of 4 sources),
at the stated false-alarm rate of 0.001 per run. Printed: Markdown tables for docs/witness.md.
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "src"))

import numpy as np  # noqa: E402
from tests.witness_world import confusion, make_world, noisy, plant  # noqa: E402

from labelgate.checks.mapping import hypotheses_for, judge_source  # noqa: E402

KS = (3, 10, 50)
ROWS = (50, 100, 300, 1000, 3000, 10000)
NOISE = (0.0, 0.1, 0.2, 0.3)
KINDS = ("permutation", "swap", "shift", "merge")


def found(kind: str, verdict: object, truth: dict[int, int]) -> tuple[bool, bool]:
    """(reported, wrong): the planted fault reported as its kind's finding, and a remap reported
    that is not the planted one."""
    remap = verdict.remap  # type: ignore[attr-defined]
    wrong = any(truth[g] != t for g, t in remap.items())
    if kind == "merge":  # a class given as another: the model splits the given class
        return verdict.kind == "split", wrong  # type: ignore[attr-defined]
    return bool(remap) and verdict.complete, wrong  # type: ignore[attr-defined]


def trained_on(repeat: int, seed: int, spread: float, k: int = 10, rows: int = 1000) -> None:
    """What the model's training data does to the witness: one permuted source among four, the
    model's centroids fitted on trusted rows (out of sample), on all four sources' own labels
    (the permuted one among them), or on the permuted source's own labels."""
    rng = np.random.default_rng(seed)
    world = make_world(k, seed + k, spread=spread)
    tests = hypotheses_for(4, k)
    print(f"a permuted source of {rows} rows among 4, K={k}, 10% noise: who trained the model")
    print()
    print("| model's centroids fitted on | permuted source reported | clean sources reported |")
    print("|---|---|---|")
    for fitted in ("trusted rows (out of sample)", "all four sources", "the permuted source"):
        hits = alarms = 0
        for _ in range(repeat):
            parts = []
            for kind in ("permutation", "none", "none", "none"):
                truth, x = world.sample(rows, rng)
                f = plant(kind, k, rng)
                parts.append((noisy(f[truth], 0.1, k, rng)[0], x))
            if fitted.startswith("trusted"):
                centroids = world.centroids
            else:
                pool = parts if fitted.startswith("all") else parts[:1]
                given = np.concatenate([g for g, _ in pool])
                x = np.concatenate([x for _, x in pool])
                centroids = np.stack([x[given == c].mean(axis=0) for c in range(k)])
            model = type(world)(world.centers, centroids)
            for i, (given, x) in enumerate(parts):
                v = judge_source(confusion(given, model.predict(x), k), tests=tests)
                if i == 0:
                    hits += bool(v.remap)
                else:
                    alarms += bool(v.remap or v.merges or v.splits)
        print(f"| {fitted} | {hits} of {repeat} | {alarms} of {3 * repeat} |")
    print()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=20)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument(
        "--spread", type=float, default=1.0, help="class centres' spread: the model's accuracy"
    )
    parser.add_argument(
        "--trained-on", action="store_true", help="only the table of who trained the model"
    )
    args = parser.parse_args()
    if args.trained_on:
        trained_on(args.repeat, args.seed, args.spread)
        return
    rng = np.random.default_rng(args.seed)
    started = time.perf_counter()
    recall: dict[tuple[int, str, int, float], float] = {}
    alarms = clean = wrong_total = reported_total = 0
    accuracy: dict[int, float] = {}
    for k in KS:
        world = make_world(k, args.seed + k, spread=args.spread)
        t, x = world.sample(20_000, rng)
        accuracy[k] = float((world.predict(x) == t).mean())
        tests = hypotheses_for(4, k)
        for rows in ROWS:
            for noise in NOISE:
                for kind in ("none", *KINDS):
                    hits = 0
                    for _ in range(args.repeat):
                        truth, x = world.sample(rows, rng)
                        f = plant(kind, k, rng)
                        given, _ = noisy(f[truth], noise, k, rng)
                        v = judge_source(confusion(given, world.predict(x), k), tests=tests)
                        inverse = {int(f[c]): c for c in range(k)}
                        if kind == "none":
                            clean += 1
                            alarms += bool(v.remap or v.merges or v.splits)
                            continue
                        hit, wrong = found(kind, v, inverse)
                        hits += hit
                        reported_total += bool(v.remap)
                        wrong_total += wrong
                    if kind != "none":
                        recall[(k, kind, rows, noise)] = hits / args.repeat
    print(
        f"model accuracy (out of sample): {', '.join(f'K={k}: {a:.1%}' for k, a in accuracy.items())}"
    )
    print(
        f"clean sources judged: {clean}, false alarms (a remap, a merge or a split hint): {alarms}"
    )
    print(
        f"sources with a remap reported: {reported_total}, remaps not the planted one: {wrong_total}"
    )
    print()
    for noise in (0.0, 0.3):
        print(f"recall at {noise:.0%} uniform noise ({args.repeat} sources a cell)")
        print()
        print("| K | kind | " + " | ".join(f"{r} rows" for r in ROWS) + " |")
        print("|---|---|" + "---|" * len(ROWS))
        for k in KS:
            for kind in KINDS:
                cells = " | ".join(f"{recall[(k, kind, r, noise)]:.0%}" for r in ROWS)
                print(f"| {k} | {kind} | {cells} |")
        print()
    print("smallest source size with recall >= 90% at every noise level 0-30%")
    print()
    print("| K | " + " | ".join(KINDS) + " |")
    print("|---|" + "---|" * len(KINDS))
    for k in KS:
        sizes = []
        for kind in KINDS:
            ok = [r for r in ROWS if all(recall[(k, kind, r, n)] >= 0.9 for n in NOISE)]
            sizes.append(str(ok[0]) if ok else f"> {ROWS[-1]}")
        print(f"| {k} | " + " | ".join(sizes) + " |")
    print()
    trained_on(args.repeat, args.seed, args.spread)
    print(f"({time.perf_counter() - started:.0f} s)")


if __name__ == "__main__":
    main()
