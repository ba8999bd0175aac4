"""The image checks (LG041-LG043) of a detection input on a Dask cluster: the same report as on
the local process pool, the boxes read where labelgate runs."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from labelgate import Contract
from labelgate.errors import UsageError
from labelgate.render import render
from labelgate.run.validation import run

from .conftest import cli_here
from .support.cluster import loopback_cluster, skip_without_distributed
from .test_images import coco, jpeg, planted  # noqa: F401 - the fixture, shared

skip_without_distributed()
# a cluster: the full tier only; one worker runs them all (one cluster, for the module)
pytestmark = [pytest.mark.slow, pytest.mark.xdist_group("images_dask")]


@pytest.fixture(scope="module")
def scheduler() -> Iterator[str]:
    with loopback_cluster() as address:
        yield address


def plain(text: str) -> dict[str, object]:
    doc = json.loads(text)
    doc.pop("environment", None)
    return doc  # type: ignore[no-any-return]


def test_planted_faults_on_a_cluster_equal_the_local_report(
    planted: Path,  # noqa: F811
    scheduler: str,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    from labelgate.run import distributed

    mapped: list[str] = []
    real = distributed.cluster_map

    def spy(client: Any, fn: Any, items: list[Any]) -> list[Any]:
        mapped.append(fn.__name__)
        return real(client, fn, items)

    monkeypatch.setattr(distributed, "cluster_map", spy)
    contract = Contract(num_classes=2)
    local = run([str(planted)], contract, max_examples=0).report
    assert mapped == []
    remote = run([str(planted)], contract, max_examples=0, dask=scheduler).report
    # the COCO file's annotations were judged, and its images opened, on the cluster
    assert mapped == ["judge", "_probe_chunk"]
    assert {f.code for f in remote.findings} >= {"LG041", "LG042", "LG043"}
    assert plain(render(remote, "json")) == plain(render(local, "json"))


def test_many_images_on_a_cluster_from_the_command_line(tmp_path: Path, scheduler: str) -> None:
    names = []
    for n in range(200):
        jpeg(tmp_path / f"{n}.jpg", (16, 12))
        names.append((f"{n}.jpg", 16, 12 if n not in (3, 150) else 13))
    path = str(coco(tmp_path, names))
    local = cli_here("validate", path, "--format", "json", "--max-examples", "0")
    remote = cli_here(
        "validate", path, "--format", "json", "--max-examples", "0", "--dask", scheduler
    )
    assert remote.returncode == local.returncode == 1, remote.stderr
    doc = plain(remote.stdout)
    assert doc == plain(local.stdout)
    (finding,) = doc["findings"]  # type: ignore[misc]
    assert finding["code"] == "LG043"
    assert {e["id"] for e in finding["examples"]} == {"image 4", "image 151"}


def test_a_detection_input_without_its_images_is_refused_on_a_cluster(
    tmp_path: Path, scheduler: str
) -> None:
    (tmp_path / "Annotations").mkdir()  # VOC, read locally, and no JPEGImages/ beside it
    (tmp_path / "Annotations" / "a.xml").write_text(
        "<annotation><filename>a.jpg</filename><size><width>16</width><height>12</height>"
        "</size><object><name>cat</name><bndbox><xmin>1</xmin><ymin>1</ymin><xmax>5</xmax>"
        "<ymax>5</ymax></bndbox></object></annotation>"
    )
    with pytest.raises(UsageError, match="no images of it were found to check"):
        run([str(tmp_path / "Annotations")], Contract(num_classes=2), dask=scheduler)


def test_a_coco_file_without_its_images_is_read_on_a_cluster(
    tmp_path: Path, scheduler: str
) -> None:
    (tmp_path / "annotations").mkdir()
    path = coco(tmp_path / "annotations", [("a.jpg", 16, 12)])  # no images anywhere
    remote = run([str(path)], Contract(num_classes=2), dask=scheduler).report
    local = run([str(path)], Contract(num_classes=2)).report
    assert plain(render(remote, "json")) == plain(render(local, "json"))
