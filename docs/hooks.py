"""MkDocs hook: the site's home page is the README (links made relative to the site, or to the
repository for files outside docs/), so the two never drift apart."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

REPOSITORY = "https://github.com/labelgate/labelgate/blob/main/"


def home(readme: str) -> str:
    """The README with its links rewritten for the site."""
    text = re.sub(r"\]\(docs/", "](", readme)
    return re.sub(
        r"\]\((?!https?:|#|[\w-]+\.md|[\w-]+\.ipynb)([^)]+)\)",
        lambda m: f"]({REPOSITORY}{m[1]})",
        text,
    )


def on_files(files: Any, config: Any) -> Any:
    from mkdocs.structure.files import File

    readme = Path(config["config_file_path"]).parent / "README.md"
    files.append(File.generated(config, "index.md", content=home(readme.read_text())))
    return files
