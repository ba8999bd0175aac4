"""labelgate diff compares values, not spellings: the false alarms of a format change or a name
column on one side, and the true changes still found (rename, reorder, new value, class gone,
share shift)."""

from __future__ import annotations

from pathlib import Path

import pyarrow as pa
import pyarrow.csv as pacsv
import pyarrow.parquet as pq
import pytest

from labelgate import ClassMap, Contract
from labelgate.commands.diff import diff
from labelgate.commands.diffvalues import ClassNames, comparable, same_maps
from labelgate.core.report import Report
from labelgate.run.validation import run

NAMES = ["cat", "dog", "bird", "fish"]
K4 = Contract(num_classes=4)


def table(labels: list[int], names: list[str] | None = None, *, ids: bool = True) -> pa.Table:
    """Rows r0.. with ``labels`` and, unless ``names`` is [], a column ``name`` (by default the
    labels' own names): no conventional name, found by its content."""
    columns: dict[str, list[object]] = {}
    if ids:
        columns["id"] = [f"r{i}" for i in range(len(labels))]
    columns["label"] = list(labels)
    if names != []:
        columns["name"] = list(names if names is not None else [NAMES[v] for v in labels])
    return pa.table(columns)


def parquet(path: Path, t: pa.Table) -> str:
    pq.write_table(t, path)
    return str(path)


def found(report: Report) -> dict[str, str]:
    return {f.code: f.message for f in report.findings}


@pytest.fixture
def labels() -> list[int]:
    return [i % 4 for i in range(400)]


@pytest.fixture
def base(tmp_path: Path, labels: list[int]) -> str:
    return parquet(tmp_path / "base.parquet", table(labels))


class TestFalseAlarms:
    def test_the_same_rows_as_parquet_and_as_csv(self, tmp_path: Path, base: str) -> None:
        head = tmp_path / "head.csv"
        pacsv.write_csv(pq.read_table(base), head)
        report = diff([base], [str(head)], K4, K4)
        assert not {"LG020", "LG024", "LG025"} & set(found(report)), found(report)
        assert report.diff is not None and report.diff["rows"]["changed"] == 0

    def test_integer_ids_in_parquet_and_csv(self, tmp_path: Path, labels: list[int]) -> None:
        t = table(labels).set_column(0, "id", pa.array(range(400)))
        head = tmp_path / "head.csv"
        pacsv.write_csv(t, head)
        report = diff([parquet(tmp_path / "b.parquet", t)], [str(head)], K4, K4)
        assert report.diff is not None
        assert report.diff["rows"] == {"compared": True, "added": 0, "removed": 0, "changed": 0}

    def test_a_relabelled_row_that_kept_its_name_is_lg010_by_id(
        self, tmp_path: Path, base: str, labels: list[int]
    ) -> None:
        changed = list(labels)
        changed[2] = 3  # 'bird' now labelled 3
        head = parquet(tmp_path / "head.parquet", table(changed, [NAMES[v] for v in labels]))
        report = diff([base], [head], K4, K4)
        assert "LG020" not in found(report)
        (lg010,) = [f for f in report.findings if f.code == "LG010"]
        assert lg010.severity == "error" and [e.id for e in lg010.examples] == ["r2"]
        assert "'r2' 2 -> 3" in found(report)["LG025"]
        assert any(n.startswith("name column 'name': detected") for n in report.notes)

    def test_a_label_at_k_drops_no_class(
        self, tmp_path: Path, base: str, labels: list[int]
    ) -> None:
        changed = list(labels)
        changed[2], changed[7] = 3, 4  # one row relabelled, one past K
        head = parquet(tmp_path / "head.parquet", table(changed, [NAMES[v] for v in labels]))
        report = diff([base], [head], K4, K4)
        assert "LG020" not in found(report), found(report)
        assert {"LG004", "LG010", "LG021", "LG025"} <= set(found(report))

    def test_a_head_without_a_name_column(self, tmp_path: Path, base: str) -> None:
        head = parquet(tmp_path / "head.parquet", table([i % 4 for i in range(400)], []))
        report = diff([base], [head], K4, K4)
        assert not {"LG020", "LG025"} & set(found(report)), found(report)

    def test_a_base_without_a_name_column(self, tmp_path: Path, base: str) -> None:
        bare = parquet(tmp_path / "bare.parquet", table([i % 4 for i in range(400)], []))
        assert "LG020" not in found(diff([bare], [base], K4, K4))

    def test_a_class_gone_from_the_data_is_no_map_change(self, tmp_path: Path, base: str) -> None:
        head = parquet(tmp_path / "head.parquet", table([0, 1, 3] * 100))
        report = diff([base], [head], K4, K4)
        assert "LG020" not in found(report) and "LG022" in found(report)


