"""Family and first-line accuracy of `labelgate triage` on the fixture logs, and its throughput.

    python benchmarks/triage_accuracy.py

Reads tests/fixtures/triage/SOURCES.tsv (the expected family and first error line of each public
log) and, where present beside the checkout, ../shared/reference/cuda-h200-torch2.11; prints each
verdict, the accuracy per family, and the throughput on 256 MiB of generated training-log lines.
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

from labelgate.triage import triage_stream  # noqa: E402

FIXTURES = ROOT / "tests" / "fixtures" / "triage"


def cases() -> list[tuple[str, Path, str | None, int | None]]:
    out = []
    with (FIXTURES / "SOURCES.tsv").open(newline="") as f:
        for row in csv.DictReader(f, delimiter="\t"):
            out.append(("public", FIXTURES / row["file"], row["family"], int(row["first_line"])))
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
    right: Counter[str] = Counter()
    total: Counter[str] = Counter()
    print(f"{'set':<15} {'log':<40} {'expected':<20} {'found':<20} first line")
    for kind, path, family, line in cases():
        with path.open("rb") as f:
            t = triage_stream(f)
        found_line = t.first_error["line"] if t.first_error else None
        ok = t.family == family and found_line == line
        key = str(family)
        total[key] += 1
        right[key] += ok
        mark = "" if ok else "  <- wrong"
        print(
            f"{kind:<15} {path.name:<40} {family!s:<20} {t.family!s:<20} {found_line} (expected {line}){mark}"
        )
    print()
    for family in sorted(total):
        print(f"{family:<20} {right[family]}/{total[family]}")
    print(f"{'all':<20} {sum(right.values())}/{sum(total.values())}")
    print(f"throughput: {throughput():.0f} MiB/s on short training-log lines")


if __name__ == "__main__":
    main()
