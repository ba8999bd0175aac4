"""Labels stored in a type PyTorch refuses as class-index targets though every value is a
class index: whole numbers as floats (``3.0``) or as text (``"3"``) in a typed file (LG026)."""

from __future__ import annotations

from labelgate.checks.context import Context, plural
from labelgate.checks.registry import check
from labelgate.core.findings import finding
from labelgate.core.labels import Status
from labelgate.core.report import Finding
from labelgate.io.sources import typed

__all__ = ["FLOAT_TYPES", "TEXT_TYPES"]


FLOAT_TYPES = ("halffloat", "float", "double")
TEXT_TYPES = ("string", "large_string", "string_view")
# what a row holds and why PyTorch refuses it (torch 2.13), and the cast that mends it
_FLOAT = (
    "whole numbers such as 3.0, and a float (N,) target makes cross_entropy raise RuntimeError: "
    "expected target dtype to be Long or Byte, but got Float",
    "cast with .long()",
)
_TEXT = (
    "digits such as '3', read as class 3 here, but torch.tensor of strings raises ValueError: "
    "too many dimensions 'str'",
    "convert with int()",
)


@check("LG026")
def float_labels(ctx: Context) -> list[Finding]:
    """Whole numbers stored as floats, or as text of digits: valid values, but such a (N,)
    target makes the loss raise (floats) or cannot become a tensor at all (strings)."""
    text = ctx.label_type in TEXT_TYPES
    if ctx.task != "multiclass" or not (text or ctx.label_type.startswith(FLOAT_TYPES)):
        return []
    if not typed(ctx.files):
        return []  # CSV: the type is the reader's guess, not the file's; its labels are text
    st = ctx.scan.row_status
    whole = int(st[Status.USABLE] + st[Status.IGNORED] + st[Status.HIGH] + st[Status.NEGATIVE])
    if whole == 0:
        return []
    such, cast = _TEXT if text else _FLOAT
    stored = f"text ({ctx.label_type})" if text else ctx.label_type
    message = f"labels are stored as {stored}: {plural(whole, 'row')} hold {such}"
    fix = (
        f"Store the label column as int64 where the dataset is written, or {cast} in the "
        "collate function, once every value is a whole number (LG002)."
    )
    return [finding("LG026", count=whole, unit="rows", message=message, fix=fix)]
