#!/usr/bin/env bash
# Runs kiln's Vulkan artifacts on a real GPU and compares them with the outputs
# lavapipe gave here (which test/e2e/test_vulkan.py checks against onnxruntime).
#
#   bench/vulkan_device_check.sh prepare DIR   # on the dev machine: compile + reference outputs
#   bench/vulkan_device_check.sh run DIR       # on the GPU machine: run, compare, time
#
# `prepare` compiles a 512x512x512 MatMul, mobilenet_v2 and bert_mini
# ($KILN_MODELS_DIR, default ../shared/models) with `--device vulkan` into DIR,
# copies build/bin/kiln-run there and records each model's outputs on lavapipe
# (seeded random inputs, --seed 0). `run` needs only DIR, a Vulkan loader and
# driver, and python3 with numpy ($PYTHON): it runs each model on the first Vulkan device
# (KILN_VULKAN_DEVICE to choose), prints the largest difference from the
# reference (rtol 1e-3 / atol 1e-4 expected: the GPU may reassociate nothing
# kiln does not, but its exp/FMA rounding differs) and the latency of
# `kiln-run --bench` (KILN_CHECK_WARMUP, KILN_CHECK_COUNT runs: 10, 100).
set -euo pipefail
mode=${1:?usage: $0 prepare|run DIR}
dir=${2:?usage: $0 prepare|run DIR}
here=$(cd "$(dirname "$0")/.." && pwd)
models="matmul512 mobilenet_v2 bert_mini"

if [[ $mode == prepare ]]; then
  mkdir -p "$dir"
  models_dir=${KILN_MODELS_DIR:-$here/../shared/models}
  "$here/.venv/bin/python" - "$dir/matmul512.onnx" <<'PY'
import sys, numpy as np, onnx
from onnx import helper, numpy_helper, TensorProto
w = numpy_helper.from_array(np.random.default_rng(0).standard_normal((512, 512)).astype(np.float32), "w")
g = helper.make_graph([helper.make_node("MatMul", ["a", "w"], ["y"])], "matmul512",
                      [helper.make_tensor_value_info("a", TensorProto.FLOAT, [512, 512])],
                      [helper.make_tensor_value_info("y", TensorProto.FLOAT, [512, 512])], [w])
onnx.save(helper.make_model(g, opset_imports=[helper.make_opsetid("", 17)]), sys.argv[1])
PY
  cp "$models_dir/mobilenet_v2.onnx" "$models_dir/bert_mini.onnx" "$dir/"
  cp "$here/build/bin/kiln-run" "$dir/"
  export VK_ICD_FILENAMES=${VK_ICD_FILENAMES:-/usr/share/vulkan/icd.d/lvp_icd.x86_64.json}
  for m in $models; do
    "$here/build/bin/kiln" compile "$dir/$m.onnx" --device vulkan -o "$dir/$m.so"
    rm "$dir/$m.onnx"
    "$dir/kiln-run" "$dir/$m.so" --device vulkan --seed 0 --output-dir "$dir/ref-$m" >/dev/null
  done
  du -sh "$dir"
  exit 0
fi

[[ $mode == run ]] || { echo "usage: $0 prepare|run DIR" >&2; exit 2; }
unset VK_ICD_FILENAMES VK_DRIVER_FILES
status=0
for m in $models; do
  echo "== $m"
  rm -rf "$dir/out-$m"
  if ! "$dir/kiln-run" "$dir/$m.so" --device vulkan --seed 0 --output-dir "$dir/out-$m"; then
    status=1; continue
  fi
  "${PYTHON:-python3}" - "$dir/ref-$m" "$dir/out-$m" <<'PY' || status=1
import sys, pathlib, numpy as np
ref, out = map(pathlib.Path, sys.argv[1:])
bad = False
for r in sorted(ref.glob("*.npy")):
    a, b = np.load(r), np.load(out / r.name)
    diff = float(np.abs(a.astype(np.float64) - b).max()) if a.size else 0.0
    ok = np.allclose(b, a, rtol=1e-3, atol=1e-4)
    bad |= not ok
    print(f"  {r.stem}: max |gpu - lavapipe| = {diff:.3g} {'ok' if ok else 'MISMATCH'}")
sys.exit(1 if bad else 0)
PY
  "$dir/kiln-run" "$dir/$m.so" --device vulkan --bench --warmup ${KILN_CHECK_WARMUP:-10} --count ${KILN_CHECK_COUNT:-100} | grep latency
done
exit $status
