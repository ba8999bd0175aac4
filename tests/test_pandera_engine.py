"""The contract as a pandera schema, and pandera as an engine that agrees with the default one."""

from __future__ import annotations

import os
import shlex
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from labelgate import ClassMap, Contract
from labelgate.core.report import Report
from labelgate.run.validation import report_of
from tests.conftest import ROOT, SAMPLES, cli_here
from tests.test_samples import table

# engines: the full tier only; one worker runs the engine modules (pandas, pandera and GX imported once)
pytestmark = [pytest.mark.slow, pytest.mark.xdist_group("engines")]

ROW_CODES = ("LG002", "LG003", "LG004", "LG005", "LG014")


def validate_with_pandera(paths: list[str], contract: Contract, **options: Any) -> Report:
    """The pandera engine, its module (and pandas and pandera with it) imported at the first
    call: collection imports neither."""
    from labelgate.engines import pandera as engine

    return engine.validate_with_pandera(paths, contract, **options)


def rows_by_code(report: object) -> dict[str, list[int]]:
    return {
        code: next(([e.row for e in f.examples] for f in report.findings if f.code == code), [])  # type: ignore[attr-defined]
        for code in ROW_CODES
    }


# The samples whose task the row-level engines check (multiclass); tokens and soft labels they
# refuse with a usage error (tested below), never a silent pass.
ENGINE_SAMPLES = [
    c
    for c, *_ in table()
    if not any(task in c for task in ("soft", "tokens", "multilabel", "masks/"))
]


def on_sample(command: str, engine: Callable[..., Report]) -> tuple[Report, Report]:
    """A sample's table command run by the default engine and by ``engine``."""
    from labelgate.cli import build_parser
    from labelgate.cli.handlers import _contract

    args = build_parser().parse_args(shlex.split(command)[1:])
    cwd = Path.cwd()
    os.chdir(SAMPLES)
    try:
        contract = _contract(args)
        return report_of(args.paths, contract, max_examples=0), engine(
            args.paths, contract, max_examples=0
        )
    finally:
        os.chdir(cwd)


def same_verdict(default: Report, through: Report) -> bool:
    """The same status and the same set of codes at each severity."""

    def codes(r: Report) -> set[tuple[str, str]]:
        return {(f.code, f.severity) for f in r.findings}

    return default.status == through.status and codes(default) == codes(through)


def random_labels(n: int) -> st.SearchStrategy[list[int | None]]:
    return st.lists(st.one_of(st.none(), st.integers(-3, 6), st.just(-100)), min_size=1, max_size=n)


def agree_on_random_file(
    labels: list[int | None], ids: list[int], tmp_path: Path, engine: Callable[..., Report]
) -> None:
    """The default engine and ``engine`` fail the same rows and account for them the same."""
    path = tmp_path / "r.parquet"
    pq.write_table(
        pa.table({"id": ids[: len(labels)], "label": pa.array(labels, pa.int64())}), path
    )
    contract = Contract(num_classes=4)
    default = report_of([str(path)], contract, max_examples=0)
    through = engine([str(path)], contract, max_examples=0)
    assert rows_by_code(default) == rows_by_code(through)
    assert default.counts == through.counts
    assert same_verdict(default, through)


class TestSchema:
    def test_yaml_round_trip_and_failure_cases(self) -> None:
        import pandas as pd
        import pandera.errors
        import pandera.pandas as pa_

        from labelgate.engines.pandera import schema

        contract = Contract(
            num_classes=4,
            label_column="label",
            id_column="id",
            name_column="label_name",
            class_map=ClassMap.from_names(["cat", "dog", "bird", "fish"]),
        )
        built = schema(contract)
        again = pa_.DataFrameSchema.from_yaml(built.to_yaml())
        assert again == built
        df = pd.DataFrame(
            {"id": [1, 2, 2, 3], "label": [0, 4, -1, 1], "label_name": ["cat", "fish", "x", "cat"]}
        )
        with pytest.raises(pandera.errors.SchemaErrors) as err:
            again.validate(df, lazy=True)
        cases = err.value.failure_cases
        assert sorted(set(cases["index"].dropna().astype(int).tolist())) == [1, 2, 3]
        assert any("labelgate_class_index" in str(c) for c in cases["check"])

    def test_export_command(self, tmp_path: Path) -> None:
        out = tmp_path / "schema.yaml"
        result = cli_here(
            "export", "pandera", str(ROOT / "schemas" / "image_classification.yaml"), "-o", str(out)
        )
        assert result.returncode == 0, result.stderr
        import pandera.pandas as pa_

        import labelgate.engines.pandera  # noqa: F401  (registers the checks before reading)

        assert pa_.DataFrameSchema.from_yaml(out.read_text()).name == "pets-4"


class TestAgreement:
    @pytest.mark.parametrize("command", ENGINE_SAMPLES, ids=lambda c: c[19:70])
    def test_samples(self, command: str) -> None:
        default, through = on_sample(command, validate_with_pandera)
        assert rows_by_code(default) == rows_by_code(through)
        assert same_verdict(default, through)
        (said,) = [n for n in through.notes if n.startswith("engine pandera")]
        assert "LG004" in said and said.endswith("every other check on the same input")

    @settings(
        max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
    )
    @given(labels=random_labels(50), ids=st.lists(st.integers(0, 20), min_size=50, max_size=50))
    def test_random_files(self, labels: list[int | None], ids: list[int], tmp_path: Path) -> None:
        agree_on_random_file(labels, ids, tmp_path, validate_with_pandera)


