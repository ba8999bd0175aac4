"""LG049 end to end: validate --predictions (CLI, Python API, contract) on generated sources with
planted faults, the MNLI case against a config's id2label, and fix --predictions."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq
import pytest

import labelgate
from labelgate.core.classcounts import ClassCounts
from tests.conftest import run_cli
from tests.witness_world import make_case, make_world, write_case

K = 4


def _case(tmp_path: Path, faults: dict[str, str], noise: float = 0.1, rows: int = 300):  # type: ignore[no-untyped-def]
    case = make_case(make_world(K, 5), faults, rows=rows, noise=noise, seed=11)
    return case, *write_case(case, tmp_path)


class TestValidate:
    def test_the_permuted_source_alone_is_reported_with_its_remap(self, tmp_path: Path) -> None:
        case, data, pred = _case(tmp_path, {"a": "none", "b": "none", "vendor": "permutation"})
        report = labelgate.validate(data, classes=K, predictions=pred)
        (f,) = [f for f in report.findings if f.code == "LG049" and f.severity == "error"]
        assert f.severity == "error" and f.details["source"] == "vendor"
        f_v = case.faults["vendor"]
        assert f.details["remap"] == {str(int(f_v[t])): t for t in range(K) if f_v[t] != t}
        assert f.message.startswith("source 'vendor': its labels look permuted against the model")
        assert "under the remap agreement is" in f.message and f.details["applies"]

    def test_clean_sources_with_noise_pass(self, tmp_path: Path) -> None:
        _, data, pred = _case(tmp_path, {"a": "none", "b": "none"}, noise=0.3)
        out = run_cli("validate", data, "-k", str(K), "--predictions", pred)
        assert out.returncode == 0, out.stdout + out.stderr
        assert "LG049 error" not in out.stdout

    def test_the_contract_names_the_predictions(self, tmp_path: Path) -> None:
        _, data, _ = _case(tmp_path, {"a": "none", "b": "swap"})
        contract = tmp_path / "c.yaml"
        contract.write_text(f"num_classes: {K}\npredictions: pred.parquet\n")
        out = run_cli("validate", data, "--schema", str(contract), "--format", "json")
        assert out.returncode == 1
        (f,) = [
            f
            for f in json.loads(out.stdout)["findings"]
            if f["code"] == "LG049" and f["severity"] == "error"
        ]
        assert f["details"]["kind"] == "swapped pair" and f["details"]["source"] == "b"

    def test_every_source_permuted_alike_is_the_models_order(self, tmp_path: Path) -> None:
        case = make_case(make_world(K, 5), {"a": "none", "b": "none"}, rows=300, noise=0.0, seed=2)
        data, pred = write_case(case, tmp_path)
        table = pq.read_table(pred)
        order = [3, 2, 1, 0]  # the model's classes in another order than the data's
        columns = {f"logit_{i}": table.column(f"logit_{order[i]}") for i in range(K)}
        pq.write_table(pa.table({"id": table.column("id"), **columns}), pred)
        report = labelgate.validate(data, classes=K, predictions=pred)
        (f,) = [f for f in report.findings if f.code == "LG049" and f.severity == "error"]
        assert f.message.startswith("every source:") and not f.details["applies"]


class TestModelOrder:
    def test_mnli_the_datas_order_against_the_models_id2label(self, tmp_path: Path) -> None:
        """glue/mnli orders entailment, neutral, contradiction; roberta-large-mnli's config
        orders CONTRADICTION, NEUTRAL, ENTAILMENT: its predictions, in its own indices, are the
        data's classes reversed."""
        names = ["entailment", "neutral", "contradiction"]
        rng = np.random.default_rng(0)
        label = rng.integers(0, 3, 600)
        model_index = 2 - label  # the model's index of each row's class
        wrong = rng.random(600) < 0.1
        model_index[wrong] = rng.integers(0, 3, int(wrong.sum()))
        pq.write_table(pa.table({"label": label}), tmp_path / "mnli.parquet")
        np.save(tmp_path / "pred.npy", model_index)
        (tmp_path / "classes.txt").write_text("\n".join(names) + "\n")
        config = {"id2label": {"0": "CONTRADICTION", "1": "NEUTRAL", "2": "ENTAILMENT"}}
        (tmp_path / "config.json").write_text(json.dumps(config))
        report = labelgate.validate(
            str(tmp_path / "mnli.parquet"),
            classes=3,
            class_names=str(tmp_path / "classes.txt"),
            model=str(tmp_path / "config.json"),
            predictions=str(tmp_path / "pred.npy"),
        )
        (f,) = [f for f in report.findings if f.code == "LG049" and f.severity == "error"]
        assert f.details["remap"] == {"0": 2, "2": 0} and f.details["kind"] == "swapped pair"
        assert "confirms it: its class order is not the data's" in f.message
        assert "entailment is its 2" in f.message and not f.details["applies"]
        assert "align_labels_with_mapping" in f.fix
        assert any(g.code == "LG040" for g in report.findings)  # the names say it too


