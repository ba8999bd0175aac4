"""Row groups scanned as independent pieces, merged in order, against the sequential scan.

The sequential scan is the plain path (itself held to a row-by-row model in
test_reference_model.py); the pieces must give the same report, field for field, whatever the
row groups, files, threads, dtypes and faults.
"""

from __future__ import annotations

import json
import tempfile
from pathlib import Path
from typing import Any

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import labelgate.scan.kernel as pieces
import labelgate.scan.runner as runner
from labelgate import Batching, Contract
from labelgate.inputs.dataset import open_dataset
from labelgate.run.validation import validate_in_context
from labelgate.scan.kernel import scan_piece
from labelgate.scan.partial import Partial, merge
from labelgate.scan.plan import Spec, plan_pieces, supported

pytestmark = pytest.mark.slow  # subprocesses, engines or clusters: the full tier only

NAMES = ["cat", "dog", "bird", "fish", "frog"]


@st.composite
def datasets(draw: st.DrawFn) -> dict[str, Any]:
    k = draw(st.integers(min_value=1, max_value=5))
    ignore = draw(st.sampled_from([-100, -1, 0, k - 1, 255]))
    n = draw(st.integers(min_value=1, max_value=120))
    value = st.one_of(
        st.none(), st.sampled_from([ignore, -1, -7, 0, k - 1, k, k + 3, 90]), st.integers(0, k - 1)
    )
    labels = draw(st.lists(value, min_size=n, max_size=n))
    sources = draw(st.lists(st.sampled_from(["a", "b", "c", None]), min_size=n, max_size=n))
    shift = draw(st.sampled_from([{}, {"b": 1}, {"c": -1}]))
    names: list[str | None] = []
    for v, s in zip(labels, sources, strict=True):
        if v is None or not (0 <= v - shift.get(s, 0) < k) or draw(st.integers(0, 19)) == 0:
            names.append(None if v is None or draw(st.booleans()) else "zebra")
        else:
            names.append(NAMES[v - shift.get(s, 0)])
    ids = draw(st.sampled_from(["increasing", "shuffled", "repeated", "text", "none"]))
    return {
        "k": k,
        "ignore": ignore,
        "labels": labels,
        "sources": sources,
        "names": names,
        "ids": ids,
        "dtype": draw(st.sampled_from(["int64", "int32", "int16"])),
        "size": draw(st.integers(min_value=1, max_value=9)),
        "drop_last": draw(st.booleans()),
        "group": draw(st.integers(min_value=1, max_value=40)),
        "files": draw(st.integers(min_value=1, max_value=4)),
        "columns": draw(st.sampled_from(["all", "no source", "no name", "label only"])),
        "examples": draw(st.sampled_from([0, 1, 3, 20])),
        "seed": draw(st.integers(0, 2**16)),
        "slice": draw(st.integers(min_value=1, max_value=16)),
    }


