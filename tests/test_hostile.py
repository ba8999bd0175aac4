"""Hostile and careless input: nothing overwritten, nothing leaked, no traceback, no blow-up."""

from __future__ import annotations

import io
import stat
import tempfile
from contextlib import redirect_stderr, redirect_stdout
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from labelgate import ClassMap, Contract, ContractError
from labelgate.cli import main
from tests.conftest import SAMPLES, digest
from tests.support.inproc import run_here

pytestmark = (
    pytest.mark.slow
)  # the full tier only: random inputs, a 600,000-row file, four processes


@pytest.fixture
def labels(tmp_path: Path) -> Path:
    path = tmp_path / "in.parquet"
    pq.write_table(pa.table({"id": [1, 2, 3, 4], "label": [0, 1, 4, 2]}), path)
    return path


class TestNothingOverwritten:
    def test_fix_log_on_the_input_is_refused(self, labels: Path, tmp_path: Path) -> None:
        before = digest(labels)
        out = tmp_path / "fixed.parquet"
        result = run_here("fix", str(labels), "-k", "4", "--out", str(out), "--log", str(labels))
        assert result.returncode == 2 and "--log" in result.stderr
        assert digest(labels) == before and not out.exists()

    def test_outputs_may_not_share_a_path(self, labels: Path, tmp_path: Path) -> None:
        out = tmp_path / "fixed.parquet"
        result = run_here(
            "fix", str(labels), "-k", "4", "--out", str(out), "--quarantine", str(out)
        )
        assert result.returncode == 2 and "its own path" in result.stderr

    def test_report_over_the_contract_or_class_map_is_refused(self, tmp_path: Path) -> None:
        names = tmp_path / "classes.txt"
        names.write_text("cat\ndog\nbird\nfish\n")
        contract = tmp_path / "c.yaml"
        contract.write_text("num_classes: 4\nclass_names: classes.txt\n")
        clean = str(SAMPLES / "clean.parquet")
        for args in (
            ["--schema", str(contract), "--output", str(contract)],
            ["-k", "4", "--class-names", str(names), "--output", str(names)],
            ["--schema", str(contract), "--output", str(names)],  # the contract's own map
        ):
            before = (digest(contract), digest(names))
            result = run_here("validate", clean, *args)
            assert result.returncode == 2, args
            assert "would overwrite" in result.stderr
            assert (digest(contract), digest(names)) == before

    def test_a_device_is_written_not_replaced(self) -> None:
        result = run_here(
            "validate", str(SAMPLES / "clean.parquet"), "-k", "4", "--output", "/dev/null"
        )
        assert result.returncode == 0, result.stderr
        assert stat.S_ISCHR(Path("/dev/null").stat().st_mode)

    def test_output_a_directory_or_in_a_missing_folder(self, labels: Path, tmp_path: Path) -> None:
        clean = str(SAMPLES / "clean.parquet")
        result = run_here("validate", clean, "-k", "4", "--output", str(tmp_path))
        assert result.returncode == 2 and "is a directory" in result.stderr
        out = tmp_path / "fixed.parquet"
        log = tmp_path / "missing" / "log.json"
        result = run_here("fix", str(labels), "-k", "4", "--out", str(out), "--log", str(log))
        assert result.returncode == 2 and "does not exist" in result.stderr
        assert not out.exists()  # checked before anything was written


class TestNothingLeaked:
    @pytest.mark.parametrize("target", ["/proc/self/environ", "../../../../etc/passwd"])
    def test_a_contract_cannot_read_any_file(self, tmp_path: Path, target: str) -> None:
        contract = tmp_path / "c.yaml"
        contract.write_text(f"num_classes: 4\nclass_names: {target}\n")
        result = run_here("validate", str(SAMPLES / "clean.parquet"), "--schema", str(contract))
        assert result.returncode == 2
        assert "class-name map is a .txt" in result.stderr
        shown = result.stdout + result.stderr
        assert "PATH=" not in shown and "root:x:0" not in shown

    def test_names_with_control_characters_are_no_class_map(self, tmp_path: Path) -> None:
        names = tmp_path / "env.txt"
        names.write_bytes(b"PATH=/bin\x00SECRET=1\x00\n")
        result = run_here(
            "validate", str(SAMPLES / "clean.parquet"), "-k", "4", "--class-names", str(names)
        )
        assert result.returncode == 2 and "control character" in result.stderr

    def test_a_device_behind_a_class_map_name_is_not_read(self, tmp_path: Path) -> None:
        names = tmp_path / "zero.txt"
        names.symlink_to("/dev/zero")
        result = run_here(
            "validate", str(SAMPLES / "clean.parquet"), "-k", "4", "--class-names", str(names)
        )
        assert result.returncode == 2  # refused by the link's target before it is opened
        assert "a link to a file that is not" in result.stderr


