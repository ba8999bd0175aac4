"""labelgate as a lakeFS pre-merge (or pre-commit) webhook: an HTTP server that lakeFS calls.

    LABELGATE_LAKEFS_S3="endpoint_override=lakefs:8000&scheme=http" \\
        python3 pipelines/lakefs_hook.py --port 8080 -- --schema schemas/annotations.yaml

lakeFS POSTs the event as JSON (docs/src/howto/hooks/webhooks.md, "Request body schema",
treeverse/lakeFS@e2df9531): for `pre-merge`, `branch_id` is the destination branch and
`source_ref` the commit being merged (pkg/graveler/graveler.go, Merge: `BranchID: destination,
SourceRef: fromCommit.CommitID.Ref()`, treeverse/lakeFS@1ecc04a5). The action's `query_params`
name the label files (`path`, repeatable). The server runs `labelgate diff BASE HEAD` with BASE
the files at the destination branch and HEAD at the source (for `pre-commit`, `labelgate
validate` of the branch), and answers 200 when the gate passes, 412 when it blocks and 400 for a
usage error, with labelgate's text report as the body, which lakeFS keeps in the hook run's log.

The files are read through lakeFS's S3 gateway, where the bucket is the repository and the key
starts with the ref: `s3://{repository}/{ref}/{path}`, with the gateway's address in
LABELGATE_LAKEFS_S3 (pyarrow's query options; never shown in reports) and its keys in
AWS_ACCESS_KEY_ID / AWS_SECRET_ACCESS_KEY. LABELGATE_LAKEFS_URI replaces the template (a local
mirror of the refs in tests: `/mirror/{repository}/{ref}/{path}`). Standard library only.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any
from urllib.parse import parse_qs, urlsplit

TEMPLATE = "s3://{repository}/{ref}/{path}"
PASS, BLOCK, USAGE = 200, 412, 400


def uri(repository: str, ref: str, path: str) -> str:
    out = os.environ.get("LABELGATE_LAKEFS_URI", TEMPLATE).format(
        repository=repository, ref=ref, path=path.lstrip("/")
    )
    options = os.environ.get("LABELGATE_LAKEFS_S3", "")
    return f"{out}?{options}" if options and out.startswith("s3://") else out


def command(event: dict[str, Any], paths: list[str], args: list[str]) -> list[str]:
    """The labelgate command for a lakeFS event (ValueError: an event this hook does not gate)."""
    kind = event.get("event_type")
    repository, branch = str(event["repository_id"]), str(event["branch_id"])
    if kind == "pre-merge":
        source = str(event.get("source_ref") or event.get("merge_source") or "")
        if not source:
            raise ValueError("a pre-merge event without source_ref")
        if len(paths) != 1:
            raise ValueError("diff compares one path (a file or a prefix of shards) per hook")
        base, head = uri(repository, branch, paths[0]), uri(repository, source, paths[0])
        return ["labelgate", "diff", base, head, *args, "--format", "text"]
    if kind == "pre-commit":
        return ["labelgate", "validate", *[uri(repository, branch, p) for p in paths], *args]
    raise ValueError(f"event {kind!r}: this hook gates pre-merge and pre-commit")


def judge(event: dict[str, Any], paths: list[str], args: list[str]) -> tuple[int, str]:
    """(HTTP status, body) for one event."""
    try:
        argv = command(event, paths, args)
    except (KeyError, ValueError) as exc:
        return USAGE, f"labelgate hook: {exc}\n"
    done = subprocess.run(argv, capture_output=True, text=True, check=False)
    status = {0: PASS, 1: BLOCK}.get(done.returncode, USAGE)
    return status, done.stdout + done.stderr


def handler(args: list[str]) -> type[BaseHTTPRequestHandler]:
    class Hook(BaseHTTPRequestHandler):
        def do_POST(self) -> None:
            query = parse_qs(urlsplit(self.path).query)
            try:
                length = int(self.headers.get("Content-Length", "0"))
                event = json.loads(self.rfile.read(length) or b"{}")
            except ValueError:
                status, body = USAGE, "labelgate hook: the request body is no JSON event\n"
            else:
                status, body = judge(event, query.get("path", []), args)
            data = body.encode()
            self.send_response(status)
            self.send_header("Content-Type", "text/plain; charset=utf-8")
            self.send_header("Content-Length", str(len(data)))
            self.end_headers()
            self.wfile.write(data)

    return Hook


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--host", default="0.0.0.0")
    parser.add_argument("--port", type=int, default=8080)
    parser.add_argument("labelgate_args", nargs="*", help="after --: labelgate's options")
    ns = parser.parse_args(argv)
    server = ThreadingHTTPServer((ns.host, ns.port), handler(ns.labelgate_args))
    print(f"labelgate lakeFS hook on {ns.host}:{server.server_address[1]}", flush=True)
    server.serve_forever()
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
