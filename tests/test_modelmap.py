"""The model's own class map (a Hugging Face config) against the data's: LG040."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

import labelgate
from labelgate.contract import Contract
from labelgate.contract.modelmap import ModelMap, compare, load_model_map
from labelgate.errors import ContractError, InputError, UsageError
from tests.conftest import cli_here
from tests.support.frameworks import (
    WithTransformers,
    cpu_arguments,
    frameworks,
    tiny_bert,
    token_rows,
)

NLI = ["entailment", "neutral", "contradiction"]


def config(names: list[str] | None = None, **more: Any) -> dict[str, Any]:
    found: dict[str, Any] = dict(more)
    if names is not None:
        found["id2label"] = {str(i): n for i, n in enumerate(names)}
        found["label2id"] = {n: i for i, n in enumerate(names)}
    return found


def model(names: list[str] | None = None, **more: Any) -> ModelMap:
    return ModelMap.from_config(config(names, **more), origin="config.json")


def data_names(names: list[str]) -> dict[int, str]:
    return dict(enumerate(names))


class TestCompare:
    def test_same_map_passes(self) -> None:
        v = compare(model(NLI), k=3, names=data_names(NLI), task="multiclass")
        assert v.errors == () and v.warnings == ()

    def test_swapped_entailment_and_contradiction(self) -> None:
        # roberta-large-mnli against the dataset's order (optimum#197)
        v = compare(model(NLI[::-1]), k=3, names=data_names(NLI), task="multiclass")
        assert len(v.errors) == 1 and "'entailment' 0 -> 2" in v.errors[0]
        assert dict(v.remap) == {0: 2, 1: 1, 2: 0}

    def test_case_and_spaces_do_not_count(self) -> None:
        v = compare(
            model(["Entailment ", "NEUTRAL", "contradiction"]),
            k=3,
            names=data_names(NLI),
            task="multiclass",
        )
        assert v.errors == ()

    def test_count_differs(self) -> None:
        # 35 labels in the config against 36 in the dataset (datasets#6446)
        names = [f"c{i}" for i in range(36)]
        v = compare(model(names[:35]), k=36, names=data_names(names), task="multiclass")
        assert any("35 labels" in e and "K=36" in e for e in v.errors)
        assert any("lacks: 35 'c35'" in e for e in v.errors)

    def test_renamed_missing_and_extra(self) -> None:
        v = compare(
            model(["cat", "dog", "bird"]),
            k=3,
            names=data_names(["cat", "puppy", "bird"]),
            task="multiclass",
        )
        assert v.errors == (
            "1 classes named otherwise in the model (1: data 'puppy', model 'dog')",
        )
        v = compare(
            model(["cat", "dog"]), k=3, names=data_names(["cat", "dog", "bird"]), task="multiclass"
        )
        assert any("data classes the model lacks: 2 'bird'" in e for e in v.errors)

    def test_copied_from_another_checkpoint(self) -> None:
        # a config whose id2label came from another model (transformers#10449)
        v = compare(
            model(["POSITIVE", "NEGATIVE"]),
            k=2,
            names=data_names(["spam", "ham"]),
            task="multiclass",
        )
        assert len(v.errors) == 1 and "named otherwise" in v.errors[0]

    def test_placeholders_are_a_warning(self) -> None:
        m = model(num_labels=3)  # no id2label: transformers names them LABEL_0..LABEL_2
        assert m.placeholders and m.num_labels == 3
        v = compare(m, k=3, names=data_names(NLI), task="multiclass")
        assert v.errors == () and "LABEL_0..LABEL_2" in v.warnings[0]

    @pytest.mark.parametrize(
        ("problem_type", "task", "error"),
        [
            ("multi_label_classification", "multiclass", "BCEWithLogitsLoss"),
            ("single_label_classification", "multilabel", "CrossEntropyLoss"),
            ("multi_label_classification", "multilabel", None),
        ],
    )
    def test_problem_type_against_the_task(
        self, problem_type: str, task: str, error: str | None
    ) -> None:
        v = compare(model(NLI, problem_type=problem_type), k=3, names=None, task=task)
        assert (v.errors == ()) if error is None else (error in v.errors[0])

    def test_label2id_contradicting_id2label(self) -> None:
        raw = config(NLI)
        raw["label2id"] = {"entailment": 2, "neutral": 1, "contradiction": 0}
        v = compare(ModelMap.from_config(raw, origin="c"), k=3, names=None, task="multiclass")
        assert "contradicts itself" in v.errors[0]

    def test_bad_id2label(self) -> None:
        with pytest.raises(UsageError, match="is not an index"):
            ModelMap.from_config({"id2label": {"x": "a"}}, origin="c")


class TestLoad:
    def test_folder_and_file(self, tmp_path: Path) -> None:
        (tmp_path / "config.json").write_text(json.dumps(config(NLI)))
        assert load_model_map(tmp_path).num_labels == 3
        assert load_model_map(tmp_path / "config.json").id2label[2] == (2, "contradiction")

    @pytest.mark.parametrize(
        ("make", "says"),
        [
            (lambda p: p / "missing", "model not found"),
            (lambda p: p, "without config.json"),
            (
                lambda p: (p / "w.txt").write_text("x") and p / "w.txt",
                "folder or its config.json",
            ),
            (lambda p: (p / "c.json").write_text("{") and p / "c.json", "not valid JSON"),
        ],
    )
    def test_unreadable(self, tmp_path: Path, make: Any, says: str) -> None:
        with pytest.raises(InputError, match=says):
            load_model_map(make(tmp_path))


def nli_data(tmp_path: Path) -> tuple[str, str]:
    path = tmp_path / "nli.parquet"
    pq.write_table(pa.table({"label": [0, 1, 2, 0]}), path)
    names = tmp_path / "classes.txt"
    names.write_text("\n".join(NLI) + "\n")
    return str(path), str(names)


class TestValidate:
    def test_swapped_model_fails_with_the_remap(self, tmp_path: Path) -> None:
        path, names = nli_data(tmp_path)
        folder = tmp_path / "model"
        folder.mkdir()
        (folder / "config.json").write_text(json.dumps(config(NLI[::-1])))
        report = labelgate.validate(path, classes=3, class_names=names, model=str(folder))
        (f,) = [f for f in report.findings if f.code == "LG040"]
        assert f.severity == "error" and "0 -> 2, 2 -> 0" in f.fix
        assert f.details is not None and f.details["remap"] == {"0": 2, "1": 1, "2": 0}
        (folder / "config.json").write_text(json.dumps(config(NLI)))
        assert labelgate.validate(path, classes=3, class_names=names, model=str(folder)).passed

    def test_cli(self, tmp_path: Path) -> None:
        path, names = nli_data(tmp_path)
        (tmp_path / "config.json").write_text(json.dumps(config(NLI[::-1])))
        done = cli_here(
            "validate",
            path,
            "-k",
            "3",
            "--class-names",
            names,
            "--model",
            str(tmp_path / "config.json"),
        )
        assert done.returncode == 1 and "LG040" in done.stdout and "0 -> 2, 2 -> 0" in done.stdout
        missing = cli_here("validate", path, "-k", "3", "--model", str(tmp_path / "nope"))
        assert missing.returncode == 2 and missing.stderr.count("\n") == 1
        assert "model not found" in missing.stderr

    def test_contract_key_relative_to_the_contract(self, tmp_path: Path) -> None:
        (tmp_path / "config.json").write_text(json.dumps(config(NLI)))
        contract = tmp_path / "c.yaml"
        contract.write_text("model: config.json\n")
        assert Contract.from_yaml(contract).model is not None
        contract.write_text("model: nowhere.json\n")
        with pytest.raises(ContractError, match=r"model: .*model not found"):
            Contract.from_yaml(contract)


@pytest.mark.slow
@frameworks
class TestTrainerCallback(WithTransformers):
    def train(self, id2label: dict[int, str]) -> Any:
        from labelgate.integrations.transformers import LabelgateTrainerCallback

        tf, ds = self.transformers, self.datasets
        cfg = tiny_bert(id2label=id2label, label2id={v: k for k, v in id2label.items()})
        features = ds.Features(
            {
                "input_ids": ds.Sequence(ds.Value("int64")),
                "attention_mask": ds.Sequence(ds.Value("int64")),
                "labels": ds.ClassLabel(names=["neg", "pos"]),
            }
        )
        with cpu_arguments(max_steps=2, per_device_train_batch_size=2) as arguments:
            trainer = tf.Trainer(
                model=tf.BertForSequenceClassification(cfg),
                args=arguments,
                train_dataset=ds.Dataset.from_dict(token_rows([0, 1, 0, 1]), features=features),
            )
            trainer.add_callback(LabelgateTrainerCallback(trainer))
            self.trainer = trainer
            trainer.train()
        return trainer

    def test_swapped_id2label_stops_before_step_one(self) -> None:
        from labelgate.integrations import LabelsRejected

        with pytest.raises(LabelsRejected, match="LG040") as caught:
            self.train({0: "pos", 1: "neg"})
        assert self.trainer.state.global_step == 0
        assert "'neg' 0 -> 1" in caught.value.report.findings[0].message

    def test_matching_id2label_trains(self) -> None:
        assert self.train({0: "neg", 1: "pos"}).state.global_step == 2


class TestCheckpointHead:
    """``--model`` with a checkpoint: its head found by family from parameter shapes, against K.

    The modules are built here in torchvision's, timm's and Hugging Face's layouts (torchvision
    and timm are not installed with the CPU torch in this environment)."""

    torch = pytest.importorskip("torch")

    def faster_rcnn_predictor(self, classes_with_background: int) -> Any:
        nn = self.torch.nn
        roi = nn.Module()
        predictor = nn.Module()
        predictor.cls_score = nn.Linear(16, classes_with_background)
        predictor.bbox_pred = nn.Linear(16, 4 * classes_with_background)
        roi.box_predictor = predictor
        model = nn.Module()
        model.backbone = nn.Conv2d(3, 16, 3)
        model.roi_heads = roi
        return model

    def timm_like(self, classes: int) -> Any:
        nn = self.torch.nn
        model = nn.Module()
        model.stem = nn.Conv2d(3, 8, 3)
        head = nn.Module()
        head.fc = nn.Linear(8, classes)
        model.head = head
        return model

    def hf_like(self, classes: int) -> Any:
        nn = self.torch.nn
        model = nn.Module()
        model.encoder = nn.Linear(8, 8)
        classifier = nn.Module()
        classifier.dense = nn.Linear(8, 8)
        classifier.out_proj = nn.Linear(8, classes)
        model.classifier = classifier
        return model

    def saved(self, tmp_path: Path, module: Any, suffix: str = ".pt") -> Path:
        path = tmp_path / f"model{suffix}"
        if suffix == ".safetensors":
            from safetensors.torch import save_file

            save_file(module.state_dict(), str(path))
        elif suffix == ".ckpt":
            self.torch.save({"state_dict": module.state_dict(), "global_step": 3}, path)
        else:
            self.torch.save(module.state_dict(), path)
        return path

    def test_detection_takes_cls_score_not_bbox_pred(self, tmp_path: Path) -> None:
        path = self.saved(tmp_path, self.faster_rcnn_predictor(5))  # 4 classes + background
        m = load_model_map(path)
        assert m.head is not None and m.head.chosen.name == "roi_heads.box_predictor.cls_score"
        for k in (4, 5):  # torchvision's num_classes counts the background: either fits
            assert compare(m, k=k, names=None, task="multiclass").errors == ()
        (error,) = compare(m, k=3, names=None, task="multiclass").errors
        assert "'roi_heads.box_predictor.cls_score'" in error and "K=3" in error

    @pytest.mark.parametrize("suffix", [".pt", ".ckpt", ".safetensors"])
    def test_timm_head_fc_in_each_file_kind(self, tmp_path: Path, suffix: str) -> None:
        m = load_model_map(self.saved(tmp_path, self.timm_like(10), suffix))
        assert m.head is not None and m.head.chosen.name == "head.fc" and m.num_labels == 10
        assert compare(m, k=10, names=None, task="multiclass").errors == ()
        assert compare(m, k=9, names=None, task="multiclass").errors

    def test_hf_classifier_out_proj(self, tmp_path: Path) -> None:
        m = load_model_map(self.saved(tmp_path, self.hf_like(3)))
        assert m.head is not None and m.head.chosen.name == "classifier.out_proj"

    def test_validate_with_a_checkpoint(self, tmp_path: Path) -> None:
        path, _ = nli_data(tmp_path)
        ckpt = self.saved(tmp_path, self.hf_like(4))
        report = labelgate.validate(path, classes=3, model=str(ckpt))
        (f,) = [f for f in report.findings if f.code == "LG040"]
        assert "classifier.out_proj" in f.message and "predicts 4 classes" in f.message
        assert labelgate.validate(path, classes=4, model=str(ckpt)).passed

    def test_a_pickle_that_runs_code_is_refused(
        self, tmp_path: Path, capfd: pytest.CaptureFixture[str]
    ) -> None:
        import pickle

        class Boom:
            def __reduce__(self) -> Any:
                return (print, ("ran",))

        path = tmp_path / "evil.pt"
        path.write_bytes(pickle.dumps({"x": Boom()}))
        with pytest.raises(InputError, match="cannot read the checkpoint"):
            load_model_map(path)
        assert "ran" not in capfd.readouterr().out


class TestFixModel:
    def test_aligns_the_labels_to_the_model_by_name(self, tmp_path: Path) -> None:
        path, names = nli_data(tmp_path)
        (tmp_path / "config.json").write_text(json.dumps(config(NLI[::-1])))
        out = tmp_path / "fixed.parquet"
        done = cli_here(
            "fix",
            path,
            "-k",
            "3",
            "--class-names",
            names,
            "--model",
            str(tmp_path / "config.json"),
            "--out",
            str(out),
        )
        assert done.returncode == 0, done.stderr
        assert pq.read_table(out).column("label").to_pylist() == [2, 1, 0, 2]
        assert pq.read_table(path).column("label").to_pylist() == [0, 1, 2, 0]  # input kept
        again = cli_here("validate", str(out), "-k", "3", "--model", str(tmp_path / "config.json"))
        assert again.returncode == 0, again.stdout

    def test_refuses_what_the_names_do_not_prove(self, tmp_path: Path) -> None:
        path, names = nli_data(tmp_path)
        (tmp_path / "config.json").write_text(json.dumps(config(["a", "b", "c"])))
        model = str(tmp_path / "config.json")
        out = str(tmp_path / "fixed.parquet")
        renamed = cli_here(
            "fix", path, "-k", "3", "--class-names", names, "--model", model, "--out", out
        )
        assert renamed.returncode == 2 and "cannot align by name" in renamed.stderr
        unnamed = cli_here("fix", path, "-k", "3", "--model", model, "--out", out)
        assert unnamed.returncode == 2 and "give the data's --class-names" in unnamed.stderr
        assert not Path(out).exists()
