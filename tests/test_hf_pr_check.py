"""pipelines/hf_pr_check.py against a local Hub layout (huggingface_hub's cache, offline): the
PR's revision `refs/pr/N` diffed against main, only the label files fetched."""

from __future__ import annotations

import importlib.util
import os
import subprocess
import sys
from pathlib import Path
from types import ModuleType
from typing import ClassVar

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from tests.conftest import ROOT

pytest.importorskip("huggingface_hub")
pytestmark = pytest.mark.slow  # labelgate in subprocesses

SCRIPT = ROOT / "pipelines" / "hf_pr_check.py"
MAIN, PR = "a" * 40, "b" * 40  # the commits main and refs/pr/3 point at


def load() -> ModuleType:
    spec = importlib.util.spec_from_file_location("hf_pr_check", SCRIPT)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def hub_cache(root: Path, head_labels: list[int]) -> Path:
    """huggingface_hub's cache of dataset org/pets: refs/main and refs/refs/pr/3 naming their
    snapshots, each holding data/train.parquet."""
    repo = root / "datasets--org--pets"
    for ref, commit, labels in (
        ("main", MAIN, [0, 1, 2, 3] * 10),
        ("refs/pr/3", PR, head_labels),
    ):
        (repo / "refs" / ref).parent.mkdir(parents=True, exist_ok=True)
        (repo / "refs" / ref).write_text(commit)
        data = repo / "snapshots" / commit / "data"
        data.mkdir(parents=True, exist_ok=True)
        table = pa.table({"id": [f"r{i}" for i in range(len(labels))], "label": labels})
        pq.write_table(table, data / "train.parquet")
    return root


def check(cache: Path, *extra: str) -> subprocess.CompletedProcess[str]:
    env = {
        **os.environ,
        "PATH": str(Path(sys.executable).parent) + os.pathsep + os.environ["PATH"],
        "HF_HUB_OFFLINE": "1",
        "HF_HUB_CACHE": str(cache),
    }
    args = ["--repo", "org/pets", "--pr", "3", "--path", "data/train.parquet", *extra]
    return subprocess.run(
        [sys.executable, str(SCRIPT), *args, "--", "--classes", "4"],
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )


class TestHubPullRequest:
    def test_a_pr_that_breaks_the_labels_fails(self, tmp_path: Path) -> None:
        done = check(hub_cache(tmp_path, [0, 1, 2, 9] * 10))
        assert done.returncode == 1, done.stderr
        text = "".join(done.stdout.split())  # the text report wraps long paths
        assert f"snapshots/{PR}/data/train.parquetagainstbase" in text
        assert f"snapshots/{MAIN}/data/train.parquet" in text and "LG021" in text

    def test_a_clean_pr_passes(self, tmp_path: Path) -> None:
        assert check(hub_cache(tmp_path, [0, 1, 2, 3] * 10)).returncode == 0

    def test_a_pr_that_is_not_there_is_a_usage_error(self, tmp_path: Path) -> None:
        cache = hub_cache(tmp_path, [0, 1, 2, 3] * 10)
        (cache / "datasets--org--pets" / "refs" / "refs" / "pr" / "3").unlink()
        done = check(cache)
        assert done.returncode == 2 and "cannot fetch data/train.parquet" in done.stderr


def test_the_pr_revision_and_its_comment() -> None:
    module = load()
    assert module.revision_of(3) == "refs/pr/3"

    class Api:
        calls: ClassVar[list[dict[str, object]]] = []

        def comment_discussion(self, **kwargs: object) -> None:
            self.calls.append(kwargs)

    module.post_comment(Api(), "org/pets", 3, "<!-- labelgate pr-comment -->\n")
    assert Api.calls == [
        {
            "repo_id": "org/pets",
            "discussion_num": 3,
            "comment": "<!-- labelgate pr-comment -->\n",
            "repo_type": "dataset",
        }
    ]
