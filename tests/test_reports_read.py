"""What a reader sees: every sample in every format holds no Python repr, and every command a
report prints runs as printed."""

from __future__ import annotations

import json
import re
import shlex
from pathlib import Path
from typing import Any

import pytest

from labelgate import cli
from labelgate.cli import handlers
from labelgate.core.report import Report
from labelgate.render import FORMATS, render
from labelgate.render.hints import COMMAND, command_line
from tests.conftest import ROOT, SAMPLES, cli_here
from tests.support.inproc import run_here
from tests.test_samples import table

# every sample, in every format; one worker runs them all (the reports are made once, for the module)
pytestmark = [pytest.mark.slow, pytest.mark.xdist_group("reports_read")]

# Words Python writes for itself: None, nan, inf, a recursive list; "NaN loss" is English.
REPR = re.compile(r"\bNone\b|\bnan\b|(?<![\w-])-?inf\b|\[\.\.\.\]")

SAMPLE_COMMANDS = [command for command, *_ in table()]
DIFFS = [
    "labelgate diff clean.parquet two_sources_one_based.parquet --classes 4",
    "labelgate diff clean.parquet oob_0_2_4.parquet --classes 4 --class-names classes.txt",
]


def report_of(command: str, monkeypatch: pytest.MonkeyPatch) -> Report:
    """The report a sample command builds, run in this process (``cli.main``), kept as a value."""
    kept: list[Report] = []

    def keep(report: Report, args: Any) -> int:
        kept.append(report)
        return 0

    monkeypatch.setattr(handlers, "_emit", keep)
    monkeypatch.chdir(SAMPLES)
    status = cli.main(shlex.split(command)[1:])
    assert status == 0 and len(kept) == 1, command
    return kept[0]


def strings(value: Any) -> list[str]:
    """Every string inside a JSON value (keys included)."""
    if isinstance(value, str):
        return [value]
    if isinstance(value, dict):
        return [s for k, v in value.items() for s in (k, *strings(v))]
    if isinstance(value, list):
        return [s for v in value for s in strings(v)]
    return []


@pytest.fixture(scope="module")
def reports() -> dict[str, Report]:
    with pytest.MonkeyPatch.context() as mp:
        return {c: report_of(c, mp) for c in SAMPLE_COMMANDS + DIFFS}


class TestNoRepr:
    def test_the_pattern_finds_reprs(self) -> None:
        for shown in ("source None", "value nan", "value [1, None]", "[...]", "value -inf"):
            assert REPR.search(shown), shown
        for word in ("NaN loss", "Infinity", "--ignore-index", "info", "none of the rows"):
            assert not REPR.search(word), word

    @pytest.mark.parametrize("fmt", [f for f in FORMATS if f != "json"])
    def test_human_formats(self, reports: dict[str, Report], fmt: str) -> None:
        found = {}
        for command, report in reports.items():
            text = render(report, fmt)
            hits = [line for line in text.splitlines() if REPR.search(line)]
            if hits:
                found[command] = hits[:3]
        assert not found

    def test_json_strings(self, reports: dict[str, Report]) -> None:
        """JSON writes a missing value as null; no string holds a repr."""
        found = {}
        for command, report in reports.items():
            hits = [s for s in strings(json.loads(render(report, "json"))) if REPR.search(s)]
            if hits:
                found[command] = hits[:3]
        assert not found


# A count of one with its noun in the plural ("1 images not checked", "1 problems").
ONE_MANY = re.compile(
    r"(?<![\d.,=-])\b1 (?:images|rows|ids|boxes|names|files|annotations|labels|masks|classes|"
    r"problems|categories|shapes|objects|values|targets)\b"
)


class TestOneInTheSingular:
    def test_the_pattern_finds_them(self) -> None:
        assert ONE_MANY.search("note: 1 images not checked")
        for fine in ("2 images", "1 image", "rows 21 images", "K=1 classes", "0.1 boxes"):
            assert not ONE_MANY.search(fine), fine

    def test_no_report_counts_one_thing_in_the_plural(self, reports: dict[str, Report]) -> None:
        """Findings, notes and each framework's reading, as JSON holds them (unwrapped)."""
        found = {}
        for command, report in reports.items():
            doc = json.loads(render(report, "json"))
            hits = [s for s in strings(doc) if ONE_MANY.search(s)]
            if hits:
                found[command] = hits[:3]
        assert not found


