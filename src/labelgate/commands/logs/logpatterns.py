"""The patterns labelgate triage reads a log with: error starts, frames, families, ranks, steps,
and the limits that bound what one line may cost."""

from __future__ import annotations

import re

from labelgate.commands.logs.families import FAMILIES

__all__ = [
    "ASSERT",
    "ASYNC_FOOTER",
    "BATCH_SIZE_MISMATCH",
    "CAPABILITY",
    "CLASS_PARAM",
    "ENTITY",
    "ERROR_START",
    "ERROR_WORDS",
    "EXCEPTION",
    "EXCEPTION_TAIL",
    "FAMILY_ORDER",
    "FAMILY_PATTERNS",
    "FENCE",
    "FRAME",
    "FRAME_TAIL",
    "LOGGER",
    "MARKS",
    "MAX_BLOCK",
    "MAX_CONSEQUENCES",
    "MAX_LINE",
    "MESSAGE",
    "NOTEBOOK_HEADER",
    "NULS",
    "NUMBERED",
    "PASTED",
    "PLAIN_START",
    "PROBE",
    "RAISED_FROM",
    "RANK",
    "RECENT_STEPS",
    "RESULT_WORDS",
    "ROCM",
    "SHOWN",
    "SIZE_MISMATCH",
    "STEP_PATTERNS",
    "STEP_PROBE",
    "STEP_WORDS",
    "WARNING",
]

NULS = re.compile("\x00+")
MAX_LINE = 1 << 20  # characters of one line kept; the rest of a longer line is skipped
PROBE = 4096  # characters of a line matched against the patterns (messages start a line)
SHOWN = 1000  # characters of a line kept for display
STEP_PROBE = 512  # characters of a line searched for step markers (they come first)
RECENT_STEPS = 64  # lines with step markers kept before the failure
ERROR_WORDS = ("rror", "ssert", "Traceback", "terminate", "fault", "Fatal", "Exception", "FAIL")
STEP_WORDS = ("iter", "Iter", "step", "Step", "poch", "%|")
MAX_BLOCK = 60
MAX_CONSEQUENCES = 50

