"""Every bundled sample through the CLI, held to data_samples/README.md's table (the command line
in this process: the verdicts are the subject; the quick start also as a subprocess)."""

from __future__ import annotations

import json
import re
import shlex

import pytest

from tests.conftest import SAMPLES, cli_here, run_cli

pytestmark = pytest.mark.slow  # subprocesses, engines or clusters: the full tier only

COMMAND = re.compile(r"^`(labelgate validate [^`]+)`$")


def table() -> list[tuple[str, int, set[str], set[str]]]:
    rows = []
    for line in (SAMPLES / "README.md").read_text().splitlines():
        cells = [c.strip() for c in line.strip().strip("|").split("|")]
        m = COMMAND.match(cells[0]) if len(cells) >= 4 else None
        if m:
            rows.append((m[1], int(cells[1]), set(cells[2].split()), set(cells[3].split())))
    return rows


def test_table_is_not_empty() -> None:
    assert len(table()) >= 14


@pytest.mark.parametrize(
    ("command", "status", "errors", "warnings"),
    table(),
    # sets by their sorted codes: an id must not follow the hash seed (each worker has its own)
    ids=lambda v: str(sorted(v) if isinstance(v, set) else v)[:60],
)
def test_sample(command: str, status: int, errors: set[str], warnings: set[str]) -> None:
    args = shlex.split(command)[1:]
    result = cli_here(*args, "--format", "json", cwd=SAMPLES)
    assert result.returncode == status, result.stderr
    report = json.loads(result.stdout)
    found = {f["severity"]: set() for f in report["findings"]}
    for f in report["findings"]:
        found[f["severity"]].add(f["code"])
    assert found.get("error", set()) == errors
    assert found.get("warning", set()) == warnings
    c = report["counts"]
    assert c["rows"] == c["usable"] + c["ignored"] + c["rejected"]
    text = cli_here(*args, cwd=SAMPLES)
    assert text.returncode == status
    assert ("PASS" if status == 0 else "FAIL") in text.stdout


def test_oob_sample_names_the_row_and_id() -> None:
    result = run_cli(
        "validate", "oob_0_2_4.parquet", "--classes", "4", "--format", "json", cwd=SAMPLES
    )
    (lg004,) = [f for f in json.loads(result.stdout)["findings"] if f["code"] == "LG004"]
    assert lg004["examples"] == [{"row": 2, "id": 103, "batch": 0, "source": None, "value": 4}]
    assert "K+1" in lg004["fix"] and "Do not widen" in lg004["fix"]