class TestReportSchema:
    def test_every_sample_report_validates(self, reports: dict[str, Report]) -> None:
        """schemas/report.schema.json describes the JSON of every sample and diff."""
        import jsonschema

        schema = json.loads((ROOT / "schemas" / "report.schema.json").read_text())
        validator = jsonschema.Draft202012Validator(schema)
        found = {}
        for command, report in reports.items():
            errors = list(validator.iter_errors(json.loads(render(report, "json"))))
            if errors:
                found[command] = [e.message for e in errors[:3]]
        assert not found


class TestExamplesNameTheirRows:
    def test_lg007_examples_carry_their_source_and_value(self, reports: dict[str, Report]) -> None:
        report = reports["labelgate validate all_ignored_batch.parquet --classes 4"]
        (lg007,) = [f for f in report.findings if f.code == "LG007"]
        (example,) = lg007.examples
        assert (example.row, example.source, example.value) == (32, "web", -100)
        assert example.id == "img-00032"

    def test_lg014_examples_carry_their_source_and_value(self, reports: dict[str, Report]) -> None:
        report = reports["labelgate validate formats/coco_bad.json --classes 4 --background 0"]
        (lg014,) = [f for f in report.findings if f.code == "LG014"]
        assert [(e.id, e.source, e.value) for e in lg014.examples] == [(100, "coco_bad.json", 3)]


def printed(reports: dict[str, Report]) -> list[str]:
    """Every command line the reports print, in findings and notes, each once."""
    seen: dict[str, None] = {}
    for report in reports.values():
        texts = [t for f in report.findings for t in (f.message, f.fix)] + list(report.notes)
        for text in texts:
            for m in COMMAND.finditer(text):
                if len(shlex.split(m[1])) > 2:  # `labelgate pin` alone names a command
                    seen[m[1]] = None
    return list(seen)


class TestPrintedCommandsRun:
    def test_reports_print_complete_commands(self, reports: dict[str, Report]) -> None:
        commands = printed(reports)
        assert any("--map-value cityscapes" in c for c in commands)
        cityscapes = next(c for c in commands if "--map-value cityscapes" in c)
        assert shlex.split(cityscapes)[:5] == [
            "labelgate",
            "fix",
            "masks/cityscapes",
            "--classes",
            "19",
        ]

    def test_every_command_line_is_in_backticks(self, reports: dict[str, Report]) -> None:
        """A command line outside backticks would escape the harvest (and the completion)."""
        loose = re.compile(r"labelgate (?:fix|validate|smoke|repro|diff|export|pin) (?:--|\S+\.)")
        found = [
            text
            for report in reports.values()
            for f in report.findings
            for text in (f.message, f.fix)
            if loose.search(COMMAND.sub("", text))
        ] + [n for r in reports.values() for n in r.notes if loose.search(COMMAND.sub("", n))]
        assert not found

    def test_each_runs_as_printed(self, reports: dict[str, Report], tmp_path: Path) -> None:
        failed = {}
        for i, command in enumerate(printed(reports)):
            words = shlex.split(command)
            for flag in ("--out", "--quarantine"):  # outputs go to a scratch folder
                if flag in words:
                    at = words.index(flag) + 1
                    words[at] = str(tmp_path / f"{i}-{Path(words[at]).name}")
            result = run_here(*words[1:], cwd=SAMPLES)
            if result.returncode not in (0, 1):
                failed[command] = (result.returncode, result.stderr.strip()[-300:])
        assert not failed

    def test_fix_then_validate_line_runs(self, tmp_path: Path) -> None:
        out = tmp_path / "fixed.parquet"
        result = run_here(
            "fix",
            "neg1_sentinel.parquet",
            "--classes",
            "4",
            "--map-value=-1=ignore",
            "--out",
            str(out),
            cwd=SAMPLES,
        )
        assert result.returncode == 0, result.stderr
        (line,) = [x for x in result.stdout.splitlines() if x.startswith("labelgate validate")]
        command, verdict = line.rsplit(": ", 1)
        assert verdict == "passes"
        assert run_here(*shlex.split(command)[1:], cwd=SAMPLES).returncode == 0
        # no contradiction: the value map changed labels, so no line says none changed
        assert "0 labels changed" not in result.stdout
        assert "value map -1 -> ignore_index: 4 targets" in result.stdout


