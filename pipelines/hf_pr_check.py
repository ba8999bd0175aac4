"""labelgate on a Hugging Face Hub pull request: diff the labels of a PR's revision against its
target branch, and optionally comment the verdict on the PR.

    python3 pipelines/hf_pr_check.py --repo org/dataset --pr 3 --path data/train.parquet \\
        [--base main] [--comment] -- --schema schemas/annotations.yaml

A Hub pull request is the git reference `refs/pr/{num}` (huggingface_hub's
`Discussion.git_reference`, community.py). Both revisions are fetched with
`huggingface_hub.snapshot_download(repo_id, repo_type="dataset", revision=...,
allow_patterns=...)`, only the label files named by --path (a file, or a folder of shards), so a
large dataset's other files are never downloaded; with HF_HUB_OFFLINE=1 they come from the local
cache (HF_HUB_CACHE), which is how the tests run it. `--comment` posts the pull-request comment
(`labelgate diff --format pr-comment`) with `HfApi.comment_discussion` (HF_TOKEN). Run it from a
Hub webhook on pull-request events (a discussion event whose `discussion.isPullRequest` is true)
or from CI on a schedule. Exit status: labelgate's (0 pass, 1 the gate blocks, 2 usage error).
"""

from __future__ import annotations

import argparse
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Any


def revision_of(pr: int) -> str:
    """The git reference of a Hub pull request."""
    return f"refs/pr/{pr}"


def fetch(repo: str, revision: str, path: str) -> Path:
    """The local folder holding ``path`` at ``revision`` (only those files are downloaded)."""
    from huggingface_hub import snapshot_download

    wanted = path.strip("/")
    folder = snapshot_download(
        repo, repo_type="dataset", revision=revision, allow_patterns=[wanted, f"{wanted}/**"]
    )
    return Path(folder) / wanted


def post_comment(api: Any, repo: str, pr: int, body: str) -> None:
    """Comment ``body`` on the pull request (``api``: a ``huggingface_hub.HfApi``)."""
    api.comment_discussion(repo_id=repo, discussion_num=pr, comment=body, repo_type="dataset")


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repo", required=True, help="the dataset repository, org/name")
    parser.add_argument("--pr", type=int, required=True, help="the pull request's number")
    parser.add_argument("--path", required=True, help="the label file (or folder) in the repo")
    parser.add_argument("--base", default="main", help="the PR's target revision (default main)")
    parser.add_argument("--comment", action="store_true", help="comment the verdict on the PR")
    parser.add_argument("labelgate_args", nargs="*", help="after --: labelgate's options")
    ns = parser.parse_args(argv)
    try:
        base = fetch(ns.repo, ns.base, ns.path)
        head = fetch(ns.repo, revision_of(ns.pr), ns.path)
    except (OSError, ValueError) as exc:  # the Hub's errors (HTTP, not in the cache, bad repo)
        print(f"hf_pr_check: cannot fetch {ns.path} of {ns.repo}: {exc}", file=sys.stderr)
        return 2
    command = ["labelgate", "diff", str(base), str(head), *ns.labelgate_args]
    status = subprocess.run([*command, "--format", "text"], check=False).returncode
    if ns.comment and status != 2:
        with tempfile.TemporaryDirectory() as tmp:
            out = Path(tmp) / "comment.md"
            subprocess.run([*command, "--format", "pr-comment", "-o", str(out)], check=False)
            from huggingface_hub import HfApi

            post_comment(HfApi(), ns.repo, ns.pr, out.read_text(encoding="utf-8"))
    return status


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
