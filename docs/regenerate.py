"""Rewrite the command outputs shown in README.md and docs/*.md from fresh runs of the commands.

Run from the repository root after changing what a command prints:

    python docs/regenerate.py            # rewrite every marked block that differs
    python docs/regenerate.py --check    # exit 1, listing each block that differs

A block whose output a run makes carries a marker, an HTML comment (the site does not show it) on
the line before its fence; the block's ``$`` lines are the commands, each followed by its output:

    <!-- run: data_samples -->
    ```console
    $ labelgate validate formats/coco_bad.json --framework torchvision
    ...its output, as printed...
    ```

``run: DIR`` is the folder, from the repository root, the commands run in (``run: .`` the root).
``; trim: PARTS`` keeps only those parts of a text report, in its order, and writes ``...`` for
each run of lines left out, so a shortened output says it is one. The parts:

- ``head``: the first lines (the input, K and batches, the row accounting);
- ``notes`` every note, ``notes(read as|K =)`` the notes opening with one of those words;
- ``findings`` every finding, ``findings(LG004 LG027)`` those codes', in the report's order;
- ``nofix``: the kept findings' ``fix:`` lines shortened to ``fix: ...``;
- ``tables``: the per-class and per-source tables;
- ``verdict``: the closing PASS or FAIL line.

A JSON block shows part of a report: ``<!-- run: DIR; json: COMMAND -->`` runs COMMAND and
writes, for each key the block shows, the value the run writes; ``"...": "..."`` stands for the
keys left out, a last list item ``"..."`` for the items left out, ``"sha256:..."`` for a string's
end, and the environment's values (versions, platform, revision) stay as shown.

Commands run as a user runs them: ``labelgate`` through ``labelgate.cli.main`` in this process, any
other command (``printf ... > file``) by the shell; a block whose commands write files runs in a
temporary copy of data_samples/ and schemas/, beside links to benchmarks/ and tests/ (a script
there may make a block's input: ``python benchmarks/witness_example.py ex/``). What varies from run to run (timings, absolute and
temporary paths, versions, hashes) is normalised before outputs are compared, and a block whose
output differs only there is left as it is.

``<!-- measured: HOW -->`` marks an output measured on one machine (a benchmark's timings): the
script leaves it as it is. ``tests/test_docs_outputs.py`` runs the check.
"""

from __future__ import annotations

import argparse
import contextlib
import difflib
import io
import json
import os
import re
import shlex
import shutil
import subprocess
import sys
import tempfile
from collections.abc import Iterator
from contextlib import redirect_stderr, redirect_stdout
from dataclasses import dataclass
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
PAGES = [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]
# copied for a block whose commands write files: every input the docs' commands read
COPIED = ("data_samples", "schemas")
# linked into that copy, read only: the scripts a block runs to make its input (and what they import)
LINKED = ("benchmarks", "tests")

MARKER = re.compile(
    r"^<!-- run: (?P<cwd>[^;]+?)(?:; trim: (?P<trim>.+?))?(?:; json: (?P<json>.+?))? -->$"
)
MEASURED = re.compile(r"^<!-- measured: .+ -->$")
FENCE = re.compile(r"^(\s*)(```+)")
TRIM_PART = re.compile(r"(head|notes|findings|nofix|tables|verdict)(?:\(([^)]*)\))?")
FINDING = re.compile(r"^(LG\d{3}) (error|warning|info)\b")
VERDICT = re.compile(r"^(PASS|FAIL)\b")
TABLE = re.compile(r"^(per |[┏┃┡│└])")
WRITES = {"fix", "repro", "pin"}
ELIDED = "..."  # in a JSON block: a key, list item or string's end left out
# the environment's values in a JSON report: this machine's
VARIES_IN_JSON = {"labelgate", "python", "platform", "pyarrow", "numpy", "torch", "code_revision"}
WRITE_FLAGS = {"-o", "--output", "--out", "--quarantine", "--log"}

# What differs between two runs of one command, each with what stands for it in a comparison.
VARIES = [
    (re.compile(r"\b\d+(?:\.\d+)? ?(?:s|ms|us|µs)\b(?= |,|\)|$)"), "<time>"),
    (re.compile(r"/tmp/[^\s'\")]+|/var/folders/[^\s'\")]+"), "<tmp>"),
    (re.compile(r"\b(labelgate|Python|pyarrow|torch|numpy) \d+\.\d+(?:\.\d+)?\S*"), r"\1 <v>"),
    (re.compile(r"\b[0-9a-f]{12,64}\b"), "<hash>"),
]


