#!/usr/bin/env bash
# The dataset pull-request gate: validate HEAD, compare it with BASE, block on failure.
#
#   pipelines/gate.sh BASE HEAD [labelgate diff options: --schema S | --classes K, ...]
#
# Prints GitHub annotations (and a Markdown step summary when GITHUB_STEP_SUMMARY is set), and
# writes junit.xml, report.html and report.json into ${LABELGATE_REPORTS:-labelgate-reports}/.
# Exit status: 0 pass, 1 the gate blocks, 2 usage error or unreadable data.
set -uo pipefail

if [ "$#" -lt 2 ]; then
    echo "usage: $0 BASE HEAD [labelgate diff options]" >&2
    exit 2
fi
base=$1
head=$2
shift 2
reports=${LABELGATE_REPORTS:-labelgate-reports}
mkdir -p "$reports"

labelgate diff "$base" "$head" "$@" --format github
status=$?
if [ "$status" -ne 2 ]; then
    for format in junit html json; do
        out="$reports/report.$format"
        [ "$format" = junit ] && out="$reports/junit.xml"
        labelgate diff "$base" "$head" "$@" --format "$format" --output "$out" || true
    done
fi
exit "$status"
