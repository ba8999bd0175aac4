"""labelgate.io.predictions and the join (labelgate.scan.witness): every layout, ids or
positions, rows and predictions left over counted and named, K mismatches refused."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from labelgate.errors import UsageError
from labelgate.io.predictions import read_predictions
from tests.conftest import run_cli

K = 3
LOGITS = np.array([[2.0, 0.1, -1.0], [0.0, 3.0, 0.5], [-2.0, 0.0, 1.0], [5.0, 4.0, 0.0]])
CLASSES = [0, 1, 2, 0]


def _softmax(x: np.ndarray) -> np.ndarray:
    e = np.exp(x - x.max(axis=1, keepdims=True))
    return e / e.sum(axis=1, keepdims=True)


class TestLayouts:
    def test_k_logit_columns_are_read_through_softmax(self, tmp_path: Path) -> None:
        path = tmp_path / "p.parquet"
        pq.write_table(pa.table({f"l{i}": LOGITS[:, i] for i in range(K)}), path)
        p = read_predictions(str(path), k=K, id_column=None)
        assert p.predicted.tolist() == CLASSES
        assert (p.layout, p.logits, p.probabilities) == ("K columns", 4, 0)

    def test_probability_rows_are_probabilities(self, tmp_path: Path) -> None:
        path = tmp_path / "p.jsonl"
        rows = [{"id": i, "probs": r} for i, r in enumerate(_softmax(LOGITS).tolist())]
        path.write_text("".join(json.dumps(r) + "\n" for r in rows))
        p = read_predictions(str(path), k=K, id_column="id")
        assert p.predicted.tolist() == CLASSES
        assert (p.layout, p.id_column, p.probabilities, p.logits) == ("list column", "id", 4, 0)

    def test_a_class_column_in_csv(self, tmp_path: Path) -> None:
        path = tmp_path / "p.csv"
        path.write_text("id,prediction\n" + "".join(f"{i},{c}\n" for i, c in enumerate(CLASSES)))
        p = read_predictions(str(path), k=K, id_column="id")
        assert p.predicted.tolist() == CLASSES and p.layout == "class column"

    def test_npy_of_logits_and_of_classes(self, tmp_path: Path) -> None:
        np.save(tmp_path / "l.npy", LOGITS)
        np.save(tmp_path / "c.npy", np.array(CLASSES, dtype=np.int64))
        assert (
            read_predictions(str(tmp_path / "l.npy"), k=K, id_column=None).predicted.tolist()
            == CLASSES
        )
        assert (
            read_predictions(str(tmp_path / "c.npy"), k=K, id_column=None).predicted.tolist()
            == CLASSES
        )

    def test_a_nan_row_has_no_prediction(self, tmp_path: Path) -> None:
        x = LOGITS.copy()
        x[1, 2] = np.nan
        np.save(tmp_path / "l.npy", x)
        p = read_predictions(str(tmp_path / "l.npy"), k=K, id_column=None)
        assert p.predicted.tolist() == [0, -1, 2, 0] and p.unusable == 1

    @pytest.mark.parametrize("columns", [2, 4])
    def test_another_k_is_refused(self, tmp_path: Path, columns: int) -> None:
        path = tmp_path / "p.parquet"
        pq.write_table(pa.table({f"l{i}": np.zeros(4) for i in range(columns)}), path)
        with pytest.raises(
            UsageError, match=f"has {columns} probability or logit columns, the contract K=3"
        ):
            read_predictions(str(path), k=K, id_column=None)

    def test_a_class_past_k_is_refused(self, tmp_path: Path) -> None:
        np.save(tmp_path / "c.npy", np.array([0, 1, 5]))
        with pytest.raises(UsageError, match="K=3"):
            read_predictions(str(tmp_path / "c.npy"), k=K, id_column=None)


def _data(tmp_path: Path, ids: list[int] | None) -> Path:
    path = tmp_path / "data.parquet"
    columns = {"label": pa.array(CLASSES, pa.int64())}
    if ids is not None:
        columns = {"id": pa.array(ids, pa.int64()), **columns}
    pq.write_table(pa.table(columns), path)
    return path


class TestJoin:
    def test_by_id_names_rows_without_a_prediction_and_predictions_without_a_row(
        self, tmp_path: Path
    ) -> None:
        data = _data(tmp_path, [10, 11, 12, 13])
        pred = tmp_path / "pred.csv"
        pred.write_text("id,prediction\n13,0\n11,1\n99,2\n10,0\n")
        out = run_cli(
            "validate", str(data), "-k", "3", "--predictions", str(pred), "--format", "json"
        )
        assert out.returncode == 0, out.stderr
        notes = " ".join(json.loads(out.stdout)["notes"])
        assert "joined by id 'id'; 3 rows judged" in notes
        assert "1 rows without a prediction (12)" in notes
        assert "1 predictions without a row (99)" in notes

    def test_by_position_says_so(self, tmp_path: Path) -> None:
        data = _data(tmp_path, None)
        np.save(tmp_path / "p.npy", LOGITS[:3])
        out = run_cli("validate", str(data), "-k", "3", "--predictions", str(tmp_path / "p.npy"))
        assert out.returncode == 0, out.stderr
        text = " ".join(out.stdout.split())
        assert "joined by position; 3 rows judged" in text
        assert "row i is prediction i" in text and "1 rows without a prediction (3)" in text

    def test_k_mismatch_is_exit_2_in_one_line(self, tmp_path: Path) -> None:
        data = _data(tmp_path, None)
        np.save(tmp_path / "p.npy", np.zeros((4, 5)))
        out = run_cli("validate", str(data), "-k", "3", "--predictions", str(tmp_path / "p.npy"))
        assert out.returncode == 2
        assert (
            out.stderr.startswith("labelgate: error: --predictions")
            and "Traceback" not in out.stderr
        )
        assert "has 5 values per row, the contract K=3" in out.stderr

    def test_repeated_prediction_ids_are_refused(self, tmp_path: Path) -> None:
        data = _data(tmp_path, [10, 11, 12, 13])
        pred = tmp_path / "pred.csv"
        pred.write_text("id,prediction\n10,0\n10,1\n")
        out = run_cli("validate", str(data), "-k", "3", "--predictions", str(pred))
        assert out.returncode == 2 and "1 ids repeat (10)" in out.stderr

    def test_only_the_needed_columns_are_read(self, tmp_path: Path) -> None:
        path = tmp_path / "p.parquet"
        table = pa.table({"id": [0, 1], "prediction": [1, 2], "text": ["a", "b"]})
        pq.write_table(table, path)
        p = read_predictions(str(path), k=K, id_column="id")
        assert p.columns == ("prediction",) and p.predicted.tolist() == [1, 2]
