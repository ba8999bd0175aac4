"""The suite's own scheduling: under ``--dist loadgroup`` an ``xdist_group`` mark must take
effect, or the grouped tests are spread over every worker and each builds its group's module
fixture again (a cluster, the wheel, the docs site), silently. pytest 9.2 with pytest-xdist 3.8
drops the groups (pytest-xdist#1386); pyproject.toml's dev extra keeps pytest below 9.2."""

from __future__ import annotations

import pytest


@pytest.mark.xdist_group("suite-probe")
def test_a_group_mark_is_in_the_id_the_scheduler_reads(request: pytest.FixtureRequest) -> None:
    config = request.config
    if not hasattr(config, "workerinput") or not config.getvalue("loadgroup"):
        pytest.skip("not a worker of --dist loadgroup")
    assert request.node.nodeid.endswith("@suite-probe"), (
        f"xdist_group marks are not applied by pytest {pytest.__version__} and this "
        f"pytest-xdist: {request.node.nodeid}"
    )
