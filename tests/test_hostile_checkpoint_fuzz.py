"""Fuzzing each checkpoint surface with mutated inputs (torch checkpoints, Lightning checkpoints,
Hugging Face checkpoint folders, safetensors, config.json, tokenizer.json): every run ends in a
verdict or labelgate's own error, never another exception, within a time limit and with the
process's peak memory bounded; and a checkpoint called sound loads with its framework's own
reader, every tensor inside its storage and its file."""

from __future__ import annotations

import io
import json
import signal
import struct
import zipfile
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from labelgate.errors import LabelgateError
from labelgate.training.checkpoints import Checkpoint, find_checkpoints, read_checkpoint
from tests.test_hostile_fuzz import bounded_memory, json_values, mutated  # noqa: F401

torch = pytest.importorskip("torch")

pytestmark = pytest.mark.slow
SETTINGS = settings(
    max_examples=25,
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)
SECONDS = 20  # one example's time limit


@contextmanager
def time_limit(seconds: int = SECONDS) -> Iterator[None]:
    def expired(signum: int, frame: Any) -> None:
        raise TimeoutError(f"over {seconds} s")

    previous = signal.signal(signal.SIGALRM, expired)
    signal.alarm(seconds)
    try:
        yield
    finally:
        signal.alarm(0)
        signal.signal(signal.SIGALRM, previous)


def refused_or_judged(run: Any) -> None:
    """``run()`` within the time limit; labelgate's own error is a refusal, any other a defect."""
    with time_limit():
        try:
            run()
        except LabelgateError as exc:
            assert "\n" not in str(exc) and len(str(exc)) < 2000


def assert_sound_loads(path: Path) -> None:
    """A torch checkpoint judged sound loads under weights_only, every tensor in its storage."""
    loaded = torch.load(path, weights_only=True, map_location="cpu")
    stack = [loaded]
    while stack:
        item = stack.pop()
        if isinstance(item, torch.Tensor) and item.numel():
            extent = item.storage_offset() + sum(
                (n - 1) * s for n, s in zip(item.shape, item.stride(), strict=True)
            )
            assert (extent + 1) * item.element_size() <= item.untyped_storage().nbytes()
        elif isinstance(item, dict):
            stack.extend(item.values())
        elif isinstance(item, list | tuple):
            stack.extend(item)


def judge_torch(path: Path, kind: str = "torch") -> None:
    with time_limit():
        contents = read_checkpoint(Checkpoint(str(path), kind, None, None, (str(path),)))
    assert all("\n" not in p for p in contents.problems)
    if not contents.problems:
        assert_sound_loads(path)


def rezipped(source: bytes, edit: Any) -> bytes:
    """A torch zip with ``edit(name, bytes)`` applied to each member, stored as torch stores."""
    out = io.BytesIO()
    with zipfile.ZipFile(io.BytesIO(source)) as src, zipfile.ZipFile(out, "w") as dst:
        for info in src.infolist():
            dst.writestr(info.filename, edit(info.filename, src.read(info)))
    return out.getvalue()


def saved(obj: Any) -> bytes:
    buffer = io.BytesIO()
    torch.save(obj, buffer)
    return buffer.getvalue()


STATE = {"fc.weight": torch.ones(4, 3), "fc.bias": torch.zeros(4)}
TORCH_FILE = saved(STATE)
edits = st.lists(
    st.tuples(st.integers(min_value=0, max_value=10_000), st.binary(min_size=1, max_size=4)),
    min_size=1,
    max_size=6,
)


def spliced(data: bytes, changes: list[tuple[int, bytes]]) -> bytes:
    raw = bytearray(data)
    for at, value in changes:
        at %= max(len(raw), 1)
        raw[at : at + len(value)] = value
    return bytes(raw)


@SETTINGS
@given(changes=edits, in_pickle=st.booleans(), cut=st.integers(min_value=0, max_value=4000))
def test_torch_checkpoints(
    tmp_path: Path, changes: list[tuple[int, bytes]], in_pickle: bool, cut: int
) -> None:
    if in_pickle:  # the pickle changed, the zip's records kept true
        data = rezipped(
            TORCH_FILE,
            lambda name, raw: spliced(raw, changes) if name.endswith("data.pkl") else raw,
        )
    else:  # any byte of the file, the zip's records included
        data = spliced(TORCH_FILE, changes)[: cut or None]
    path = tmp_path / "step-1.pt"
    path.write_bytes(data)
    judge_torch(path)


