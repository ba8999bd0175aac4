"""What a new user trips on, second round: findings beside the point, in-memory inputs people
have, and trimmed lists without a mark."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

import labelgate

SAMPLES = Path(__file__).resolve().parent.parent / "data_samples"


def codes(report: labelgate.ValidationReport) -> set[str]:
    return {f.code for f in report.findings}


def masks(folder: Path, *fills: int, stray: int | None = None) -> Path:
    """One 8x8 ``.npy`` mask per fill value; ``stray`` replaces each mask's first pixel."""
    folder.mkdir()
    for i, fill in enumerate(fills):
        mask = np.full((8, 8), fill, np.int64)
        if stray is not None:
            mask[0, 0] = stray
        np.save(folder / f"m{i}.npy", mask)
    return folder


class TestNothingUsable:
    def test_a_bad_pixel_in_every_mask_is_not_nothing_usable(self, tmp_path: Path) -> None:
        report = labelgate.validate(str(masks(tmp_path / "m", 0, 1, stray=9)), classes=3)
        assert "LG004" in codes(report) and "LG008" not in codes(report)

    def test_masks_of_bad_pixels_only_are(self, tmp_path: Path) -> None:
        report = labelgate.validate(str(masks(tmp_path / "m", 9, 9)), classes=3)
        (lg008,) = [f for f in report.findings if f.code == "LG008"]
        assert lg008.message.startswith("none of the 2 masks has a usable pixel")

    def test_the_voc_sample_without_its_ignore_index(self) -> None:
        # every mask holds 255 borders, every mask is a rejected row: most pixels still train
        report = labelgate.validate(str(SAMPLES / "masks/voc_good"), classes=21)
        assert "LG004" in codes(report) and "LG008" not in codes(report)

    @pytest.mark.parametrize(
        ("rows", "lg008"), [([[0, 1, 9], [1, 9]], False), ([[9], [-100, 9]], True)]
    )
    def test_token_rows(self, tmp_path: Path, rows: list[list[int]], lg008: bool) -> None:
        pa = pytest.importorskip("pyarrow")
        pq = pytest.importorskip("pyarrow.parquet")
        path = tmp_path / "t.parquet"
        pq.write_table(pa.table({"label": pa.array(rows)}), path)
        report = labelgate.validate(str(path), classes=3)
        assert report.contract["task"] == "tokens"
        assert ("LG008" in codes(report)) is lg008


class TestCategoricalLabels:
    """A pandas Categorical label column, in memory and through a Parquet file written from it."""

    def reports(self, tmp_path: Path, values: list[object]) -> list[labelgate.ValidationReport]:
        pd = pytest.importorskip("pandas")
        frame = pd.DataFrame({"label": pd.Categorical(values)})
        path = tmp_path / "c.parquet"
        frame.to_parquet(path)
        return [labelgate.validate(frame, classes=3), labelgate.validate(str(path), classes=3)]

    @pytest.mark.parametrize("values", [[0, 1, 2, 1], ["0", "1", "2", "1"]])
    def test_integer_categories_are_read_as_their_values(
        self, tmp_path: Path, values: list[object]
    ) -> None:
        for report in self.reports(tmp_path, values):
            assert report.counts["usable"] == 4
            assert [c["count"] for c in report.classes] == [1, 2, 1]

    def test_category_names_are_said_to_be_names(self, tmp_path: Path) -> None:
        for report in self.reports(tmp_path, ["cat", "dog", "cat", "bird"]):
            (lg002,) = [f for f in report.findings if f.code == "LG002"]
            assert "(a categorical column of category names)" in lg002.message
            assert "dictionary<" not in lg002.message and "class names?" in lg002.fix


class TestPythonLists:
    def test_a_list_of_ints_is_a_label_column(self) -> None:
        report = labelgate.validate([0, 1, 2, 1], classes=3)
        assert report.counts["usable"] == 4 and not codes(report) - {"LG013"}

    def test_a_tuple_with_a_bad_target_is_judged(self) -> None:
        report = labelgate.validate((0, 1, 5), classes=3)
        assert report.counts["rejected"] == 1 and "LG004" in codes(report)

    def test_lists_of_ints_are_token_rows(self) -> None:
        report = labelgate.validate([[0, 1], [2]], classes=3)
        assert report.contract["task"] == "tokens" and report.counts["tokens"] == 3

    def test_numpy_scalars_are_targets(self) -> None:
        assert labelgate.validate([np.int64(1), np.int64(2)], classes=3).counts["usable"] == 2

    def test_mixed_types_are_one_line(self) -> None:
        with pytest.raises(
            labelgate.errors.UsageError, match=r"holds values of 2 types \(int, str\)"
        ):
            labelgate.validate([0, "a"], classes=3)


class TestSmokeTrim:
    def test_a_trimmed_row_list_says_how_many_more(self) -> None:
        from labelgate.commands.smoke import BatchFailure, SmokeRun
        from labelgate.core.report import Example
        from labelgate.render.smoke import SmokeVerdict, render_smoke

        rows = tuple(Example(row=i, id=None, batch=0, source=None, value=9) for i in range(20))
        failure = BatchFailure(0, "index_out_of_range", "IndexError", (), rows, offending=30)
        run = SmokeRun(path="t.parquet", expected=1, processed=1, failures=[failure])
        text = render_smoke(SmokeVerdict(run, None, []), "text")
        assert text.count("    row ") == 5 and "    (and 25 more)\n" in text

    def test_an_untrimmed_list_has_no_mark(self) -> None:
        from labelgate.commands.smoke import BatchFailure, SmokeRun
        from labelgate.core.report import Example
        from labelgate.render.smoke import SmokeVerdict, render_smoke

        rows = (Example(row=2, id=103, batch=0, source=None, value=4),)
        failure = BatchFailure(0, "index_out_of_range", "IndexError", (), rows, offending=1)
        run = SmokeRun(path="t.parquet", expected=1, processed=1, failures=[failure])
        assert "more)" not in render_smoke(SmokeVerdict(run, None, []), "text")

    @pytest.mark.slow
    def test_the_smoke_run_counts_every_offending_row(self, tmp_path: Path) -> None:
        pytest.importorskip("torch")
        pa = pytest.importorskip("pyarrow")
        pq = pytest.importorskip("pyarrow.parquet")
        from labelgate.commands.smoke import run_smoke
        from labelgate.inputs.dataset import open_dataset

        path = tmp_path / "t.parquet"
        pq.write_table(pa.table({"label": [9] * 30 + [0, 1]}), path)
        run = run_smoke(open_dataset([str(path)], labelgate.Contract(num_classes=3)), device="cpu")
        (failure,) = run.failures
        assert (len(failure.examples), failure.offending) == (20, 30)
        assert failure.to_dict()["offending"] == 30
