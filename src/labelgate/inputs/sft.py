"""Supervised fine-tuning data as the trainer will see its labels: prompt and completion columns
tokenized, the prompt masked to -100, the sequence truncated, the labels shifted.

The steps are TRL's ``SFTTrainer`` for prompt-completion data (``trl/trainer/sft_trainer.py``,
``tokenize``): ``prompt_ids = tokenizer(prompt)``, ``ids = tokenizer(prompt + completion)``,
``completion_mask = [0] * len(prompt_ids) + [1] * (len(ids) - len(prompt_ids))``; then the first
``max_length`` tokens are kept, and the labels are the ids where the mask is 1, -100 elsewhere.
The model's loss shifts them (transformers ``loss/loss_utils.py``, ``ForCausalLMLoss``: position
``i`` predicts label ``i + 1``), so the targets the loss sees are ``labels[1:]``. A prompt as long
as ``max_length`` leaves a row whose every target is -100: harmless alone, NaN when a whole batch
is such rows (llama-cookbook#133, ColossalAI#5370).

The tokenizer is a ``tokenizer.json`` read with the ``tokenizers`` library, no model and no hub.
"""

from __future__ import annotations

import os
import sys
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from labelgate.errors import InputError, UsageError, one_line
from labelgate.io.bounded import MAX_DEPTH, DepthGuard
from labelgate.io.files import read_small_bytes

if TYPE_CHECKING:
    import pyarrow as pa

__all__ = ["SftTargets", "completion_targets"]

IGNORE = -100
MAX_TOKENIZER = 256 << 20  # bytes of tokenizer.json (a 250,000-token vocabulary is ~35 MB)
SHOWN = 10


@dataclass(frozen=True, slots=True)
class SftTargets:
    """The targets a causal LM's loss sees, per row.

    Attributes:
        table: ``labels`` (a list of token ids or -100 per row) and the id column where one was
            found.
        vocab: the tokenizer's vocabulary size (the K of the loss).
        emptied: rows (positions) whose every target is -100 after truncation.
        emptied_ids: their ids, where the data has an id column.
        truncated: rows cut at ``max_length``.
        origin: the tokenizer file.
    """

    table: pa.Table
    vocab: int
    emptied: tuple[int, ...]
    emptied_ids: tuple[Any, ...]
    truncated: int
    origin: str

    def note(self, max_length: int) -> str:
        """One line on what truncation did to the targets."""
        rows = self.table.num_rows
        if not self.emptied:
            return (
                f"tokens: {self.origin}, max_length {max_length}: {self.truncated} of {rows} rows "
                "truncated; every row keeps a completion token as a target"
            )
        named = self.emptied_ids if self.emptied_ids else self.emptied
        shown = ", ".join(repr(v) if isinstance(v, str) else str(v) for v in named[:SHOWN])
        more = f" and {len(self.emptied) - SHOWN} more" if len(self.emptied) > SHOWN else ""
        which = "ids" if self.emptied_ids else "rows"
        return (
            f"tokens: {self.origin}, max_length {max_length}: {len(self.emptied)} of {rows} rows "
            f"keep no completion token after truncation, every target -100 ({which} {shown}"
            f"{more}); {self.truncated} rows truncated"
        )


def _tokenizer(path: str) -> Any:
    try:
        from tokenizers import Tokenizer
    except ImportError:
        raise UsageError(
            "--tokenizer reads a tokenizer.json with the tokenizers library: pip install tokenizers"
        ) from None
    p = Path(path)
    file = p / "tokenizer.json" if p.is_dir() else p
    if not file.exists() and not file.is_symlink():
        raise InputError("no tokenizer.json here", path=str(p))
    data = read_small_bytes(
        file, "tokenizer", limit=MAX_TOKENIZER, within=p if p.is_dir() else None
    )
    try:
        text = data.decode("utf-8-sig")
        DepthGuard(MAX_DEPTH, str(file)).feed(data)  # serde's own limit is 128 levels
        with native_panics(str(file)):
            return Tokenizer.from_str(text), str(file)
    except UnicodeDecodeError as exc:
        raise InputError(f"not UTF-8 text (byte {exc.start})", path=str(file)) from None
    except InputError:
        raise
    except Exception as exc:  # noqa: BLE001 - the library's own parse error, one line
        raise InputError(
            f"not a tokenizer.json: {' '.join(str(exc).split())[:200]}", path=str(file)
        ) from None


