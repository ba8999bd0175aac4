"""labelgate's validate of training shards against the formats' own readers iterating them.

    python benchmarks/mds_litdata.py [--samples 20000] [--image-kb 30] [--dir /tmp/labelgate-shards]
                                [--repeat 3] [--formats mds litdata]

Writes (once per size) an MDS dataset (tests/mdswrite.py's writer, held byte-identical to
streaming's ``MDSWriter`` by tests/test_mds_litdata.py; 64 MiB shards) and a LitData one (litdata's
``BinaryWriter``, what ``optimize``'s workers write with; 64 MB chunks), each of ``--samples``
samples: ``image`` random bytes of ``--image-kb`` KB and an int ``label`` in [0, 10), one sample
labelled 10 (the planted fault). Then, each in a fresh process, best of ``--repeat``:

- MDS, own reader:      ``streaming.StreamingDataset(local=DIR, shuffle=False)`` iterated, each
                        sample's ``label`` taken (the iteration any training loop pays);
- LitData, own reader:  ``litdata.StreamingDataset(DIR)`` iterated the same way;
- labelgate:            ``labelgate validate DIR --classes 10 --format json``, the whole run.

labelgate must name the planted sample (LG004) and nothing else, or the run stops. Printed:
seconds, CPU seconds and the ratio labelgate / own reader. ``streaming`` is not in the
dev extra (docs/formats.md says why): where it cannot be imported the MDS comparison is skipped
with a line saying so. The machine may be shared: best-of-N figures, comparable within one run.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
from pathlib import Path

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


def best(argv: list[str], repeat: int) -> tuple[float, float, str]:
    """Best of ``repeat`` fresh runs: wall and CPU seconds, stdout. (The peak RSS ``wait4``
    gives a child starts from this process's at the fork, which wrote the data: not shown.)"""
    runs = [measured(argv) for _ in range(repeat)]
    m = min(runs, key=lambda r: r.wall)
    return m.wall, m.cpu, m.stdout


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--samples", type=int, default=20_000)
    parser.add_argument("--image-kb", type=int, default=30)
    parser.add_argument("--dir", type=Path, default=Path("/tmp/labelgate-shards"))
    parser.add_argument("--repeat", type=int, default=3)
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
        lg = best([*validate, "--classes", str(K), "--format", "json"], args.repeat)
        doc = json.loads(lg[2])
        found = {f["code"]: [e["row"] for e in f["examples"]] for f in doc["findings"]}
        errors = {c for c, f in found.items() if c != "LG013"}
        if errors != {"LG004"} or found["LG004"] != [args.samples - 3]:
            raise SystemExit(f"labelgate found {found}, not the planted sample")
        print(f"  labelgate validate  {lg[0]:7.2f} s  cpu {lg[1]:7.2f} s")
        try:
            own = best([sys.executable, "-c", OWN[fmt], str(folder)], args.repeat)
        except SystemExit as exc:
            print(f"  own reader          not run: {str(exc).splitlines()[-1][:200]}")
            continue
        print(f"  own iteration       {own[0]:7.2f} s  cpu {own[1]:7.2f} s")
        print(f"  ratio labelgate / own: {lg[0] / own[0]:.3f} (wall), {lg[1] / own[1]:.3f} (cpu)")
    print(f"\nload average after: {os.getloadavg()}")


if __name__ == "__main__":
    main()
