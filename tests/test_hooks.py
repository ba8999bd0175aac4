"""Hooks where datasets live: the pre-commit hook (by the pre-commit framework itself, and the
plain git hook pipelines/pre-commit.sh) reads only the label files a commit changes."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq
import pytest
import yaml

from tests.conftest import ROOT

pytestmark = pytest.mark.slow  # git and labelgate in subprocesses


def env() -> dict[str, str]:
    return {
        **os.environ,
        "PATH": str(Path(sys.executable).parent) + os.pathsep + os.environ["PATH"],
        "PRE_COMMIT_HOME": os.environ.get("PRE_COMMIT_HOME", "/tmp/labelgate-pre-commit-home"),
        "GIT_AUTHOR_NAME": "t",
        "GIT_AUTHOR_EMAIL": "t@example.org",
        "GIT_COMMITTER_NAME": "t",
        "GIT_COMMITTER_EMAIL": "t@example.org",
    }


def sh(cwd: Path, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        list(args), cwd=cwd, env=env(), capture_output=True, text=True, timeout=300, check=False
    )


def shard(path: Path, labels: list[int]) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    pq.write_table(
        pa.table({"id": [f"{path.stem}-{i}" for i in range(len(labels))], "label": labels}), path
    )


@pytest.fixture
def repo(tmp_path: Path) -> Path:
    """A dataset repository of three committed shards; the second is then made bad in the
    working tree only (unstaged), the third changed and staged."""
    root = tmp_path / "ds"
    root.mkdir()
    assert sh(root, "git", "init", "-q").returncode == 0
    for name in ("a", "b", "c"):
        shard(root / "data" / f"{name}.parquet", [0, 1, 2, 3] * 4)
    (root / "README.md").write_text("labels\n")
    sh(root, "git", "add", ".")
    assert sh(root, "git", "commit", "-qm", "shards").returncode == 0
    shard(root / "data" / "b.parquet", [0, 1, 9, 3])  # bad, but not staged: not this commit's
    return root


class TestPlainGitHook:
    def hook(self, repo: Path) -> subprocess.CompletedProcess[str]:
        return sh(
            repo,
            "env",
            "LABELGATE_ARGS=--classes 4",
            "bash",
            str(ROOT / "pipelines" / "pre-commit.sh"),
        )

    def test_nothing_staged_runs_nothing(self, repo: Path) -> None:
        done = self.hook(repo)
        assert done.returncode == 0 and "no label file staged" in done.stdout

    def test_only_the_staged_file_as_staged(self, repo: Path) -> None:
        shard(repo / "data" / "c.parquet", [0, 1, 2, 7])
        sh(repo, "git", "add", "data/c.parquet")
        shard(repo / "data" / "c.parquet", [0, 1, 2, 3])  # fixed on disk, but the index is bad
        done = self.hook(repo)
        assert done.returncode == 1, done.stdout + done.stderr
        assert "1 staged label file(s): data/c.parquet" in done.stdout
        assert "data/c.parquet" in done.stdout and "data/b.parquet" not in done.stdout
        sh(repo, "git", "add", "data/c.parquet")
        assert self.hook(repo).returncode == 0  # the fix staged; b's unstaged fault is not read


@pytest.mark.skipif(
    shutil.which("pre-commit") is None
    and not Path(sys.executable).with_name("pre-commit").exists(),
    reason="pre-commit is not installed",
)
class TestPreCommitFramework:
    def test_the_hook_gets_the_changed_label_files_only(self, repo: Path) -> None:
        (hook,) = yaml.safe_load((ROOT / ".pre-commit-hooks.yaml").read_text())
        # The published hook as a local one (language: system runs it from this environment:
        # no hook environment to build, no network), with the consumer's args and files.
        local = {
            k: hook[k] for k in ("id", "name", "entry", "files", "pass_filenames", "require_serial")
        }
        local |= {"language": "system", "args": ["--classes", "4"]}
        config = {"repos": [{"repo": "local", "hooks": [local]}]}
        (repo / ".pre-commit-config.yaml").write_text(yaml.safe_dump(config))
        sh(repo, "git", "add", ".pre-commit-config.yaml")
        pre_commit = str(Path(sys.executable).with_name("pre-commit"))
        unchanged = sh(repo, pre_commit, "run")
        assert unchanged.returncode == 0 and "(no files to check)Skipped" in unchanged.stdout
        shard(repo / "data" / "c.parquet", [0, 1, 2, 7])
        sh(repo, "git", "add", "data/c.parquet")
        changed = sh(repo, pre_commit, "run", "--verbose")
        assert changed.returncode == 1, changed.stdout
        assert "data/c.parquet" in changed.stdout and "LG004" in changed.stdout
        assert "data/b.parquet" not in changed.stdout  # unstaged: stashed away by pre-commit
        assert "data/a.parquet" not in changed.stdout  # unchanged: never passed
