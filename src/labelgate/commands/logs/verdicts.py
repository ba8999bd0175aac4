"""What a log's first error says: its family, the named case within it (with its evidence), and
the checks to make first."""

from __future__ import annotations

import re
from typing import Any

from labelgate.commands.logs.families import FAMILIES
from labelgate.commands.logs.logpatterns import (
    BATCH_SIZE_MISMATCH,
    CLASS_PARAM,
    FAMILY_ORDER,
    FAMILY_PATTERNS,
    SIZE_MISMATCH,
)

__all__ = ["error_family", "error_kind", "first_checks"]


def error_kind(family: str, block: str) -> tuple[str | None, dict[str, Any]]:
    """The named case within a family, with its evidence."""
    if family == "distributed_timeout":
        collective = re.search(r"collective operation timeout|WorkNCCL|ncclCommWatchdog", block)
        return ("collective_timeout" if collective else "store_timeout"), {}
    if family != "other":
        return None, {}
    sizes = BATCH_SIZE_MISMATCH.search(block)
    if sizes is not None:
        return "batch_size_mismatch", {"input": int(sizes[1]), "target": int(sizes[2])}
    found = SIZE_MISMATCH.findall(block)
    if not found:
        return None, {}

    def dims(text: str) -> list[int]:
        return [int(d) for d in text.replace(" ", "").split(",") if d]

    shapes = [(name, dims(a), dims(b)) for name, a, b in found]
    only_first = all(len(a) == len(b) and a[1:] == b[1:] and a[:1] != b[:1] for _, a, b in shapes)
    heads = [(n, a, b) for n, a, b in shapes if CLASS_PARAM.search(n.lower())]
    if not only_first or not heads:
        return None, {}
    name, a, b = heads[0]
    return "checkpoint_class_count", {"parameter": name, "checkpoint": a[0], "model": b[0]}


def error_family(block: str) -> str:
    for name in FAMILY_ORDER:
        if any(p.search(block) for p in FAMILY_PATTERNS[name]):
            return name
    return "other"


def first_checks(family: str, block: str, asynchronous: bool, rocm: bool) -> list[str]:
    checks = [FAMILIES[family]["first_check"]]
    if (
        re.search(r"nll_loss|NLLLoss|ClassNLLCriterion|cross_entropy|Loss\.cu", block)
        and family == "index_out_of_range"
    ):
        checks.insert(
            0,
            "a loss kernel refused a target: validate the labels of that step with "
            "`labelgate validate FILE --classes K` (and `--ignore-index` if not -100)",
        )
    if (
        re.search(r"Indexing\.cu|indexSelect|embedding|index_select", block)
        and family == "index_out_of_range"
    ):
        checks.insert(
            0,
            "an Indexing.cu assert: an embedding or vocabulary index is out of range "
            "(token ids >= num_embeddings, or a tokenizer/model vocabulary mismatch)",
        )
    if re.search(r"not implemented for 'Int'", block) and re.search(
        r"nll_loss|cross_entropy", block
    ):
        checks.insert(0, "int32 targets: cast them to int64 (target.long()) before the loss")
    elif re.search(r"not implemented for '(Float|Double|Half)'", block) and re.search(
        r"nll_loss", block
    ):
        checks.insert(
            0,
            "float class targets: class indices must be int64; a fractional label is corrupted data",
        )
    if family == "index_out_of_range" and re.search(
        r"device-side assert|Assertion|hipErrorAssert|cudaErrorAssert", block
    ):
        checks.append(
            "after a device-side assert the process cannot continue: restart it (a notebook: "
            "its kernel) before reproducing; a restart fixes neither a wrong target nor a bad index"
        )
    if asynchronous and not rocm:
        checks.append(
            "the traceback line is where the error was observed, not where it happened: rerun "
            "once with CUDA_LAUNCH_BLOCKING=1 (NVIDIA only, for diagnosis, never for timing)"
        )
    if rocm:
        checks.append(
            "this log comes from ROCm (HIP): its messages, tools and flags differ; apply no "
            "NVIDIA-specific procedure (CUDA_LAUNCH_BLOCKING) there"
        )
    return checks
