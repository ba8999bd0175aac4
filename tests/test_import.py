"""``import labelgate`` stays light, and its public surface is what __all__ says."""

from __future__ import annotations

import subprocess
import sys

import labelgate

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
