"""What every check reads: the finished scan, the contract applied, and shared wording helpers."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from labelgate.contract import BOX_TASKS, Contract
from labelgate.contract.classmap import normalise_name
from labelgate.core.codes import Code
from labelgate.core.findings import finding, join_values, plural
from labelgate.core.report import Finding
from labelgate.io.sources import InputFile
from labelgate.scan import CodeTally, ScanResult
from labelgate.scan.result import DuplicateIds

if TYPE_CHECKING:  # what only some inputs carry: their modules load with them
    from labelgate.core.annotations import AnnotationFacts
    from labelgate.scan.witness import WitnessCounts
    from labelgate.training.ranks import RankVerdict

__all__ = ["Context", "DuplicateIds", "join_values", "plural", "tally_finding"]


@dataclass(frozen=True, slots=True)
class Context:
    """Input to the checks.

    Attributes:
        scan: the scan result.
        contract: the contract applied (columns and K resolved).
        files: the input files in reading order.
        label_type: the label column's Arrow type, as text.
        task: ``"multiclass"``, ``"tokens"``, ``"soft"``, ``"multilabel"`` or
            ``"segmentation"``.
        duplicates: duplicate ids, where an id column exists.
        names_seen: class index -> the name most rows give it, from a name column.
        section: failures of the contract's pandera section (other columns), if it has one.
        shifts: per-source shift evidence (filled by the class checks' helper).
        annotations: what an annotation-format reader found (COCO, YOLO, VOC, ImageFolder, HF).
        ranks: every rank's batches judged, where the batching has several ranks or
            accumulated steps.
        witness: the labels against a model's predictions (``--predictions``), per source.
    """

    scan: ScanResult
    contract: Contract
    files: list[InputFile]
    label_type: str
    task: str
    duplicates: DuplicateIds | None = None
    names_seen: dict[int, str] = field(default_factory=dict)
    section: dict[str, Any] | None = None
    shifts: dict[str, Any] = field(default_factory=dict)
    annotations: AnnotationFacts | None = None
    ranks: RankVerdict | None = None
    witness: WitnessCounts | None = None

    @property
    def k(self) -> int:
        """K, the number of classes."""
        assert self.contract.num_classes is not None
        return self.contract.num_classes

    @property
    def background(self) -> int | None:
        """The detection background index declared (``--background``), if any."""
        if self.annotations is not None and self.annotations.background is not None:
            return self.annotations.background
        return self.contract.background_index

    @property
    def detection(self) -> bool:
        """Whether the rows are detection targets: ``--task detection``, or boxes a reader read."""
        return self.contract.task in BOX_TASKS or (
            self.annotations is not None and self.annotations.task == "detection"
        )

    @property
    def unit(self) -> str:
        """What a value is: a row, a token, or a pixel of a mask."""
        return {"tokens": "tokens", "segmentation": "pixels"}.get(self.task, "rows")

    def labels(self, tally: CodeTally) -> str:
        """``3 labels``; for masks ``120 pixels in 2 masks``."""
        if self.task != "segmentation":
            return plural(tally.count, "label")
        return f"{plural(tally.count, 'pixel')} in {plural(tally.rows or 0, 'mask')}"

    def class_name(self, index: int) -> str | None:
        """The class name for ``index``: from the class map, else from the name column."""
        if self.contract.class_map is None:
            return self.names_seen.get(index)
        return self.contract.class_map.name_of().get(index)

    def names_known(self) -> int:
        """How many classes the class map or, without one, the name column names (0: neither):
        every distinct name of the column, the rows past K included."""
        if self.contract.class_map is not None:
            return len(self.contract.class_map.name_of())
        return len({normalise_name(str(name)) for _, _, name in self.scan.pairs})

    def names_origin(self) -> str:
        """Where the names counted by ``names_known`` come from, in words."""
        cmap = self.contract.class_map
        return "name column" if cmap is None else f"class table ({cmap.origin})"

    def where(self, tally: CodeTally) -> str:
        """Say where the failing values cluster, when they do: one source, one file, the last batch."""
        scan = self.scan
        parts: list[str] = []
        live_sources = [i for i, n in enumerate(scan.source_rows.tolist()) if n > 0]
        if len(live_sources) > 1 and tally.by_source:
            top, hits = tally.top_source()
            name = scan.source_names[top]
            if hits == tally.count:
                parts.append(f"all in source {name!r} ({len(live_sources)} sources)")
            elif hits >= 0.8 * tally.count:
                parts.append(f"{hits} of {tally.count} in source {name!r}")
        live_files = [i for i, n in enumerate(scan.file_rows) if n > 0]
        if len(live_files) > 1 and len(tally.by_file) == 1:
            (only,) = tally.by_file
            parts.append(f"all in file {self.files[only].path}")
        total_batches = -(-scan.rows // scan.plan.size)
        if total_batches > 1 and tally.batches == {total_batches - 1}:
            parts.append(f"all in the last batch (#{total_batches - 1})")
        return "; ".join(parts)


def tally_finding(
    ctx: Context,
    code: Code,
    message: str,
    fix: str,
    *,
    unit: str | None = None,
    details: dict[str, Any] | None = None,
) -> list[Finding]:
    """The finding of a check whose failing values the scan tallied (none when it tallied none):
    count, examples and kept batches from the tally, severity from the catalog, and where the
    values cluster appended to ``message``."""
    t = ctx.scan.tallies.get(code)
    if t is None:
        return []
    kept = ctx.scan.plan.kept_batches(ctx.scan.rows)
    where = ctx.where(t)
    return [
        finding(
            code,
            count=t.count,
            unit=unit or ctx.unit,
            message=f"{message}; {where}" if where else message,
            fix=fix,
            examples=t.examples,
            batches=tuple(sorted(b for b in t.batches if b < kept)),
            details=details or {},
        )
    ]