class TestNoBlowUp:
    def test_yaml_aliases_are_refused(self, tmp_path: Path) -> None:
        bomb = "a: &a [x, x, x, x, x, x, x, x, x]\n" + "".join(
            f"{c}: &{c} [*{p}, *{p}, *{p}, *{p}, *{p}, *{p}, *{p}, *{p}, *{p}]\n"
            for p, c in zip("abcdefgh", "bcdefghi", strict=True)
        )
        contract = tmp_path / "bomb.yaml"
        contract.write_text("num_classes: 4\n" + bomb)
        result = run_here("validate", str(SAMPLES / "clean.parquet"), "--schema", str(contract))
        assert result.returncode == 2 and "aliases" in result.stderr
        assert len(result.stderr) < 2000

    def test_class_map_lookups_are_built_once(self) -> None:
        m = ClassMap.from_names([f"c{i}" for i in range(1000)])
        assert m.name_of() is m.name_of() and m.index_of() is m.index_of()
        assert m.name_of()[999] == "c999" and m.index_of()["c999"] == 999

    @pytest.mark.parametrize(
        "args",
        [
            ["--classes", str(10**12)],
            ["--classes", str(10**23)],
            ["-k", "4", "--batch-size", str(2**70)],
            ["-k", "4", "--shuffle-seed", str(2**64)],
            ["-k", "4", "--ignore-index", str(10**23)],
        ],
    )
    def test_numbers_are_bounded_at_parse_time(self, args: list[str]) -> None:
        result = run_here("validate", str(SAMPLES / "clean.parquet"), *args)
        assert result.returncode == 2 and "Traceback" not in result.stderr
        assert "must be from" in result.stderr

    @pytest.mark.parametrize(
        "text",
        [
            "num_classes: 2\nignore_index: 100000000000000000000000\n",
            "num_classes: 2\nclass_weights: [1, .nan]\n",
            "num_classes: 2\nclass_weights: [.inf, 1]\n",
            "num_classes: 100000000000000\n",
            "num_classes: 2\nbatching: {shuffle_seed: -1}\n",
        ],
    )
    def test_contract_numbers_are_bounded(self, tmp_path: Path, text: str) -> None:
        contract = tmp_path / "c.yaml"
        contract.write_text(text)
        with pytest.raises(ContractError):
            Contract.from_yaml(contract)


class TestRightWords:
    def test_a_plus_sign_is_a_number(self, tmp_path: Path) -> None:
        path = tmp_path / "plus.csv"
        path.write_text("label\n+3\n4\n")
        result = run_here("validate", str(path), "-k", "4", "--format", "json")
        assert result.returncode == 1, result.stderr
        assert '"code": "LG004"' in result.stdout and '"LG002"' not in result.stdout

    def test_a_byte_order_mark_is_not_part_of_a_name(self, tmp_path: Path) -> None:
        txt = tmp_path / "classes.txt"
        txt.write_bytes("\ufeffcat\ndog\n".encode())
        csv = tmp_path / "classes.csv"
        csv.write_bytes("\ufeff0,cat\n1,dog\n".encode())
        contract = tmp_path / "c.yaml"
        contract.write_bytes("\ufeffnum_classes: 2\n".encode())
        from labelgate import load_class_map

        assert load_class_map(txt).name_of() == {0: "cat", 1: "dog"}
        assert load_class_map(csv).name_of() == {0: "cat", 1: "dog"}
        assert Contract.from_yaml(contract).num_classes == 2


class TestNoTraceback:
    def test_an_internal_error_has_its_own_status(self, monkeypatch: pytest.MonkeyPatch) -> None:
        import labelgate.run.validation as v

        def boom(*args: object, **kwargs: object) -> None:
            raise RuntimeError("a defect")

        monkeypatch.setattr(v, "run", boom)
        result = run_here("validate", str(SAMPLES / "clean.parquet"), "-k", "4")
        assert result.returncode == 3
        assert "Traceback" in result.stderr and "internal error" in result.stderr


