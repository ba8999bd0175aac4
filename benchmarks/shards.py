"""labelgate on WebDataset and TFRecord shards against the formats' own readers, in one run.

    python benchmarks/shards.py [--shards 20] [--samples 20000] [--kb 30] [--dir /tmp/labelgate-shards]
                                [--repeat 5] [--walk]

Writes (once) --shards WebDataset tar shards with webdataset's ``ShardWriter`` and as many TFRecord
files with the ``tfrecord`` package's writer: --samples samples in all, each an image of --kb KB
of random bytes and a class index in 0..9, three planted faults (a 10, a -1 and a 12). Then, each
in a fresh process:

- webdataset: ``webdataset.WebDataset(urls, shardshuffle=False)`` iterated without decoding
              (every sample's key counted): the floor of any reader of the tars;
- labelgate (wds): the full ``labelgate validate FOLDER --classes 10 --format json``;
- tfrecord:   ``tfrecord.tfrecord_loader`` over every file (the package's own reader: each Example
              parsed, all features, CRCs not checked);
- labelgate (tfrecord): the full validate of the TFRecord folder (both CRCs checked, the label
              feature alone decoded).

Both labelgate reports must name the three planted rows, and each reader must count every sample,
or the run stops. Printed: wall and CPU time (user + system), and each labelgate time as a ratio
to its format's own reader in the same run: medians of --repeat rounds (on a shared machine the CPU
ratio is the steadier), peak RSS, and whether each ratio meets its goal (WebDataset: 0.3, TFRecord:
0.5). Figures are comparable only within one run, on one machine.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import random
import statistics
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from compare import measured

K = 10


def faults(samples: int) -> dict[int, int]:
    """Sample index -> planted label: a K, a -1 and a 12."""
    return {7: K, samples // 2: -1, samples - 3: 12}


WDS = """
import sys, json, webdataset as wds
urls = sorted(sys.argv[1:])
n = sum(1 for _ in wds.WebDataset(urls, shardshuffle=False))
print(json.dumps({"samples": n}))
"""

TFRECORD = """
import sys, json, tfrecord
n = 0
for path in sorted(sys.argv[1:]):
    for _ in tfrecord.tfrecord_loader(path, None):
        n += 1
print(json.dumps({"samples": n}))
"""


def make(folder: Path, shards: int, samples: int, kb: int) -> tuple[Path, Path]:
    """The tar and TFRecord folders, written once."""
    import tfrecord
    import webdataset as wds

    tars, records = folder / "wds", folder / "tfrecord"
    done = folder / "done.json"
    wanted = {"shards": shards, "samples": samples, "kb": kb}
    if done.exists() and json.loads(done.read_text()) == wanted:
        return tars, records
    for sub in (tars, records):
        sub.mkdir(parents=True, exist_ok=True)
        for old in sub.iterdir():
            old.unlink()
    rng = random.Random(0)
    planted = faults(samples)
    per = -(-samples // shards)
    image = os.urandom(kb * 1024)
    with wds.ShardWriter(str(tars / "train-%06d.tar"), maxcount=per, verbose=0) as w:
        for i in range(samples):
            w.write({"__key__": f"s{i:08d}", "jpg": image, "cls": planted.get(i, rng.randrange(K))})
    rng = random.Random(0)
    for s in range(shards):
        writer = tfrecord.TFRecordWriter(str(records / f"train-{s:05d}-of-{shards:05d}"))
        for i in range(s * per, min(samples, (s + 1) * per)):
            label = planted.get(i, rng.randrange(K))
            writer.write({"image/encoded": (image, "byte"), "image/class/label": (label, "int")})
        writer.close()
    done.write_text(json.dumps(wanted))
    return tars, records


def walks(urls: list[str]) -> None:
    """CPU seconds of three walks of the tars in this process, the files read once before: labelgate's
    header walk, tarfile's random-access walk (seeking past each member too) and the streaming
    read of every member's bytes that webdataset does."""
    import tarfile
    import time

    from labelgate.readers.shards.tarwalk import members

    def ours() -> int:
        return sum(1 for u in urls for _ in members(Path(u), u, lambda f: f.endswith(".cls")))

    def seeking() -> int:
        n = 0
        for u in urls:
            with tarfile.open(u, "r:") as tar:
                while (info := tar.next()) is not None:
                    tar.members = []
                    if info.name.endswith(".cls"):
                        tar.extractfile(info).read()  # type: ignore[union-attr]
                    n += 1
        return n

    def streaming() -> int:
        n = 0
        for u in urls:
            with tarfile.open(u, "r|") as tar:
                for info in tar:
                    tar.extractfile(info).read()  # type: ignore[union-attr]
                    n += 1
        return n

    for u in urls:  # every page in the cache first: the walks then pay no disk read
        with Path(u).open("rb") as f:
            while f.read(1 << 24):
                pass
    for name, walk in (
        ("header walk (pread)", ours),
        ("tarfile, seeking", seeking),
        ("tarfile, streaming", streaming),
    ):
        start = time.process_time()
        n = walk()
        print(f"{name:22} {time.process_time() - start:7.2f} s CPU  ({n:,} members)")


