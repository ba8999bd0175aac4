"""The wheel: built from the project's files alone, it holds every module and its package data,
and the README's quick start runs from it outside the source tree."""

from __future__ import annotations

import fnmatch
import os
import shutil
import subprocess
import sys
import sysconfig
import venv
import zipfile
from pathlib import Path

import pytest

from tests.conftest import ROOT, SAMPLES

# builds and installs a wheel; one worker runs them all (the wheel is built once, for the module)
pytestmark = [pytest.mark.slow, pytest.mark.xdist_group("wheel")]


@pytest.fixture(scope="module")
def wheel(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The wheel built from a copy of what the build reads (no stray file of the checkout helps)."""
    pytest.importorskip("build")
    project = tmp_path_factory.mktemp("project")
    for name in ("pyproject.toml", "README.md", "LICENSE"):
        shutil.copy(ROOT / name, project / name)
    shutil.copytree(ROOT / "src", project / "src", ignore=shutil.ignore_patterns("__pycache__"))
    dist = project / "dist"
    # --no-isolation: the build backend already installed here, so the test needs no network
    done = subprocess.run(
        [sys.executable, "-m", "build", "--wheel", "--no-isolation", "--outdir", str(dist)],
        cwd=project,
        capture_output=True,
        text=True,
        timeout=600,
        check=False,
    )
    assert done.returncode == 0, done.stdout[-2000:] + done.stderr[-2000:]
    (built,) = dist.glob("labelgate-*.whl")
    return built


def test_holds_every_module(wheel: Path) -> None:
    names = set(zipfile.ZipFile(wheel).namelist())
    source = ROOT / "src"
    modules = {
        p.relative_to(source).as_posix()
        for p in source.rglob("*.py")
        if "__pycache__" not in p.parts
    }
    assert modules - names == set()


def test_every_package_data_pattern_ships_a_file(wheel: Path) -> None:
    tomllib = pytest.importorskip("tomllib")  # Python 3.11+
    names = zipfile.ZipFile(wheel).namelist()
    pyproject = tomllib.loads((ROOT / "pyproject.toml").read_text())
    patterns = pyproject["tool"]["setuptools"]["package-data"]
    for package, globs in patterns.items():
        for pattern in globs:
            wanted = f"{package.replace('.', '/')}/{pattern}"
            assert fnmatch.filter(names, wanted), f"package-data {wanted} matches no file"
    assert "labelgate/py.typed" in names


def test_quick_start_runs_from_the_wheel(wheel: Path, tmp_path: Path) -> None:
    """A fresh virtual environment with the wheel (its dependencies are this interpreter's: .ci/run
    installs them from the index instead), run from a folder with nothing but the sample."""
    env_dir = tmp_path / "venv"
    venv.create(env_dir, with_pip=True)
    python = env_dir / "bin" / "python"
    site = subprocess.run(
        [str(python), "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])"],
        capture_output=True,
        text=True,
        check=True,
    ).stdout.strip()
    # the dependencies, by path; a .pth line does not read that folder's own .pth files, so no
    # other checkout of labelgate comes with them
    Path(site, "dependencies.pth").write_text(sysconfig.get_paths()["purelib"] + "\n")
    clean = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "VIRTUAL_ENV")}
    subprocess.run(
        [str(python), "-m", "pip", "install", "--quiet", "--no-deps", "--no-index", str(wheel)],
        env=clean,
        check=True,
        timeout=300,
    )
    work = tmp_path / "work"
    work.mkdir()
    shutil.copy(SAMPLES / "oob_0_2_4.parquet", work)
    where = subprocess.run(
        [str(python), "-c", "import labelgate; print(labelgate.__file__)"],
        cwd=work,
        env=clean,
        capture_output=True,
        text=True,
        check=True,
    ).stdout
    assert where.startswith(site), where
    result = subprocess.run(
        [str(env_dir / "bin" / "labelgate"), "validate", "oob_0_2_4.parquet", "--classes", "4"],
        cwd=work,
        env=clean,
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )
    assert result.returncode == 1, result.stderr
    assert "row 2, id 103, batch 0, value 4" in result.stdout
