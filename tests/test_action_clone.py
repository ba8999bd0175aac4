"""pipelines/action.sh in a real shallow clone (`git clone --depth 1 file://...`) of a generated
dataset repository with a base and a head commit: it fetches the base revision itself, diffs
against it, and posts, then updates, one pull-request comment through a local stand-in for the
GitHub API (GITHUB_API_URL); a fork's pull request is skipped with a notice."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from tests.conftest import ROOT

pytestmark = pytest.mark.slow  # git and the gate in subprocesses

MARKER = "<!-- labelgate pr-comment -->"


def git(cwd: Path, *args: str) -> str:
    done = subprocess.run(
        ["git", "-c", "user.name=t", "-c", "user.email=t@example.org", *args],
        cwd=cwd,
        capture_output=True,
        text=True,
        check=True,
    )
    return done.stdout.strip()


@pytest.fixture
def clone(tmp_path: Path) -> tuple[Path, str]:
    """A shallow clone of a repository whose head commit relabels two rows; the base's sha."""
    origin = tmp_path / "origin"
    (origin / "data").mkdir(parents=True)
    git(origin, "init", "-q")
    ids = [f"r{i}" for i in range(40)]
    labels = [i % 4 for i in range(40)]
    pq.write_table(pa.table({"id": ids, "label": labels}), origin / "data" / "labels.parquet")
    git(origin, "add", ".")
    git(origin, "commit", "-qm", "base")
    base = git(origin, "rev-parse", "HEAD")
    labels[3], labels[9] = 1, 7
    pq.write_table(pa.table({"id": ids, "label": labels}), origin / "data" / "labels.parquet")
    git(origin, "commit", "-qam", "head")
    work = tmp_path / "clone"
    git(tmp_path, "clone", "-q", "--depth", "1", f"file://{origin}", str(work))
    assert git(work, "rev-parse", "--is-shallow-repository") == "true"
    missing = subprocess.run(["git", "cat-file", "-e", f"{base}^{{commit}}"], cwd=work, check=False)
    assert missing.returncode != 0  # the clone lacks the base: the action must fetch it
    return work, base


class FakeGitHub(BaseHTTPRequestHandler):
    """The three issue-comment endpoints, in memory; ``refuse`` answers writes with 403."""

    comments: list[dict[str, Any]]
    calls: list[tuple[str, str]]
    refuse: bool

    def _answer(self, code: int, doc: Any) -> None:
        body = json.dumps(doc).encode()
        self.send_response(code)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def _body(self) -> dict[str, Any]:
        doc: dict[str, Any] = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
        return doc

    def do_GET(self) -> None:
        self.calls.append(("GET", self.path))
        self._answer(200, self.comments if self.path.endswith("page=1") else [])

    def do_POST(self) -> None:
        self.calls.append(("POST", self.path))
        if self.refuse:
            return self._answer(403, {"message": "Resource not accessible by integration"})
        self.comments.append({"id": len(self.comments) + 1, "body": self._body()["body"]})
        self._answer(201, self.comments[-1])

    def do_PATCH(self) -> None:
        self.calls.append(("PATCH", self.path))
        number = int(self.path.rsplit("/", 1)[1])
        self.comments[number - 1]["body"] = self._body()["body"]
        self._answer(200, self.comments[number - 1])

    def log_message(self, *args: object) -> None:
        pass


