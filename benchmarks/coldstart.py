"""A cold start: ``labelgate validate`` of a three-row file against the import floor, in one run.

    python benchmarks/coldstart.py [--pairs 11] [--file data_samples/oob_0_2_4.parquet]

The floor is a fresh Python process that imports what any run on a Parquet file must,
``pyarrow``, ``pyarrow.compute`` and ``numpy``, and nothing else. The two commands run in fresh
processes, alternating (floor, labelgate) ``--pairs`` times so that a busy moment of the machine
falls on both; printed: the median wall time and the median CPU time (user + system of the
child) of each, and labelgate / floor for both, the figures the goal (at most 1.5x) is judged by.
labelgate's output goes to a file, as in CI, not to a terminal. labelgate's modules are compiled
to bytecode first, as pip compiles an installed wheel and as pyarrow's and numpy's already are:
where bytecode is not written (``PYTHONDONTWRITEBYTECODE``, set on some machines) an editable
install would otherwise compile every module in every run, which no user's installed copy does.
"""

from __future__ import annotations

import argparse
import statistics
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

from compare import measured  # noqa: E402

FLOOR = "import pyarrow, pyarrow.compute, numpy"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--pairs", type=int, default=11)
    parser.add_argument("--file", default=str(HERE.parent / "data_samples" / "oob_0_2_4.parquet"))
    args = parser.parse_args()
    commands = {
        "floor (imports)": [sys.executable, "-c", FLOOR],
        "labelgate validate": [sys.executable, "-m", "labelgate", "validate", args.file, "-k", "4"],
    }
    import compileall
    import importlib.util

    spec = importlib.util.find_spec("labelgate")
    if spec is not None and spec.origin is not None:
        compileall.compile_dir(Path(spec.origin).parent, quiet=1)
    measured(commands["labelgate validate"])  # files in the page cache
    runs: dict[str, list[tuple[float, float]]] = {name: [] for name in commands}
    for _ in range(args.pairs):
        for name, argv in commands.items():
            m = measured(argv)
            runs[name].append((m.wall, m.cpu))
    medians = {
        name: (statistics.median(w for w, _ in r), statistics.median(c for _, c in r))
        for name, r in runs.items()
    }
    print(f"median of {args.pairs} alternating pairs     wall s   CPU s")
    for name, (wall, cpu) in medians.items():
        print(f"{name:36} {wall:7.3f} {cpu:7.3f}")
    (floor_wall, floor_cpu), (wall, cpu) = medians.values()
    print(f"labelgate / floor: {wall / floor_wall:.2f}x wall, {cpu / floor_cpu:.2f}x CPU")


if __name__ == "__main__":
    main()