@SETTINGS
@given(
    replaced=st.dictionaries(
        st.sampled_from(["global_step", "epoch", "optimizer_states", "state_dict", "loops"]),
        json_values,
        max_size=3,
    ),
    changes=st.one_of(st.none(), edits),
)
def test_lightning_checkpoints(
    tmp_path: Path, replaced: dict[str, Any], changes: list[tuple[int, bytes]] | None
) -> None:
    checkpoint: dict[str, Any] = {
        "epoch": 0,
        "global_step": 2,
        "state_dict": {f"model.{k}": v for k, v in STATE.items()},
        "optimizer_states": [{"state": {0: {"exp_avg": torch.zeros(4, 3)}}, "param_groups": []}],
        "callbacks": {"ModelCheckpoint": {"kth_value": torch.tensor(float("inf"))}},
    }
    checkpoint.update(replaced)
    data = saved(checkpoint)
    if changes is not None:
        data = rezipped(
            data, lambda name, raw: spliced(raw, changes) if name.endswith("data.pkl") else raw
        )
    path = tmp_path / "epoch=0-step=2.ckpt"
    path.write_bytes(data)
    judge_torch(path, "lightning")


def safetensors_bytes(header: str, data: bytes) -> bytes:
    raw = header.encode()
    return struct.pack("<Q", len(raw)) + raw + data


HEADER = {
    "__metadata__": {"format": "pt"},
    "fc.bias": {"dtype": "F32", "shape": [4], "data_offsets": [0, 16]},
    "fc.weight": {"dtype": "F32", "shape": [4, 3], "data_offsets": [16, 64]},
}


@SETTINGS
@given(header=mutated(HEADER), data=st.binary(min_size=0, max_size=80))
def test_safetensors(tmp_path: Path, header: str, data: bytes) -> None:
    safetensors = pytest.importorskip("safetensors.numpy")
    path = tmp_path / "model.safetensors"
    path.write_bytes(safetensors_bytes(header, data))
    with time_limit():
        contents = read_checkpoint(Checkpoint(str(path), "safetensors", None, None, (str(path),)))
    if not contents.problems:  # sound: safetensors' own reader agrees
        safetensors.load_file(str(path))


TRAINER_STATE = {
    "global_step": 4,
    "epoch": 1.0,
    "log_history": [{"loss": 0.5, "step": 2}, {"loss": 0.4, "step": 4}],
}


@SETTINGS
@given(trainer_state=mutated(TRAINER_STATE), weights=mutated(HEADER))
def test_hf_checkpoint_folders(tmp_path: Path, trainer_state: str, weights: str) -> None:
    folder = tmp_path / "run" / "checkpoint-4"
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "trainer_state.json").write_text(trainer_state)
    (folder / "model.safetensors").write_bytes(safetensors_bytes(weights, bytes(64)))
    torch.save({"state": {}, "param_groups": []}, folder / "optimizer.pt")
    with time_limit():
        for found in find_checkpoints(str(tmp_path / "run")):
            read_checkpoint(found)


CONFIG = {
    "architectures": ["BertForSequenceClassification"],
    "id2label": {"0": "neg", "1": "pos"},
    "label2id": {"neg": 0, "pos": 1},
    "num_labels": 2,
    "problem_type": "single_label_classification",
}


@SETTINGS
@given(config=mutated(CONFIG))
def test_config_json(tmp_path: Path, config: str) -> None:
    from labelgate.contract.modelmap import compare, load_model_map

    (tmp_path / "config.json").write_text(config)

    def run() -> None:
        model = load_model_map(tmp_path)
        compare(model, k=2, names={0: "neg", 1: "pos"}, task="multiclass")

    refused_or_judged(run)


def tokenizer_doc() -> Any:
    tokenizers = pytest.importorskip("tokenizers")
    vocab = {"[UNK]": 0, "a": 1, "b": 2, "the": 3}
    tok = tokenizers.Tokenizer(tokenizers.models.WordLevel(vocab, unk_token="[UNK]"))
    tok.pre_tokenizer = tokenizers.pre_tokenizers.Whitespace()
    return json.loads(tok.to_str())


@SETTINGS
@given(data=st.data())
def test_tokenizer_json(tmp_path: Path, data: st.DataObject) -> None:
    import pyarrow as pa
    import pyarrow.parquet as pq

    from labelgate.inputs.sft import completion_targets

    (tmp_path / "tokenizer.json").write_text(data.draw(mutated(tokenizer_doc())))
    rows = tmp_path / "sft.parquet"
    pq.write_table(pa.table({"prompt": ["a b the"], "completion": [" b a"]}), rows)
    refused_or_judged(lambda: completion_targets([str(rows)], str(tmp_path), 8))


def test_the_fuzzed_surfaces_are_sound_unchanged(tmp_path: Path) -> None:
    """The unmutated inputs the tests start from are judged sound (the fuzz moves from there)."""
    (tmp_path / "step-1.pt").write_bytes(TORCH_FILE)
    raw = json.dumps(HEADER)
    (tmp_path / "model.safetensors").write_bytes(safetensors_bytes(raw, bytes(64)))
    for c in find_checkpoints(str(tmp_path)):
        assert read_checkpoint(c).problems == [], c
