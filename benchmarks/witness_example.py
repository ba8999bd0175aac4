"""Write the worked example of docs/witness.md: three sources of a 4-class label file, one of
them permuted, and a trusted model's out-of-sample logits on every row.

    python benchmarks/witness_example.py OUT_DIR

Writes OUT_DIR/data.parquet (id, label, source), OUT_DIR/pred.parquet (id, logit_0..logit_3,
in another row order) and OUT_DIR/classes.txt (cat, dog, bird, fish); and the MNLI case:
OUT_DIR/mnli/ with mnli.parquet (glue/mnli's order: entailment, neutral, contradiction),
classes.txt, config.json (an id2label of CONTRADICTION, NEUTRAL, ENTAILMENT, as
roberta-large-mnli's) and pred.npy (that model's predicted classes, in its own indices, 90% right).
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
    mnli(out / "mnli")


def mnli(out: Path) -> None:
    import json

    import numpy as np
    import pyarrow as pa
    import pyarrow.parquet as pq

    out.mkdir(parents=True, exist_ok=True)
    rng = np.random.default_rng(0)
    label = rng.integers(0, 3, 900)
    model_index = 2 - label  # the model's index of each row's class
    wrong = rng.random(len(label)) < 0.1
    model_index[wrong] = rng.integers(0, 3, int(wrong.sum()))
    pq.write_table(pa.table({"label": label}), out / "mnli.parquet")
    np.save(out / "pred.npy", model_index)
    (out / "classes.txt").write_text("entailment\nneutral\ncontradiction\n")
    config = {"id2label": {"0": "CONTRADICTION", "1": "NEUTRAL", "2": "ENTAILMENT"}}
    (out / "config.json").write_text(json.dumps(config, indent=2) + "\n")
    print(f"wrote {out}/mnli.parquet, pred.npy, classes.txt, config.json")


if __name__ == "__main__":
    main()
