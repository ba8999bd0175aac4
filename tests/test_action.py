"""The GitHub Action (action.yml): its steps run as a runner would, against data_samples/, with a
fake GITHUB_* environment."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from pathlib import Path
from typing import Any

import junitparser
import pytest
import yaml

from tests.conftest import ROOT, SAMPLES

pytestmark = pytest.mark.slow  # subprocesses

ACTION = yaml.safe_load((ROOT / "action.yml").read_text())
EXPRESSION = re.compile(r"\$\{\{\s*inputs\.([\w-]+)\s*\}\}")


def inputs_with(**given: str) -> dict[str, str]:
    """The action's inputs: its defaults, then ``given`` (names with - as _)."""
    values = {name: str(spec.get("default", "")) for name, spec in ACTION["inputs"].items()}
    for name, value in given.items():
        assert name.replace("_", "-") in values, name
        values[name.replace("_", "-")] = value
    return values


def runs(condition: str | None, inputs: dict[str, str]) -> bool:
    """The step conditions action.yml uses: always(), and an input compared with a string."""
    if condition is None:
        return True
    tests = [c.strip() for c in condition.split("&&")]
    for test in tests:
        if test == "always()":
            continue
        m = re.fullmatch(r"inputs\.([\w-]+) (==|!=) '([^']*)'", test)
        assert m, f"a condition this test cannot read: {test}"
        if (inputs[m[1]] == m[3]) != (m[2] == "=="):
            return False
    return True


def run_action(tmp_path: Path, **given: str) -> tuple[int, dict[str, Any]]:
    """Each `run` step of the composite action in order, as GitHub runs it (bash, the inputs
    substituted, GITHUB_ACTION_PATH the repository root); `uses` steps are listed, not run.
    The workspace is data_samples/ (read-only: reports go to tmp_path)."""
    inputs = inputs_with(install="false", reports=str(tmp_path / "reports"), **given)
    summary, output = tmp_path / "summary.md", tmp_path / "output.txt"
    env = {
        **os.environ,
        "PATH": str(Path(sys.executable).parent) + os.pathsep + os.environ["PATH"],
        "GITHUB_ACTIONS": "true",
        "GITHUB_ACTION_PATH": str(ROOT),
        "GITHUB_WORKSPACE": str(SAMPLES),
        "GITHUB_STEP_SUMMARY": str(summary),
        "GITHUB_OUTPUT": str(output),
    }
    seen: dict[str, Any] = {"uses": [], "stdout": "", "stderr": ""}
    status = 0
    for step in ACTION["runs"]["steps"]:
        after_failure = status != 0
        if after_failure and "always()" not in step.get("if", ""):
            continue  # GitHub skips the steps after a failed one, but for if: always()
        if not runs(step.get("if"), inputs):
            continue
        if "uses" in step:
            seen["uses"].append((step["uses"], step.get("with", {})))
            continue
        assert step["shell"] == "bash"
        step_env = {k: EXPRESSION.sub(lambda m: inputs[m[1]], v) for k, v in step["env"].items()}
        done = subprocess.run(
            ["bash", "-c", step["run"]],
            cwd=SAMPLES,
            env={**env, **step_env},
            capture_output=True,
            text=True,
            timeout=300,
            check=False,
        )
        seen["stdout"] += done.stdout
        seen["stderr"] += done.stderr
        status = status or done.returncode
    seen["summary"] = summary.read_text() if summary.exists() else ""
    seen["outputs"] = dict(
        line.split("=", 1) for line in (output.read_text().splitlines() if output.exists() else [])
    )
    seen["inputs"] = inputs
    return status, seen


class TestDefinition:
    def test_is_a_composite_action_with_the_inputs(self) -> None:
        assert ACTION["runs"]["using"] == "composite"
        assert {"head", "base", "contract", "formats"} <= set(ACTION["inputs"])
        assert ACTION["inputs"]["head"]["required"] is True
        uses = [s["uses"] for s in ACTION["runs"]["steps"] if "uses" in s]
        assert uses == [
            "actions/cache/restore@v4",
            "actions/cache/save@v4",
            "actions/upload-artifact@v4",
        ]

    def test_the_gate_step_is_the_script(self) -> None:
        (gate,) = [s for s in ACTION["runs"]["steps"] if s.get("id") == "gate"]
        assert "pipelines/action.sh" in gate["run"]
        assert set(EXPRESSION.findall(str(gate["env"]))) == {
            "head",
            "base",
            "contract",
            "args",
            "formats",
            "reports",
            "cache",
            "base-ref",
            "comment",
            "token",
        }


