"""The class map against a checkpoint before load_state_dict, with real torch and tiny models."""

from __future__ import annotations

from pathlib import Path

import pytest

torch = pytest.importorskip("torch")

from labelgate.errors import LabelError  # noqa: E402
from labelgate.torch import check_state_dict, stamp  # noqa: E402


def model(k: int) -> torch.nn.Module:
    return torch.nn.Sequential(
        torch.nn.Conv2d(3, 4, 3),
        torch.nn.Flatten(),
        torch.nn.Linear(4 * 6 * 6, 16),
        torch.nn.ReLU(),
        torch.nn.Linear(16, k),
    )


def saved(tmp_path: Path, k: int, names: list[str]) -> dict[str, torch.Tensor]:
    state = model(k).state_dict()
    stamp(state, names)
    torch.save(state, tmp_path / "ckpt.pt")
    return torch.load(tmp_path / "ckpt.pt", weights_only=True)  # type: ignore[no-any-return]


def test_a_matching_map_passes_and_the_checkpoint_still_loads(tmp_path: Path) -> None:
    names = ["cat", "dog", "bird", "fish"]
    state = saved(tmp_path, 4, names)
    assert check_state_dict(state, names) == "4"
    model(4).load_state_dict(state)  # the stamp does not get in load_state_dict's way


def test_a_class_added_is_named_with_both_counts(tmp_path: Path) -> None:
    state = saved(tmp_path, 4, ["cat", "dog", "bird", "fish"])
    with pytest.raises(LabelError, match=r"head '4' has 4 outputs .* names 5 classes"):
        check_state_dict(state, ["cat", "dog", "bird", "fish", "frog"])
    with pytest.raises(RuntimeError, match="size mismatch"):  # what it saves the user from
        model(5).load_state_dict(state)


def test_a_trailing_blank_line_is_named(tmp_path: Path) -> None:
    state = model(5).state_dict()  # trained with labels.txt read by split("\n"): 5 "classes"
    labels = tmp_path / "labels.txt"
    labels.write_text("cat\ndog\nbird\nfish\n\n")
    with pytest.raises(LabelError, match="ends with 1 blank line"):
        check_state_dict(state, str(labels))


def test_the_same_count_in_another_order_is_caught_by_the_stamp(tmp_path: Path) -> None:
    state = saved(tmp_path, 3, ["cat", "dog", "bird"])
    with pytest.raises(LabelError, match="another class map of 3 classes"):
        check_state_dict(state, ["dog", "cat", "bird"])


def test_a_lightning_checkpoint_and_a_named_head(tmp_path: Path) -> None:
    net = torch.nn.Module()
    net.backbone = torch.nn.Linear(8, 8)
    net.classifier = torch.nn.Linear(8, 2)
    net.aux = torch.nn.Linear(8, 7)
    checkpoint = {"epoch": 3, "state_dict": net.state_dict()}
    assert check_state_dict(checkpoint, ["a", "b"], head="classifier") == "classifier"
    # a layer named as a head is found though another with a bias comes after it
    assert check_state_dict(checkpoint, ["a", "b"]) == "classifier"
    with pytest.raises(LabelError, match="head 'aux' has 7 outputs"):
        check_state_dict(checkpoint, ["a", "b"], head="aux")