@contextmanager
def native_panics(origin: str) -> Iterator[None]:
    """Turn a panic of the tokenizers library (a Rust ``PanicException``, which derives from
    ``BaseException``: a split regex that backtracks past Oniguruma's retry limit panics in
    ``encode``) into one ``InputError``, and keep the panic's own report (Rust writes it to
    file descriptor 2 itself, backtrace and all) off the terminal."""
    sys.stderr.flush()
    saved = os.dup(2)
    with tempfile.TemporaryFile() as sink:
        os.dup2(sink.fileno(), 2)
        try:
            yield
        except BaseException as exc:
            if type(exc).__name__ != "PanicException":
                raise
            raise InputError(
                "the tokenizer failed inside its library (a panic, such as a split regex that "
                "backtracks past the regex engine's limit): not a tokenizer to train with",
                path=origin,
            ) from None
        finally:
            os.dup2(saved, 2)
            os.close(saved)


def _read(paths: list[str]) -> pa.Table:
    import pyarrow as pa
    import pyarrow.csv as pacsv
    import pyarrow.json as pajson
    import pyarrow.parquet as pq

    tables = []
    for path in paths:
        suffix = Path(path).suffix.lower()
        if not Path(path).is_file():
            raise InputError("not found", path=path)
        try:
            if suffix == ".parquet":
                tables.append(pq.read_table(path))
            elif suffix in (".jsonl", ".json"):
                tables.append(pajson.read_json(path))
            elif suffix == ".csv":
                tables.append(pacsv.read_csv(path))
            else:
                raise InputError("--tokenizer reads Parquet, JSONL or CSV", path=path)
        except pa.ArrowInvalid as exc:
            raise InputError(f"cannot read it: {one_line(exc)[:200]}", path=path) from None
    return pa.concat_tables(tables, promote_options="default")


def _encoded(
    tok: Any, prompts: list[Any], completions: list[Any], max_length: int
) -> tuple[list[list[int]], list[int], int]:
    """Each row's shifted targets, the rows left without a completion token, the rows cut."""
    labels: list[list[int]] = []
    emptied: list[int] = []
    truncated = 0
    for row, (p, c) in enumerate(zip(prompts, completions, strict=True)):
        p, c = p or "", c or ""
        prompt_ids = tok.encode(p).ids
        ids = tok.encode(p + c).ids
        mask = [0] * len(prompt_ids) + [1] * (len(ids) - len(prompt_ids))
        if len(ids) > max_length:
            truncated += 1
            ids, mask = ids[:max_length], mask[:max_length]
        shifted = [t if m else IGNORE for t, m in zip(ids, mask, strict=True)][1:]
        if all(t == IGNORE for t in shifted):
            emptied.append(row)
        labels.append(shifted)
    return labels, emptied, truncated


def completion_targets(
    paths: list[str],
    tokenizer: str,
    max_length: int,
    *,
    prompt: str = "prompt",
    completion: str = "completion",
    id_column: str | None = None,
) -> SftTargets:
    """The targets of every row, as the loss will see them.

    Args:
        paths: Parquet, JSONL or CSV files with ``prompt`` and ``completion`` text columns.
        tokenizer: a ``tokenizer.json``, or a folder holding one.
        max_length: the trainer's ``max_length`` (the sequence is cut to its first tokens).
        prompt: the prompt column.
        completion: the completion column.
        id_column: the id column, if any (``id`` when present).

    Raises:
        UsageError: no prompt and completion columns (chat ``messages`` are not read yet).
        InputError: a file or the tokenizer cannot be read.
    """
    import pyarrow as pa

    if max_length < 2:
        raise UsageError(f"--max-length must be at least 2, got {max_length}")
    tok, origin = _tokenizer(tokenizer)
    table = _read(paths)
    names = table.column_names
    if prompt not in names or completion not in names:
        has_messages = "messages" in names
        raise UsageError(
            f"--tokenizer needs {prompt!r} and {completion!r} text columns; found "
            f"{', '.join(names[:10])}"
            + ("; chat 'messages' are not read yet" if has_messages else "")
        )
    ids_col = id_column or ("id" if "id" in names else None)
    prompts = table.column(prompt).to_pylist()
    completions = table.column(completion).to_pylist()
    with native_panics(origin):  # once: a panic in any row's encoding
        labels, emptied, truncated = _encoded(tok, prompts, completions, max_length)
    columns: dict[str, Any] = {"labels": pa.array(labels, pa.list_(pa.int64()))}
    emptied_ids: tuple[Any, ...] = ()
    if ids_col is not None and ids_col in names:
        columns["id"] = table.column(ids_col)
        all_ids = table.column(ids_col).to_pylist()
        emptied_ids = tuple(all_ids[r] for r in emptied)
    return SftTargets(
        table=pa.table(columns),
        vocab=int(tok.get_vocab_size()),
        emptied=tuple(emptied),
        emptied_ids=emptied_ids,
        truncated=truncated,
        origin=origin,
    )
