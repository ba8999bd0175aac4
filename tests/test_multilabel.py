"""Multi-hot targets (task: multilabel) against BCEWithLogitsLoss: labelgate flags exactly the rows
that are not K finite values in [0, 1], the rows for which some logit gives a negative loss."""

from __future__ import annotations

import json
import math
import tempfile
from pathlib import Path
from typing import Any

import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from labelgate import Contract
from labelgate.core.report import Report
from labelgate.run.validation import run

from .support.inproc import run_here

torch = pytest.importorskip("torch")

K = 3
value = st.sampled_from([0.0, 1.0, 0.0, 1.0, 0.25, -1.0, 2.0, 1.0000001, math.nan, math.inf, None])
row = st.one_of(
    st.lists(value, min_size=K, max_size=K),
    st.lists(value, min_size=0, max_size=K + 1),
)


def bce_can_go_negative(target: list[float]) -> bool:
    """Whether BCEWithLogitsLoss on this target is negative or not finite for some logit."""
    t = torch.tensor(target, dtype=torch.float64).expand(61, len(target))
    # the 61 logits -30..30, each given to every class, in one call
    x = torch.linspace(-30, 30, 61, dtype=torch.float64).unsqueeze(1).expand_as(t)
    loss = torch.nn.functional.binary_cross_entropy_with_logits(x, t, reduction="none")
    return bool((~torch.isfinite(loss)).any() or (loss < 0).any())


def report_of(rows: list[list[Any]], contract: Contract) -> Report:
    """The report on ``rows`` as a ``labels`` list column, every example kept."""
    with tempfile.TemporaryDirectory() as folder:
        path = Path(folder) / "labels.parquet"
        pq.write_table(pa.table({"labels": pa.array(rows, pa.list_(pa.float64()))}), path)
        return run([str(path)], contract, max_examples=0).report


@settings(max_examples=100, deadline=None)
@given(rows=st.lists(row, min_size=1, max_size=40))
def test_flagged_rows_are_exactly_the_rows_bce_misreads(rows: list[list[Any]]) -> None:
    contract = Contract(num_classes=K, task="multilabel", label_column="labels")
    report = report_of(rows, contract)
    flagged = {e.row for f in report.findings if f.code == "LG034" for e in f.examples}
    for i, target in enumerate(rows):
        if len(target) != K:
            assert i in flagged  # BCE raises on a shape mismatch in a batch
            continue
        blank = any(v is None for v in target)
        misread = blank or bce_can_go_negative([float(v) for v in target])  # type: ignore[arg-type]
        assert (i in flagged) == misread, (i, target)


def test_jsonl_with_uncertain_and_blank_labels(tmp_path: Path) -> None:
    rows = [[1, 0, 0], [0, -1, 1], [0, 0, 0], [1, None, 0], [0, 0, 1]] * 4
    path = tmp_path / "chexpert.jsonl"
    path.write_text("".join(json.dumps({"id": i, "labels": r}) + "\n" for i, r in enumerate(rows)))
    result = run_here(
        "validate", str(path), "--classes", "3", "--task", "multilabel", "--format", "json"
    )
    assert result.returncode == 1, result.stderr
    doc = json.loads(result.stdout)
    (lg034,) = [f for f in doc["findings"] if f["code"] == "LG034"]
    assert lg034["count"] == 8 and [e["id"] for e in lg034["examples"][:2]] == [1, 3]
    assert lg034["details"]["classes"] == {"1": 8}
    assert "below 0" in lg034["message"] and "blank" in lg034["message"]
    (lg035,) = [f for f in doc["findings"] if f["code"] == "LG035"]
    assert lg035["count"] == 4
    assert [c["count"] for c in doc["classes"]] == [4, 0, 4]  # positives of the usable rows
    assert any(f["code"] == "LG012" for f in doc["findings"])  # class 1 never positive


def test_multilabel_needs_a_list_column(tmp_path: Path) -> None:
    path = tmp_path / "a.parquet"
    pq.write_table(pa.table({"label": [0, 1]}), path)
    result = run_here("validate", str(path), "--classes", "2", "--task", "multilabel")
    assert result.returncode == 2 and "multilabel" in result.stderr


# -- one column per class, index lists, and fix's policies ------------------------------------

CHEX = "id,No Finding,Edema,Cardiomegaly\np1,1,,0\np2,0,-1,1\np3,,1,-1\np4,0,0,0\np5,0,1,0\n"
CHEX_COLUMNS = "No Finding,Edema,Cardiomegaly"


def test_one_column_per_class_names_each_bad_class(tmp_path: Path) -> None:
    path = tmp_path / "chex.csv"
    path.write_text(CHEX)
    r = run_here("validate", str(path), "--label-columns", CHEX_COLUMNS, "--format", "json")
    assert r.returncode == 1, r.stderr
    doc = json.loads(r.stdout)
    assert doc["contract"]["task"] == "multilabel" and doc["contract"]["num_classes"] == 3
    lg034 = next(f for f in doc["findings"] if f["code"] == "LG034")
    assert [e["id"] for e in lg034["examples"]] == ["p1", "p2", "p3"]
    assert lg034["details"]["classes"] == {"0": 1, "1": 2, "2": 1}
    assert "1 ('Edema'): 2" in lg034["message"]
    assert {c["name"]: c["count"] for c in doc["classes"]} == {
        "No Finding": 0,  # p1's row is rejected: its positive does not count
        "Edema": 1,
        "Cardiomegaly": 0,
    }


