"""A Dask cluster on loopback for the tests that run on one: a real scheduler and worker
processes, as `dask scheduler` and `dask worker` commands would give."""

from __future__ import annotations

import importlib.util
import logging
from collections.abc import Iterator
from contextlib import contextmanager

import pytest


def skip_without_distributed() -> None:
    """Skip the calling module where dask.distributed is not installed, asked without importing
    it: collection stays free of dask's import (the cluster's fixture imports it)."""
    if importlib.util.find_spec("distributed") is None:
        pytest.skip("dask.distributed is not installed", allow_module_level=True)


@contextmanager
def loopback_cluster(env: dict[str, str] | None = None) -> Iterator[str]:
    """Two single-threaded worker processes and their scheduler on 127.0.0.1; yields the
    scheduler's address (``env``: set in each worker's environment, as on a configured cluster)."""
    import distributed

    cluster = distributed.LocalCluster(
        n_workers=2,
        threads_per_worker=1,
        processes=True,
        host="127.0.0.1",
        dashboard_address=":0",  # a free port: None still takes 8787
        silence_logs=logging.ERROR,
        env=env or {},
    )
    try:
        yield cluster.scheduler_address
    finally:
        cluster.close()
