"""Hostile inputs, round three: data cannot steer a terminal or a CI log through triage or the
text report (terminal.py), and rich's markup and emoji codes in data stay text."""

from __future__ import annotations

from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from labelgate.render.terminal import no_commands
from tests.limits import assert_clean_exit, run_bounded

ESCAPES = {
    "csi clear screen": "\x1b[2J\x1b[H",
    "osc-8 link": "\x1b]8;;https://evil.example/\x1b\\click\x1b]8;;\x1b\\",
    "osc-0 title": "\x1b]0;owned\x07",
    "bel": "\x07",
    "cr": "\rfake line",
}


def controls(text: str) -> set[str]:
    return {c for c in text if (ord(c) < 0x20 and c != "\n") or 0x7F <= ord(c) < 0xA0}


class TestTriage:
    @pytest.mark.parametrize("kind", sorted(ESCAPES))
    def test_escape_sequences_are_shown_escaped(self, tmp_path: Path, kind: str) -> None:
        log = tmp_path / "train.log"
        seq = ESCAPES[kind]
        log.write_text(
            f"epoch 1 step 3\nRuntimeError: CUDA error: device-side assert triggered {seq}\n"
            f"RuntimeError: later {seq}\n"
        )
        r = run_bounded("triage", str(log))
        assert_clean_exit(r, 1)
        assert controls(r.stdout) == set(), repr(r.stdout)
        assert "\\x1b" in r.stdout or "\\x07" in r.stdout or "\\x0d" in r.stdout

    def test_no_output_line_starts_a_workflow_command(self, tmp_path: Path) -> None:
        log = tmp_path / "train.log"
        log.write_text("RuntimeError: boom\n::error title=pwned::from the log\n")
        r = run_bounded("triage", str(log))
        assert_clean_exit(r, 1)
        assert not any(line.lstrip().startswith("::") for line in r.stdout.splitlines())


def ids_file(path: Path, ident: str) -> Path:
    pq.write_table(pa.table({"id": [ident, "b"], "label": [9, 0]}), path)
    return path


class TestTextReport:
    def test_a_wrapped_id_cannot_start_a_command(self, tmp_path: Path) -> None:
        ident = "x" * 99 + "::error title=pwned::merged"
        r = run_bounded("validate", str(ids_file(tmp_path / "a.parquet", ident)), "-k", "4")
        assert_clean_exit(r, 1)
        lines = r.stdout.splitlines()
        assert not any(line.lstrip().startswith("::") for line in lines), r.stdout
        assert "error title=pwned" in " ".join(r.stdout.split())  # shown, as text (wrapped)

    @pytest.mark.parametrize("code", [":fire:", ":x:", "[bold red]", "[link=https://e.x]a[/link]"])
    def test_markup_and_emoji_codes_stay_text(self, tmp_path: Path, code: str) -> None:
        r = run_bounded("validate", str(ids_file(tmp_path / "a.parquet", code)), "-k", "4")
        assert_clean_exit(r, 1)
        assert code in r.stdout
        assert "\N{FIRE}" not in r.stdout and "\N{CROSS MARK}" not in r.stdout

    def test_no_commands(self) -> None:
        assert no_commands("a\n::error::x\n  ::warning::y\nb ::c") == (
            "a\n\\x3a:error::x\n  \\x3a:warning::y\nb ::c"
        )


def test_smoke_text_escapes_what_the_child_printed() -> None:
    from labelgate.commands.smoke import BatchFailure, SmokeRun
    from labelgate.render.smoke import SmokeVerdict, render_smoke

    failure = BatchFailure(
        batch=0,
        kind="other",
        error="ValueError: \x1b]0;owned\x07 in masks/a\x1b[2J.npy",
        device_messages=("\r::error::from the device",),
    )
    run = SmokeRun(path="in\x1b[2J.parquet", expected=1, processed=1, failures=[failure])
    text = render_smoke(SmokeVerdict(run, None, []), "text")
    assert controls(text) == set(), repr(text)
    assert not any(line.lstrip().startswith("::") for line in text.splitlines())
    assert "\\x1b]0;owned\\x07" in text
