"""A cold start: ``labelgate validate`` of a three-row file against the import floor, in one run.

    python benchmarks/coldstart.py [--pairs 11] [--file data_samples/oob_0_2_4.parquet]
                                   [--base REV]

The floor is a fresh Python process that imports what any run on a Parquet file must,
``pyarrow``, ``pyarrow.compute`` and ``numpy``, and nothing else. The two commands run in fresh
processes, alternating (floor, labelgate) ``--pairs`` times so that a busy moment of the machine
falls on both; printed: the median wall time and the median CPU time (user + system of the
child) of each, and labelgate / floor for both, the figures the goal (at most 1.5x) is judged by.
labelgate's output goes to a file, as in CI, not to a terminal. ``--base REV`` adds that revision's
``labelgate validate`` (a detached worktree of it, run from its ``src/``, compiled to bytecode
as this tree's is) to each round, so the revisions before and after a change are timed side by
side in one run, each against the same floor.
"""

from __future__ import annotations

import argparse
import statistics
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

from compare import measured  # noqa: E402
from revisions import worktree  # noqa: E402

FLOOR = "import pyarrow, pyarrow.compute, numpy"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--pairs", type=int, default=11)
    parser.add_argument("--file", default=str(HERE.parent / "data_samples" / "oob_0_2_4.parquet"))
    parser.add_argument("--base", help="a revision to time beside this tree's (git rev)")
    args = parser.parse_args()
    commands = {
        "floor (imports)": [sys.executable, "-c", FLOOR],
        "labelgate validate": [sys.executable, "-m", "labelgate", "validate", args.file, "-k", "4"],
    }
    if args.base:
        import compileall
        import tempfile

        src = worktree(args.base, Path(tempfile.gettempdir()) / f"labelgate-{args.base}") / "src"
        compileall.compile_dir(src / "labelgate", quiet=1)
        entry = f"import sys; sys.path.insert(0, {str(src)!r}); "
        entry += "from labelgate.cli import main; sys.exit(main(sys.argv[1:]))"
        commands[f"labelgate validate at {args.base}"] = [
            sys.executable,
            "-c",
            entry,
            "validate",
            args.file,
            "-k",
            "4",
        ]
    measured(commands["labelgate validate"])  # bytecode written, files in the page cache
    runs: dict[str, list[tuple[float, float]]] = {name: [] for name in commands}
    for _ in range(args.pairs):
        for name, argv in commands.items():
            m = measured(argv)
            runs[name].append((m.wall, m.cpu))
    medians = {
        name: (statistics.median(w for w, _ in r), statistics.median(c for _, c in r))
        for name, r in runs.items()
    }
    print(f"median of {args.pairs} alternating rounds    wall s   CPU s")
    for name, (wall, cpu) in medians.items():
        print(f"{name:36} {wall:7.3f} {cpu:7.3f}")
    floor_wall, floor_cpu = medians["floor (imports)"]
    for name, (wall, cpu) in medians.items():
        if name != "floor (imports)":
            print(f"{name} / floor: {wall / floor_wall:.2f}x wall, {cpu / floor_cpu:.2f}x CPU")


if __name__ == "__main__":
    main()