class TestNoMarkup:
    @pytest.fixture
    def hostile(self, tmp_path: Path) -> Path:
        path = tmp_path / "h.parquet"
        sources = ["\x1b[2J\x1b[31mred", "[x](javascript:alert(1))", "a\n::error::pwned"]
        pq.write_table(pa.table({"id": [1, 2, 3], "label": [4, 5, 6], "source": sources}), path)
        return path

    def test_text_shows_control_characters(self, hostile: Path) -> None:
        result = run_here("validate", str(hostile), "-k", "4")
        assert result.returncode == 1
        assert "\x1b" not in result.stdout and "\\x1b[2J" in result.stdout

    def test_markdown_has_no_live_link(self, hostile: Path) -> None:
        result = run_here("validate", str(hostile), "-k", "4", "--format", "markdown")
        assert "[x](javascript" not in result.stdout and "\\[x\\]" in result.stdout

    @pytest.mark.parametrize("fmt", ["html", "github", "markdown", "junit", "text"])
    def test_no_line_starts_a_workflow_command(self, hostile: Path, fmt: str) -> None:
        result = run_here("validate", str(hostile), "-k", "4", "--format", fmt)
        assert not any(
            line.lstrip().startswith("::error::pwned") for line in result.stdout.splitlines()
        )


# -- random input: every run ends in 0, 1 or 2, and no input changes ----------------------------


def quiet_main(argv: list[str]) -> int:
    with redirect_stdout(io.StringIO()), redirect_stderr(io.StringIO()):
        try:
            return main(argv)
        except SystemExit as exc:  # argparse's usage errors
            return int(exc.code or 0)


contents = st.one_of(
    st.binary(max_size=300),
    st.text(max_size=200).map(str.encode),
    st.sampled_from(
        [
            b"label\n+3\n4\n",
            b"\xef\xbb\xbflabel\n1\n2\n",
            b"label\n9223372036854775807\n18446744073709551621\n",
            b'{"label": 1}\n{"label": "x"}\n',
            b"PAR1\x00\x00PAR1",
        ]
    ),
)
yamls = st.one_of(
    st.text(max_size=200),
    st.sampled_from(
        [
            "num_classes: 4\nclass_names: [a, b, a, \u202e]\n",
            "num_classes: 4\nseverity: {LG004: off}\nbatching: {size: 1}\n",
            "num_classes: 4\nclass_names: /dev/zero\n",
            "{",
        ]
    ),
)


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    data=contents,
    suffix=st.sampled_from([".csv", ".jsonl", ".parquet", ".txt"]),
    contract=yamls,
    names=st.text(max_size=100),
    command=st.sampled_from(["validate", "fix", "diff", "triage"]),
)
def test_random_input_never_crashes(
    data: bytes, suffix: str, contract: str, names: str, command: str
) -> None:
    with tempfile.TemporaryDirectory() as folder:
        root = Path(folder)
        path = root / f"in{suffix}"
        path.write_bytes(data)
        schema = root / "c.yaml"
        schema.write_text(contract, encoding="utf-8", errors="surrogatepass")
        classes = root / "classes.txt"
        classes.write_text(names, encoding="utf-8", errors="surrogatepass")
        inputs = [path, schema, classes]
        before = [digest(p) for p in inputs]
        if command == "validate":
            argv = ["validate", str(path), "-k", "4", "--schema", str(schema)]
            argv += ["--class-names", str(classes), "--format", "json"]
        elif command == "fix":
            argv = ["fix", str(path), "-k", "4", "--out", str(root / "out.parquet")]
        elif command == "diff":
            argv = ["diff", str(path), str(path), "-k", "4", "--schema", str(schema)]
        else:
            argv = ["triage", str(path)]
        import time

        start = time.monotonic()
        assert quiet_main(argv) in (0, 1, 2)
        assert time.monotonic() - start < 60  # a bound, not a benchmark: nothing runs away
        assert [digest(p) for p in inputs] == before