def test_columns_and_a_list_give_the_same_verdict(tmp_path: Path, real_world: Path) -> None:
    csv = real_world / "annotations" / "other" / "datumaro_kaggle_multilabel_ann.csv"
    report = run([str(csv)], Contract(label_columns=("dog", "cat", "person"))).report
    assert report.status == "pass"
    assert [(c["name"], c["count"]) for c in report.classes] == [
        ("dog", 3),
        ("cat", 3),
        ("person", 3),
    ]
    rows = [[1, 0, 0], [0, 1, 0], [0, 0, 1], [1, 1, 0], [1, 0, 1], [0, 1, 1]]
    listed = tmp_path / "l.parquet"
    pq.write_table(pa.table({"labels": pa.array(rows, pa.list_(pa.float64()))}), listed)
    other = run([str(listed)], Contract(num_classes=3, task="multilabel")).report
    assert [c["count"] for c in other.classes] == [c["count"] for c in report.classes]


def test_label_columns_refusals(tmp_path: Path) -> None:
    path = tmp_path / "chex.csv"
    path.write_text(CHEX)
    r = run_here("validate", str(path), "--label-columns", "Edema,Nope")
    assert r.returncode == 2 and "Nope not found" in r.stderr
    r = run_here("validate", str(path), "--label-columns", CHEX_COLUMNS, "--classes", "4")
    assert r.returncode == 2 and "3 columns for K=4" in r.stderr


index = st.sampled_from([0, 1, 2, 0, 1, 2, 3, -1, 0.5, None])


@settings(max_examples=100, deadline=None)
@given(rows=st.lists(st.lists(index, min_size=0, max_size=4), min_size=1, max_size=30))
def test_index_lists_flagged_exactly_where_scatter_fails(rows: list[list[Any]]) -> None:
    contract = Contract(num_classes=K, task="multilabel", label_encoding="indices")
    report = report_of(rows, contract)
    flagged = {e.row for f in report.findings if f.code == "LG034" for e in f.examples}
    for i, indices in enumerate(rows):
        try:  # the multi-hot row a collate function builds from the indices
            t = torch.tensor(indices, dtype=torch.float64)
            if not bool((t == t.floor()).all()):
                raise ValueError("not a class index")
            torch.zeros(K).scatter_(0, t.long(), 1.0)
            fails = False
        except (RuntimeError, TypeError, ValueError, IndexError):
            fails = True
        assert (i in flagged) == fails, (i, indices)
    empty = sum(1 for r in rows if r == [])
    info = [f for f in report.findings if f.code == "LG035"]
    assert (info[0].count if info else 0) == empty


@pytest.mark.parametrize(
    ("policy", "edema", "mask"),
    [("-1=0", [0, 0, 1, 0, 1], None), ("-1=1", [0, 1, 1, 0, 1], None),
     ("-1=ignore", [0, 0, 1, 0, 1], [1, 0, 1, 1, 1])],
)  # fmt: skip
def test_fix_policies_for_uncertain_and_blank(
    tmp_path: Path, policy: str, edema: list[int], mask: list[int] | None
) -> None:
    path = tmp_path / "chex.csv"
    path.write_text(CHEX)
    before = path.read_bytes()
    out = tmp_path / "fixed.parquet"
    r = run_here(
        "fix", str(path), "--label-columns", CHEX_COLUMNS, f"--map-value={policy}",
        "--map-value", "blank=0", "--out", str(out), "--format", "json",
    )  # fmt: skip
    assert r.returncode == 0, r.stderr
    log = json.loads(r.stdout)
    assert log["rows"] == {"in": 5, "fixed": 5, "quarantined": 0}
    assert log["after"]["status"] == "pass"
    table = pq.read_table(out).to_pydict()
    assert table["Edema"] == edema
    assert table["No Finding"] == [1, 0, 0, 0, 0]  # p3's blank became 0
    assert table.get("Edema_mask") == (None if mask is None else [float(m) for m in mask])
    assert path.read_bytes() == before


def test_fix_quarantines_what_no_policy_covers(tmp_path: Path) -> None:
    path = tmp_path / "m.jsonl"
    path.write_text('{"labels": [0, 1, -1]}\n{"labels": [2, 1, 0]}\n{"labels": [1, 0, 0]}\n')
    out, q = tmp_path / "f.parquet", tmp_path / "q.parquet"
    r = run_here(
        "fix", str(path), "--classes", "3", "--task", "multilabel", "--map-value=-1=0",
        "--out", str(out),
    )  # fmt: skip
    assert r.returncode == 2 and "LG034" in r.stderr and not out.exists()
    r = run_here(
        "fix", str(path), "--classes", "3", "--task", "multilabel", "--map-value=-1=0",
        "--out", str(out), "--quarantine", str(q),
    )  # fmt: skip
    assert r.returncode == 0, r.stderr
    assert pq.read_table(out).column("labels").to_pylist() == [[0, 1, 0], [1, 0, 0]]
    assert pq.read_table(q).column("labelgate_row").to_pylist() == [1]
