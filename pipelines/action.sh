#!/usr/bin/env bash
# The steps of the labelgate GitHub Action (action.yml at the repository root), as one script.
#
# Reads its inputs from the environment:
#   LABELGATE_HEAD      the dataset to check (a file, directory or glob; several, space-separated)
#   LABELGATE_BASE      the same dataset at the base revision: set, the gate runs `labelgate diff`
#   LABELGATE_CONTRACT  the contract (YAML) given as --schema
#   LABELGATE_ARGS      more options (--classes 4, --strict, ...), split on spaces
#   LABELGATE_FORMATS   report files to write: any of json junit html markdown text (default:
#                       json junit html)
#   LABELGATE_REPORTS   their folder (default labelgate-reports)
#   LABELGATE_CACHE     a folder keeping each file's partial result (--cache): the first run
#                       below reads what changed, the report files' runs read nothing
#   LABELGATE_BASE_REF  the base revision (a commit or branch): set, the gate runs `labelgate diff`
#                       against the dataset at that revision, checked out in a worktree of its
#                       own; the revision is fetched first when the clone lacks it (a shallow
#                       clone: actions/checkout's default). LABELGATE_BASE is then the dataset's
#                       path in that revision (default: LABELGATE_HEAD's).
#   LABELGATE_COMMENT   "true" (default): on a pull request, post or update one comment with the
#                       verdict (--format pr-comment), with GITHUB_TOKEN; "false": none
# Writes the annotations (--format github) on stdout, the Markdown report to
# $GITHUB_STEP_SUMMARY, and status=, reports= to $GITHUB_OUTPUT.
# Exit status: labelgate's own: 0 pass, 1 the gate blocks, 2 usage error or unreadable data.
set -uo pipefail

head=${LABELGATE_HEAD:-}
if [ -z "$head" ]; then
    echo "labelgate action: the head input (the dataset to check) is required" >&2
    exit 2
fi
reports=${LABELGATE_REPORTS:-labelgate-reports}
formats=${LABELGATE_FORMATS:-json junit html}
mkdir -p "$reports"

# shellcheck disable=SC2206  # paths and options are space-separated on purpose
heads=($head)
# shellcheck disable=SC2206
args=(${LABELGATE_ARGS:-})
if [ -n "${LABELGATE_CACHE:-}" ]; then
    args=(--cache "$LABELGATE_CACHE" "${args[@]}")
fi
if [ -n "${LABELGATE_CONTRACT:-}" ]; then
    args=(--schema "$LABELGATE_CONTRACT" "${args[@]}")
fi
base=${LABELGATE_BASE:-}
if [ -n "${LABELGATE_BASE_REF:-}" ]; then
    ref=$LABELGATE_BASE_REF
    if ! commit=$(git rev-parse --verify --quiet "$ref^{commit}"); then
        echo "labelgate action: fetching the base revision $ref"
        if ! git fetch --quiet --no-tags --depth=1 origin "$ref"; then
            echo "labelgate action: cannot fetch the base revision '$ref' from origin" >&2
            exit 2
        fi
        commit=$(git rev-parse FETCH_HEAD)
    fi
    worktree="${RUNNER_TEMP:-${TMPDIR:-/tmp}}/labelgate-base-$$"
    if ! git worktree add --quiet --detach "$worktree" "$commit"; then
        echo "labelgate action: cannot check out the base revision $commit" >&2
        exit 2
    fi
    trap 'git worktree remove --force "$worktree"' EXIT
    base="$worktree/${base:-$head}"
fi
if [ -n "$base" ]; then
    command=(labelgate diff "$base" "${heads[@]}" "${args[@]}")
else
    command=(labelgate validate "${heads[@]}" "${args[@]}" --no-progress)
fi

echo "${command[*]}"
"${command[@]}" --format github  # annotations; with GITHUB_STEP_SUMMARY, the summary too
status=$?
if [ "$status" -ne 2 ]; then
    for format in $formats; do
        case $format in
            junit) out="$reports/junit.xml" ;;
            markdown) out="$reports/report.md" ;;
            text) out="$reports/report.txt" ;;
            json | html) out="$reports/report.$format" ;;
            *)
                echo "labelgate action: unknown report format '$format' (json junit html markdown text)" >&2
                exit 2
                ;;
        esac
        "${command[@]}" --format "$format" --output "$out" || true
    done
fi
if [ "$status" -ne 2 ] && [ "${LABELGATE_COMMENT:-true}" = "true" ] && [ -n "${GITHUB_EVENT_PATH:-}" ]; then
    # One comment per pull request, updated on each push; its failures never fail the gate.
    if "${command[@]}" --format pr-comment --output "$reports/comment.md"; [ -s "$reports/comment.md" ]; then
        "${LABELGATE_PYTHON:-python3}" "$(dirname "$0")/pr_comment.py" "$reports/comment.md" || true
    fi
fi
if [ -n "${GITHUB_OUTPUT:-}" ]; then
    {
        echo "status=$status"
        echo "reports=$reports"
    } >>"$GITHUB_OUTPUT"
fi
exit "$status"
