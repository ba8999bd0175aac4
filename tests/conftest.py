"""Shared fixtures: paths to the bundled samples and to the shared real-world files."""

from __future__ import annotations

import hashlib
import json
import os
import socket
import subprocess
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import pytest

ROOT = Path(__file__).resolve().parent.parent
SAMPLES = ROOT / "data_samples"
# Files from public projects whose licence allows copying them here (tests/fixtures/real_world/
# SOURCES.tsv), and the full set beside the checkout (../shared: in CI only, not in a clone).
REAL_WORLD = ROOT / "tests" / "fixtures" / "real_world"
SHARED = Path(os.environ.get("LABELGATE_SHARED", ROOT.parent / "shared"))
SHARED_REAL_WORLD = SHARED / "real_world"


def pytest_sessionstart(session: pytest.Session) -> None:
    """labelgate's modules compiled to bytecode once, before any test, as pip compiles an
    installed wheel: where bytecode is not written (``PYTHONDONTWRITEBYTECODE``, a read-only
    tree) each of the suite's hundreds of ``python -m labelgate`` processes would otherwise
    compile its modules again (about 0.1 s of CPU each). Once, by the controller, not by each
    xdist worker."""
    if hasattr(session.config, "workerinput"):
        return
    import compileall
    import contextlib
    import importlib.util

    spec = importlib.util.find_spec("labelgate")
    if spec is not None and spec.origin is not None:
        with contextlib.suppress(OSError):  # a tree it cannot write: each process compiles
            compileall.compile_dir(Path(spec.origin).parent, quiet=1)


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    """Mark the tests that read ../shared ``shared`` (CI only); skip tests marked ``gpu`` where
    torch sees no GPU."""
    for item in items:
        if "shared_real_world" in getattr(item, "fixturenames", ()):
            item.add_marker(pytest.mark.shared)
    try:
        import torch

        has_gpu = bool(torch.cuda.is_available())
    except ImportError:
        has_gpu = False
    if has_gpu:
        return
    skip = pytest.mark.skip(reason="needs a CUDA or ROCm GPU")
    for item in items:
        if "gpu" in item.keywords:
            item.add_marker(skip)


@pytest.fixture
def samples() -> Path:
    return SAMPLES


@pytest.fixture
def real_world() -> Path:
    """Real files from public projects, copied here under their licences (always present)."""
    return REAL_WORLD


@pytest.fixture
def shared_real_world() -> Path:
    """Real files whose licence keeps them out of the repository: ../shared, in CI only."""
    if not SHARED_REAL_WORLD.is_dir():
        pytest.skip("CI only: ../shared/real_world (files that cannot be copied here) is absent")
    return SHARED_REAL_WORLD


# A bare environment: the source tree and the system's PATH, nothing from the caller's shell
BARE_ENV = {"PYTHONPATH": str(ROOT / "src"), "PATH": "/usr/bin:/bin"}


def digest(path: Path) -> str:
    """The SHA-256 of a file's bytes: that it was left as it was."""
    return hashlib.sha256(path.read_bytes()).hexdigest()


def run_cli(
    *args: str, cwd: Path | None = None, env: dict[str, str] | None = None
) -> subprocess.CompletedProcess[str]:
    """Run ``python -m labelgate ARGS`` in a fresh process, as a user would (``env``: its whole
    environment, ``BARE_ENV`` for one without the caller's)."""
    return subprocess.run(
        [sys.executable, "-m", "labelgate", *args],
        cwd=cwd,
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )


def cli_here(
    *args: str, cwd: Path | None = None, env: dict[str, str] | None = None
) -> subprocess.CompletedProcess[str]:
    """``labelgate ARGS`` run by ``labelgate.cli.main`` in this process, its output captured: for
    tests of what a command decides (its verdict, status and output), where a fresh process per
    call would only pay the imports again (GX's alone take seconds). ``run_cli`` is for tests of
    the process itself: its start, imports, signals, environment."""
    import contextlib
    import io

    from labelgate.cli import main

    out, err = io.StringIO(), io.StringIO()
    saved_env = {k: os.environ.get(k) for k in env or {}}
    here = Path.cwd()
    try:
        os.environ.update(env or {})
        if cwd is not None:
            os.chdir(cwd)
        with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
            try:
                status = main(list(args))
            except SystemExit as exc:  # argparse's usage errors and --help
                status = exc.code if isinstance(exc.code, int) else 2
    finally:
        os.chdir(here)
        for k, v in saved_env.items():
            if v is None:
                os.environ.pop(k, None)
            else:
                os.environ[k] = v
    return subprocess.CompletedProcess(["labelgate", *args], status, out.getvalue(), err.getvalue())


def assert_cluster_report_is_local(*args: str) -> None:
    """``labelgate ARGS`` and ``ARGS --dask local[2]`` fail alike (exit 1) with the same JSON
    report, its environment aside."""
    local = run_cli(*args)
    remote = run_cli(*args, "--dask", "local[2]")
    assert remote.returncode == local.returncode == 1, remote.stderr
    a, b = json.loads(local.stdout), json.loads(remote.stdout)
    a.pop("environment")
    b.pop("environment")
    assert a == b


@contextmanager
def moto_s3(bucket: str) -> Iterator[tuple[Any, int]]:
    """A moto S3 server on loopback with ``bucket`` made, test credentials in the environment:
    pyarrow's S3 filesystem on it and its port (``s3://bucket/...?endpoint_override=127.0.0.1:
    PORT&scheme=http`` reaches it)."""
    server_mod = pytest.importorskip("moto.server")
    from pyarrow import fs

    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port = int(sock.getsockname()[1])
    server = server_mod.ThreadedMotoServer(ip_address="127.0.0.1", port=port)
    server.start()
    names = ("AWS_ACCESS_KEY_ID", "AWS_SECRET_ACCESS_KEY", "AWS_DEFAULT_REGION")
    saved = {k: os.environ.get(k) for k in names}
    os.environ.update(
        AWS_ACCESS_KEY_ID="labelgate-test-key",
        AWS_SECRET_ACCESS_KEY="labelgate-test-secret",
        AWS_DEFAULT_REGION="us-east-1",
    )
    try:
        s3 = fs.S3FileSystem(
            endpoint_override=f"127.0.0.1:{port}",
            scheme="http",
            region="us-east-1",
            allow_bucket_creation=True,
        )
        s3.create_dir(bucket)
        yield s3, port
    finally:
        for k, v in saved.items():
            if v is None:
                os.environ.pop(k, None)
            else:
                os.environ[k] = v
        server.stop()


def run_cli_without(
    modules: tuple[str, ...], *args: str, cwd: Path | None = None
) -> subprocess.CompletedProcess[str]:
    """Run the CLI as if ``modules`` were not installed: a finder answers ModuleNotFoundError."""
    code = (
        "import sys\n"
        "class Missing:\n"
        "    def find_spec(self, name, path=None, target=None):\n"
        f"        if name.split('.')[0] in {modules!r}:\n"
        "            raise ModuleNotFoundError(name)\n"
        "sys.meta_path.insert(0, Missing())\n"
        "from labelgate.cli import main\n"
        f"raise SystemExit(main({list(args)!r}))"
    )
    return subprocess.run(
        [sys.executable, "-c", code],
        cwd=cwd,
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