class TestConcurrency:
    def test_two_fixes_of_one_output_both_verify_their_own_file(
        self, labels: Path, tmp_path: Path
    ) -> None:
        import subprocess
        import sys

        out = tmp_path / "fixed.parquet"
        args = ["fix", str(labels), "-k", "4", "--out", str(out), "--map-value", "4=3"]
        runs = [
            subprocess.Popen(
                [sys.executable, "-m", "labelgate", *args],
                stdout=subprocess.PIPE,
                stderr=subprocess.PIPE,
                text=True,
            )
            for _ in range(4)
        ]
        for proc in runs:
            _, err = proc.communicate(timeout=120)
            assert proc.returncode == 0, err
        assert pq.read_table(out).column("label").to_pylist() == [0, 1, 3, 2]
        assert not [p.name for p in tmp_path.iterdir() if ".tmp-" in p.name]


def test_a_device_as_input_is_named_for_what_it_is() -> None:
    result = run_here("validate", "/dev/zero", "-k", "4")
    assert result.returncode == 2 and "not a regular file" in result.stderr


class TestTriageEncodings:
    LOG = "step 12 loss 0.5\nRuntimeError: CUDA error: device-side assert triggered\n"

    @pytest.mark.parametrize(
        "data",
        [
            LOG.encode("utf-16"),  # PowerShell's > : UTF-16 LE with a BOM
            LOG.encode("utf-16-le"),
            LOG.encode("utf-16-be"),
            b"\xef\xbb\xbf" + LOG.encode(),
            b"noise\x00" + LOG.encode(),
        ],
        ids=["utf16-bom", "utf16-le", "utf16-be", "utf8-bom", "nul"],
    )
    def test_the_error_is_found(self, data: bytes) -> None:
        from labelgate.commands.logs.triage import triage_stream

        result = triage_stream(io.BytesIO(data))
        assert result.first_error is not None
        assert result.family == "index_out_of_range"


def test_a_jsonl_error_names_the_row_of_the_file(tmp_path: Path) -> None:
    lines = [f'{{"label": {i % 4}, "id": {i}}}' for i in range(600_000)]
    lines[500_000] = '{"label": 1'  # past the first 4 MB block of Arrow's reader
    path = tmp_path / "bad.jsonl"
    path.write_text("\n".join(lines) + "\n")
    result = run_here("validate", str(path), "-k", "4")
    assert result.returncode == 2 and "in row 500000" in result.stderr


class TestCarefulUser:
    def test_integers_past_int64_are_called_so(self, tmp_path: Path) -> None:
        path = tmp_path / "big.csv"
        path.write_text(
            "label\n9223372036854775807\n9223372036854775808\n18446744073709551621\n1\n"
        )
        result = run_here("validate", str(path), "-k", "4", "--format", "json")
        by = {f["code"]: f for f in __import__("json").loads(result.stdout)["findings"]}
        assert by["LG002"]["count"] == 2 and "past int64" in by["LG002"]["message"]
        assert "cast to int64 would overflow" in by["LG002"]["fix"]
        assert by["LG004"]["details"]["values"] == {"9223372036854775807": 1}

    def test_examples_by_row_get_their_id_and_value(self) -> None:
        result = run_here(
            "validate", "all_ignored_batch.parquet", "-k", "4", "--format", "json", cwd=SAMPLES
        )
        (lg007,) = [
            f for f in __import__("json").loads(result.stdout)["findings"] if f["code"] == "LG007"
        ]
        (example,) = lg007["examples"]
        assert example["id"] is not None and example["value"] == -100

    def test_sparse_ids_are_not_called_one_based(self) -> None:
        result = run_here(
            "validate", "coco_sparse_ids.parquet", "-k", "80", "--format", "json", cwd=SAMPLES
        )
        (lg004,) = [
            f for f in __import__("json").loads(result.stdout)["findings"] if f["code"] == "LG004"
        ]
        assert "1-based" not in lg004["fix"] and "sparse category ids" in lg004["fix"]

    def test_fix_names_the_shift_first(self, tmp_path: Path) -> None:
        out = tmp_path / "f.parquet"
        result = run_here(
            "fix", "one_based_no_header.csv", "-k", "4", "--out", str(out), cwd=SAMPLES
        )
        assert result.returncode == 2 and "--shift -1" in result.stderr

    def test_a_text_label_column_in_parquet_is_lg026(self, tmp_path: Path) -> None:
        path = tmp_path / "s.parquet"
        pq.write_table(pa.table({"label": ["0", "3"]}), path)
        result = run_here("validate", str(path), "-k", "4", "--format", "json")
        assert result.returncode == 0 and "stored as text" in result.stdout
        assert "LG026" in result.stdout

    def test_words_say_what_they_mean(self, tmp_path: Path) -> None:
        result = run_here(
            "validate", "oob_0_2_4.parquet", "-k", "4", "--format", "markdown", cwd=SAMPLES
        )
        assert "failing batches: #0" in result.stdout and "| 1 row |" in result.stdout
        text = run_here("validate", "oob_0_2_4.parquet", "-k", "4", cwd=SAMPLES).stdout
        assert "(1 row)" in text and "1 rows" not in text

    def test_map_value_with_a_space(self, tmp_path: Path) -> None:
        out = tmp_path / "f.parquet"
        result = run_here(
            "fix",
            "neg1_sentinel.parquet",
            "-k",
            "4",
            "--map-value",
            "-1=ignore",
            "--out",
            str(out),
            cwd=SAMPLES,
        )
        assert result.returncode == 0, result.stderr

    def test_the_median_of_two_counts(self, tmp_path: Path) -> None:
        path = tmp_path / "m.parquet"
        # Counts 100, 300, 3, 200: the median of four is 150 (the upper middle would say 200).
        pq.write_table(pa.table({"label": [0] * 100 + [1] * 300 + [2] * 3 + [3] * 200}), path)
        result = run_here("validate", str(path), "-k", "4", "--format", "json")
        assert "median class count (150)" in result.stdout


