"""Write the worked example of docs/witness.md: three sources of a 4-class label file, one of
them permuted, and a trusted model's out-of-sample logits on every row.

    python benchmarks/witness_example.py OUT_DIR

Writes OUT_DIR/data.parquet (id, label, source), OUT_DIR/pred.parquet (id, logit_0..logit_3,
in another row order) and OUT_DIR/classes.txt (cat, dog, bird, fish).
"""

from __future__ import annotations

import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from tests.witness_world import make_case, make_world, write_case  # noqa: E402


def main() -> None:
    out = Path(sys.argv[1])
    out.mkdir(parents=True, exist_ok=True)
    faults = {"studio_a": "none", "studio_b": "none", "vendor_b": "permutation"}
    case = make_case(make_world(4, 5), faults, rows=400, noise=0.05, seed=4)
    write_case(case, out)
    (out / "classes.txt").write_text("cat\ndog\nbird\nfish\n")
    print(f"wrote {out}/data.parquet, {out}/pred.parquet, {out}/classes.txt")


if __name__ == "__main__":
    main()