# A fix of each input kind among the samples: its log's `labelgate validate` line runs as printed. A
# class map the input itself held (COCO's categories, CVAT's <meta>, Label Studio's config, the class
# folders, a ClassLabel, labelme's labels.txt read with its __ignore__ line) is written beside --out.
FIX_KINDS = [
    pytest.param("oob_0_2_4.parquet --classes 4", id="table"),
    pytest.param("one_based_no_header.csv --classes 4 --shift=-1", id="csv"),
    pytest.param(
        "tokens_all_ignored_batch.parquet --schema tokens.yaml --drop-ignored", id="tokens"
    ),
    pytest.param(
        "multilabel.jsonl --classes 4 --task multilabel --label-column labels", id="multilabel"
    ),
    pytest.param("formats/coco_bad.json", id="coco"),
    pytest.param("formats/yolo_bad", id="yolo"),
    pytest.param("formats/voc_bad", id="voc"),
    pytest.param("formats/cvat_bad.xml", id="cvat"),
    pytest.param("formats/labelstudio_bad/export.json", id="labelstudio"),
    pytest.param("formats/labelme_bad", id="labelme"),
    pytest.param("formats/imagefolder_bad", id="imagefolder"),
    pytest.param("formats/hf_bad.parquet", id="hf"),
    pytest.param("masks/binary_0_255 --classes 2 --map-value 255=1", id="masks"),
]


class TestFixLogCommandsOfEveryKind:
    """The command lines a fix prints (the fixed file's validation, with its verdict) run as
    printed and reach that verdict, for every kind of input the samples hold."""

    @pytest.mark.parametrize("fix", FIX_KINDS)
    def test_each_runs_with_the_verdict_printed(self, fix: str, tmp_path: Path) -> None:
        masks = fix.startswith("masks/")
        out = ["--out", str(tmp_path / "fixed")] if masks else [
            "--out", str(tmp_path / "fixed.parquet"),
            "--quarantine", str(tmp_path / "rejected.parquet"),
        ]  # fmt: skip
        result = cli_here("fix", *shlex.split(fix), *out, cwd=SAMPLES)
        assert result.returncode == 0, result.stderr
        run_as_printed(result.stdout, cwd=SAMPLES)

    @pytest.mark.parametrize("packed", ["csv.gz", "json.zst", "zip", "stdin"])
    def test_packed_inputs_too(self, packed: str, tmp_path: Path) -> None:
        """A compressed file, a CVAT export's .zip and standard input: the fix log's command
        names the written file, which runs as printed wherever the input came from."""
        import gzip
        import subprocess
        import sys
        import zipfile

        import pyarrow as pa

        if packed == "csv.gz":
            (tmp_path / "t.csv.gz").write_bytes(gzip.compress(b"id,label\n1,0\n2,5\n3,1\n"))
            args, given = ["t.csv.gz", "--classes", "4"], None
        elif packed == "json.zst":
            with pa.output_stream(str(tmp_path / "c.json.zst"), compression="zstd") as out:
                out.write((SAMPLES / "formats/coco_bad.json").read_bytes())
            args, given = ["c.json.zst"], None
        elif packed == "zip":
            with zipfile.ZipFile(tmp_path / "task.zip", "w") as z:
                z.write(SAMPLES / "formats/cvat_bad.xml", "annotations.xml")
            args, given = ["task.zip"], None
        else:
            args, given = ["-", "--classes", "4"], "id,label\n1,0\n2,5\n3,1\n"
        out = ["--out", "fixed.parquet", "--quarantine", "rejected.parquet"]
        if given is None:
            result = run_here("fix", *args, *out, cwd=tmp_path)
        else:  # standard input is the process's own: read by a fresh one
            result = subprocess.run(
                [sys.executable, "-m", "labelgate", "fix", *args, *out],
                cwd=tmp_path, input=given, capture_output=True, text=True, timeout=120,
                check=False,
            )  # fmt: skip
        assert result.returncode == 0, result.stderr
        run_as_printed(result.stdout, cwd=tmp_path)