class TestFix:
    def test_a_planted_permutation_is_undone_but_for_the_noise(self, tmp_path: Path) -> None:
        case, data, pred = _case(tmp_path, {"a": "none", "vendor": "permutation"}, noise=0.1)
        out = tmp_path / "fixed.parquet"
        done = run_cli("fix", data, "-k", str(K), "--predictions", pred, "--out", str(out))
        assert done.returncode == 0, done.stdout + done.stderr
        assert f"rows in {len(case.given)} = fixed {len(case.given)} + quarantined 0" in done.stdout
        fixed = pq.read_table(out).column("label").to_numpy()
        source = np.array(case.sources)
        vendor, clean = source == "vendor", ~case.noise
        assert np.array_equal(fixed[vendor & clean], case.truth[vendor & clean])
        assert np.array_equal(fixed[source == "a"], case.given[source == "a"])  # untouched
        table = (tmp_path / "fixed.remap.csv").read_text().splitlines()
        assert table[0] == "source,given,given_name,fixed,fixed_name,kind"
        f = case.faults["vendor"]
        rows = {tuple(line.split(",")[1:4:2]) for line in table[1:]}
        assert rows == {(str(int(f[t])), str(t)) for t in range(K) if f[t] != t}
        assert "passes" in done.stdout.splitlines()[-1]  # the noise rows: a warning, at most

    def test_the_models_own_order_is_not_applied(self, tmp_path: Path) -> None:
        case, data, pred = _case(tmp_path, {"a": "none", "b": "none"})
        table = pq.read_table(pred)
        columns = {f"logit_{i}": table.column(f"logit_{(i + 1) % K}") for i in range(K)}
        pq.write_table(pa.table({"id": table.column("id"), **columns}), pred)
        out = tmp_path / "fixed.parquet"
        done = run_cli("fix", data, "-k", str(K), "--predictions", pred, "--out", str(out))
        assert not (tmp_path / "fixed.remap.csv").exists()
        assert "remap proven" not in done.stdout
        assert np.array_equal(pq.read_table(out).column("label").to_numpy(), case.given)


class TestGatheredInTraining:
    def test_batches_of_logits_and_labels_are_judged_once(self) -> None:
        import pytest

        from labelgate.integrations.witness import Witness

        rng = np.random.default_rng(1)
        witness = Witness(3, stop=False)
        swap = np.array([1, 0, 2])
        for _ in range(4):
            truth = rng.integers(0, 3, 100)
            logits = np.eye(3)[truth] * 3 + rng.normal(size=(100, 3))
            witness.add(logits, swap[truth], sources=["val"] * 100)
        with pytest.warns(UserWarning, match="two of its classes look swapped"):
            report = witness.judge()
        assert report is not None and witness.faulty
        assert witness.judge() is report  # judged once


class TestPerExample:
    def test_the_noise_rows_are_listed_after_the_remap(self, tmp_path: Path) -> None:
        """cleanlab's find_label_issues, each source's proven remap applied first: the permuted
        source is one finding, and the rows listed are the noise rows, not its 300."""
        import pytest

        pytest.importorskip("cleanlab")
        case, data, pred = _case(tmp_path, {"a": "none", "vendor": "permutation"}, noise=0.1)
        report = labelgate.validate(data, classes=K, predictions=pred, max_examples=0)
        (issues,) = [f for f in report.findings if f.details.get("kind") == "label issues"]
        assert issues.severity == "warning"
        wrong = case.given != case.truth  # noise that changed the label (the vendor's, remapped)
        source = np.array(case.sources)
        wrong[source == "vendor"] = (
            np.argsort(case.faults["vendor"])[case.given[source == "vendor"]]
            != case.truth[source == "vendor"]
        )
        rows = np.array([e.row for e in issues.examples])
        assert issues.count < 2 * int(wrong.sum())  # not the permuted source's every row
        assert wrong[rows].mean() >= 0.8
        assert all(e.id == int(e.row) * 7 + 3 for e in issues.examples)  # named by id