def write(case: dict[str, Any], folder: Path) -> None:
    labels, n = case["labels"], len(case["labels"])
    rng = np.random.default_rng(case["seed"])
    if case["ids"] == "shuffled":
        ids: list[Any] = rng.permutation(n).tolist()
    elif case["ids"] == "repeated":
        ids = rng.integers(0, max(n // 2, 1), n).tolist()
    elif case["ids"] == "text":
        ids = [f"img-{i:05d}" for i in rng.permutation(n).tolist()]
    else:
        ids = list(range(n))
    files = case["files"]
    cuts = [round(i * n / files) for i in range(files + 1)]
    for f in range(files):
        lo, hi = cuts[f], cuts[f + 1]
        columns: dict[str, pa.Array] = {
            "label": pa.array(labels[lo:hi], getattr(pa, case["dtype"])())
        }
        if case["ids"] != "none":
            columns["id"] = pa.array(ids[lo:hi])
        if case["columns"] in ("all", "no name"):
            columns["source"] = pa.array(case["sources"][lo:hi], pa.string())
        if case["columns"] in ("all", "no source"):
            columns["label_name"] = pa.array(case["names"][lo:hi], pa.string())
        pq.write_table(
            pa.table(columns), folder / f"part-{f:02d}.parquet", row_group_size=case["group"]
        )


def contract_for(case: dict[str, Any]) -> Contract:
    return Contract(
        num_classes=case["k"],
        ignore_index=case["ignore"],
        batching=Batching(size=case["size"], drop_last=case["drop_last"]),
    )


def report_dict(folder: Path, contract: Contract, **kw: Any) -> dict[str, Any]:
    report, _ = validate_in_context([str(folder)], contract, **kw)
    doc = report.to_dict()
    doc.pop("environment")
    return json.loads(json.dumps(doc))


@settings(
    max_examples=150, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(case=datasets())
def test_pieces_give_the_sequential_report(case: dict[str, Any], tmp_path_factory: Any) -> None:
    folder = Path(tmp_path_factory.mktemp("ds"))
    write(case, folder)
    contract = contract_for(case)
    data = open_dataset([str(folder)], contract)
    assert supported(data) is None
    m = case["examples"]
    sequential = report_dict(folder, contract, max_examples=m, in_pieces=False)
    one = report_dict(folder, contract, max_examples=m, threads=1)
    saved = pieces.SLICE_ROWS
    pieces.SLICE_ROWS = case["slice"]  # row groups decoded in several slices
    try:
        two = report_dict(folder, contract, max_examples=m, threads=3)
    finally:
        pieces.SLICE_ROWS = saved
    assert one == sequential
    assert two == sequential


def test_batches_cross_file_and_row_group_edges(tmp_path: Path) -> None:
    """An all-ignored batch split over two files, and a bad label in a file's last row."""
    pq.write_table(
        pa.table({"label": [0, 1, 2, -100, -100]}), tmp_path / "a.parquet", row_group_size=2
    )
    pq.write_table(
        pa.table({"label": [-100, -100, -100, 3, 9]}), tmp_path / "b.parquet", row_group_size=3
    )
    report, _ = validate_in_context(
        [str(tmp_path)], Contract(num_classes=4, batching=Batching(size=4)), threads=2
    )
    codes = {f.code: f for f in report.findings}
    assert report.batches["failing"] == [1, 2]  # rows 4..7 all ignored; row 9 is 9
    assert [e.row for e in codes["LG007"].examples] == [4]
    assert [(e.row, e.batch, e.value) for e in codes["LG004"].examples] == [(9, 2, 9)]
    assert report.counts == {"rows": 10, "usable": 4, "ignored": 5, "rejected": 1}


def _pieces_of(tmp_path: Path, rows: int, group: int) -> tuple[list[Partial], Spec]:
    labels = np.random.default_rng(1).integers(-2, 6, rows)
    pq.write_table(
        pa.table({"label": labels, "source": np.array(["x", "y"])[labels % 2]}),
        tmp_path / "d.parquet",
        row_group_size=group,
    )
    data = open_dataset([str(tmp_path / "d.parquet")], Contract(num_classes=4, ignore_index=-1))
    meta = [pq.read_metadata(tmp_path / "d.parquet")]
    spec = Spec(4, -1, 8, "label", source="source", max_examples=5)
    return [scan_piece(p, spec, meta[0]) for p in plan_pieces(data, meta)], spec


def _plain(p: Partial) -> dict[str, Any]:
    return {
        "rows": p.rows,
        "joint": p.joint,
        "hits": {
            c: (h.count, dict(h.by_source), h.batches.tolist(), h.examples)
            for c, h in p.hits.items()
        },
        "batch": [a.tolist() for a in p.batch],
    }


def test_merge_is_associative(tmp_path: Path) -> None:
    parts, _ = _pieces_of(tmp_path, 500, 37)
    left = merge([merge(parts[:5]), merge(parts[5:9]), merge(parts[9:])])
    right = merge([parts[0], merge([merge(parts[1:3]), merge(parts[3:])])])
    assert _plain(left) == _plain(right) == _plain(merge(parts))
    assert merge(parts).rows == 500


def test_merge_refuses_pieces_out_of_order(tmp_path: Path) -> None:
    parts, _ = _pieces_of(tmp_path, 200, 50)
    with pytest.raises(ValueError, match="not contiguous"):
        merge([parts[0], parts[2]])
    with pytest.raises(ValueError, match="not contiguous"):
        merge([parts[1], parts[0]])


def test_text_and_shuffled_inputs_take_the_sequential_scan(tmp_path: Path) -> None:
    (tmp_path / "l.csv").write_text("label\n0\n1\n")
    assert supported(open_dataset([str(tmp_path / "l.csv")], Contract(num_classes=2))) is not None
    pq.write_table(pa.table({"label": [0.0, 1.0]}), tmp_path / "f.parquet")
    reason = supported(open_dataset([str(tmp_path / "f.parquet")], Contract(num_classes=2)))
    assert reason is not None and "double" in reason


def test_duplicate_id_check_off_reads_ids_only_for_examples(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    path = tmp_path / "d.parquet"
    pq.write_table(
        pa.table({"id": [5, 5, 7, 8, 9, 9], "label": [0, 1, 4, 1, 0, 2]}), path, row_group_size=2
    )
    seen: list[bool] = []
    real = pieces.scan_piece

    def spy(
        piece: Any, spec: Spec, meta: Any = None, keys: Any = None, witness: Any = None
    ) -> Partial:
        seen.append(spec.read_ids)
        return real(piece, spec, meta, keys, witness)

    monkeypatch.setattr(runner, "scan_piece", spy)
    on, _ = validate_in_context([str(path)], Contract(num_classes=4), threads=1)
    assert "LG014" in {f.code for f in on.findings} and all(seen)
    seen.clear()
    off_contract = Contract(num_classes=4, severity={"LG014": "off"})
    off, _ = validate_in_context([str(path)], off_contract, threads=1)
    assert "LG014" not in {f.code for f in off.findings} and seen and not any(seen)
    (lg004,) = [f for f in off.findings if f.code == "LG004"]
    assert [(e.row, e.id) for e in lg004.examples] == [(2, 7)]  # fetched for the example row


def test_a_damaged_row_group_names_its_file(tmp_path: Path) -> None:
    from labelgate.errors import InputError

    good = tmp_path / "a.parquet"
    pq.write_table(pa.table({"label": np.zeros(1000, np.int64)}), good)
    bad = tmp_path / "b.parquet"
    labels = np.random.default_rng(0).integers(0, 4, 50_000)
    pq.write_table(pa.table({"label": labels}), bad, compression="zstd", use_dictionary=False)
    data = bytearray(bad.read_bytes())
    for i in range(8, len(data) // 2):
        data[i] = 0xFF
    bad.write_bytes(bytes(data))
    with pytest.raises(InputError) as info:
        validate_in_context([str(tmp_path)], Contract(num_classes=4), threads=2)
    assert info.value.path == str(bad)


# A lower PER_BATCH_MAX for the test, set where it is read: past it the merge keeps failing
# batches only, as past the real 10,000, on a tenth of the rows
PER_BATCH_LIMIT = 1_000


@settings(max_examples=25, deadline=None)
@given(
    size=st.sampled_from([1, 2, 3]),
    drop_last=st.booleans(),
    ignored=st.sampled_from([0.05, 0.3, 0.6]),
    seed=st.integers(0, 2**32 - 1),
)
def test_many_batches_keep_failing_ones_only_and_agree(
    size: int, drop_last: bool, ignored: float, seed: int
) -> None:
    """Past PER_BATCH_MAX batches the merge keeps only failing batches (flat memory); the
    verdicts (failing batches, counts, LG007/LG004 findings) equal the sequential scan's.
    PER_BATCH_MAX lowered to 1,000 (and the rejected rows made ten times as frequent, so as
    many batches fail): the same path past the limit, 200 batches past it in 13 to 38 row
    groups, on a tenth of the rows."""
    import labelgate.run.producers
    import labelgate.run.tables
    import labelgate.scan.partial

    rng = np.random.default_rng(seed)
    rows = size * (PER_BATCH_LIMIT + 200) + int(rng.integers(0, size))
    label = rng.integers(0, 4, rows)
    label[rng.random(rows) < ignored] = -100
    label[rng.random(rows) < 0.005] = 7  # rejected rows in a few batches
    compacted: list[int] = []
    real = labelgate.scan.partial.failing_only

    def counting(batch_size: int, total: int) -> Any:
        compacted.append(total)
        return real(batch_size, total)

    with tempfile.TemporaryDirectory() as folder, pytest.MonkeyPatch.context() as patch:
        patch.setattr(labelgate.run.producers, "PER_BATCH_MAX", PER_BATCH_LIMIT)
        patch.setattr(labelgate.run.tables, "PER_BATCH_MAX", PER_BATCH_LIMIT)
        patch.setattr(labelgate.scan.partial, "failing_only", counting)
        pq.write_table(pa.table({"label": label}), Path(folder) / "a.parquet", row_group_size=97)
        contract = Contract(num_classes=4, batching=Batching(size=size, drop_last=drop_last))
        sequential = report_dict(Path(folder), contract, max_examples=0, in_pieces=False)
        merged = report_dict(Path(folder), contract, max_examples=0, threads=2)
    assert compacted == [rows]  # the merge in pieces kept failing batches only
    assert sequential["batches"].pop("usable_per_batch") is None
    assert merged["batches"].pop("usable_per_batch") is None
    assert merged == sequential
