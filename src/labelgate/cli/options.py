"""The flags the commands share: the contract, the replay of a crashed run, the consumer and the
report, with the integer types that bound them."""

from __future__ import annotations

import argparse
from collections.abc import Callable

from labelgate.contract import LIMITS, TASKS
from labelgate.contract.frameworks import FRAMEWORKS
from labelgate.render import FORMATS

__all__ = [
    "consumer_options",
    "contract_options",
    "int_between",
    "non_negative",
    "positive",
    "replay_options",
    "report_options",
]


def int_between(low: int, high: int) -> Callable[[str], int]:
    """An argparse type: an integer from ``low`` to ``high``."""

    def parse(text: str) -> int:
        shown = repr(text) if len(text) <= 40 else repr(text[:37] + "...")
        try:
            value = int(text)
        except ValueError:
            raise argparse.ArgumentTypeError(f"must be an integer, got {shown}") from None
        if not low <= value <= high:
            raise argparse.ArgumentTypeError(f"must be from {low} to {high}, got {shown}")
        return value

    return parse


_COUNT = 2**31 - 1
positive = int_between(1, _COUNT)
non_negative = int_between(0, _COUNT)
_classes = int_between(*LIMITS["num_classes"])
_int64 = int_between(*LIMITS["ignore_index"])
_seed = int_between(*LIMITS["batching.shuffle_seed"])


def contract_options(p: argparse.ArgumentParser) -> None:
    """The options every command shares: K, the contract, columns, class map, batching."""
    p.add_argument(
        "--classes",
        "-k",
        type=_classes,
        metavar="K",
        help="number of classes (logits); read from the input's own class map where it has one "
        "(COCO categories, YOLO names, a ClassLabel, a class list beside the files)",
    )
    p.add_argument("--schema", metavar="FILE", help="dataset contract (YAML); flags override it")
    p.add_argument(
        "--task",
        choices=TASKS,
        help="multiclass, tokens or soft (detected from the label column), multilabel: "
        "K multi-hot values per row, for BCEWithLogitsLoss, or detection: the boxes of an "
        "annotation format (with --background, K counts the background); instance or keypoints: "
        "the same boxes, their masks or keypoints checked as errors (LG044, LG046)",
    )
    p.add_argument(
        "--images",
        metavar="DIR",
        help="detection: the folder of the images the annotations name (default: the format's "
        "conventional place when present); each must exist, decode and have its recorded size",
    )
    p.add_argument(
        "--framework",
        choices=tuple(FRAMEWORKS),
        help="the framework that trains on the data: its conventions apply (background, how "
        "category ids become indices, what a bad box does): docs/frameworks.md",
    )
    p.add_argument(
        "--reduce-zero-label",
        action="store_true",
        default=None,
        help="with --framework mmseg: masks' labels as reduce_zero_label makes them (0 -> 255, "
        "others minus 1)",
    )
    p.add_argument("--label-column", metavar="COL", help="label column (auto-detected)")
    p.add_argument(
        "--label-columns",
        metavar="A,B,...",
        help="multi-label targets held one class per column (CheXpert's CSV): the K columns, in "
        "class order; implies --task multilabel",
    )
    p.add_argument(
        "--label-encoding",
        choices=("multi-hot", "indices"),
        help="multilabel rows: multi-hot (K values, default) or indices (the positive classes)",
    )
    p.add_argument("--id-column", metavar="COL", help="row id column (auto-detected)")
    p.add_argument("--source-column", metavar="COL", help="data source column (auto-detected)")
    p.add_argument("--name-column", metavar="COL", help="class name column (auto-detected)")
    p.add_argument(
        "--class-names", metavar="FILE", help="class-name map: txt, json, yaml or csv index,name"
    )
    p.add_argument("--ignore-index", type=_int64, metavar="N", help="default -100")
    p.add_argument("--batch-size", type=positive, metavar="N", help="default 32")
    p.add_argument(
        "--drop-last", action="store_true", default=None, help="drop an incomplete last batch"
    )
    p.add_argument(
        "--shuffle-seed",
        type=_seed,
        metavar="S",
        help="replay DataLoader(shuffle=True, generator=Generator().manual_seed(S)) (needs torch)",
    )


def replay_options(p: argparse.ArgumentParser) -> None:
    """Where a crashed run was: its step and how its DataLoader split the data."""
    p.add_argument(
        "--step",
        type=non_negative,
        metavar="N",
        help="the failing step, from 0 (default: read from the log); over the run, or within "
        "--epoch",
    )
    p.add_argument("--epoch", type=non_negative, metavar="E", help="the failing epoch, from 0")
    p.add_argument(
        "--world-size",
        type=positive,
        default=1,
        metavar="W",
        help="processes, each with a DistributedSampler (default 1)",
    )
    p.add_argument(
        "--grad-accum",
        type=positive,
        default=1,
        metavar="N",
        help="batches per optimizer step (default 1)",
    )
    p.add_argument(
        "--sampler-drop-last",
        action="store_true",
        help="DistributedSampler(drop_last=True): cut the data to a multiple of W, not padded",
    )


def consumer_options(p: argparse.ArgumentParser) -> None:
    """What consumes the data: processes, accumulated steps, the model, the tokenizer."""
    rank = "processes, each with a DistributedSampler: every rank's batches are judged"
    p.add_argument("--world-size", type=positive, metavar="W", help=rank)
    p.add_argument("--grad-accum", type=positive, metavar="N", help="batches per optimizer step")
    cut = "DistributedSampler(drop_last=True): cut to a multiple of W, not padded"
    p.add_argument("--sampler-drop-last", action="store_true", default=None, help=cut)
    mean = "the mean loss of each batch (default), or of the step (num_items_in_batch)"
    p.add_argument("--normalize", choices=("batch", "step"), help=mean)
    model = (
        "a Hugging Face model folder, its config.json or a checkpoint: its classes vs the data's"
    )
    p.add_argument("--model", metavar="PATH", help=model)
    witness = "a model's predictions on these rows (.parquet/.csv/.jsonl/.npy): each source judged"
    p.add_argument("--predictions", metavar="PRED", help=witness + " against them (LG049)")
    sft = "prompt-completion data: judge the targets this tokenizer.json makes (with --max-length)"
    p.add_argument("--tokenizer", metavar="DIR", help=sft)
    p.add_argument("--max-length", type=positive, metavar="N", help="the trainer's max_length")


def cache_option(p: argparse.ArgumentParser) -> None:
    """--cache DIR, alike for validate and diff."""
    p.add_argument(
        "--cache",
        metavar="DIR",
        help="keep each Parquet file's partial result in DIR, keyed by its bytes, the contract "
        "and labelgate's version: a re-run reads only the files that changed",
    )


def report_options(p: argparse.ArgumentParser) -> None:
    """The report's flags, alike for validate and diff."""
    p.add_argument("--format", choices=FORMATS, default="text", help="report format (default text)")
    p.add_argument("--output", "-o", metavar="FILE", help="write the report here (default stdout)")
    p.add_argument(
        "--max-examples",
        type=non_negative,
        default=20,
        metavar="N",
        help="offending rows listed per finding (default 20; 0 lists all)",
    )
    p.add_argument(
        "--all-batches",
        action="store_true",
        help="list every batch in the JSON report's batch lists (default: the first 1000, "
        "with their counts)",
    )
    p.add_argument("--strict", action="store_true", help="warnings fail too")
    p.add_argument(
        "--report-url",
        metavar="URL",
        help="pr-comment: the link to the full report (default on GitHub Actions: the run's page, "
        "where its artifacts are)",
    )