@pytest.fixture
def github() -> Iterator[tuple[str, type[FakeGitHub]]]:
    handler = type("Handler", (FakeGitHub,), {"comments": [], "calls": [], "refuse": False})
    server = ThreadingHTTPServer(("127.0.0.1", 0), handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    yield f"http://127.0.0.1:{server.server_address[1]}", handler
    server.shutdown()
    server.server_close()


def run_action(
    work: Path, base: str, api: str, *, fork: bool = False
) -> subprocess.CompletedProcess[str]:
    event = work.parent / "event.json"
    head_repo = "someone/fork" if fork else "o/r"
    event.write_text(
        json.dumps(
            {
                "pull_request": {
                    "number": 7,
                    "head": {"repo": {"full_name": head_repo}},
                    "base": {"repo": {"full_name": "o/r"}, "sha": base},
                }
            }
        )
    )
    env = {
        **os.environ,
        "PATH": str(Path(sys.executable).parent) + os.pathsep + os.environ["PATH"],
        "LABELGATE_PYTHON": sys.executable,
        "LABELGATE_HEAD": "data/labels.parquet",
        "LABELGATE_BASE_REF": base,
        "LABELGATE_ARGS": "--classes 4",
        "LABELGATE_FORMATS": "json",
        "LABELGATE_REPORTS": str(work.parent / "reports"),
        "RUNNER_TEMP": str(work.parent),
        "GITHUB_ACTIONS": "true",
        "GITHUB_EVENT_NAME": "pull_request",
        "GITHUB_EVENT_PATH": str(event),
        "GITHUB_REPOSITORY": "o/r",
        "GITHUB_API_URL": api,
        "GITHUB_SERVER_URL": "https://github.com",
        "GITHUB_RUN_ID": "99",
        "GITHUB_TOKEN": "t0ken",
    }
    return subprocess.run(
        ["bash", str(ROOT / "pipelines" / "action.sh")],
        cwd=work,
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )


class TestShallowClone:
    def test_fetches_the_base_diffs_and_keeps_one_comment(
        self, clone: tuple[Path, str], github: tuple[str, type[FakeGitHub]]
    ) -> None:
        (work, base), (api, handler) = clone, github
        first = run_action(work, base, api)
        assert first.returncode == 1, first.stderr  # label 7 is past K=4
        assert "fetching the base revision" in first.stdout
        report = json.loads((work.parent / "reports" / "report.json").read_text())
        assert report["diff"]["rows"] == {"compared": True, "added": 0, "removed": 0, "changed": 2}
        (comment,) = handler.comments
        assert comment["body"].startswith(MARKER) and "### What changed" in comment["body"]
        assert "| id r9 relabelled | 1 | 7 |" in comment["body"]
        assert "(https://github.com/o/r/actions/runs/99)" in comment["body"]
        assert [m for m, _ in handler.calls] == ["GET", "POST"]
        assert handler.calls[1][1] == "/repos/o/r/issues/7/comments"
        second = run_action(work, base, api)  # the next push: the same comment, edited
        assert second.returncode == 1 and "pull-request comment updated" in second.stdout
        assert len(handler.comments) == 1
        assert [m for m, _ in handler.calls] == ["GET", "POST", "GET", "PATCH"]
        assert git(work, "worktree", "list").count("\n") == 0  # the base worktree is removed

    def test_a_fork_is_skipped_with_a_notice(
        self, clone: tuple[Path, str], github: tuple[str, type[FakeGitHub]]
    ) -> None:
        (work, base), (api, handler) = clone, github
        done = run_action(work, base, api, fork=True)
        assert done.returncode == 1
        assert (
            "::notice title=labelgate comment::pull-request comment skipped: a pull" in done.stdout
        )
        assert handler.calls == []

    def test_a_read_only_token_is_a_notice_not_a_failure(
        self, clone: tuple[Path, str], github: tuple[str, type[FakeGitHub]]
    ) -> None:
        (work, base), (api, handler) = clone, github
        handler.refuse = True
        done = run_action(work, base, api)
        assert done.returncode == 1  # labelgate's verdict, not the comment's
        assert "HTTP 403" in done.stdout and "pull-requests: write" in done.stdout

    def test_an_unknown_base_is_a_usage_error(
        self, clone: tuple[Path, str], github: tuple[str, type[FakeGitHub]]
    ) -> None:
        (work, _), (api, _) = clone, github
        done = run_action(work, "no-such-branch", api)
        assert done.returncode == 2 and "cannot fetch the base revision" in done.stderr