def test_the_confusion_counts_every_source_as_a_plain_count_does() -> None:
    """Only the rows off the diagonal are counted one by one; each source's K x K count, its
    diagonal derived from its usable rows, is the plain count of its usable rows with a
    prediction, whether the usable rows are counted there or given (as the scan gives them)."""
    from labelgate.scan.confusion import Confusion

    rng = np.random.default_rng(3)
    k = 3
    counted, given = Confusion(k, named=5, usable=True), Confusion(k, named=5)
    want: dict[str, np.ndarray] = {}
    usable_rows: dict[str, np.ndarray] = {}
    first = 0
    for batch in range(12):
        names = [f"s{i}" for i in range(min(batch + 1, 5))]  # sources appear as the run goes
        picked = rng.integers(0, len(names), 40)
        labels = rng.integers(-1, k + 1, 40)  # -1 and k: not usable
        predicted = np.where(rng.random(40) < 0.6, labels, rng.integers(-1, k, 40))
        bad = (labels < 0) | (labels >= k)
        for c in (counted, given):
            c.add(labels, predicted, bad, picked, names, first)
        for s, g, p, b in zip(picked, labels, predicted, bad, strict=True):
            if not b:
                usable_rows.setdefault(names[s], np.zeros(k, np.int64))[g] += 1
                if p >= 0:
                    want.setdefault(names[s], np.zeros((k, k), np.int64))[g, p] += 1
        first += 40
    order = list(usable_rows)
    hist = [ClassCounts(k) for _ in order]  # per source, as the scan gives them
    for h, n in zip(hist, order, strict=True):
        h.add_counts(np.arange(k), usable_rows[n])
    for got in (counted.matrices(order), given.matrices(order, hist)):
        assert list(got) == [n for n in order if n in want]
        for name, counts in want.items():
            assert (got[name] == counts).all(), name
    assert counted.judged == sum(int(c.sum()) for c in want.values())


def _mixed(tmp_path: Path, rows: int, predictions: int, logits: bool) -> tuple[Path, Path]:
    """Data in row groups of 70 rows with sources (a null among them) and labels past K, null
    and ignored; ``predictions`` predictions in row groups of 45, some of them null (a
    predicted-class column) or NaN (K logit columns)."""
    rng = np.random.default_rng(5)
    labels = rng.integers(0, K, rows)
    source = pa.array(rng.choice(["a", "b", "c", None], rows).tolist(), pa.string())
    label = pa.array(
        np.where(rng.random(rows) < 0.05, K + 2, np.where(rng.random(rows) < 0.05, -100, labels)),
        mask=rng.random(rows) < 0.03,
    )
    data, pred = tmp_path / "data.parquet", tmp_path / "pred.parquet"
    pq.write_table(pa.table({"label": label, "source": source}), data, row_group_size=70)
    guess = np.where(rng.random(predictions) < 0.7, np.resize(labels, predictions), 0)
    none = rng.random(predictions) < 0.04
    if logits:
        values = rng.normal(size=(predictions, K)) + 5 * np.eye(K)[guess]
        values[none, 1] = np.nan
        table = pa.table({f"logit_{c}": values[:, c] for c in range(K)})
    else:
        table = pa.table({"prediction": pa.array(guess, pa.int64(), mask=none)})
    pq.write_table(table, pred, row_group_size=45)
    return data, pred


@pytest.mark.parametrize("logits", [False, True])
@pytest.mark.parametrize("predictions", [1000, 700, 1300])
def test_counted_in_the_pieces_as_in_a_second_read(
    tmp_path: Path, predictions: int, logits: bool, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A Parquet file joined by position is counted by the scan's pieces, on threads, its row
    groups not those of the data: the same counts, rows without a prediction and predictions
    without a row as a second read of the rows (the sequential scan's), every one of the first
    named. (Logits are read there where the per-example step does not keep them.)"""
    from labelgate.contract import Contract
    from labelgate.run.validation import validate_in_context
    from labelgate.scan import witness

    monkeypatch.setattr(witness, "_per_example", lambda: False)
    data, pred = _mixed(tmp_path, 1000, predictions, logits)
    contract = Contract(num_classes=K, predictions=str(pred))
    _, pieces = validate_in_context([str(data)], contract, threads=2, max_examples=0)
    _, second = validate_in_context([str(data)], contract, in_pieces=False, max_examples=0)
    a, b = pieces.witness, second.witness
    assert a is not None and b is not None
    assert len(a.predictions.predicted) == 0 and len(b.predictions.predicted) == predictions
    assert a.note() == b.note()
    assert (a.predictions.logits, a.predictions.probabilities) == (
        b.predictions.logits,
        b.predictions.probabilities,
    )
    assert list(a.confusion) == list(b.confusion) == ["a", "c", "b", "(none)"]
    for name in a.confusion:
        assert (a.confusion[name] == b.confusion[name]).all(), name
    assert (a.judged, a.not_judged, a.without_row) == (b.judged, b.not_judged, b.without_row)
    assert a.without_prediction_named == b.without_prediction_named
    assert a.without_row_named == b.without_row_named
    table = pq.read_table(data).to_pandas()
    read = pq.read_table(pred).to_pandas().to_numpy(dtype=float)
    has = ~np.isnan(read).any(axis=1)
    matched = np.zeros(len(table), bool)
    n = min(len(table), predictions)
    matched[:n] = has[:n]
    assert a.without_prediction == int((~matched).sum())
    usable = (table.label.notna() & (table.label >= 0) & (table.label < K)).to_numpy()
    assert a.judged == int((usable & matched).sum())
    assert a.predictions.logits == (int(has.sum()) if logits else 0)
