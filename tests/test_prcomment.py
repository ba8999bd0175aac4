"""--format pr-comment: one GitHub comment, rendered by GitHub's Markdown rules (CommonMark with
GFM tables, as markdown-it-py parses them), within 65,536 characters in the worst case."""

from __future__ import annotations

import re
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from markdown_it import MarkdownIt
from markdown_it.token import Token

from labelgate.core.catalog import CATALOG
from labelgate.core.report import Example, Finding, Report
from labelgate.render import render
from labelgate.render.prcomment import LIMIT, MARKER, ROWS, render_pr_comment
from tests.conftest import run_cli

HOSTILE = "| <script>alert(1)</script> [x](javascript:alert(1)) ![](http://x/) \\ &amp; `a` **b** _c_ ~~d~~"


def gfm() -> MarkdownIt:
    """GitHub Flavored Markdown's block rules: CommonMark, raw HTML, tables, strikethrough."""
    return MarkdownIt("commonmark", {"html": True}).enable(["table", "strikethrough"])


def tables(tokens: list[Token]) -> list[list[list[str]]]:
    """Each table's rows, each row its cells' text."""
    out: list[list[list[str]]] = []
    row: list[str] | None = None
    for i, t in enumerate(tokens):
        if t.type == "table_open":
            out.append([])
        elif t.type == "tr_open":
            row = []
        elif t.type in ("th_open", "td_open"):
            assert row is not None
            inline = tokens[i + 1]
            row.append(inline.content if inline.type == "inline" else "")
        elif t.type == "tr_close":
            assert row is not None
            out[-1].append(row)
    return out


def worst_case() -> Report:
    """2,000,000 rows, every check of the catalog failing with 20 examples and a long message
    made of text that needs escaping, a diff with a thousand shifted shares and relabelled rows."""
    examples = tuple(
        Example(row=i, id=f"{HOSTILE}{i}", batch=i, source=HOSTILE, value=HOSTILE)
        for i in range(20)
    )
    findings = tuple(
        Finding(
            e.code,
            "error" if i % 2 else "warning",
            2_000_000,
            f"{e.title}: " + HOSTILE * 400,
            HOSTILE * 50,
            "rows",
            examples=examples,
            details={
                "shifts": [
                    {"what": "source", "key": HOSTILE * 20, "base": 0.1, "head": 0.9}
                    for _ in range(1000)
                ],
                "changes": [{"id": HOSTILE * 20, "base": HOSTILE, "head": 3} for _ in range(1000)],
            },
        )
        for i, e in enumerate(CATALOG)
    )
    files = [{"path": f"data/{HOSTILE * 10}/shard-{i:05d}.parquet"} for i in range(200)]
    counts = {"rows": 2_000_000, "usable": 1_000_000, "ignored": 500_000, "rejected": 500_000}
    return Report(
        findings=findings,
        counts=counts,
        input={"files": files},
        environment={},
        contract={"num_classes": 1000, "task": "multiclass"},
        batches={"count": 62_500, "size": 32, "failing": list(range(62_500))},
        sources=[{"source": HOSTILE, "rows": 1, "usable": 1, "ignored": 0, "rejected": 0}] * 500,
        classes=[],
        strict=True,
        diff={
            "base": {"input": {"files": files}, "counts": counts, "status": "fail"},
            "rows": {"compared": True, "added": 10**6, "removed": 10**6, "changed": 10**6},
        },
    )


class TestWorstCase:
    def test_fits_one_comment(self) -> None:
        text = render(worst_case(), "pr-comment", link="https://github.com/o/r/actions/runs/1")
        assert len(text) <= LIMIT, len(text)

    def test_renders_as_gfm_tables_with_every_row_whole(self) -> None:
        tokens = gfm().parse(render(worst_case(), "pr-comment"))
        blocks, changes = tables(tokens)  # strict: every finding blocks; nothing else is found
        assert [len(r) for r in blocks] == [4] * (1 + ROWS + 1)  # header, rows, "and N more"
        assert all(len(r) == 3 for r in changes)
        assert f"and {len(CATALOG) - ROWS} more blocking findings" in blocks[-1][-1]
        html = gfm().render(render(worst_case(), "pr-comment"))
        assert "<script>" not in html and 'href="javascript' not in html and "<img" not in html
        assert not {"<code>", "<em>", "<strong>", "<s>", "<del>"} & set(re.findall(r"<\w+>", html))


