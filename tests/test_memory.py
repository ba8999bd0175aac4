"""Freed heap given back between the parts of a large read (readers/common/memory.py)."""

from __future__ import annotations

import platform
import sys

import pytest

from labelgate.readers.common import memory


@pytest.mark.skipif(
    not sys.platform.startswith("linux") or platform.libc_ver()[0] != "glibc",
    reason="malloc_trim is glibc's",
)
def test_glibc_trims() -> None:
    assert memory._LIBC is not None
    before = memory._LIBC.malloc_trim  # the symbol the reader calls
    assert before is not None
    memory.trim_heap()


def test_elsewhere_nothing_is_loaded(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(sys, "platform", "darwin")
    assert memory._glibc() is None