@dataclass(frozen=True)
class Block:
    """One marked block of a page: where its body lies, what it runs, what it keeps."""

    page: Path
    line: int  # 1-based line of the opening fence
    start: int  # index of the body's first line
    end: int  # index of the closing fence
    cwd: str
    trim: str | None
    json: str | None  # the command whose JSON output the block shows a part of


def blocks(page: Path, lines: list[str]) -> Iterator[Block]:
    """The marked blocks of a page, in order."""
    i = 0
    while i < len(lines):
        m = MARKER.match(lines[i].strip())
        if m is None or i + 1 >= len(lines) or not (fence := FENCE.match(lines[i + 1])):
            i += 1
            continue
        end = i + 2
        while end < len(lines) and not lines[end].strip().startswith(fence[2]):
            end += 1
        yield Block(page, i + 2, i + 2, end, m["cwd"].strip(), m["trim"], m["json"])
        i = end + 1


def commands(body: list[str]) -> list[tuple[list[str], str]]:
    """The ``$`` commands of a block: each as its lines are written (a line ending in ``\\``
    goes on on the next) and as one line."""
    found: list[tuple[list[str], str]] = []
    joining = False
    for line in body:
        text = line.strip()
        if joining:
            found[-1][0].append(line)
            found[-1] = (found[-1][0], found[-1][1][:-1].rstrip() + " " + text)
        elif text.startswith("$ "):
            found.append(([line], text[2:]))
        else:
            continue
        joining = text.endswith("\\")
    return found


def writes(command: str) -> bool:
    """Whether a command may write a file (then its block runs in a temporary copy)."""
    words = shlex.split(command)
    if not words or words[0] != "labelgate" or ">" in command:
        return True
    if len(words) > 1 and words[1] in WRITES:
        return True
    return any(w.split("=")[0] in WRITE_FLAGS for w in words)


def run_one(command: str, cwd: Path) -> str:
    """What a command prints (stdout, then stderr), run in ``cwd``."""
    words = shlex.split(command)
    if words[0] != "labelgate":
        # ``python`` in a block is this interpreter (the one with labelgate's test dependencies),
        # whether or not its environment is activated in the calling shell
        path = os.pathsep.join((str(Path(sys.executable).parent), os.environ.get("PATH", "")))
        done = subprocess.run(
            command,
            shell=True,
            cwd=cwd,
            capture_output=True,
            text=True,
            check=False,
            timeout=120,
            env={**os.environ, "PATH": path},
        )
        return done.stdout + done.stderr
    from labelgate.cli import main

    out = io.StringIO()
    here = Path.cwd()
    try:
        os.chdir(cwd)
        # SystemExit: argparse's usage errors, which print as a user sees them
        with redirect_stdout(out), redirect_stderr(out), contextlib.suppress(SystemExit):
            main(words[1:])
    finally:
        os.chdir(here)
    return out.getvalue()


def trimmed(output: str, spec: str | None) -> list[str]:
    """The lines of ``output`` the trim ``spec`` keeps, each run left out written ``...``."""
    lines = [line.rstrip() for line in output.rstrip("\n").split("\n")]
    if spec is None:
        return lines
    parts = {m[1]: (m[2] or "") for m in TRIM_PART.finditer(spec)}
    codes = set(parts.get("findings", "").split())
    notes = tuple(n.strip() for n in parts.get("notes", "").split("|") if n.strip())
    # per line: True kept, False left out (a "..."), None a blank line (kept between two kept
    # lines), "" left out without a mark (a fix's further lines, where its first says "...")
    keep: list[bool | str | None] = []
    section, kept = "head", "head" in parts
    for i, line in enumerate(lines):
        if line.startswith("note: "):
            section = "notes"
            kept = "notes" in parts and (not notes or line.removeprefix("note: ").startswith(notes))
        elif m := FINDING.match(line):
            section, kept = "findings", "findings" in parts and (not codes or m[1] in codes)
        elif VERDICT.match(line):
            section, kept = "verdict", "verdict" in parts
        elif TABLE.match(line):
            section, kept = "tables", "tables" in parts
        elif section == "findings" and line.startswith("  fix: ") and "nofix" in parts and kept:
            section, lines[i] = "fix", "  fix: ..."
            keep.append(True)
            continue
        elif section == "fix" and line.startswith("       "):
            keep.append("")
            continue
        keep.append(None if line == "" else kept)
    out: list[str] = []
    for i, (line, k) in enumerate(zip(lines, keep, strict=True)):
        if k is None:
            k = bool(i and keep[i - 1]) and bool(i + 1 < len(keep) and keep[i + 1])
        if k:
            out.append(line)
        elif k is False and out[-1:] != ["..."]:
            out.append("...")
    return out