def run_as_printed(stdout: str, *, cwd: Path) -> None:
    """Each ``labelgate ...: verdict`` line of a fix log runs as printed and reaches its verdict."""
    printed = [x for x in stdout.splitlines() if x.startswith("labelgate ")]
    assert printed, stdout
    for line in printed:
        command, verdict = line.rsplit(": ", 1)
        again = cli_here(*shlex.split(command)[1:], cwd=cwd)
        assert again.returncode == (0 if verdict.startswith("passes") else 1), again.stderr


CHEX = "id,No Finding,Edema,Cardiomegaly\np1,1,,0\np2,0,-1,1\np3,1,0,0\n"
CHEX_COLUMNS = "No Finding,Edema,Cardiomegaly"


class TestPrintedCommandsOfEveryKind:
    """A multi-label input held one class per column, and a detection input whose class map the
    file itself declares: each command printed, in findings and in the fix log, runs as printed."""

    @pytest.fixture
    def chex(self, tmp_path: Path) -> Path:
        path = tmp_path / "chex.csv"
        path.write_text(CHEX)
        return path

    def harvest(self, *args: str, cwd: Path) -> list[str]:
        result = run_here(*args, "--format", "json", cwd=cwd)
        assert result.returncode in (0, 1), result.stderr
        found = json.loads(result.stdout)["findings"]
        return [m[1] for f in found for t in (f["message"], f["fix"]) for m in COMMAND.finditer(t)]

    def test_label_columns_commands_carry_their_columns(self, chex: Path) -> None:
        commands = self.harvest(
            "validate", "chex.csv", "--label-columns", CHEX_COLUMNS, cwd=chex.parent
        )
        (lg034,) = commands
        words = shlex.split(lg034)
        assert words[words.index("--label-columns") + 1] == CHEX_COLUMNS
        assert "--class-names" not in words
        result = run_here(*words[1:], cwd=chex.parent)
        assert result.returncode == 0, result.stderr

    def test_the_fix_log_validate_line_carries_the_columns(self, chex: Path) -> None:
        result = run_here(
            "fix", "chex.csv", "--label-columns", CHEX_COLUMNS, "--map-value=-1=0",
            "--map-value", "blank=0", "--out", "fixed.parquet", cwd=chex.parent,
        )  # fmt: skip
        assert result.returncode == 0, result.stderr
        (line,) = [x for x in result.stdout.splitlines() if x.startswith("labelgate validate")]
        command, verdict = line.rsplit(": ", 1)
        assert f"--label-columns '{CHEX_COLUMNS}'" in command and verdict.startswith("passes")
        assert run_here(*shlex.split(command)[1:], cwd=chex.parent).returncode == 0

    def test_a_class_map_the_file_declares_is_not_passed_as_a_file(
        self, reports: dict[str, Report], monkeypatch: pytest.MonkeyPatch
    ) -> None:
        """CVAT's ``<meta>`` labels are the map: ``path (<meta> labels)`` is no file to name."""
        report = report_of("labelgate validate formats/cvat_bad.xml", monkeypatch)
        monkeypatch.undo()  # the command below renders and prints its report again
        assert "(<meta> labels)" in report.contract["class_names"]["origin"]
        line = command_line("validate", ["formats/cvat_bad.xml"], report.contract)
        assert "--class-names" not in line
        assert run_here(*shlex.split(line)[1:], cwd=SAMPLES).returncode in (0, 1)
        given = reports["labelgate validate clean.parquet --classes 4 --class-names classes.txt"]
        assert "--class-names classes.txt" in command_line("validate", ["x"], given.contract)
