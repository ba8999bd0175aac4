"""Family and first-line accuracy of `labelgate triage` on the log corpus, and its throughput.

    python benchmarks/triage_accuracy.py

Reads tests/fixtures/triage/dev/SOURCES.tsv and tests/fixtures/triage/heldout/SOURCES.tsv (the
expected family, kind and first error line of each log, taken from a public issue thread) and the
logs recorded on an NVIDIA H200 in tests/fixtures/h200_reference; prints each verdict
and the accuracy of each set separately: the development half (the rules are written against it),
the held-out half (never tuned on: the honest figure) and the reference logs. Then the throughput
on 256 MiB of generated training-log lines.
"""

from __future__ import annotations

import csv
import io
import sys
import time
from collections import Counter
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "src"))
sys.path.insert(0, str(ROOT))

from tests.test_triage import REFERENCE, REFERENCE_CASES  # noqa: E402

from labelgate.commands.logs.triage import triage_stream  # noqa: E402

CORPUS = ROOT / "tests" / "fixtures" / "triage"


def cases() -> list[tuple[str, Path, str | None, int | None]]:
    out = []
    for split in ("dev", "heldout"):
        with (CORPUS / split / "SOURCES.tsv").open(newline="") as f:
            for row in csv.DictReader(f, delimiter="\t"):
                line = int(row["first_line"]) if row["first_line"] else None
                out.append((split, CORPUS / split / row["file"], row["family"] or None, line))
    if REFERENCE.is_dir():
        for name, (family, line) in REFERENCE_CASES.items():
            out.append(("H200 reference", REFERENCE / name, family, line))
    return out


def throughput(megabytes: int = 256) -> float:
    line = (
        b"2026-11-30 02:10:11 INFO step 1200 loss 0.4132 lr 3.0e-04 grad_norm 0.91 tokens/s 81234\n"
    )
    data = (
        line * (megabytes * 2**20 // len(line))
        + b"RuntimeError: CUDA out of memory. Tried to allocate 2 GiB\n"
    )
    start = time.perf_counter()
    triage_stream(io.BytesIO(data))
    return len(data) / 2**20 / (time.perf_counter() - start)


def main() -> None:
    right: Counter[tuple[str, str]] = Counter()
    total: Counter[tuple[str, str]] = Counter()
    print(f"{'set':<15} {'log':<40} {'expected':<20} {'found':<20} first line")
    for kind, path, family, line in cases():
        with path.open("rb") as f:
            t = triage_stream(f)
        found_line = t.first_error["line"] if t.first_error else None
        ok = t.family == family and found_line == line
        key = (kind, str(family))
        total[key] += 1
        right[key] += ok
        mark = "" if ok else "  <- wrong"
        print(
            f"{kind:<15} {path.name:<40} {family!s:<20} {t.family!s:<20} {found_line} (expected {line}){mark}"
        )
    for split in ("dev", "heldout", "H200 reference"):
        keys = sorted(k for k in total if k[0] == split)
        if not keys:
            continue
        print(f"\n{split}")
        for key in keys:
            print(f"  {key[1]:<20} {right[key]}/{total[key]}")
        n, r = sum(total[k] for k in keys), sum(right[k] for k in keys)
        print(f"  {'all':<20} {r}/{n} ({100 * r / n:.1f}%)")
    print(f"throughput: {throughput():.0f} MiB/s on short training-log lines")


if __name__ == "__main__":
    main()
