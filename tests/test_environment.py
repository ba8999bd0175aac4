"""The report's context read without a subprocess: the same code revision as git gives, the same
platform as the standard library's."""

from __future__ import annotations

import os
import platform
import shutil
import subprocess
from pathlib import Path

import pytest

from labelgate.core import environment as env

needs_git = pytest.mark.skipif(shutil.which("git") is None, reason="git is not installed")


def git(cwd: Path, *args: str) -> str:
    out = subprocess.run(["git", *args], cwd=cwd, capture_output=True, text=True, check=True)
    return out.stdout.strip()


def test_platform_is_the_standard_librarys() -> None:
    assert env._platform() == platform.platform(terse=True)


@needs_git
class TestRevision:
    @pytest.fixture
    def repo(self, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
        for name in env._GIT_PLACES:
            monkeypatch.delenv(name, raising=False)
        root = tmp_path / "repo"
        root.mkdir()
        git(root, "init", "-q", "-b", "main")
        (root / "a.txt").write_text("a\n")
        git(root, "add", "a.txt")
        ident = ("-c", "user.name=t", "-c", "user.email=t@example.com")
        git(root, *ident, "commit", "-q", "-m", "one")
        git(root, *ident, "commit", "-q", "--allow-empty", "-m", "two")
        return root

    def revision_in(self, folder: Path, monkeypatch: pytest.MonkeyPatch) -> str | None:
        monkeypatch.chdir(folder)
        return env._revision()

    def test_loose_packed_detached_and_worktree(
        self, repo: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
    ) -> None:
        calls: list[int] = []
        monkeypatch.setattr(env, "_git_revision", lambda: calls.append(1))
        sub = repo / "sub"
        sub.mkdir()
        want = git(repo, "rev-parse", "--short=12", "HEAD")
        assert self.revision_in(sub, monkeypatch) == want  # a loose ref, from a subfolder
        git(repo, "pack-refs", "--all")
        assert not (repo / ".git" / "refs" / "heads" / "main").exists()
        assert self.revision_in(repo, monkeypatch) == want  # packed-refs
        git(repo, "checkout", "-q", "--detach", "HEAD~1")
        assert self.revision_in(repo, monkeypatch) == git(repo, "rev-parse", "--short=12", "HEAD")
        git(repo, "worktree", "add", "-q", "-b", "other", str(tmp_path / "wt"), "main")
        assert self.revision_in(tmp_path / "wt", monkeypatch) == want  # a .git file, commondir
        assert calls == []  # every answer came from the files

    def test_outside_a_repository_none(
        self, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
    ) -> None:
        if any(p.joinpath(".git").exists() for p in (tmp_path, *tmp_path.parents)):
            pytest.skip("the temporary folder is inside a repository")
        assert self.revision_in(tmp_path, monkeypatch) is None

    def test_an_unborn_branch_asks_git(
        self, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
    ) -> None:
        git(tmp_path, "init", "-q")
        assert self.revision_in(tmp_path, monkeypatch) is None  # git says no HEAD: None


def test_git_dir_variables_leave_it_to_git(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("GIT_DIR", os.devnull)
    monkeypatch.setattr(env, "_git_revision", lambda: "from-git")
    assert env._revision() == "from-git"