class TestRun:
    def test_the_cache_is_restored_used_and_saved_even_when_the_gate_blocks(
        self, tmp_path: Path
    ) -> None:
        cache = str(tmp_path / "cache")
        status, seen = run_action(
            tmp_path, head="oob_0_2_4.parquet", args="--classes 4", cache=cache
        )
        assert status == 1, seen["stderr"]
        assert [u for u, _ in seen["uses"]] == [
            "actions/cache/restore@v4",
            "actions/cache/save@v4",
            "actions/upload-artifact@v4",
        ]
        restore, save = seen["uses"][0][1], seen["uses"][1][1]
        assert restore["path"] == save["path"] == "${{ inputs.cache }}"
        assert restore["restore-keys"] == "labelgate-${{ runner.os }}-"
        # the report files' runs come after the gate's: they read nothing it read
        report = json.loads((tmp_path / "reports" / "report.json").read_text())
        assert (report["cache"]["files_read"], report["cache"]["files_cached"]) == (0, 1)

    def test_without_cache_no_cache_step_runs(self, tmp_path: Path) -> None:
        _, seen = run_action(tmp_path, head="clean.parquet", args="--classes 4")
        assert [u for u, _ in seen["uses"]] == ["actions/upload-artifact@v4"]

    def test_validate_blocks_a_bad_file(self, tmp_path: Path) -> None:
        status, seen = run_action(tmp_path, head="oob_0_2_4.parquet", args="--classes 4")
        assert status == 1, seen["stderr"]
        assert "::error file=oob_0_2_4.parquet,title=LG004::" in seen["stdout"]
        assert seen["summary"].startswith("## labelgate validate: FAIL")
        assert seen["outputs"] == {"status": "1", "reports": str(tmp_path / "reports")}
        names = sorted(p.name for p in (tmp_path / "reports").iterdir())
        assert names == ["junit.xml", "report.html", "report.json"]
        suite = next(iter(junitparser.JUnitXml.fromfile(str(tmp_path / "reports" / "junit.xml"))))
        assert suite.failures >= 1
        # upload-artifact runs even though the gate failed (if: always())
        ((uses, with_),) = seen["uses"]
        assert uses == "actions/upload-artifact@v4"
        assert with_["path"] == "${{ inputs.reports }}"

    def test_diff_with_a_contract_passes_an_unchanged_dataset(self, tmp_path: Path) -> None:
        status, seen = run_action(
            tmp_path,
            head="ignore_inside_range.parquet",
            base="ignore_inside_range.parquet",
            contract="ignore_inside_range.yaml",
            formats="markdown",
        )
        assert status == 1  # the contract's ignore_index 0 fails the data itself (LG006)
        assert "title=LG006::" in seen["stdout"]
        assert "against base `ignore_inside_range.parquet`" in seen["summary"]
        assert [p.name for p in (tmp_path / "reports").iterdir()] == ["report.md"]

    def test_diff_passes_a_clean_dataset(self, tmp_path: Path) -> None:
        status, seen = run_action(
            tmp_path, head="clean.parquet", base="clean.parquet", args="--classes 4"
        )
        assert status == 0, seen["stderr"]
        assert seen["outputs"]["status"] == "0"
        assert "## labelgate diff: PASS" in seen["summary"]

    def test_a_missing_file_is_a_usage_error_without_reports(self, tmp_path: Path) -> None:
        status, seen = run_action(tmp_path, head="missing.parquet", args="--classes 4")
        assert status == 2
        assert "no such file" in seen["stderr"]
        assert list((tmp_path / "reports").iterdir()) == []

    def test_an_unknown_format_is_a_usage_error(self, tmp_path: Path) -> None:
        status, seen = run_action(tmp_path, head="clean.parquet", args="--classes 4", formats="pdf")
        assert status == 2 and "unknown report format 'pdf'" in seen["stderr"]


@pytest.mark.parametrize(
    "path", [ROOT / "pipelines" / "github" / "labelgate-action.yml", ROOT / "docs" / "ci-gate.md"]
)
def test_docs_and_pipelines_show_uses(path: Path) -> None:
    assert "uses: labelgate/labelgate@" in path.read_text()


def test_the_workflow_uses_the_action_from_a_shallow_clone_with_its_comment() -> None:
    doc = yaml.safe_load((ROOT / "pipelines" / "github" / "labelgate-action.yml").read_text())
    assert doc["permissions"]["pull-requests"] == "write"
    steps = doc["jobs"]["labels"]["steps"]
    checkout = next(s for s in steps if s.get("uses", "").startswith("actions/checkout"))
    assert "fetch-depth" not in checkout.get("with", {})  # the action fetches the base itself
    gate = next(s for s in steps if s.get("uses", "").startswith("labelgate/labelgate@"))
    assert set(gate["with"]) <= set(ACTION["inputs"]) and "base-ref" in gate["with"]
    assert "git worktree" not in (ROOT / "docs" / "ci-gate.md").read_text().split("```yaml")[1]
