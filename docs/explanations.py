"""Write each check's paragraph of docs/checks.md into the package, for ``labelgate explain``.

Run from the repository root after editing docs/checks.md:

    python docs/explanations.py

tests/test_explain.py fails while the packaged text differs from the page.
"""

from __future__ import annotations

import json
import re
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
PAGE = ROOT / "docs" / "checks.md"
OUT = ROOT / "src" / "labelgate" / "explain" / "paragraphs.json"

# a paragraph that opens with the codes it explains: "**LG004, ...**", "**LG020 to LG025**",
# "**LG041, LG042, LG043, ...**"
_HEAD = re.compile(r"^\*\*(LG\d{3}(?:(?:, | to )LG\d{3})*)")


def _codes(head: str) -> list[str]:
    if " to " in head:
        lo, hi = (int(c[2:]) for c in head.split(" to "))
        return [f"LG{n:03d}" for n in range(lo, hi + 1)]
    return head.split(", ")


def paragraphs(text: str) -> dict[str, str]:
    """Code -> the paragraph of the page that explains it (with its list items), as written."""
    found: dict[str, str] = {}
    # a paragraph ends at a blank line, or where the next opens on the line after it
    for block in re.split(r"\n\s*\n|\n(?=\*\*LG\d{3})", text):
        block = block.strip()
        m = _HEAD.match(block)
        if m is None:
            continue
        for code in _codes(m.group(1)):
            found.setdefault(code, block)
    return dict(sorted(found.items()))


def rendered() -> str:
    return json.dumps(paragraphs(PAGE.read_text(encoding="utf-8")), indent=1) + "\n"


if __name__ == "__main__":
    OUT.write_text(rendered(), encoding="utf-8")
    sys.stdout.write(f"wrote {OUT.relative_to(ROOT)}\n")
