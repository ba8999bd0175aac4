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
if [ -n "${LABELGATE_BASE:-}" ]; then
    command=(labelgate diff "$LABELGATE_BASE" "${heads[@]}" "${args[@]}")
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
if [ -n "${GITHUB_OUTPUT:-}" ]; then
    {
        echo "status=$status"
        echo "reports=$reports"
    } >>"$GITHUB_OUTPUT"
fi
exit "$status"
