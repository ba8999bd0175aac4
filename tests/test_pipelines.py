"""The pipelines users copy: each file's command lines, run against data_samples/."""

from __future__ import annotations

import os
import shlex
import subprocess
import sys
from pathlib import Path

import junitparser
import pytest
import yaml

from tests.conftest import ROOT, SAMPLES

pytestmark = pytest.mark.slow  # subprocesses, engines or clusters: the full tier only

PIPELINES = ROOT / "pipelines"


def env_with_labelgate(tmp_path: Path, **extra: str) -> dict[str, str]:
    """PATH with this interpreter's scripts first (where `labelgate` is installed)."""
    bin_dir = str(Path(sys.executable).parent)
    return {
        **os.environ,
        "PATH": bin_dir + os.pathsep + os.environ["PATH"],
        "LABELGATE_REPORTS": str(tmp_path / "reports"),
        **extra,
    }


def bash(command: str, env: dict[str, str], cwd: Path = ROOT) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        ["bash", "-c", command],
        cwd=cwd,
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )


class TestGate:
    def test_blocks_a_broken_head(self, tmp_path: Path) -> None:
        env = env_with_labelgate(tmp_path)
        base, head = SAMPLES / "clean.parquet", SAMPLES / "two_sources_one_based.parquet"
        result = bash(f"bash pipelines/gate.sh {base} {head} --classes 4", env)
        assert result.returncode == 1, result.stderr
        assert "::error file=" in result.stdout and "title=LG021::" in result.stdout
        reports = tmp_path / "reports"
        assert sorted(p.name for p in reports.iterdir()) == [
            "junit.xml",
            "report.html",
            "report.json",
        ]
        suite = next(iter(junitparser.JUnitXml.fromfile(str(reports / "junit.xml"))))
        assert suite.failures >= 3

    def test_passes_an_unchanged_dataset(self, tmp_path: Path) -> None:
        clean = SAMPLES / "clean.parquet"
        result = bash(
            f"bash pipelines/gate.sh {clean} {clean} --classes 4", env_with_labelgate(tmp_path)
        )
        assert result.returncode == 0, result.stdout

    def test_usage(self, tmp_path: Path) -> None:
        assert bash("bash pipelines/gate.sh only-one", env_with_labelgate(tmp_path)).returncode == 2


def workflow_command(text: str) -> str:
    return (
        next(line for line in text.splitlines() if "pipelines/gate.sh" in line)
        .split("run:", 1)[-1]
        .strip(" -")
    )


class TestCiDefinitions:
    @pytest.mark.parametrize(
        "path",
        [
            PIPELINES / "github" / "labelgate-gate.yml",
            PIPELINES / "gitlab" / "labelgate.gitlab-ci.yml",
        ],
        ids=lambda p: p.parent.name,
    )
    def test_gate_step_runs_on_samples(self, path: Path, tmp_path: Path) -> None:
        doc = yaml.safe_load(path.read_text())
        assert doc  # valid YAML
        command = workflow_command(path.read_text())
        env = env_with_labelgate(
            tmp_path,
            BASE_DATA=str(SAMPLES / "clean.parquet"),
            HEAD_DATA=str(SAMPLES / "oob_0_2_4.parquet"),
            LABELGATE_ARGS="--classes 4",
        )
        result = bash(command, env)
        assert result.returncode == 1 and "title=LG004::" in result.stdout
        env["HEAD_DATA"] = str(SAMPLES / "clean.parquet")
        assert bash(command, env).returncode == 0

    def test_github_runs_on_pull_requests_touching_data(self) -> None:
        doc = yaml.safe_load((PIPELINES / "github" / "labelgate-gate.yml").read_text())
        triggers = doc[True] if True in doc else doc["on"]  # YAML 1.1 reads `on` as true
        assert "data/**" in triggers["pull_request"]["paths"]

    def test_gitlab_reports_junit(self) -> None:
        doc = yaml.safe_load((PIPELINES / "gitlab" / "labelgate.gitlab-ci.yml").read_text())
        assert (
            doc["labelgate-gate"]["artifacts"]["reports"]["junit"] == "labelgate-reports/junit.xml"
        )

    def test_gitlab_keeps_the_cache_even_when_the_gate_blocks(self) -> None:
        job = yaml.safe_load((PIPELINES / "gitlab" / "labelgate.gitlab-ci.yml").read_text())
        job = job["labelgate-gate"]
        assert "--cache .labelgate-cache" in job["variables"]["LABELGATE_ARGS"]
        assert job["cache"]["paths"] == [".labelgate-cache/"] and job["cache"]["when"] == "always"

    def test_github_restores_the_cache_before_the_gate_and_saves_it_after(self) -> None:
        doc = yaml.safe_load((PIPELINES / "github" / "labelgate-gate.yml").read_text())
        job = doc["jobs"]["labels"]
        assert "--cache .labelgate-cache" in job["env"]["LABELGATE_ARGS"]
        steps = [s.get("uses") or s.get("run", "") for s in job["steps"]]
        restore = steps.index("actions/cache/restore@v4")
        gate = next(i for i, s in enumerate(steps) if "pipelines/gate.sh" in s)
        save = steps.index("actions/cache/save@v4")
        assert restore < gate < save and job["steps"][save]["if"] == "always()"
        keys = {job["steps"][i]["with"]["key"] for i in (restore, save)}
        assert len(keys) == 1  # saved under the key restored, new in every run


class TestPreCommitHook:
    def test_entry_as_pre_commit_calls_it(self, tmp_path: Path) -> None:
        (hook,) = yaml.safe_load((ROOT / ".pre-commit-hooks.yaml").read_text())
        assert hook["id"] == "labelgate-validate" and hook["language"] == "python"
        entry = shlex.split(hook["entry"])
        env = env_with_labelgate(tmp_path)
        good = subprocess.run(
            [*entry, "--classes", "4", str(SAMPLES / "clean.parquet")],
            env=env,
            capture_output=True,
            check=False,
        )
        bad = subprocess.run(
            [*entry, "--classes", "4", str(SAMPLES / "oob_0_2_4.parquet")],
            env=env,
            capture_output=True,
            check=False,
        )
        assert (good.returncode, bad.returncode) == (0, 1)
        import re

        assert re.search(hook["files"], "data/train.parquet") and not re.search(
            hook["files"], "data/readme.md"
        )


class TestPretrain:
    def test_launches_only_after_both_checks(self, tmp_path: Path) -> None:
        env = env_with_labelgate(tmp_path)
        train = f"{sys.executable} -c \"print('training started')\""
        ok = bash(
            f"bash pipelines/pretrain.sh {SAMPLES / 'clean.parquet'} --classes 4 -- {train}", env
        )
        assert ok.returncode == 0, ok.stderr
        assert "training started" in ok.stdout
        assert (tmp_path / "reports" / "validate.json").exists() and (
            tmp_path / "reports" / "smoke.json"
        ).exists()

    def test_stops_the_launch_on_bad_labels(self, tmp_path: Path) -> None:
        env = env_with_labelgate(tmp_path)
        train = f"{sys.executable} -c \"print('training started')\""
        bad = bash(
            f"bash pipelines/pretrain.sh {SAMPLES / 'oob_0_2_4.parquet'} --classes 4 -- {train}",
            env,
        )
        assert bad.returncode == 1
        assert "training started" not in bad.stdout and "training not started" in bad.stderr
