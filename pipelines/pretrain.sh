#!/usr/bin/env bash
# The pre-training job: validate the labels, replay the batches on the device, then launch.
#
#   pipelines/pretrain.sh DATA [labelgate options: --schema S | --classes K, ...] -- TRAIN COMMAND...
#
# The training command runs only if `labelgate validate` and `labelgate smoke` both pass; the
# reports go to ${LABELGATE_REPORTS:-labelgate-reports}/. Exit status: the first failing step's.
set -euo pipefail

if [ "$#" -lt 1 ]; then
    echo "usage: $0 DATA [labelgate options] -- TRAIN COMMAND..." >&2
    exit 2
fi
data=$1
shift
options=()
while [ "$#" -gt 0 ] && [ "$1" != "--" ]; do
    options+=("$1")
    shift
done
[ "$#" -gt 0 ] && shift  # the --
reports=${LABELGATE_REPORTS:-labelgate-reports}
mkdir -p "$reports"

labelgate validate "$data" "${options[@]}" --format json --output "$reports/validate.json" || {
    status=$?
    labelgate validate "$data" "${options[@]}" --max-examples 5 --no-progress || true
    echo "labels failed validation: training not started" >&2
    exit "$status"
}
labelgate smoke "$data" "${options[@]}" --device "${LABELGATE_DEVICE:-auto}" --format json > "$reports/smoke.json" || {
    status=$?
    echo "the batches did not run clean on the device (see $reports/smoke.json): training not started" >&2
    exit "$status"
}
echo "labels validated and smoke-tested: starting training" >&2
if [ "$#" -gt 0 ]; then
    exec "$@"
fi
