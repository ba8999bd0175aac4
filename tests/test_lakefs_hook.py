"""The lakeFS pre-merge hook: the action file in lakeFS's format, and pipelines/lakefs_hook.py
answering lakeFS's webhook request for refs mirrored locally (no lakeFS, no network)."""

from __future__ import annotations

import importlib.util
import json
import os
import sys
import threading
import urllib.error
import urllib.request
from collections.abc import Iterator
from http.server import ThreadingHTTPServer
from pathlib import Path
from types import ModuleType
from urllib.parse import urlencode

import pyarrow as pa
import pyarrow.parquet as pq
import pytest
import yaml

from tests.conftest import ROOT

pytestmark = pytest.mark.slow  # labelgate in subprocesses

ACTION = yaml.safe_load(
    (ROOT / "pipelines" / "lakefs" / "_lakefs_actions" / "labelgate.yaml").read_text()
)
SOURCE = "5891b5b522d5df086d0ff0b110fbd9d21bb4fc7163af34d08286a2e846f6be03"  # the merged commit


def load_hook() -> ModuleType:
    spec = importlib.util.spec_from_file_location(
        "lakefs_hook", ROOT / "pipelines" / "lakefs_hook.py"
    )
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


HOOK = load_hook()


def write(path: Path, labels: list[int]) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    pq.write_table(pa.table({"id": [f"r{i}" for i in range(len(labels))], "label": labels}), path)


@pytest.fixture
def served(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[tuple[str, Path]]:
    """The hook on 127.0.0.1, reading refs from a local mirror: {mirror}/{repository}/{ref}/."""
    monkeypatch.setenv("LABELGATE_LAKEFS_URI", str(tmp_path / "{repository}" / "{ref}" / "{path}"))
    monkeypatch.setenv("PATH", str(Path(sys.executable).parent) + os.pathsep + os.environ["PATH"])
    write(tmp_path / "repo1" / "main" / "data" / "annotations.parquet", [0, 1, 2, 3] * 10)
    server = ThreadingHTTPServer(("127.0.0.1", 0), HOOK.handler(["--classes", "4"]))
    threading.Thread(target=server.serve_forever, daemon=True).start()
    hook = ACTION["hooks"][0]["properties"]
    query = urlencode(hook["query_params"], doseq=True)
    yield f"http://127.0.0.1:{server.server_address[1]}/lakefs?{query}", tmp_path
    server.shutdown()
    server.server_close()


def post(url: str, event: dict[str, object]) -> tuple[int, str]:
    request = urllib.request.Request(url, data=json.dumps(event).encode(), method="POST")
    try:
        with urllib.request.urlopen(request, timeout=120) as answer:
            return answer.status, answer.read().decode()
    except urllib.error.HTTPError as failed:
        return failed.code, failed.read().decode()


def pre_merge() -> dict[str, object]:
    """lakeFS's request body for a merge into main (webhooks.md's example, as graveler fills it)."""
    return {
        "event_type": "pre-merge",
        "event_time": "2026-12-03T14:03:31Z",
        "action_name": ACTION["name"],
        "hook_id": ACTION["hooks"][0]["id"],
        "repository_id": "repo1",
        "branch_id": "main",
        "source_ref": SOURCE,
        "commit_message": "Merge 'relabel' into 'main'",
        "committer": "someone",
    }


class TestActionFile:
    def test_is_a_pre_merge_webhook_on_main(self) -> None:
        on = ACTION[True] if True in ACTION else ACTION["on"]  # YAML 1.1 reads `on` as true
        assert on["pre-merge"]["branches"] == ["main"]
        (hook,) = ACTION["hooks"]
        assert hook["type"] == "webhook" and hook["properties"]["url"].endswith("/lakefs")
        assert hook["properties"]["query_params"]["path"] == "data/annotations.parquet"


class TestHook:
    def test_a_merge_that_breaks_the_labels_is_refused(self, served: tuple[str, Path]) -> None:
        url, mirror = served
        write(mirror / "repo1" / SOURCE / "data" / "annotations.parquet", [0, 1, 2, 9] * 10)
        status, body = post(url, pre_merge())
        assert status == 412, body
        assert "LG004" in body and "LG021" in body and "against base" in body

    def test_a_clean_merge_passes(self, served: tuple[str, Path]) -> None:
        url, mirror = served
        write(mirror / "repo1" / SOURCE / "data" / "annotations.parquet", [0, 1, 2, 3] * 10)
        status, body = post(url, pre_merge())
        assert status == 200, body

    def test_another_event_is_a_usage_error(self, served: tuple[str, Path]) -> None:
        url, _ = served
        status, body = post(url, {**pre_merge(), "event_type": "post-merge"})
        assert status == 400 and "gates pre-merge and pre-commit" in body


def test_the_s3_gateway_uri(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("LABELGATE_LAKEFS_URI", raising=False)
    monkeypatch.setenv("LABELGATE_LAKEFS_S3", "endpoint_override=lakefs:8000&scheme=http")
    assert HOOK.uri("repo1", "main", "/data/a.parquet") == (
        "s3://repo1/main/data/a.parquet?endpoint_override=lakefs:8000&scheme=http"
    )
