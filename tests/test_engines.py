"""No engine passes what labelgate fails: the three engines give one verdict (status and codes)."""

from __future__ import annotations

import importlib.util
import os
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import labelgate
from labelgate import ClassMap, Contract, Report
from tests.conftest import SAMPLES, cli_here
from tests.test_pandera_engine import ENGINE_SAMPLES, same_verdict

# engines: the full tier only; one worker runs the engine modules (pandas, pandera and GX imported once)
pytestmark = [pytest.mark.slow, pytest.mark.xdist_group("engines")]

# Whether GX is installed, asked without importing it: collection stays free of its import
if importlib.util.find_spec("great_expectations") is not None:
    ENGINES = ["pandera", "gx"]
elif os.environ.get("CI"):
    raise ImportError("great_expectations")  # CI installs the gx extra (.ci/run)
else:
    ENGINES = ["pandera"]


def verdicts(paths: list[str], contract: Contract) -> dict[str, Report]:
    return {
        engine: labelgate.validate(paths, contract, engine=engine, max_examples=0)
        for engine in ["streaming", *ENGINES]
    }


class TestIssueCases:
    """The files that row-level engines once passed with eleven "not checked here" notes."""

    @pytest.mark.parametrize("engine", ENGINES)
    @pytest.mark.parametrize(
        ("args", "code"),
        [
            (["all_ignored_batch.parquet", "-k", "4"], "LG007"),
            (["clean.parquet", "-k", "4", "--ignore-index", "0"], "LG006"),
            (["clean.parquet", "-k", "4", "--class-names", "classes_duplicate.txt"], "LG009"),
        ],
    )
    def test_fails_as_the_default_engine_does(
        self, engine: str, args: list[str], code: str
    ) -> None:
        default = cli_here("validate", *args, "--format", "json", cwd=SAMPLES)
        through = cli_here("validate", *args, "--engine", engine, "--format", "json", cwd=SAMPLES)
        assert default.returncode == through.returncode == 1, through.stderr
        assert f'"code": "{code}"' in through.stdout

    @pytest.mark.parametrize("engine", ENGINES)
    @pytest.mark.parametrize("command", ENGINE_SAMPLES, ids=lambda c: c[19:70])
    def test_every_sample_exits_alike(self, engine: str, command: str) -> None:
        args = command.split()[1:]
        default = cli_here(*args, cwd=SAMPLES)
        through = cli_here(*args, "--engine", engine, cwd=SAMPLES)
        assert default.returncode == through.returncode, through.stderr


contracts = st.fixed_dictionaries(
    {
        "ignore_index": st.sampled_from([-100, -1, 0, 3]),
        "size": st.sampled_from([2, 3, 4, 32]),
        "names": st.sampled_from(
            [None, ["cat", "dog", "bird", "fish"], ["cat", "dog", "Cat", "fish"]]
        ),
        "severity": st.sampled_from([{}, {"LG007": "off"}, {"LG014": "error", "LG013": "off"}]),
    }
)


def engines_agree(labels: list[int | None], spec: dict, tmp_path: Path, engines: list[str]) -> None:  # type: ignore[type-arg]
    path = tmp_path / "r.parquet"
    ids = [i % 7 for i in range(len(labels))]
    pq.write_table(pa.table({"id": ids, "label": pa.array(labels, pa.int64())}), path)
    contract = Contract(
        num_classes=4,
        ignore_index=spec["ignore_index"],
        batching=labelgate.Batching(size=spec["size"]),
        class_map=None if spec["names"] is None else ClassMap.from_names(spec["names"]),
        severity=spec["severity"],
    )
    default = labelgate.validate([str(path)], contract, max_examples=0)
    for engine in engines:
        through = labelgate.validate([str(path)], contract, engine=engine, max_examples=0)
        assert same_verdict(default, through), engine
        assert through.failed == default.failed


labels = st.lists(st.one_of(st.none(), st.integers(-2, 5), st.just(-100)), min_size=1, max_size=24)


@settings(
    max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(labels=labels, spec=contracts)
def test_pandera_agrees_on_random_files(
    labels: list[int | None], spec: dict, tmp_path: Path
) -> None:  # type: ignore[type-arg]
    engines_agree(labels, spec, tmp_path, ["pandera"])


@pytest.mark.skipif("gx" not in ENGINES, reason="great-expectations is not installed")
@settings(
    max_examples=15, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(labels=labels, spec=contracts)
def test_gx_agrees_on_random_files(labels: list[int | None], spec: dict, tmp_path: Path) -> None:  # type: ignore[type-arg]
    engines_agree(labels, spec, tmp_path, ["gx"])


def test_an_unknown_engine_is_a_usage_error() -> None:
    with pytest.raises(labelgate.UsageError, match="engine must be one of"):
        labelgate.validate(str(SAMPLES / "clean.parquet"), classes=4, engine="spark")
