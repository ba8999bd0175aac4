#!/usr/bin/env bash
# The prepared GPU check: smoke the bundled samples on the device, raw and fixed (--before), and run
# the suite's GPU tests. Needs torch, numpy and pyarrow; labelgate from this checkout (PYTHONPATH).
#
#   bash benchmarks/gpu_check.sh [OUT]     # OUT: where the fixed files and JSON reports go
set -uo pipefail
cd "$(dirname "$0")/.."
export PYTHONPATH=src${PYTHONPATH:+:$PYTHONPATH}
out=${1:-${OUT:-/tmp/labelgate-gpu}}
mkdir -p "$out"
lg() { python -m labelgate "$@"; }

python -c "import torch; print('torch', torch.__version__, 'cuda', torch.version.cuda, 'hip', torch.version.hip, 'gpu', torch.cuda.is_available() and torch.cuda.get_device_name(0))"
cd data_samples
lg fix oob_0_2_4.parquet -k 4 --out "$out/oob_fixed.parquet" --quarantine "$out/oob_rejected.parquet" --format json > "$out/fix_oob.json"
lg fix neg1_sentinel.parquet -k 4 --map-value=-1=ignore --out "$out/neg1_fixed.parquet" --format json > "$out/fix_neg1.json"
lg fix two_sources_one_based.parquet -k 4 --class-names classes.txt --out "$out/two_sources_fixed.parquet" --format json > "$out/fix_two.json"
lg fix all_ignored_batch.parquet -k 4 --drop-ignored --out "$out/all_ignored_fixed.parquet" --quarantine "$out/all_ignored_rejected.parquet" --format json > "$out/fix_ignored.json"
for case in "oob_0_2_4 oob_fixed" "neg1_sentinel neg1_fixed" "two_sources_one_based two_sources_fixed" "all_ignored_batch all_ignored_fixed"; do
    set -- $case
    echo "== smoke $2 --before $1.parquet (${LABELGATE_DEVICE:-cuda})"
    lg smoke "$out/$2.parquet" -k 4 --before "$1.parquet" --device "${LABELGATE_DEVICE:-cuda}"
    echo "exit status $?"
    lg smoke "$out/$2.parquet" -k 4 --before "$1.parquet" --device "${LABELGATE_DEVICE:-cuda}" --format json > "$out/smoke_$2.json"
done
cd ..
if python -c "import pytest" 2>/dev/null; then
    python -m pytest -m gpu tests/test_smoke.py -q
fi
