"""``import labelgate`` stays light, and its public surface is what __all__ says."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

import labelgate
from tests.conftest import ROOT, SAMPLES

HEAVY = ("pandas", "pandera", "torch", "great_expectations", "pyarrow", "numpy", "rich")


def test_import_loads_nothing_heavy() -> None:
    code = f"import sys, labelgate; print(','.join(m for m in {HEAVY!r} if m in sys.modules))"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == ""


def test_help_loads_nothing_heavy() -> None:
    code = (
        "import sys\nfrom labelgate.cli import build_parser\n"
        "build_parser().format_help()\n"
        f"print(','.join(m for m in {HEAVY!r} if m in sys.modules))"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == ""


def test_validation_does_not_import_torch_pandas_or_pandera() -> None:
    code = (
        "import sys, labelgate\n"
        "from labelgate.run.validation import report_of\n"
        "r = report_of(['data_samples/two_sources_one_based.parquet'], labelgate.Contract(num_classes=4))\n"
        "assert r.failed\n"
        "print(','.join(m for m in ('torch', 'pandas', 'pandera', 'great_expectations') if m in sys.modules))"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == ""


def test_a_coco_validation_does_not_import_pandas(tmp_path: Path) -> None:
    # COCO's sparse ids made contiguous and a box without area rejected: both rewrite the rows
    # files, and pyarrow imports pandas from read_table and from every array made of values
    images = [{"id": i, "file_name": f"{i}.jpg", "width": 640, "height": 480} for i in range(4)]
    boxes = [[10.0, 10.0, 0.0 if n == 2 else 5.0, 5.0] for n in range(12)]
    doc = {
        "images": images,
        "annotations": [
            {
                "id": n + 1,
                "image_id": n % 4,
                "category_id": 95 if n == 5 else 1 + 2 * (n % 3),
                "bbox": b,
                "area": b[2] * b[3],
                "iscrowd": 0,
            }
            for n, b in enumerate(boxes)
        ],
        "categories": [{"id": i, "name": f"c{i}"} for i in (1, 3, 5)],
    }
    path = tmp_path / "instances.json"
    path.write_text(json.dumps(doc))
    code = (
        "import sys\nfrom labelgate.cli.main import main\n"
        f"try:\n    main(['validate', {str(path)!r}, '--format', 'json'])\n"
        "except SystemExit:\n    pass\n"
        "print('pandas' in sys.modules, file=sys.stderr)"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    report = json.loads(out.stdout)
    assert {f["code"] for f in report["findings"]} >= {"LG027", "LG030"}
    assert out.stderr.strip().splitlines()[-1] == "False"


@pytest.mark.parametrize("kind", ["tfrecord", "wds"])
def test_a_shard_validation_does_not_import_pandas(tmp_path: Path, kind: str) -> None:
    # a shard's rows made from Python values: pa.array would import pandas (0.4 s of a run)
    from tests.test_shards import write_tfrecord, write_wds

    labels = [0, 1, 2, 12, 3, 1]
    if kind == "tfrecord":
        folder = tmp_path / "records"
        write_tfrecord(folder / "train-00000-of-00002", labels[:3])
        write_tfrecord(folder / "train-00001-of-00002", labels[3:])
    else:
        folder = write_wds(tmp_path / "wds", labels, per_shard=3)
    code = (
        "import sys\nfrom labelgate.cli.main import main\n"
        f"try:\n    main(['validate', {str(folder)!r}, '--classes', '10', '--format', 'json'])\n"
        "except SystemExit:\n    pass\n"
        "print('pandas' in sys.modules, file=sys.stderr)"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    report = json.loads(out.stdout)
    assert report["input"]["rows"] == 6 and "LG004" in {f["code"] for f in report["findings"]}
    assert out.stderr.strip().splitlines()[-1] == "False"


def test_all_is_complete_and_importable() -> None:
    # A fresh interpreter: other tests import submodules, which become attributes of the package.
    code = (
        "import types, labelgate; print(' '.join(n for n, v in vars(labelgate).items() "
        "if not n.startswith('_') and not isinstance(v, types.ModuleType)))"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    public = set(out.stdout.split()) - {"annotations", "TYPE_CHECKING", "Any"}
    assert public <= set(labelgate.__all__)
    for name in labelgate.__all__:
        assert hasattr(labelgate, name)


def test_error_tree() -> None:
    assert issubclass(labelgate.ContractError, labelgate.UsageError)
    assert issubclass(labelgate.UsageError, ValueError)
    assert issubclass(labelgate.LabelError, ValueError)
    assert issubclass(labelgate.InputError, OSError)
    assert issubclass(labelgate.ClassMapError, labelgate.InputError)


# What a cold validation of a small Parquet file must not load: each costs every run its import
# time (docs/performance.md, "Cold start"), and none does anything for a Parquet file of labels.
NOT_ON_THE_PARQUET_PATH = (
    "rich",  # the text report is drawn plain when it goes to a file or a pipe
    "pandas",
    "torch",
    "pyarrow.parquet",  # read through pyarrow._parquet: no pyarrow.fs, no ssl
    "pyarrow.fs",
    "pyarrow.dataset",
    "ssl",
    "_hashlib",  # OpenSSL: a small file is hashed by the interpreter's own SHA-256
    "subprocess",  # the code revision read from .git, the platform from os.uname
    "numpy.ma",  # numpy 2's np.unique loads it
    "difflib",  # "did you mean": only when a name is refused
    "csv",  # a class map in CSV, a delimited input
    "labelgate.contract.modelmap",
    "labelgate.training.heads",
    "labelgate.run.cache",
    "labelgate.scan.portable",
    "labelgate.scan.witness",
    "labelgate.checks.mapping",
)


@pytest.mark.parametrize("sample", ["oob_0_2_4.parquet", "two_sources_one_based.parquet"])
def test_cold_validation_of_parquet_loads_only_what_it_uses(sample: str) -> None:
    code = (
        "import sys\nfrom labelgate.cli import main\n"
        f"try:\n    main(['validate', {str(SAMPLES / sample)!r}, '--classes', '4'])\n"
        "except SystemExit:\n    pass\n"
        f"print('loaded:', [m for m in {NOT_ON_THE_PARQUET_PATH!r} if m in sys.modules], file=sys.stderr)"
    )
    out = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True, cwd=ROOT
    )
    assert "FAIL" in out.stdout
    assert "loaded: []" in out.stderr.splitlines(), out.stderr[-2000:]


@pytest.mark.parametrize("size", [0, 5000, (1 << 20) + 3])
def test_an_inputs_hash_is_sha256_whichever_module_computes_it(tmp_path: Path, size: int) -> None:
    """Below a megabyte the interpreter's own SHA-256 hashes a file, past it OpenSSL's: the
    report's hash is the file's SHA-256 either way."""
    import hashlib

    from labelgate.io.sources import resolve_inputs

    path = tmp_path / "labels.csv"
    body = b"label\n" + b"1\n" * (size // 2)
    path.write_bytes(body)
    (found,) = resolve_inputs([str(path)])
    assert found.digest() == "sha256:" + hashlib.sha256(body).hexdigest()


@pytest.mark.parametrize("ids", ["int64", "float64", "string"])
def test_a_diff_by_id_does_not_import_pandas(tmp_path: Path, ids: str) -> None:
    # the ids and labels read as int64 from the Arrow buffers: to_numpy, is_null and a Python
    # fill value each import pandas (a second of a cached re-run's start)
    import pyarrow as pa
    import pyarrow.parquet as pq

    for name, labels in (("base", [0, 1, 2, None]), ("head", [0, 2, 2, None])):
        column = pa.array([1, 2, 3, 4]).cast(ids)
        pq.write_table(pa.table({"id": column, "label": labels}), tmp_path / f"{name}.parquet")
    code = (
        "import sys\nfrom labelgate.cli.main import main\n"
        f"try:\n    main(['diff', {str(tmp_path / 'base.parquet')!r}, "
        f"{str(tmp_path / 'head.parquet')!r}, '--classes', '3', '--format', 'json'])\n"
        "except SystemExit:\n    pass\n"
        "print('pandas' in sys.modules, file=sys.stderr)"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    report = json.loads(out.stdout)
    (relabelled,) = [f for f in report["findings"] if f["code"] == "LG025"]
    assert relabelled["details"]["changes"] == [{"id": 2, "base": 1, "head": 2}]
    assert out.stderr.strip().splitlines()[-1] == "False"
