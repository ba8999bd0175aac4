"""Strict options: every entry point refuses an unknown option and names the closest known one."""

from __future__ import annotations

import numpy as np
import pytest

import labelgate
from labelgate.api import build_contract
from labelgate.cli import main
from labelgate.core.options import closest, refuse_unknown, strict_keywords
from labelgate.errors import OptionError, UsageError


class TestRefuseUnknown:
    def test_names_the_closest(self) -> None:
        with pytest.raises(
            OptionError, match=r"unknown option 'batchsize' \(did you mean 'batch_size'\?\)"
        ):
            refuse_unknown(["batchsize"], ["batch_size", "classes"], where="here")

    def test_no_hint_when_nothing_is_close(self) -> None:
        with pytest.raises(OptionError) as caught:
            refuse_unknown(["zzz"], ["batch_size"], where="here")
        assert "did you mean" not in str(caught.value)

    def test_known_names_pass(self) -> None:
        refuse_unknown(["classes"], ["classes"], where="here")

    def test_is_a_type_error_and_a_usage_error(self) -> None:
        assert issubclass(OptionError, TypeError) and issubclass(OptionError, UsageError)

    def test_closest(self) -> None:
        assert closest("clases", ["classes", "task"]) == "classes"
        assert closest("qqq", ["classes"]) is None


class TestValidate:
    def test_misspelt_batch_size_is_refused(self) -> None:
        # the typo would otherwise pass with batches of 32 where batch_size=8 fails
        data = np.array([0, 1, 2, 3, 0, 1, 2, 3] + [-100] * 8)
        assert not labelgate.validate(data, classes=4, batch_size=8).passed
        with pytest.raises(OptionError, match="did you mean 'batch_size'"):
            labelgate.validate(data, classes=4, batchsize=8)  # type: ignore[call-arg]

    def test_misspelt_keyword_of_validate_itself(self) -> None:
        with pytest.raises(OptionError, match="did you mean 'target_getter'"):
            labelgate.validate(np.array([0]), classes=4, target_geter=len)  # type: ignore[call-arg]

    def test_build_contract(self) -> None:
        with pytest.raises(OptionError, match="did you mean 'ignore_index'"):
            build_contract(None, ignore_idx=-1)  # type: ignore[call-arg]


class TestGuards:
    torch = pytest.importorskip("torch")

    def test_check_targets(self) -> None:
        from labelgate.torch import check_targets

        with pytest.raises(TypeError, match="did you mean 'num_classes'"):
            check_targets(self.torch.tensor([1]), num_clases=3)  # type: ignore[call-arg]
        check_targets(self.torch.tensor([1]), num_classes=3)

    def test_guarded_collate(self) -> None:
        from labelgate.torch import guarded_collate

        with pytest.raises(OptionError, match="did you mean 'ignore_index'"):
            guarded_collate(num_classes=3, ignore_idx=-1)  # type: ignore[call-arg]

    def test_wrapped_function_keeps_its_name_and_positional_use(self) -> None:
        @strict_keywords
        def f(a: int, *, b: int = 1) -> int:
            return a + b

        assert f.__name__ == "f" and f(1, b=2) == 3
        with pytest.raises(OptionError, match=r"f\(\): unknown option 'bb' \(did you mean 'b'\?\)"):
            f(1, bb=2)  # type: ignore[call-arg]


class TestCli:
    @pytest.mark.parametrize(
        ("flag", "hint"),
        [
            (["--clases", "4"], "did you mean --classes?"),
            (["--batchsize=8"], "did you mean --batch-size?"),
            (["-k", "4", "--ignore-idx", "-1"], "did you mean --ignore-index?"),
        ],
    )
    def test_suggests_the_closest_flag(
        self, flag: list[str], hint: str, capsys: pytest.CaptureFixture[str]
    ) -> None:
        with pytest.raises(SystemExit) as caught:
            main(["validate", "labels.parquet", *flag])
        assert caught.value.code == 2
        err = capsys.readouterr().err
        assert hint in err and len(err.strip().splitlines()) == 1

    def test_a_negative_value_is_not_a_flag(self, tmp_path: object) -> None:
        from pathlib import Path

        import pyarrow as pa
        import pyarrow.parquet as pq

        path = Path(str(tmp_path)) / "l.parquet"
        pq.write_table(pa.table({"label": [0, 1, -1]}), path)
        assert main(["validate", str(path), "-k", "2", "--ignore-index", "-1"]) == 0