def named(report: str) -> set[str]:
    doc = json.loads(report)
    return {
        str(e["id"])
        for f in doc["findings"]
        if f["code"] in ("LG004", "LG005")
        for e in f["examples"]
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--shards", type=int, default=20)
    parser.add_argument("--samples", type=int, default=20_000)
    parser.add_argument("--kb", type=int, default=30)
    parser.add_argument("--dir", type=Path, default=Path("/tmp/labelgate-shards"))
    parser.add_argument("--repeat", type=int, default=5)
    parser.add_argument("--walk", action="store_true", help="also time three walks of the tars")
    args = parser.parse_args()
    tars, records = make(args.dir, args.shards, args.samples, args.kb)
    size = sum(p.stat().st_size for p in tars.iterdir()) / 1e6
    print(
        f"{args.shards} shards, {args.samples:,} samples, {size:,.0f} MB of tars; "
        f"{platform.python_version()}, {os.cpu_count()} cores"
    )
    urls = [str(p) for p in sorted(tars.glob("*.tar"))]
    if args.walk:
        walks(urls)
    files = [str(p) for p in sorted(records.iterdir())]
    lg = [sys.executable, "-m", "labelgate", "validate"]
    runs = {
        "webdataset": [sys.executable, "-c", WDS, *urls],
        "labelgate (wds)": [*lg, str(tars), "--classes", str(K), "--format", "json"],
        "tfrecord": [sys.executable, "-c", TFRECORD, *files],
        "labelgate (tfrecord)": [*lg, str(records), "--classes", str(K), "--format", "json"],
    }
    times: dict[str, list[tuple[float, float]]] = {name: [] for name in runs}
    peaks: dict[str, list[float]] = {}
    for _ in range(args.repeat):  # each command after the other, round after round
        for name, argv in runs.items():
            m = measured(argv)
            if name.startswith("labelgate"):
                found = named(m.stdout)
                if len(found) != len(faults(args.samples)):
                    raise SystemExit(f"{name} named {sorted(found)}, not the 3 planted rows")
            elif json.loads(m.stdout)["samples"] != args.samples:
                raise SystemExit(f"{name} counted {m.stdout.strip()}, not {args.samples}")
            times[name].append((m.wall, m.cpu))
            peaks.setdefault(name, []).append(m.rss)
    best = {  # the median of the runs, wall and CPU each (the machine may be shared)
        name: (statistics.median(w for w, _ in got), statistics.median(c for _, c in got))
        for name, got in times.items()
    }
    for name, (wall, cpu) in best.items():
        own = "webdataset" if "wds" in name else "tfrecord" if "tfrecord)" in name else None
        ratio = ""
        if own:
            goal = 0.3 if own == "webdataset" else 0.5
            w, c = wall / best[own][0], cpu / best[own][1]
            ratio = (
                f"  {w:.2f}x {own} (CPU {c:.2f}x; goal {goal}: wall {w <= goal}, CPU {c <= goal})"
            )
        peak = statistics.median(peaks[name])
        print(f"{name:22} {wall:7.2f} s wall {cpu:7.2f} s CPU {peak:6.0f} MB peak{ratio}")


if __name__ == "__main__":
    main()
