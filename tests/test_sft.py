"""Token labels as the tokenizer and the trainer make them: completion-only masking, truncation
at max_length and the causal shift, with a tokenizer built here with ``tokenizers`` (no hub)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

import labelgate
from labelgate.errors import InputError, UsageError
from labelgate.inputs.sft import completion_targets
from tests.conftest import run_cli

tokenizers = pytest.importorskip("tokenizers")

WORDS = [
    *("the", "sky", "is", "blue", "what", "color", "answer"),
    *("a", "b", "c", "d", "e", "f", "g", "h", "long", "prompt", "here"),
]
ROWS = [
    {"id": "q1", "prompt": "what color is the sky", "completion": " blue"},
    {"id": "q2", "prompt": "a b c d e f g h", "completion": " answer"},  # 8 prompt tokens
    {"id": "q3", "prompt": "long prompt here a b c d e", "completion": " the answer"},
    {"id": "q4", "prompt": "the sky", "completion": " is blue"},
]


@pytest.fixture
def tokenizer(tmp_path: Path) -> str:
    from tokenizers import Tokenizer, models, pre_tokenizers

    vocab = {"[UNK]": 0, **{w: i + 1 for i, w in enumerate(WORDS)}}
    tok = Tokenizer(models.WordLevel(vocab, unk_token="[UNK]"))
    tok.pre_tokenizer = pre_tokenizers.Whitespace()
    path = tmp_path / "tok"
    path.mkdir()
    tok.save(str(path / "tokenizer.json"))
    return str(path)


def jsonl(tmp_path: Path, rows: list[dict[str, Any]]) -> str:
    path = tmp_path / "sft.jsonl"
    path.write_text("".join(json.dumps(r) + "\n" for r in rows))
    return str(path)


class TestTargets:
    def test_prompt_as_long_as_max_length_leaves_nothing(
        self, tmp_path: Path, tokenizer: str
    ) -> None:
        found = completion_targets([jsonl(tmp_path, ROWS)], tokenizer, 8)
        assert found.emptied == (1, 2) and found.emptied_ids == ("q2", "q3")
        assert found.truncated == 2 and found.vocab == len(WORDS) + 1
        labels = found.table.column("labels").to_pylist()
        # q1: 5 prompt tokens then 'blue'; shifted: 4 x -100 then blue's id
        assert labels[0] == [-100] * 4 + [WORDS.index("blue") + 1]
        assert all(t == -100 for t in labels[1])

    def test_a_longer_max_length_keeps_them(self, tmp_path: Path, tokenizer: str) -> None:
        assert completion_targets([jsonl(tmp_path, ROWS)], tokenizer, 16).emptied == ()

    def test_agrees_with_transformers_and_the_causal_loss(
        self, tmp_path: Path, tokenizer: str
    ) -> None:
        """The rows and batches predicted NaN are the ones where transformers' tokenizer, TRL's
        completion mask and ForCausalLMLoss give a NaN loss."""
        torch = pytest.importorskip("torch")
        transformers = pytest.importorskip("transformers")
        from transformers.loss.loss_utils import ForCausalLMLoss

        fast = transformers.PreTrainedTokenizerFast(
            tokenizer_file=str(Path(tokenizer) / "tokenizer.json")
        )
        rows = [*ROWS, {"id": "q5", "prompt": "a b c d e f g h h", "completion": " blue"}]
        max_length, size = 8, 2
        report = labelgate.validate(
            jsonl(tmp_path, rows), tokenizer=tokenizer, max_length=max_length, batch_size=size
        )
        nan_batches = []
        for b in range(0, len(rows), size):
            batch_labels = []
            for r in rows[b : b + size]:
                prompt_ids = fast(r["prompt"]).input_ids
                ids = fast(r["prompt"] + r["completion"]).input_ids
                mask = [0] * len(prompt_ids) + [1] * (len(ids) - len(prompt_ids))
                ids, mask = ids[:max_length], mask[:max_length]
                batch_labels.append([t if m else -100 for t, m in zip(ids, mask, strict=True)])
            width = max(len(x) for x in batch_labels)
            labels = torch.tensor([x + [-100] * (width - len(x)) for x in batch_labels])
            logits = torch.randn(labels.shape[0], width, len(WORDS) + 1)
            loss = ForCausalLMLoss(logits, labels, vocab_size=len(WORDS) + 1)
            if torch.isnan(loss):
                nan_batches.append(b // size)
        assert nan_batches == [2]  # q5 alone; (q3, q4) is not NaN: q4 keeps its targets
        lg007 = [f for f in report.findings if f.code == "LG007"]
        assert lg007 and list(lg007[0].batches) == nan_batches

    def test_unreadable(self, tmp_path: Path, tokenizer: str) -> None:
        with pytest.raises(UsageError, match="'prompt' and 'completion'"):
            completion_targets([jsonl(tmp_path, [{"messages": []}])], tokenizer, 8)
        with pytest.raises(InputError, match=r"no tokenizer\.json"):
            completion_targets([jsonl(tmp_path, ROWS)], str(tmp_path / "none"), 8)


class TestValidate:
    def test_cli_names_the_rows_and_the_batch(self, tmp_path: Path, tokenizer: str) -> None:
        rows = [ROWS[0], ROWS[1], ROWS[2], ROWS[3]]
        path = jsonl(tmp_path, [rows[1], rows[2], rows[0], rows[3]])  # q2, q3 share batch 0
        done = run_cli(
            "validate", path, "--tokenizer", tokenizer, "--max-length", "8", "--batch-size", "2"
        )
        assert done.returncode == 1, done.stderr
        assert "LG007" in done.stdout and "id 'q2'" in done.stdout
        assert "ids 'q2', 'q3'" in " ".join(done.stdout.split())
        clean = run_cli(
            "validate", path, "--tokenizer", tokenizer, "--max-length", "16", "--batch-size", "2"
        )
        assert clean.returncode == 0, clean.stdout

    def test_flags_go_together(self, tmp_path: Path, tokenizer: str) -> None:
        done = run_cli("validate", jsonl(tmp_path, ROWS), "--tokenizer", tokenizer)
        assert done.returncode == 2 and "--max-length" in done.stderr
