"""The contract as a Great Expectations 1.x suite, and GX as a validation engine.

Only this module imports great_expectations (the ``gx`` extra); without it, a one-line hint.
"""

from __future__ import annotations

from typing import Any

from labelgate.contract import Contract
from labelgate.core.codes import Code
from labelgate.core.report import Report
from labelgate.core.rules import code_of, masks
from labelgate.engines.common import Translator, engine_report, load_frame
from labelgate.errors import UsageError
from labelgate.run.validation import run

__all__ = ["suite", "suite_json", "validate_with_gx"]


def _gx() -> Any:
    try:
        import great_expectations as gx
    except ImportError:
        raise UsageError(
            "the gx engine and export need Great Expectations: pip install 'labelgate[gx]'"
        ) from None
    return gx


def _q(column: str) -> str:
    """A column name for a pandas row condition (quoted only where it is not a plain name)."""
    return column if column.isidentifier() else "`" + column.replace("`", "``") + "`"


def suite(contract: Contract, *, with_section: bool = False) -> Any:
    """The contract's row-level rules as a GX ``ExpectationSuite``.

    Expectations: label not null (LG003); label in {ignore_index, 0..K-1} (LG002 for fractional
    values, else LG004/LG005); label between 0 and K-1 where it is not ignore_index (LG004/LG005);
    ids unique (LG014); with a class map and a name column, (label, name) pairs in the map's set
    (LG010, for rows whose label is a class).

    Args:
        contract: the contract, K and the label column resolved or named.
        with_section: add the contract's ``pandera:`` section (``labelgate export gx``); the GX
            engine leaves it out, since labelgate checks it as LG019.

    Raises:
        UsageError: no K or no label column, or Great Expectations is not installed.
    """
    gx = _gx()
    if contract.num_classes is None or contract.label_column is None:
        raise UsageError("a GX suite needs num_classes and label_column")
    k, ignore, label = contract.num_classes, contract.ignore_index, contract.label_column
    e = gx.expectations
    expectations = [
        e.ExpectColumnValuesToNotBeNull(column=label),
        e.ExpectColumnValuesToBeInSet(column=label, value_set=[ignore, *range(k)]),
        e.ExpectColumnValuesToBeBetween(
            column=label,
            min_value=0,
            max_value=k - 1,
            row_condition=f"{_q(label)} != {ignore}",
            condition_parser="pandas",
        ),
    ]
    if contract.id_column is not None:
        expectations.append(e.ExpectColumnValuesToBeUnique(column=contract.id_column))
    if contract.class_map is not None and contract.name_column is not None:
        # No row condition here (GX fails to serialise this expectation's result when one
        # filters rows): out-of-range labels fail it too, and the engine counts them under
        # LG004/LG005 alone.
        pairs = [[i, name] for i, name in sorted(contract.class_map.name_of().items())]
        expectations.append(
            e.ExpectColumnPairValuesToBeInSet(
                column_A=label,
                column_B=contract.name_column,
                value_pairs_set=pairs,
                ignore_row_if="either_value_is_missing",
            )
        )
    if with_section and contract.pandera is not None:  # the export; the engine checks it as LG019
        from labelgate.engines.gxsection import section_expectations

        expectations += section_expectations(contract.pandera, gx)
    return gx.ExpectationSuite(name=contract.name or "labelgate", expectations=expectations)


def suite_json(contract: Contract) -> dict[str, Any]:
    """The suite as the JSON document GX stores (``labelgate export gx``): ``suite`` and the
    contract's own ``pandera:`` section, translated expectation by expectation."""
    document: dict[str, Any] = suite(contract, with_section=True).to_json_dict()
    return document


def _judged(value: Any, k: int, ignore: int) -> Code:
    """A value outside {ignore_index, 0..K-1}: the judge names its code."""
    return code_of(value[0] if isinstance(value, (tuple, list)) else value, k, ignore) or "LG004"


TRANSLATOR = Translator("gx", _judged)
TRANSLATOR.register("LG003", "expect_column_values_to_not_be_null")
TRANSLATOR.register("LG014", "expect_column_values_to_be_unique")
TRANSLATOR.register("LG010", "expect_column_pair_values_to_be_in_set")


def validate_with_gx(
    paths: list[str],
    contract: Contract,
    *,
    max_examples: int = 20,
    strict: bool = False,
    docs: str | None = None,
) -> Report:
    """Run the contract's row-level rules through GX (an ephemeral context; with ``docs``, a file
    context there, whose Data Docs are built), and every other check through labelgate, on the
    same input: the default engine's verdict, with GX's failing rows."""
    gx = _gx()
    done = run(paths, contract, max_examples=max_examples, strict=strict)
    with done:
        data = done.dataset
        df = load_frame(data)
        contract = data.contract
        context = (
            gx.get_context(mode="ephemeral")
            if docs is None
            else gx.get_context(mode="file", project_root_dir=docs)
        )
        # GX draws tqdm bars on stderr for every metric; labelgate's own progress is the only bar
        from great_expectations.data_context.types.base import ProgressBarsConfig

        context.variables.progress_bars = ProgressBarsConfig(globally=False)
        source = context.data_sources.add_pandas(name="labelgate")
        batch = source.add_dataframe_asset(name="labels").add_batch_definition_whole_dataframe(
            "all"
        )
        checks = context.suites.add(suite(contract))
        definition = context.validation_definitions.add(
            gx.ValidationDefinition(name="labelgate", data=batch, suite=checks)
        )
        if docs is None:
            result = definition.run(batch_parameters={"dataframe": df}, result_format="COMPLETE")
            results = result.results
        else:
            checkpoint = context.checkpoints.add(
                gx.Checkpoint(
                    name="labelgate",
                    validation_definitions=[definition],
                    actions=[gx.checkpoint.UpdateDataDocsAction(name="docs")],
                    result_format="COMPLETE",
                )
            )
            outcome = checkpoint.run(batch_parameters={"dataframe": df})
            results = next(iter(outcome.run_results.values())).results
        failures: dict[Code, set[int]] = {}
        for r in results:
            if r.success:
                continue
            kind = r.expectation_config.type
            rows = r.result.get("unexpected_index_list") or []
            values = r.result.get("unexpected_list") or []
            if kind == "expect_column_values_to_be_unique":
                rows = _repeats(df[contract.id_column], rows)
                values = [None] * len(rows)
            if kind == "expect_column_pair_values_to_be_in_set":
                usable = masks(df[contract.label_column], data.k, contract.ignore_index).usable
                rows = [r for r in rows if bool(usable.iloc[int(r)])]
                values = [None] * len(rows)
            for row, value in zip(rows, values, strict=False):
                code = TRANSLATOR.code(kind, value, data.k, contract.ignore_index)
                failures.setdefault(code, set()).add(int(row))
        return engine_report(done, df, failures, "gx", gx.__version__, max_examples=max_examples)


def _repeats(ids: Any, rows: list[Any]) -> list[int]:
    """Of rows holding a duplicated id, those after the first of each id (as LG014 reports)."""
    seen: set[Any] = set()
    out = []
    for row in sorted(int(r) for r in rows):
        key = ids.iloc[row]
        if key in seen:
            out.append(row)
        seen.add(key)
    return out