@contextlib.contextmanager
def place(cwd: str, copy: bool) -> Iterator[Path]:
    """The folder a block runs in: ``cwd`` in the checkout, or in a temporary copy of it."""
    if not copy:
        yield ROOT / cwd
        return
    with tempfile.TemporaryDirectory(prefix="labelgate-docs-") as tmp:
        for name in COPIED:
            shutil.copytree(ROOT / name, Path(tmp) / name)
        for name in LINKED:
            (Path(tmp) / name).symlink_to(ROOT / name, target_is_directory=True)
        yield Path(tmp) / cwd


def fresh(block: Block, body: list[str]) -> list[str]:
    """The block's body as its commands print it now."""
    shown = commands(body)
    out: list[str] = []
    with place(block.cwd, any(writes(c) for _, c in shown)) as cwd:
        for written, command in shown:
            printed = run_one(command, cwd)
            for base in (cwd, ROOT / block.cwd, ROOT):
                printed = printed.replace(f"{base.resolve()}/", "").replace(
                    str(base.resolve()), "."
                )
            out += written
            if printed.strip():
                out += trimmed(printed, block.trim)
    return out


def fresh_json(block: Block, body: list[str]) -> list[str] | None:
    """The block's JSON with the values a fresh run writes for the keys it shows, laid out as
    the pages lay a report out; None where the block already holds them."""
    assert block.json is not None
    with place(block.cwd, writes(block.json)) as cwd:
        now = json.loads(run_one(block.json, cwd))
    shown = json.loads("\n".join(body))
    projected = project(now, shown)
    return None if projected == shown else layout(projected)


def project(now: Any, shown: Any, key: str = "") -> Any:
    """``now`` cut to the shape ``shown`` gives it: the keys it shows (``"...": "..."`` for the
    others), a list's items (all of them, unless its last item is ``"..."``), a string's opening
    (``"sha256:..."``); the environment's values (versions, platform, revision) as shown."""
    if isinstance(shown, dict) and isinstance(now, dict):
        return {
            k: v if k == ELIDED else project(now[k], v, k)
            for k, v in shown.items()
            if k == ELIDED or k in now
        }
    if isinstance(shown, list) and isinstance(now, list):
        cut = bool(shown) and shown[-1] == ELIDED
        items = now[: len(shown) - 1] if cut else now
        shapes = shown[:-1] if cut else shown
        out = [
            project(v, shapes[min(i, len(shapes) - 1)]) if shapes else v
            for i, v in enumerate(items)
        ]
        return [*out, ELIDED] if cut else out
    kept = isinstance(shown, str) and isinstance(now, str)
    if kept and (
        key in VARIES_IN_JSON or (ELIDED in shown and now.startswith(shown.split(ELIDED)[0]))
    ):
        return shown
    return now


def dump(value: Any) -> str:
    """A JSON value on one line, as the pages write the values of a report's keys."""
    return json.dumps(value, ensure_ascii=False)


def layout(report: dict[str, Any]) -> list[str]:
    """A JSON report as the pages show one: a key a line, each finding's keys a line each."""
    lines = ["{"]
    for n, (k, v) in enumerate(report.items()):
        comma = "," if n < len(report) - 1 else ""
        if k == "findings" and isinstance(v, list) and v:
            lines.append('  "findings": [')
            for i, finding in enumerate(v):
                if not isinstance(finding, dict):  # "...": the findings left out
                    lines.append(f"    {dump(finding)}" + ("," if i < len(v) - 1 else ""))
                    continue
                lines.append("    {")
                items = list(finding.items())
                lines += [
                    f"      {dump(fk)}: {dump(fv)}{',' if j < len(items) - 1 else ''}"
                    for j, (fk, fv) in enumerate(items)
                ]
                lines.append("    }" + ("," if i < len(v) - 1 else ""))
            lines.append(f"  ]{comma}")
        else:
            lines.append(f"  {dump(k)}: {dump(v)}{comma}")
    return [*lines, "}"]


def normal(lines: list[str]) -> list[str]:
    """The lines with what varies between runs put as placeholders, trailing spaces dropped."""
    out = []
    for line in lines:
        line = line.rstrip()
        for pattern, stand in VARIES:
            line = pattern.sub(stand, line)
        out.append(line)
    return out


