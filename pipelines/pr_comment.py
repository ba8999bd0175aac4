"""Post or update labelgate's one comment on a GitHub pull request (the Action's last step).

    python3 pipelines/pr_comment.py labelgate-reports/comment.md

Reads GitHub Actions' own environment: GITHUB_TOKEN (the workflow grants it
`pull-requests: write`), GITHUB_API_URL, GITHUB_REPOSITORY, GITHUB_EVENT_NAME and
GITHUB_EVENT_PATH (the pull_request event's payload). The comment is found again by its first
line, `<!-- labelgate pr-comment -->`, and edited in place, so a pull request keeps one labelgate
comment however often it is pushed to. Where the token cannot write (a pull request from a fork,
whose GITHUB_TOKEN is read-only under `pull_request`; no token; a 403 or 404 from the API), the
comment is skipped with a notice: the gate's verdict is labelgate's exit status, never this
step's. Only the Python standard library is used.

Endpoints (GitHub REST API, "Issue comments": a pull request is an issue for its comments):
GET /repos/{repo}/issues/{number}/comments, POST /repos/{repo}/issues/{number}/comments,
PATCH /repos/{repo}/issues/comments/{id}.
"""

from __future__ import annotations

import json
import os
import sys
import urllib.error
import urllib.request
from pathlib import Path
from typing import Any

MARKER = "<!-- labelgate pr-comment -->"
PAGES = 20  # pages of 100 comments searched for the marker


def notice(message: str) -> None:
    """A workflow notice: shown on the run's page, never a failure."""
    print(f"::notice title=labelgate comment::{message}")


def call(method: str, url: str, token: str, body: dict[str, Any] | None = None) -> Any:
    data = None if body is None else json.dumps(body).encode()
    request = urllib.request.Request(url, data=data, method=method)
    request.add_header("Authorization", f"Bearer {token}")
    request.add_header("Accept", "application/vnd.github+json")
    request.add_header("X-GitHub-Api-Version", "2022-11-28")
    if data is not None:
        request.add_header("Content-Type", "application/json")
    with urllib.request.urlopen(request, timeout=30) as response:
        return json.loads(response.read() or b"null")


def pull_request(env: dict[str, str]) -> dict[str, Any] | None:
    path = env.get("GITHUB_EVENT_PATH")
    if not path or not Path(path).is_file():
        return None
    event = json.loads(Path(path).read_text(encoding="utf-8"))
    pr = event.get("pull_request")
    return pr if isinstance(pr, dict) else None


def from_fork(pr: dict[str, Any]) -> bool:
    head = (pr.get("head") or {}).get("repo") or {}
    base = (pr.get("base") or {}).get("repo") or {}
    return bool(head.get("full_name")) and head.get("full_name") != base.get("full_name")


def post(body: str, env: dict[str, str]) -> str:
    """Post or update the comment; returns what was done (``created``, ``updated``, or why it
    was skipped)."""
    pr = pull_request(env)
    if pr is None:
        return "skipped: not a pull_request event"
    if env.get("GITHUB_EVENT_NAME") == "pull_request" and from_fork(pr):
        return "skipped: a pull request from a fork gets a read-only GITHUB_TOKEN"
    token = env.get("GITHUB_TOKEN", "")
    if not token:
        return "skipped: no GITHUB_TOKEN (set the action's token input)"
    api = env.get("GITHUB_API_URL", "https://api.github.com").rstrip("/")
    repo, number = env["GITHUB_REPOSITORY"], int(pr["number"])
    comments = f"{api}/repos/{repo}/issues/{number}/comments"
    try:
        for page in range(1, PAGES + 1):
            listed = call("GET", f"{comments}?per_page=100&page={page}", token)
            mine = [c for c in listed if str(c.get("body", "")).startswith(MARKER)]
            if mine:
                call(
                    "PATCH",
                    f"{api}/repos/{repo}/issues/comments/{mine[0]['id']}",
                    token,
                    {"body": body},
                )
                return "updated"
            if len(listed) < 100:
                break
        call("POST", comments, token, {"body": body})
        return "created"
    except urllib.error.HTTPError as exc:
        if exc.code in (401, 403, 404):
            return (
                f"skipped: the token cannot write pull-request comments (HTTP {exc.code}); the "
                "workflow needs permissions: pull-requests: write"
            )
        return f"skipped: GitHub answered HTTP {exc.code}"
    except (urllib.error.URLError, OSError, ValueError) as exc:
        return f"skipped: {exc}"


def main(argv: list[str]) -> int:
    if len(argv) != 2:
        print("usage: pr_comment.py COMMENT.md", file=sys.stderr)
        return 2
    body = Path(argv[1]).read_text(encoding="utf-8")
    if not body.startswith(MARKER):
        print(f"pr_comment.py: {argv[1]} is no labelgate pr-comment", file=sys.stderr)
        return 2
    done = post(body, dict(os.environ))
    if done.startswith("skipped"):
        notice(f"pull-request comment {done}")
    else:
        print(f"labelgate: pull-request comment {done}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