@pytest.mark.parametrize("engine", ["pandera", "gx"])
def test_other_tasks_are_refused_not_passed(engine: str) -> None:
    result = cli_here("validate", "soft_labels.parquet", "-k", "4", "--engine", engine, cwd=SAMPLES)
    assert result.returncode == 2
    assert (
        "check the multiclass task; this input is soft" in result.stderr
        or "labelgate[gx]" in result.stderr
    )


def test_cli_engine_flag() -> None:
    result = cli_here(
        "validate", "oob_0_2_4.parquet", "-k", "4", "--engine", "pandera", cwd=SAMPLES
    )
    assert (
        result.returncode == 1 and "engine: pandera" in result.stdout and "LG004" in result.stdout
    )


class TestSection:
    @pytest.fixture
    def bad_columns(self, tmp_path: Path) -> Path:
        rows = pq.read_table(SAMPLES / "clean.parquet").to_pydict()
        rows["path"][3] = "tmp/x.jpg"
        rows["source"][7] = "scraped"
        rows["path"][150] = None
        path = tmp_path / "bad_columns.parquet"
        pq.write_table(pa.table(rows), path)
        return path

    def test_both_engines_report_the_same_rows(self, bad_columns: Path) -> None:
        contract = Contract.from_yaml(ROOT / "schemas" / "image_classification.yaml")
        for report in (
            report_of([str(bad_columns)], contract, max_examples=0),
            validate_with_pandera([str(bad_columns)], contract, max_examples=0),
        ):
            (f,) = [f for f in report.findings if f.code == "LG019"]
            assert [e.row for e in f.examples] == [3, 7, 150] and f.severity == "error"

    def test_sample_passes_its_contract(self) -> None:
        contract = Contract.from_yaml(ROOT / "schemas" / "image_classification.yaml")
        assert not report_of([str(SAMPLES / "clean.parquet")], contract).failed

    def test_missing_column(self, tmp_path: Path) -> None:
        schema_file = tmp_path / "c.yaml"
        schema_file.write_text(
            "num_classes: 4\npandera:\n  columns:\n    split:\n      checks:\n        isin: [train, val]\n"
        )
        report = report_of([str(SAMPLES / "clean.parquet")], Contract.from_yaml(schema_file))
        (f,) = [f for f in report.findings if f.code == "LG019"]
        assert "missing: split" in f.message

    @pytest.mark.parametrize(
        ("section", "key"),
        [
            ("pandera:\n  colums: {}\n", "pandera.colums"),
            ("pandera:\n  columns:\n    path: 3\n", "pandera.columns.path"),
            (
                "pandera:\n  columns:\n    path:\n      checks:\n        no_such_check: 1\n",
                "pandera",
            ),
        ],
    )
    def test_bad_section_names_the_key(self, tmp_path: Path, section: str, key: str) -> None:
        from labelgate import ContractError

        schema_file = tmp_path / "c.yaml"
        schema_file.write_text("num_classes: 4\n" + section)
        with pytest.raises(ContractError) as err:
            Contract.from_yaml(schema_file)
        assert key in str(err.value)


NAMES = ["cat", "dog", "bird", "fish"]


@st.composite
def named_rows(draw: st.DrawFn) -> tuple[list[int], list[str]]:
    """Labels with names, some disagreeing; the first row agrees, so no shift is 'proven'."""
    n = draw(st.integers(min_value=1, max_value=40))
    labels = draw(st.lists(st.integers(0, 3), min_size=n, max_size=n))
    names = [NAMES[v] if draw(st.booleans()) else draw(st.sampled_from(NAMES)) for v in labels]
    names[0] = NAMES[labels[0]]
    return labels, names


def write_named(
    tmp_path: Path, labels: list[int], names: list[str]
) -> tuple[str, Contract, list[int]]:
    """The file, its contract, and the rows whose name is not their label's (the rule)."""
    path = tmp_path / "n.parquet"
    pq.write_table(pa.table({"label": labels, "label_name": names}), path)
    expected = [
        i for i, (v, name) in enumerate(zip(labels, names, strict=True)) if NAMES[v] != name
    ]
    return str(path), Contract(num_classes=4, class_map=ClassMap.from_names(NAMES)), expected


def lg010_rows(report: Report) -> list[int]:
    return next(([e.row for e in f.examples] for f in report.findings if f.code == "LG010"), [])


@settings(
    max_examples=40, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(case=named_rows())
def test_label_name_agreement(case: tuple[list[int], list[str]], tmp_path: Path) -> None:
    path, contract, expected = write_named(tmp_path, *case)
    default = report_of([str(path)], contract, max_examples=0)
    if any(f.code == "LG011" for f in default.findings):
        return  # a source whose names prove a shift: its rows are LG011's, not LG010's
    lg010 = next((f for f in default.findings if f.code == "LG010"), None)
    # The default engine counts every row and shows the first row of each disagreeing pair.
    assert (lg010.count if lg010 else 0) == len(expected)
    assert set(lg010_rows(default)) <= set(expected)
    assert lg010_rows(validate_with_pandera([path], contract, max_examples=0)) == expected