class TestTrueChanges:
    def test_a_rename(self, tmp_path: Path, base: str, labels: list[int]) -> None:
        names = [("parrot" if v == 2 else NAMES[v]) for v in labels]
        head = parquet(tmp_path / "head.parquet", table(labels, names))
        assert "renamed 2: 'bird' -> 'parrot'" in found(diff([base], [head], K4, K4))["LG020"]

    def test_a_reorder(self, tmp_path: Path, base: str, labels: list[int]) -> None:
        swapped = ["dog", "cat", "bird", "fish"]
        head = parquet(tmp_path / "head.parquet", table(labels, [swapped[v] for v in labels]))
        report = diff([base], [head], K4, K4)
        assert "reordered 'dog' 1 -> 0" in found(report)["LG020"] and report.failed

    def test_a_new_value(self, tmp_path: Path, base: str, labels: list[int]) -> None:
        changed = [*labels, 4]
        head = parquet(
            tmp_path / "head.parquet", table(changed, [*[NAMES[v] for v in labels], "x"])
        )
        k5 = Contract(num_classes=5)
        assert (
            "label values new in head, unknown to base: 4"
            in found(diff([base], [head], k5, k5))["LG021"]
        )

    def test_a_class_gone_and_a_share_shift(self, tmp_path: Path, base: str) -> None:
        head = parquet(tmp_path / "head.parquet", table([0, 1, 1, 3] * 100))
        report = diff([base], [head], K4, K4)
        assert "gone from head: 2" in found(report)["LG022"]
        assert "class 1 25.0% -> 50.0%" in found(report)["LG023"]

    def test_a_class_dropped_from_a_declared_map(self, base: str) -> None:
        before = Contract(num_classes=4, class_map=ClassMap.from_names(NAMES))
        after = Contract(num_classes=4, class_map=ClassMap.from_names(NAMES[:3]))
        assert "dropped 3: 'fish'" in found(diff([base], [base], before, after))["LG020"]

    def test_csv_labels_that_changed_are_still_found(
        self, tmp_path: Path, base: str, labels: list[int]
    ) -> None:
        changed = list(labels)
        changed[5] = 2
        head = tmp_path / "head.csv"
        pacsv.write_csv(table(changed), head)
        assert "'r5' 1 -> 2" in found(diff([base], [str(head)], K4, K4))["LG025"]


class TestNameColumnByContent:
    def names_found(self, tmp_path: Path, t: pa.Table) -> str | None:
        with run([parquet(tmp_path / "t.parquet", t)], K4) as done:
            return done.dataset.columns.name

    def test_a_text_column_that_follows_the_label(self, tmp_path: Path) -> None:
        assert self.names_found(tmp_path, table([i % 4 for i in range(100)])) == "name"

    @pytest.mark.parametrize(
        "values",
        [
            ["train"] * 100,  # constant: a function of the label, but no class name
            ["animal" if i % 4 < 2 else "other" for i in range(100)],  # a super-category
            [f"img{i}.jpg" for i in range(100)],  # one per row
            [str(i % 4) for i in range(100)],  # the label again, as text
            [NAMES[i % 4] if i % 10 else "cat" for i in range(100)],  # follows on 92.5%
        ],
        ids=["constant", "coarser", "per-row", "numbers", "too-loose"],
    )
    def test_columns_that_are_no_names(self, tmp_path: Path, values: list[str]) -> None:
        assert self.names_found(tmp_path, table([i % 4 for i in range(100)], values)) is None

    def test_too_few_rows_per_label(self, tmp_path: Path) -> None:
        assert self.names_found(tmp_path, table([0, 1, 2, 3], ["a", "b", "c", "d"])) is None

    def test_a_given_name_column_wins(self, tmp_path: Path) -> None:
        t = table([i % 4 for i in range(100)]).append_column(
            "other", pa.array([NAMES[i % 4].upper() for i in range(100)])
        )
        path = parquet(tmp_path / "t.parquet", t)
        with run([path], Contract(num_classes=4, name_column="other")) as done:
            assert done.dataset.columns.name == "other"


class TestValues:
    @pytest.mark.parametrize(
        ("value", "expected"),
        [("0", 0), (" 3 ", 3), ("3.0", 3), (3.0, 3), ("r1", "r1"), (" a ", "a"), (None, None)],
    )
    def test_comparable(self, value: object, expected: object) -> None:
        assert comparable(value) == expected

    def test_a_side_without_a_map_reads_through_the_other(self) -> None:
        named = ClassNames({0: "cat"}, declared=False)
        empty = ClassNames({}, declared=False)
        assert same_maps(named, empty) == (named, named)
        assert same_maps(empty, named) == (named, named)


def test_a_head_that_relabels_many_rows_is_judged_by_base_s_name_column(tmp_path: Path) -> None:
    """300 of 2,000 rows relabelled with their names kept: HEAD's own names no longer follow its
    labels on 98% of rows, so BASE's column is the names, and each relabelled row is LG010."""
    import random

    import pyarrow as pa
    import pyarrow.parquet as pq

    from labelgate.commands.diff import diff
    from labelgate.contract import Contract

    names = ["cat", "dog", "bird", "fish"]
    rng = random.Random(0)
    labels = [rng.randrange(4) for _ in range(2000)]
    relabelled = set(rng.sample(range(2000), 300))
    head = [(v + 1) % 4 if i in relabelled else v for i, v in enumerate(labels)]
    shown = [names[v] for v in labels]
    for side, values in (("base", labels), ("head", head)):
        table = pa.table({"id": list(range(2000)), "label": values, "name": shown})
        pq.write_table(table, tmp_path / f"{side}.parquet")
    report = diff(
        [str(tmp_path / "base.parquet")],
        [str(tmp_path / "head.parquet")],
        Contract(num_classes=4),
        Contract(num_classes=4),
    )
    lg010 = next(f for f in report.findings if f.code == "LG010")
    assert lg010.count == 300
    assert any("BASE's, found there by its content" in n for n in report.notes)