RANK = re.compile(r"^(?:\[(?:rank|RANK)\s*(\d+)\]:\s?)+")
# Logger prefixes, stripped for matching: "2022-12-28 16:13:02 [ERROR] ", "2020-05-28 10:21:14,112 - INFO - ",
# glog's "E0305 20:23:38.866000 747 file.py:533] ".
LOGGER = re.compile(
    r"^(?:\d{4}-\d\d-\d\d[ T]\d\d:\d\d:\d\d(?:[.,]\d+)?Z?(?:\s*-\s*\w+\s*-|\s*\[\w+\]|\s+\w+:?)?\s*"
    r"|[EWIF]\d{4} \d\d:\d\d:\d\d\.\d+\s+\d+\s+\S+\]\s?"
    r"|\[[EWIF]\d{0,4}(?: \d\d:\d\d:\d\d\.\d+)?(?: \d+)? ?[\w./-]+:\d+\]\s?)"
)
# What a paste adds to a log (an issue tracker, a chat, an editor, pytest), stripped for matching
# and kept for display: a log viewer's line number, Markdown quote markers, pytest's "E " prefix,
# list bullets, an editor's "12 |" line number, emphasis and inline-code marks around the line.
PASTED = re.compile(
    r"^(?:\[\d{1,9}\]\s+"  # a log viewer's line number: [80746]
    r"|\s*\d{1,6}\s*[|│]\s?"  # an editor's: 12 |
    r"|\s{0,3}>[ \t]?"  # a Markdown quote marker
    r"|E {1,8}(?=\S)"  # pytest's failure lines
    r"|\s{0,3}(?:[-*+•]|\d{1,3}[.)])\s+(?=\S))+"  # a list bullet
)
PLAIN_START = frozenset("abcdfghijklmnopqrstuvwxyzABCDFGHIJKLMNOPQRSTUVWXYZ/(") - {"E"}
NUMBERED = re.compile(r"\d{1,6}(?:\s*[|│]|[.)]\s)")  # a line number or a numbered item
FENCE = re.compile(r"^\s*(?:```|~~~)[\w+-]*\s*$")
MARKS = "`*_"
ENTITY = re.compile(r"&(?:[a-zA-Z]{2,8}|#\d{1,6}|#x[0-9a-fA-F]{1,6});")
# A message that names a failure wherever it stands in a line: pasted without its exception
# line, inside a sentence, after a UI's own prefix.
MESSAGE = re.compile(
    r"Could not run '[\w:.]+' with arguments from the '\w+' backend"
    r"|Expected all tensors to be on the same device"
    r"|\"\w+\" not implemented for '\w+'"
    r"|CUDA out of memory|CUDA error: ?out of memory|OutOfMemoryError"
    r"|no kernel image is available for execution"
    r"|\b(?:CUDA|HIP) error: \S"
    r"|device-side assert triggered"
    r"|\bTarget -?\d+ is out of bounds"
    r"|index out of range in self"
    r"|Watchdog caught collective operation timeout"
    r"|DistStoreError|DistNetworkError|\bSocket Timeout\b"
    r"|size mismatch for \S+: copying a param"
    r"|Error\(s\) in loading state_dict"
    r"|CUDA_ERROR_[A-Z_]+|illegal memory access was encountered"
)
# An exception name ending a line whose message the terminal wrapped onto the next line.
EXCEPTION_TAIL = re.compile(r"\b[A-Z]\w*(?:Error|Exception):\s*$")
NOTEBOOK_HEADER = re.compile(r"^[A-Z]\w*(?:Error|Exception)\s+Traceback \(most recent call last\)")
RAISED_FROM = re.compile(r"^Exception raised from \w+ at ")
# Lines of a traceback pasted without its header: a Python frame (or its tail, cut in the middle
# of the path), an IPython frame, a C++ frame, a rich traceback's code line.
FRAME = re.compile(
    r"^\s*File \"[^\"]*\", line \d+, in \S"
    r"|\", line \d+, in \S+\s*$"
    r"|^File \S.*:\d+, in \S+\("
    r"|^frame #\d+: "
    r"|^│\s+(?:❱\s+)?\d+\s+│"
)
FRAME_TAIL = re.compile(r"^(?:\s|│|╰|╭|\^|-+>|\.{3,}|frame #|$)")
SIZE_MISMATCH = re.compile(
    r"size mismatch for (\S+): copying a param (?:with shape|of) torch\.Size\(\[([\d, ]*)\]\) from "
    r"checkpoint, (?:the shape in current model is|where the shape is) torch\.Size\(\[([\d, ]*)\]\)"
)
# The loss's shape check (ATen's nll_loss): run before any target's value is read, so a batch
# holding a bad value raises it too (PyTorch 2.13, CPU: cross_entropy of (32, 4) logits and 8
# targets holding 9 with K = 4 raises this ValueError, not an index error).
BATCH_SIZE_MISMATCH = re.compile(
    r"Expected input batch_size \((\d{1,12})\) to match target batch_size \((\d{1,12})\)"
)
CLASS_PARAM = re.compile(r"(?:^|[._])(?:fc|cls|logits?|class\w*|classifier\w*)(?:[._]|$)")
RESULT_WORDS = re.compile(
    r"loss|acc|done|finished|complete|\bit/s|s/it|img/s|lr\b|time|took", re.IGNORECASE
)
CAPABILITY = re.compile(r"with CUDA capability (sm_\d+) is not compatible")
ASSERT = re.compile(
    r"Assertion [`'].*[`'] failed|Device-side assertion .* failed|tl\.device_assert|Assertion failed"
)
EXCEPTION = re.compile(r"^(?:[A-Za-z_][\w.]*\.)?([A-Z]\w*(?:Error|Exception))(?::\s?(.*))?$")
ERROR_START = re.compile(
    r"^Traceback \(most recent call last\):|^THCudaCheck FAIL|^terminate called after throwing"
    r"|^Segmentation fault|^Fatal Python error|^torch\.distributed\.elastic\.multiprocessing\.errors"
    r"|^\S.*\bCUDA error: |^ERROR:torch\.distributed"
)
WARNING = re.compile(r"Warning\b|^\s*warnings\.warn")
ASYNC_FOOTER = "CUDA kernel errors might be asynchronously reported"
ROCM = re.compile(
    r"\bHIP error\b|\bhipError|\bROCm\b|\brocm\b|\bHSA_STATUS|\bAMD_SERIALIZE_KERNEL|\bamdgpu\b|torch\.version\.hip"
)
STEP_PATTERNS = [
    re.compile(r"(?P<pct>\d{1,3})%\|[^|\n]{0,200}\|\s*(?P<n>\d+)/(?P<of>\d+)"),
    re.compile(
        r"\b(?P<kind>[Ee]poch)\s*[:=]?\s*(?P<n>\d+)\s*\[\s*(?P<i>\d+)\s*/\s*(?P<of>\d+)\s*\]"
    ),
    re.compile(
        r"\b(?P<kind>iter(?:ation)?|step|global_step|Iter(?:ation)?|Step)\s*[:=#]?\s*\[?(?P<n>\d+)(?:\s*/\s*(?P<of>\d+))?"
    ),
    re.compile(r"\b(?P<kind>[Ee]poch)\s*[:=#]?\s*\[?(?P<n>\d+)(?:\s*/\s*(?P<of>\d+))?"),
]

FAMILY_PATTERNS = {name: [re.compile(p) for p in f["patterns"]] for name, f in FAMILIES.items()}
FAMILY_ORDER = (
    "distributed_timeout",
    "device_mismatch",
    "out_of_memory",
    "op_unavailable",
    "index_out_of_range",
)
