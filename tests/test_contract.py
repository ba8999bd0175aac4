"""The dataset contract: YAML with path-aware errors, and its JSON Schema."""

from __future__ import annotations

import json
from pathlib import Path

import jsonschema
import pytest
import yaml

from labelgate import Contract, ContractError
from tests.conftest import ROOT, SAMPLES

SCHEMA = json.loads((ROOT / "schemas" / "contract.schema.json").read_text())
EXAMPLES = sorted((ROOT / "schemas").glob("*.yaml")) + sorted(SAMPLES.glob("*.yaml"))


def as_json(path: Path) -> object:
    # YAML mapping keys may be integers; JSON's are strings.
    return json.loads(json.dumps(yaml.safe_load(path.read_text())))


class TestExamples:
    def test_there_are_examples(self) -> None:
        names = {p.name for p in EXAMPLES}
        assert {"image_classification.yaml", "token_classification.yaml"} <= names

    @pytest.mark.parametrize("path", EXAMPLES, ids=lambda p: p.name)
    def test_validates_against_the_json_schema(self, path: Path) -> None:
        jsonschema.validate(as_json(path), SCHEMA)

    @pytest.mark.parametrize("path", EXAMPLES, ids=lambda p: p.name)
    def test_loads(self, path: Path) -> None:
        contract = Contract.from_yaml(path)
        assert contract.num_classes is not None
        assert contract.origin == str(path)

    def test_image_example_fields(self) -> None:
        c = Contract.from_yaml(ROOT / "schemas" / "image_classification.yaml")
        assert c.class_map is not None and c.class_map.name_of()[2] == "bird"
        assert c.class_weights == (1.0, 1.0, 2.0, 1.0)
        assert dict(c.severity) == {"LG012": "error", "LG013": "off"}
        assert c.batching.size == 32 and c.expected_rows == 200

    def test_class_names_path_is_relative_to_the_contract(self) -> None:
        c = Contract.from_yaml(SAMPLES / "ignore_inside_range.yaml")
        assert c.class_map is not None and c.class_map.origin == str(SAMPLES / "classes.txt")


BAD = [
    ("num_clases: 4\n", "num_clases", "did you mean 'num_classes'"),
    ("num_classes: four\n", "num_classes", "must be an integer"),
    ("num_classes: 0\n", "num_classes", "positive integer"),
    ("num_classes: 4\nbatching:\n  szie: 8\n", "batching.szie", "did you mean 'size'"),
    ("num_classes: 4\nbatching:\n  size: 0\n", "batching.size", "positive integer"),
    ("num_classes: 4\nbatching:\n  drop_last: maybe\n", "batching.drop_last", "true or false"),
    ("num_classes: 2\nclass_weights: [1, x]\n", "class_weights[1]", "number"),
    ("num_classes: 2\nclass_weights: [1]\n", "class_weights", "1 weights for 2 classes"),
    ("num_classes: 2\nclass_weights: [1, -1]\n", "class_weights", "negative"),
    ("num_classes: 2\nseverity:\n  LG004: fatal\n", "severity.LG004", "error, warning, info, off"),
    ("num_classes: 2\nseverity:\n  LG999: error\n", "severity", "unknown check code"),
    ("num_classes: 2\ntask: boxes\n", "task", "multiclass, tokens"),
    ("num_classes: 2\nclass_names: [a, 3]\n", "class_names[1]", "string"),
    ("num_classes: 2\nclass_names: missing.txt\n", "class_names", "not found"),
    ("- a\n- b\n", "", "mapping"),
    ("num_classes: [4\n", "", "not valid YAML"),
]


# The count of weights against K is not expressible in JSON Schema; the rest is.
SCHEMA_BAD = [b for b in BAD[:13] if "weights for" not in b[2]]


class TestBadContracts:
    @pytest.mark.parametrize(("text", "key", "says"), BAD, ids=[b[1] or b[2] for b in BAD])
    def test_error_names_the_key(self, tmp_path: Path, text: str, key: str, says: str) -> None:
        path = tmp_path / "contract.yaml"
        path.write_text(text)
        with pytest.raises(ContractError) as err:
            Contract.from_yaml(path)
        message = str(err.value)
        assert message.startswith(str(path)), message
        assert key in message and says in message, message

    @pytest.mark.parametrize(("text", "key", "says"), SCHEMA_BAD, ids=[b[1] for b in SCHEMA_BAD])
    def test_json_schema_rejects_them_too(
        self, tmp_path: Path, text: str, key: str, says: str
    ) -> None:
        path = tmp_path / "contract.yaml"
        path.write_text(text)
        with pytest.raises(jsonschema.ValidationError):
            jsonschema.validate(as_json(path), SCHEMA)

    def test_missing_file(self, tmp_path: Path) -> None:
        with pytest.raises(ContractError, match="not found"):
            Contract.from_yaml(tmp_path / "none.yaml")


class TestKeysMatchTheSchema:
    def test_parser_and_schema_know_the_same_keys(self) -> None:
        from labelgate.contract.contract import _BATCH_KEYS, _TOP_KEYS

        assert set(_TOP_KEYS) == set(SCHEMA["properties"])
        assert set(_BATCH_KEYS) == set(SCHEMA["properties"]["batching"]["properties"])
