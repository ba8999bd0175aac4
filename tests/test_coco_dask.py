"""COCO read in blocks on a Dask cluster (a real scheduler, two worker processes on 127.0.0.1):
the same report as the local read, the blocks judged by the cluster."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from labelgate import Contract
from labelgate.readers.coco import cocoblocks
from labelgate.run.validation import report_of

from .conftest import assert_cluster_report_is_local
from .support.cluster import loopback_cluster, skip_without_distributed
from .test_coco_blocks import document

# a cluster: the full tier only; one worker runs them all (one cluster, for the module)
pytestmark = [pytest.mark.slow, pytest.mark.xdist_group("coco_dask")]

skip_without_distributed()


@pytest.fixture(scope="module")
def scheduler() -> Iterator[str]:
    with loopback_cluster() as address:
        yield address


def plain(report: Any) -> dict[str, Any]:
    doc = report.to_dict()
    doc.pop("environment")
    out: dict[str, Any] = doc
    return out


def test_cluster_report_equals_the_local_report(
    tmp_path: Path, scheduler: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    path = tmp_path / "coco.json"
    path.write_text(json.dumps(document(11), indent=1))
    monkeypatch.setattr(cocoblocks, "BLOCK", 2_000)  # many blocks, many tasks
    monkeypatch.setattr(cocoblocks, "FAST_FROM", 1 << 60)  # locally: the sequential read
    clusters: list[bool] = []
    real = cocoblocks._run

    def spy(tasks: Any, cluster: Any, *rest: Any) -> Iterator[Any]:
        clusters.append(cluster is not None)
        return real(tasks, cluster, *rest)

    monkeypatch.setattr(cocoblocks, "_run", spy)
    local = report_of([str(path)], Contract())
    remote = report_of([str(path)], Contract(), dask=scheduler)
    assert clusters == [True]  # the local read is sequential, the remote in blocks
    assert plain(remote) == plain(local)
    codes = {f.code for f in local.findings}
    assert {"LG028", "LG030", "LG031"} <= codes


def test_local_cluster_from_the_command_line(tmp_path: Path) -> None:
    path = tmp_path / "coco.json"
    path.write_text(json.dumps(document(12)))
    args = ("validate", str(path), "--format", "json")
    assert_cluster_report_is_local(*args)
