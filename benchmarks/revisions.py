"""labelgate at two code revisions on the same file, in one run: did a change cost speed or memory?

    python benchmarks/revisions.py --base REV [--rows 10000000 100000000] [--repeat 5]

The file is ``benchmarks/compare.py``'s (id, label, source, label_name; zstd; 1M-row groups).
The base revision is checked out into a temporary git worktree and run from its ``src/``; the two
revisions run alternately, ``--repeat`` times each, in fresh processes, with and without the
duplicate-id check (LG014). Printed: best wall time and peak RSS of each, and head / base.
The JSON reports of both revisions must agree on counts and findings, or the run stops.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
from pathlib import Path

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
sys.path.insert(0, str(HERE))

from compare import K, run  # noqa: E402


def worktree(rev: str, where: Path) -> Path:
    """A checkout of ``rev`` at ``where`` (a detached worktree of this repository)."""
    if not where.exists():
        subprocess.run(
            ["git", "-C", str(ROOT), "worktree", "add", "--detach", str(where), rev],
            check=True,
            capture_output=True,
        )
    return where


def command(src: Path, path: Path, schema: Path | None) -> list[str]:
    argv = [sys.executable, "-c", f"import sys; sys.path.insert(0, {str(src)!r}); "]
    argv[-1] += "from labelgate.cli import main; sys.exit(main(sys.argv[1:]))"
    argv += ["validate", str(path), "--classes", str(K), "--format", "json", "--no-progress"]
    return argv + (["--schema", str(schema)] if schema else [])


def same(a: str, b: str) -> bool:
    """The two reports agree on what they found (not on versions or revisions)."""

    def core(text: str) -> object:
        doc = json.loads(text)
        return doc["counts"], [(f["code"], f["count"]) for f in doc["findings"]]

    return core(a) == core(b)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--base", required=True, help="the revision to compare with (git rev)")
    parser.add_argument("--rows", type=int, nargs="+", default=[10_000_000, 100_000_000])
    parser.add_argument("--repeat", type=int, default=5)
    parser.add_argument(
        "--id-order",
        default="sorted",
        choices=("sorted", "local", "shuffled", "string", "uuid"),
        help="the ids of the file, as benchmarks/compare.py writes them",
    )
    parser.add_argument("--dir", default="/tmp/labelgate-bench")
    args = parser.parse_args()
    folder = Path(args.dir)
    folder.mkdir(parents=True, exist_ok=True)
    base_src = worktree(args.base, Path(tempfile.gettempdir()) / f"labelgate-{args.base}") / "src"
    no_ids = folder / "no_duplicate_id_check.yaml"
    no_ids.write_text(f'num_classes: {K}\nseverity:\n  LG014: "off"\n')
    print(f"base {args.base} ({base_src}) against the working tree; best of {args.repeat}")
    for rows in args.rows:
        path = folder / f"revisions_{rows}_{args.id_order}.parquet"
        if not path.exists():
            subprocess.run(
                [
                    sys.executable,
                    str(HERE / "compare.py"),
                    "--make",
                    str(path),
                    str(rows),
                    "default",
                    args.id_order,
                ],
                check=True,
            )
        for label, schema in (("full", None), ("no LG014", no_ids)):
            best: dict[str, tuple[float, float]] = {}
            reports: dict[str, str] = {}
            for _ in range(args.repeat):
                for name, src in (("base", base_src), ("head", ROOT / "src")):
                    wall, rss, out = run(command(src, path, schema))
                    reports[name] = out
                    old = best.get(name, (float("inf"), 0.0))
                    best[name] = (min(old[0], wall), max(old[1], rss))
            if not same(reports["base"], reports["head"]):
                raise SystemExit(f"{rows} rows, {label}: the two revisions' reports differ")
            (bw, br), (hw, hr) = best["base"], best["head"]
            print(
                f"{rows:>12,} rows {label:>9}: base {bw:6.2f} s {br:6.0f} MB | "
                f"head {hw:6.2f} s {hr:6.0f} MB | head/base {hw / bw:.3f}x time"
            )


if __name__ == "__main__":
    os.environ.setdefault("PYTHONHASHSEED", "0")
    main()