class TestFullDisk:
    """ENOSPC at the moment of writing: exit 2 with the path, the input intact, nothing partial."""

    @staticmethod
    def full(*args: object, **kwargs: object) -> None:
        import errno

        raise OSError(errno.ENOSPC, "No space left on device")

    def test_validate_output(self, monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
        import labelgate.io.files

        monkeypatch.setattr(labelgate.io.files, "write_text_atomic", self.full)
        out = tmp_path / "report.json"
        status = quiet_main(["validate", str(SAMPLES / "clean.parquet"), "-k", "4", "-o", str(out)])
        assert status == 2 and not out.exists()

    def test_fix(self, monkeypatch: pytest.MonkeyPatch, labels: Path, tmp_path: Path) -> None:
        import pyarrow.parquet

        before = digest(labels)
        monkeypatch.setattr(pyarrow.parquet.ParquetWriter, "write_table", self.full)
        out = tmp_path / "fixed.parquet"
        stderr = io.StringIO()
        with redirect_stdout(io.StringIO()), redirect_stderr(stderr):
            status = main(["fix", str(labels), "-k", "4", "--map-value=4=3", "--out", str(out)])
        assert status == 2 and "No space left on device" in stderr.getvalue()
        assert digest(labels) == before and not out.exists()
        assert not [p for p in tmp_path.iterdir() if ".tmp-" in p.name]

    def test_repro(self, monkeypatch: pytest.MonkeyPatch, labels: Path, tmp_path: Path) -> None:
        import pyarrow.parquet

        import labelgate.commands.bundle

        # The torch probe, a child process importing torch (seconds of CPU), comes before the
        # write and is no part of what a full disk does: its answer is given, as torch absent.
        probe = {"torch": None, "torch_probe": "not asked"}
        monkeypatch.setattr(labelgate.commands.bundle, "_torch_environment", lambda: probe)
        monkeypatch.setattr(pyarrow.parquet, "write_table", self.full)
        out = tmp_path / "case"
        status = quiet_main(["repro", str(labels), "-k", "4", "--out", str(out)])
        assert status == 2 and not out.exists()
        assert not [p for p in tmp_path.iterdir() if ".tmp-" in p.name]

    def test_repro_into_a_missing_folder(self, labels: Path, tmp_path: Path) -> None:
        out = tmp_path / "missing" / "case"
        result = run_here("repro", str(labels), "-k", "4", "--out", str(out))
        assert result.returncode == 2 and "does not exist" in result.stderr


def test_text_never_splits_a_quoted_message() -> None:
    result = run_here(
        "validate",
        "two_sources_one_based.parquet",
        "-k",
        "4",
        "--class-names",
        "classes.txt",
        cwd=SAMPLES,
    )
    lines = result.stdout.splitlines()
    assert any("'t >= 0 && t < n_classes'" in line for line in lines)
    assert any("'IndexError: Target 4 is out of bounds'" in line for line in lines)
    assert all(len(line) <= 100 or "'" in line for line in lines)
