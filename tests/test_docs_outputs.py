"""The outputs the docs show are what the commands print now: docs/regenerate.py --check finds no
block that differs from a fresh run, and finds the block that does; and every block showing a
labelgate command is marked for that check, measured, or listed as one that cannot run here."""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path
from types import ModuleType
from typing import Any, ClassVar

import pytest

from .conftest import ROOT

# the check runs the pages' commands in this process, one after another, from their folders
pytestmark = pytest.mark.xdist_group("docs_outputs")


def _script() -> ModuleType:
    spec = importlib.util.spec_from_file_location("regenerate", ROOT / "docs" / "regenerate.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules["regenerate"] = module  # its dataclass looks its module up there
    spec.loader.exec_module(module)
    return module


regenerate = _script()

OUTPUT = """\
labelgate formats/coco_bad.json
K=4, ignore_index=-100, task detection, 1 batch of 32 images
note: read as coco (a JSON file)
note: K = 4 from the COCO categories
(index = category id)

LG004 error (1 row): 1 label >= K=4 (values 7)
    row 7, id 107, batch 0, source 'coco_bad.json', value 7
  fix: Map each value to a class in 0..3 or to
       ignore_index.
LG027 error (1 row): boxes with zero or negative width or height
    row 3, id 103, batch 0, source 'coco_bad.json', value 1
  fix: drop or redraw them
per class (usable targets)
┏━━━━━━━┓
└───────┘
FAIL: 2 error(s), 0 warning(s)
"""

DRIFTED = """\
# A page

<!-- run: data_samples -->
```console
$ labelgate validate oob_0_2_4.parquet --classes 4 --max-examples 1
LG004 error (1 row): a line the run does not print
```
"""


class TestTrim:
    def test_no_trim_keeps_every_line(self) -> None:
        assert regenerate.trimmed(OUTPUT, None) == OUTPUT.rstrip("\n").split("\n")

    def test_each_part_left_out_is_marked(self) -> None:
        kept = regenerate.trimmed(OUTPUT, "head, findings(LG027), verdict")
        assert kept == [
            "labelgate formats/coco_bad.json",
            "K=4, ignore_index=-100, task detection, 1 batch of 32 images",
            "...",
            "LG027 error (1 row): boxes with zero or negative width or height",
            "    row 3, id 103, batch 0, source 'coco_bad.json', value 1",
            "  fix: drop or redraw them",
            "...",
            "FAIL: 2 error(s), 0 warning(s)",
        ]

    def test_notes_by_their_opening_words_and_fixes_shortened(self) -> None:
        kept = regenerate.trimmed(OUTPUT, "notes(K =), findings(LG004), nofix")
        assert kept == [
            "...",
            "note: K = 4 from the COCO categories",
            "(index = category id)",
            "",
            "LG004 error (1 row): 1 label >= K=4 (values 7)",
            "    row 7, id 107, batch 0, source 'coco_bad.json', value 7",
            "  fix: ...",
            "...",
        ]

    def test_a_blank_line_stays_between_kept_parts(self) -> None:
        kept = regenerate.trimmed(OUTPUT, "notes, findings, tables, verdict")
        assert kept[:2] == ["...", "note: read as coco (a JSON file)"]
        assert kept[4:6] == ["", "LG004 error (1 row): 1 label >= K=4 (values 7)"]
        assert "..." not in kept[1:]


class TestNormal:
    def test_what_varies_between_runs_is_put_aside(self) -> None:
        a = ["wall 2.07 s, /tmp/labelgate-docs-x1/fixed.parquet, labelgate 0.1.0, rev 0727b81c2f3e"]
        b = ["wall 9.62 s, /tmp/labelgate-docs-y2/fixed.parquet, labelgate 0.2.0, rev 989b674abcde"]
        assert regenerate.normal(a) == regenerate.normal(b)

    def test_a_count_is_not_put_aside(self) -> None:
        assert regenerate.normal(["rows 16 = usable 13"]) != regenerate.normal(
            ["rows 16 = usable 14"]
        )


class TestJson:
    NOW: ClassVar[dict[str, Any]] = {
        "status": "fail",
        "findings": [{"code": "LG004", "message": "1 label >= K=4"}, {"code": "LG012"}],
        "input": {"hash": "sha256:47bf", "rows": 3},
        "environment": {"python": "3.12.1"},
        "notes": ["a", "b"],
    }

    def test_the_keys_shown_take_the_run_s_values(self) -> None:
        shown = {
            "status": "pass",
            "findings": [{"message": "1 labels are >= K=4"}, "..."],
            "input": {"hash": "sha256:...", "...": "..."},
            "environment": {"python": "3.11.7"},
            "notes": ["a"],
        }
        assert regenerate.project(self.NOW, shown) == {
            "status": "fail",
            "findings": [{"message": "1 label >= K=4"}, "..."],
            "input": {"hash": "sha256:...", "...": "..."},
            "environment": {"python": "3.11.7"},
            "notes": ["a", "b"],  # a list shown without "..." is shown whole
        }

    def test_the_layout_is_the_pages_own(self) -> None:
        lines = regenerate.layout({"status": "fail", "findings": [{"code": "LG004"}, "..."]})
        assert lines == [
            "{",
            '  "status": "fail",',
            '  "findings": [',
            "    {",
            '      "code": "LG004"',
            "    },",
            '    "..."',
            "  ]",
            "}",
        ]


class TestCheck:
    def test_a_drifted_block_is_listed_and_rewritten(self, tmp_path: Path) -> None:
        page = tmp_path / "page.md"
        page.write_text(DRIFTED)
        assert regenerate.main(["--check", str(page)]) == 1
        assert page.read_text() == DRIFTED  # --check rewrites nothing
        drifted, problems = regenerate.regenerate([page], check=False)
        assert [d.split("\n")[0] for d in drifted] == [
            f"{page}:4: drifted ($ labelgate validate oob_0_2_4.parquet --classes 4 --max-examples 1)"
        ]
        assert problems == []
        text = page.read_text()
        assert "row 2, id 103, batch 0" in text and "a line the run does not print" not in text
        assert regenerate.main(["--check", str(page)]) == 0

    def test_a_command_that_writes_runs_in_a_copy(self, tmp_path: Path) -> None:
        page = tmp_path / "page.md"
        page.write_text(
            "<!-- run: data_samples -->\n```console\n$ printf 'a\\nb\\n' > two.txt\n"
            "$ labelgate validate clean.parquet --classes 4 --class-names two.txt\n```\n"
        )
        regenerate.regenerate([page], check=False)
        assert "LG009" in page.read_text()
        assert not (ROOT / "data_samples" / "two.txt").exists()

    def test_a_sample_output_without_a_marker_is_listed(self, tmp_path: Path) -> None:
        page = tmp_path / "page.md"
        page.write_text(
            "```console\n$ labelgate validate formats/yolo_bad\nFAIL: 2 error(s)\n```\n"
        )
        _, problems = regenerate.regenerate([page], check=True)
        assert problems == [f"{page}:1: unmarked ($ labelgate validate formats/yolo_bad)"]
        page.write_text(
            "```console\n$ labelgate validate mine.parquet -k 4\nFAIL: 1 error(s)\n```\n"
        )
        assert regenerate.regenerate([page], check=True) == ([], [])


# The blocks that show a labelgate command's output and cannot run in the docs check, each by its
# page and its first labelgate command. Every other block with a "$ labelgate" line carries a
# run: or a measured: marker (TestEveryBlockHeld), so a fresh run or a benchmark holds it.
CANNOT_RUN = {
    # the checkpoints and log of a real Hugging Face Trainer run (transformers and torch)
    ("docs/resume.md", "labelgate resume hfout --log hf.log --classes 4"),
    # needs the page's example package installed (pip install ./labelgate-lbl), which the check does
    # not do to the environment; tests/test_readers.py installs it in a temporary folder and holds
    # the findings shown
    ("docs/plugins.md", "labelgate validate train.lbl --classes 3"),
}


def held_nowhere(pages: list[Path]) -> set[tuple[str, str]]:
    """The blocks of ``pages`` showing a ``$ labelgate`` command that no marker holds."""
    return {
        (regenerate.shown_path(page), shown[0])
        for page in pages
        for _, _, shown in regenerate.unheld(page, page.read_text().split("\n"))
        if shown
    }


class TestEveryBlockHeld:
    def test_a_block_without_a_marker_is_found(self, tmp_path: Path) -> None:
        page = tmp_path / "page.md"
        page.write_text(
            "```console\n$ labelgate validate mine.parquet -k 4\nFAIL: 1 error(s)\n```\n\n"
            "```console\n$ printf 'a\\n' > a.txt\n$ labelgate triage a.txt\n```\n\n"
            "<!-- run: data_samples -->\n```console\n$ labelgate validate clean.parquet -k 4\n```\n\n"
            "<!-- measured: a benchmark -->\n```text\n$ labelgate validate big.parquet -k 4\n```\n\n"
            "```bash\nlabelgate validate PATH -k K   # a usage line, no $\n```\n"
        )
        assert held_nowhere([page]) == {
            (str(page), "labelgate validate mine.parquet -k 4"),
            (str(page), "labelgate triage a.txt"),
        }

    def test_every_labelgate_block_is_marked_or_listed(self) -> None:
        found = held_nowhere(regenerate.PAGES)
        assert found - CANNOT_RUN == set(), "mark these run: DIR (docs/regenerate.py) or list them"
        # a listed block that now runs, or is gone, leaves the list
        assert CANNOT_RUN - found == set()


@pytest.mark.slow
def test_the_docs_show_what_the_commands_print() -> None:
    """The check over README.md and docs/*.md: every marked block as a fresh run prints it. On a
    failure, ``python docs/regenerate.py`` rewrites them (the diffs below say what changed)."""
    drifted, problems = regenerate.regenerate(regenerate.PAGES, check=True)
    assert not drifted + problems, "\n\n".join(drifted + problems)
