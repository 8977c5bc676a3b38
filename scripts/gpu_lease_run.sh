#!/bin/bash
# One call on a lent GPU machine (docs/gpu.md "Checking it on a GPU"): unpacks a bundle made by
# scripts/gpu_bundle.py and packed as BUNDLE.tar.xz, then, in the order that keeps the timings
# clean: kiln_cuda_tests and every entry checked against onnxruntime's saved outputs (with
# compute-sanitizer memcheck on the models SANITIZE names) while PyTorch's torch.compile caches
# warm in the background; then PyTorch timed (eager, CUDA graph, torch.compile at batch 1); then
# kiln's models and bench cases timed, with the ratios. Logs and JSON go to $OUT (or ./gpu-out).
#
#   bash scripts/gpu_lease_run.sh BUNDLE.tar.xz [SANITIZE_REGEX]
#
# Needs python3 with numpy (and PyTorch, torchvision, transformers for the references); the
# bundle's kiln-run needs only libc and the NVIDIA driver. Took 200 s on an H200 for 193 entries.
set -u
T0=$(date +%s); el() { echo "[+$(( $(date +%s) - T0 ))s] $*"; }
TARBALL=$(realpath "$1"); SANITIZE=${2:-'^model-(mobilenet_v2|resnet50|bert_base)$'}
SCRIPTS=$(dirname "$(realpath "$0")")
OUT=${OUT:-$PWD/gpu-out}; mkdir -p "$OUT"
export PYTHONUNBUFFERED=1
WORK=$(mktemp -d); cd "$WORK" || exit 1
nvidia-smi --query-gpu=name,driver_version,memory.total,clocks.sm,clocks.max.sm --format=csv | tee "$OUT/gpu.txt"
el unpack
if command -v xz >/dev/null; then xz -T0 -dc "$TARBALL" | tar x
else python3 -c "import sys, tarfile; tarfile.open(sys.argv[1]).extractall()" "$TARBALL"; fi || exit 1
B=$(dirname "$(ls -d */manifest.json | head -1)"); B=$WORK/$B
cp "$SCRIPTS/gpu_check.py" "$SCRIPTS/gpu_torch_reference.py" "$B/"   # the newest scripts
# The PyTorch configurations of the bundle's models (arch:batch:precision), read from its manifest.
ALL=$(python3 -c "
import json, sys
m = json.load(open(sys.argv[1] + '/manifest.json'))
print(','.join(sorted({f\"{e['arch']}:{e['batch']}:{e['precision']}\" for e in m
                       if e.get('arch') and e['arch'] != 'bert_mini'})))" "$B")
B1=$(echo "$ALL" | tr , '\n' | grep ':1:' | paste -sd, -)
el torch-warm; (python3 "$B/gpu_torch_reference.py" --configs "$B1" --warm-only --deadline 150 \
    > "$OUT/torch_warm.log" 2>&1) &
WARM=$!
el check; timeout 300 python3 "$B/gpu_check.py" "$B" --no-bench --sanitize "$SANITIZE" \
    --json "$OUT/check.json" > "$OUT/check.log" 2>&1; echo "check exit $?"
grep -E "FAIL|sanitizer|passed|kiln_cuda_tests" "$OUT/check.log" | cut -c1-400 | head -40
el wait-warm; timeout $(( 240 - ($(date +%s) - T0) )) tail --pid=$WARM -f /dev/null; kill $WARM 2>/dev/null
el torch; timeout 150 python3 "$B/gpu_torch_reference.py" --configs "$ALL" --count 50 --deadline 110 \
    --json "$OUT/torch.json" > "$OUT/torch.log" 2>&1
el kiln-bench; timeout 120 python3 "$B/gpu_check.py" "$B" --names '^model-|bench' --count 100 \
    --torch-json "$OUT/torch.json" --json "$OUT/bench.json" > "$OUT/bench.log" 2>&1
tail -30 "$OUT/bench.log"
el done