def indent_of(lines: list[str], block: Block) -> str:
    """The fence's indentation (a block inside a list item), which its body lines carry too."""
    fence = FENCE.match(lines[block.start - 1])
    return fence[1] if fence else ""


def fences(lines: list[str]) -> Iterator[tuple[int, int]]:
    """Each fenced block of a page: the index of its opening fence and of its closing one."""
    i = 0
    while i < len(lines):
        fence = FENCE.match(lines[i])
        if fence is None:
            i += 1
            continue
        end = i + 1
        while end < len(lines) and not lines[end].strip().startswith(fence[2]):
            end += 1
        yield i, end
        i = end + 1


def unheld(page: Path, lines: list[str]) -> Iterator[tuple[int, list[str], list[str]]]:
    """The fenced blocks of a page that no ``run:`` or ``measured:`` marker holds: each as the line
    of its opening fence, its body's lines (stripped) and the ``$ labelgate`` commands it shows."""
    marked = {b.start for b in blocks(page, lines)}
    for i, end in fences(lines):
        before = lines[i - 1].strip() if i else ""
        if i + 1 in marked or MEASURED.match(before):
            continue
        body = [line.strip() for line in lines[i + 1 : end]]
        shown = [c for _, c in commands(body) if c.split(maxsplit=1)[:1] == ["labelgate"]]
        yield i + 1, body, shown


def unmarked(page: Path, lines: list[str]) -> Iterator[str]:
    """Blocks showing a command's output on a bundled sample without a marker: ``FILE:LINE``."""
    for line, body, shown in unheld(page, lines):
        if not any(text and not text.startswith("$ ") for text in body):
            continue  # no output: a usage line
        for command in shown:
            words = shlex.split(command)
            if len(words) > 2 and bundled(words[2]):
                yield f"{shown_path(page)}:{line}: unmarked ($ {command})"
                break


def shown_path(page: Path) -> str:
    """A page's path as a report names it: from the repository root where it lies there."""
    return str(page.relative_to(ROOT)) if page.is_relative_to(ROOT) else str(page)


def bundled(path: str) -> bool:
    """Whether a command's input is a bundled sample (named from the root or from data_samples/)."""
    return path.startswith("data_samples/") or (ROOT / "data_samples" / path).exists()


def regenerate(pages: list[Path], *, check: bool) -> tuple[list[str], list[str]]:
    """Run every marked block of ``pages``; rewrite those that differ (unless ``check``).

    Returns:
        the blocks that differed, each with its diff, and the blocks no run can settle (a bundled
        sample's output without a marker, a marker over a block with no command).
    """
    drifted: list[str] = []
    problems: list[str] = []
    for page in pages:
        lines = page.read_text().split("\n")
        problems += unmarked(page, lines)
        found: list[str] = []
        for block in reversed(list(blocks(page, lines))):  # from the end: rewrites keep lines
            where = f"{shown_path(page)}:{block.line}"
            pad = indent_of(lines, block)
            body = [line.removeprefix(pad) for line in lines[block.start : block.end]]
            if block.json is not None:
                now = fresh_json(block, body)
                if now is None:
                    continue
            elif not commands(body):
                problems.append(f"{where}: marked, but shows no $ command")
                continue
            else:
                now = fresh(block, body)
                if normal(body) == normal(now):
                    continue
            diff = difflib.unified_diff(body, now, "documented", "fresh run", lineterm="", n=1)
            shown = block.json or commands(body)[0][1]
            found.append(f"{where}: drifted ($ {shown})\n" + "\n".join(diff))
            lines[block.start : block.end] = [f"{pad}{line}" if line else "" for line in now]
        drifted += reversed(found)
        if found and not check:
            page.write_text("\n".join(lines))
    return drifted, problems


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--check", action="store_true", help="rewrite nothing; exit 1 on a drift")
    parser.add_argument("pages", nargs="*", type=Path, help="pages (default: README.md, docs/*.md)")
    args = parser.parse_args(argv)
    pages = [p.resolve() for p in args.pages] or PAGES
    drifted, problems = regenerate(pages, check=args.check)
    for text in drifted + problems:
        print(text, file=sys.stderr)
    verb = "differ from a fresh run" if args.check else "rewritten"
    print(f"{len(drifted)} block(s) {verb}, {len(problems)} to mark by hand", file=sys.stderr)
    return 1 if problems or (drifted and args.check) else 0


if __name__ == "__main__":
    sys.exit(main())
