"""labelgate's validate of training shards against the formats' own readers iterating them.

    python benchmarks/mds_litdata.py [--samples 20000] [--image-kb 30] [--dir /tmp/labelgate-shards]
                                [--repeat 5] [--formats mds litdata]

Writes (once per size) an MDS dataset (tests/mdswrite.py's writer, held byte-identical to
streaming's ``MDSWriter`` by tests/test_mds_litdata.py; 64 MiB shards) and a LitData one (litdata's
``BinaryWriter``, what ``optimize``'s workers write with; 64 MB chunks), each of ``--samples``
samples: ``image`` random bytes of ``--image-kb`` KB and an int ``label`` in [0, 10), one sample
labelled 10 (the planted fault). Then, each in a fresh process, labelgate and the own reader
alternating, ``--repeat`` runs each, medians of wall and CPU time (user + system of the child):

- MDS, own reader:      ``streaming.StreamingDataset(local=DIR, shuffle=False)`` iterated, each
                        sample's ``label`` taken (the iteration any training loop pays);
- LitData, own reader:  ``litdata.StreamingDataset(DIR)`` iterated the same way;
- labelgate:            ``labelgate validate DIR --classes 10 --format json``, the whole run.

labelgate must name the planted sample (LG004) and nothing else, or the run stops. Printed:
seconds, CPU seconds and the ratio labelgate / own reader. ``streaming`` is not in the
dev extra (docs/formats.md says why): where it cannot be imported the MDS comparison is skipped
with a line saying so. The goal is a ratio at or under 0.5; figures are comparable within one run.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import sys
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
sys.path.insert(0, str(HERE.parent / "tests"))

from compare import measured  # noqa: E402

K = 10
SHARD = 1 << 26

OWN = {
    "mds": (
        "from streaming import StreamingDataset\n"
        "import sys\n"
        "ds = StreamingDataset(local=sys.argv[1], shuffle=False, batch_size=1)\n"
        "print(sum(int(s['label']) for s in ds))\n"
    ),
    "litdata": (
        "from litdata import StreamingDataset\n"
        "import sys\n"
        "ds = StreamingDataset(sys.argv[1])\n"
        "print(sum(int(s['label']) for s in ds))\n"
    ),
}


def _labels(n: int) -> list[int]:
    labels = [(i * 7) % K for i in range(n)]
    labels[n - 3] = K  # the planted fault: named by labelgate, nothing else
    return labels


def write_mds(folder: Path, n: int, kb: int) -> None:
    from mdswrite import write_mds as write

    per = max(1, SHARD // (kb * 1024 + 32))
    labels = _labels(n)
    shards = (
        [{"image": os.urandom(kb * 1024), "label": labels[i]} for i in range(s, min(n, s + per))]
        for s in range(0, n, per)
    )
    write(folder, {"image": "bytes", "label": "int"}, shards)  # type: ignore[arg-type]


def write_litdata(folder: Path, n: int, kb: int) -> None:
    from litdata.streaming.writer import BinaryWriter

    writer = BinaryWriter(str(folder), chunk_bytes=SHARD)
    for i, label in enumerate(_labels(n)):
        writer[i] = {"image": os.urandom(kb * 1024), "label": label}
    writer.done()
    writer.merge()


def alternating(lg: list[str], own: list[str] | None, repeat: int) -> tuple[Any, Any]:
    """``repeat`` fresh runs of each command, one after the other (load reaches both alike):
    each one's median wall and CPU seconds, peak RSS in MB, and last stdout (``own``: ``None``
    where the own reader cannot run, with why)."""
    got: dict[str, list[Any]] = {"lg": [], "own": []}
    why = None
    for _ in range(repeat):
        got["lg"].append(measured(lg))
        if own is not None and why is None:
            try:
                ran = measured(own)
            except SystemExit as exc:
                why = str(exc).splitlines()[-1][:200]
                continue
            if ran.stdout.strip():
                got["own"].append(ran)
            else:  # exit 1 without a sum: the library did not import
                why = "it printed no sum (is the library importable? exit 1)"

    def median(runs: list[Any]) -> Any:
        if not runs:
            return None
        return (
            statistics.median(r.wall for r in runs),
            statistics.median(r.cpu for r in runs),
            statistics.median(r.rss for r in runs),
            runs[-1].stdout,
        )

    return median(got["lg"]), median(got["own"]) or why


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--samples", type=int, default=20_000)
    parser.add_argument("--image-kb", type=int, default=30)
    parser.add_argument("--dir", type=Path, default=Path("/tmp/labelgate-shards"))
    parser.add_argument("--repeat", type=int, default=5)
    parser.add_argument("--formats", nargs="+", default=["mds", "litdata"])
    args = parser.parse_args()
    print(f"load average before: {os.getloadavg()}")
    for fmt in args.formats:
        folder = args.dir / f"{fmt}-{args.samples}-{args.image_kb}kb"
        if not (folder / "index.json").exists():
            (write_mds if fmt == "mds" else write_litdata)(folder, args.samples, args.image_kb)
        size = sum(f.stat().st_size for f in folder.iterdir()) / 1e6
        shards = len([f for f in folder.iterdir() if f.name != "index.json"])
        print(f"\n{fmt}: {args.samples:,} samples, {size:,.0f} MB in {shards} shards")
        validate = [sys.executable, "-m", "labelgate", "validate", str(folder)]
        own_argv = [sys.executable, "-c", OWN[fmt], str(folder)]
        lg, own = alternating(
            [*validate, "--classes", str(K), "--format", "json"], own_argv, args.repeat
        )
        doc = json.loads(lg[3])
        found = {f["code"]: [e["row"] for e in f["examples"]] for f in doc["findings"]}
        errors = {c for c, f in found.items() if c != "LG013"}
        if errors != {"LG004"} or found["LG004"] != [args.samples - 3]:
            raise SystemExit(f"labelgate found {found}, not the planted sample")
        print(f"  labelgate validate  {lg[0]:7.2f} s  cpu {lg[1]:7.2f} s  peak {lg[2]:6.0f} MB")
        if not isinstance(own, tuple):
            print(f"  own reader          not run: {own}")
            continue
        print(f"  own iteration       {own[0]:7.2f} s  cpu {own[1]:7.2f} s  peak {own[2]:6.0f} MB")
        w, c = lg[0] / own[0], lg[1] / own[1]
        print(
            f"  ratio labelgate / own: {w:.3f} (wall), {c:.3f} (cpu); goal 0.5: {w <= 0.5}, {c <= 0.5}"
        )
    print(f"\nload average after: {os.getloadavg()}")


if __name__ == "__main__":
    main()
