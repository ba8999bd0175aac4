"""Installed versions and entry points read from the metadata folders agree with
importlib.metadata, and importlib.metadata answers where folders are not all there is."""

from __future__ import annotations

import subprocess
import sys
import zipfile
from importlib import metadata
from pathlib import Path

import pytest

from labelgate.core import installed


@pytest.fixture
def fresh() -> object:
    installed._folders.cache_clear()
    yield
    installed._folders.cache_clear()


def test_every_installed_version_is_importlib_s(fresh: object) -> None:
    names = {d.metadata["Name"] for d in metadata.distributions()}
    assert len(names) > 10
    for name in sorted(names):
        assert installed.version(name) == metadata.version(name), name
    assert installed.version("no-such-distribution-here") is None


def test_every_entry_point_group_is_importlib_s(fresh: object) -> None:
    groups = {ep.group for d in metadata.distributions() for ep in d.entry_points}
    for group in sorted(groups):
        ours = sorted(installed.entry_points(group))
        theirs = sorted((ep.name, ep.value) for ep in metadata.entry_points(group=group))
        assert ours == theirs, group


def _plugin(site: Path, version: str = "1.0") -> None:
    info = site / f"labelgate_lbl-{version}.dist-info"
    info.mkdir(parents=True)
    (info / "METADATA").write_text(
        f"Metadata-Version: 2.1\nName: labelgate-lbl\nVersion: {version}\n"
    )
    (info / "entry_points.txt").write_text(
        "# a comment\n[console_scripts]\nlbl = x:y\n\n[labelgate.readers]\nlbl = labelgate_lbl:LblReader\n"
    )


def _both(site: list[Path]) -> str:
    code = (
        "import sys; from importlib import metadata; from labelgate.core import installed\n"
        "print(installed.version('labelgate-lbl'), metadata.version('labelgate-lbl'))\n"
        "print(installed.entry_points('labelgate.readers'),"
        " [(e.name, e.value) for e in metadata.entry_points(group='labelgate.readers')])\n"
        "print(installed._folders() is None)"
    )
    path = [str(p) for p in site]
    return subprocess.run(
        [sys.executable, "-c", f"import sys; sys.path[:0] = {path!r}\n" + code],
        capture_output=True,
        text=True,
        check=True,
    ).stdout


def test_a_plugin_folder_first_on_the_path_wins_as_in_importlib(tmp_path: Path) -> None:
    _plugin(tmp_path / "a", "2.0")
    _plugin(tmp_path / "b", "1.0")
    out = _both([tmp_path / "a", tmp_path / "b"]).splitlines()
    assert out[0] == "2.0 2.0"
    pair = "[('lbl', 'labelgate_lbl:LblReader')]"
    assert out[1] == f"{pair} {pair}"
    assert out[2] == "False"


def test_a_zip_on_the_path_is_left_to_importlib(tmp_path: Path) -> None:
    _plugin(tmp_path / "unzipped", "3.0")
    archive = tmp_path / "plugins.zip"
    with zipfile.ZipFile(archive, "w") as z:
        for f in (tmp_path / "unzipped").rglob("*"):
            z.write(f, f.relative_to(tmp_path / "unzipped"))
    out = _both([archive]).splitlines()
    assert out[0] == "3.0 3.0" and out[2] == "True"