def small_diff(tmp_path: Path) -> tuple[str, str]:
    ids = [f"r{i}" for i in range(40)]
    base = tmp_path / "base.parquet"
    head = tmp_path / "head.parquet"
    pq.write_table(pa.table({"id": ids, "label": [i % 4 for i in range(40)]}), base)
    labels = [i % 4 for i in range(40)]
    labels[3], labels[9] = 1, 7
    pq.write_table(pa.table({"id": ids, "label": labels}), head)
    return str(base), str(head)


class TestDiffComment:
    @pytest.fixture
    def comment(self, tmp_path: Path) -> str:
        from labelgate import Contract
        from labelgate.commands.diff import diff

        base, head = small_diff(tmp_path)
        k4 = Contract(num_classes=4)
        return render_pr_comment(diff([base], [head], k4, k4), link="https://ci.example/run/7")

    def test_what_blocks_comes_first(self, comment: str) -> None:
        assert comment.startswith(MARKER + "\n## ❌ labelgate diff: FAIL")
        heads = [line for line in comment.splitlines() if line.startswith("### ")]
        assert heads == ["### What blocks", "### What changed", "### Also found"]
        blocks = tables(gfm().parse(comment))[0]
        assert {row[1] for row in blocks[1:]} == {"LG004", "LG021"}

    def test_the_changes_in_a_table(self, comment: str) -> None:
        changes = tables(gfm().parse(comment))[1]
        assert ["rows by id", "", "0 added, 0 removed, 2 relabelled"] in changes
        assert ["id r3 relabelled", "3", "1"] in changes
        assert ["id r9 relabelled", "1", "7"] in changes

    def test_links_the_full_report(self, comment: str) -> None:
        tokens = gfm().parse(comment)
        links = [
            c.attrs["href"]
            for t in tokens
            if t.type == "inline"
            for c in t.children or []
            if c.type == "link_open"
        ]
        assert links == ["https://ci.example/run/7"]

    def test_marker_is_invisible(self, comment: str) -> None:
        assert gfm().render(comment).startswith(MARKER)  # an HTML comment: GitHub shows nothing


def test_a_passing_validation_says_nothing_blocks(tmp_path: Path) -> None:
    from labelgate import Contract
    from labelgate.run.validation import run

    base, _ = small_diff(tmp_path)
    with run([base], Contract(num_classes=4)) as done:
        text = render_pr_comment(done.report)
    assert "## ✅ labelgate validate: PASS" in text and "Nothing blocks." in text
    assert "### What changed" not in text


@pytest.mark.slow  # a subprocess
class TestCli:
    def test_links_the_github_run_by_default(
        self, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
    ) -> None:
        base, head = small_diff(tmp_path)
        for name, value in (
            ("GITHUB_SERVER_URL", "https://github.com"),
            ("GITHUB_REPOSITORY", "o/r"),
            ("GITHUB_RUN_ID", "42"),
        ):
            monkeypatch.setenv(name, value)
        done = run_cli("diff", base, head, "-k", "4", "--format", "pr-comment")
        assert done.returncode == 1
        assert "[The full report](https://github.com/o/r/actions/runs/42)" in done.stdout

    def test_a_bad_url_is_a_usage_error(self, tmp_path: Path) -> None:
        base, head = small_diff(tmp_path)
        args = ("--format", "pr-comment", "--report-url", "javascript:alert(1)")
        done = run_cli("diff", base, head, "-k", "4", *args)
        assert done.returncode == 2 and "--report-url must be an http(s) URL" in done.stderr
