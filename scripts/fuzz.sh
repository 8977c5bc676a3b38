#!/usr/bin/env bash
#===- scripts/fuzz.sh - Build and run kiln's libFuzzer targets ------------===#
#
#   bash scripts/fuzz.sh [--duration SECONDS] [--no-build] [TARGET...]
#
# Builds the fuzz targets of fuzz/ (clang's libFuzzer with ASan and UBSan) in the
# build folder and runs each for SECONDS (default 60) on its corpus, seeded first
# from kiln's own test models (test/e2e/models.py, test/e2e/hostile/) and a few .npy files and
# descriptors. TARGETs: npy, descriptor, import, compile (default: all four);
# compile runs the passes of `kiln compile` (to the LLVM dialect) on what imports.
# First each target runs the inputs of fuzz/regressions/<target>/ (once found crashing,
# since fixed; compile runs import's too); fuzz/open-crashes/ holds found crashes not fixed yet.
# A crash, sanitizer report, timeout (> 25 s for one input) or out-of-memory
# (> 2 GiB) fails the run: the input is saved under <build>/fuzz/artifacts/<target>/
# and the script exits 1. Each run prints its counts (inputs tried, corpus size)
# and appends them to <build>/fuzz/runs.log.
#
# Options:
#   --duration S   seconds per target (default 60; scripts/test.sh uses 20)
#   --no-build     use the fuzzers already built
#   --jobs N       N fuzzing processes per target at once (libFuzzer -fork=N); default 1
# Environment:
#   KILN_BUILD_DIR  build folder (default: build), configured with clang by setup.sh
# Reproduce a crash:  <build>/bin/kiln_fuzz_<target> <artifact file>
#===----------------------------------------------------------------------===#
set -uo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$ROOT" || exit 2

DURATION=60
BUILD=1
JOBS=1
TARGETS=()
while [ $# -gt 0 ]; do
  case "$1" in
    --duration) DURATION="$2"; shift ;;
    --duration=*) DURATION="${1#*=}" ;;
    --jobs) JOBS="$2"; shift ;;
    --no-build) BUILD=0 ;;
    -h|--help) sed -n '2,/^#===-----/p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
    npy|descriptor|import|compile) TARGETS+=("$1") ;;
    *) echo "fuzz.sh: unknown argument '$1' (see --help)" >&2; exit 2 ;;
  esac
  shift
done
[ ${#TARGETS[@]} -gt 0 ] || TARGETS=(npy descriptor import compile)
case "$DURATION" in ''|*[!0-9]*) echo "fuzz.sh: --duration needs seconds" >&2; exit 2 ;; esac

BUILD_DIR="${KILN_BUILD_DIR:-build}"
case "$BUILD_DIR" in /*) ;; *) BUILD_DIR="$ROOT/$BUILD_DIR" ;; esac
WORK="$BUILD_DIR/fuzz"
PYTHON="$ROOT/.venv/bin/python"
[ -f "$BUILD_DIR/CMakeCache.txt" ] || { echo "fuzz.sh: $BUILD_DIR is not configured: run scripts/setup.sh" >&2; exit 2; }

if [ "$BUILD" = 1 ]; then
  names=()
  for t in "${TARGETS[@]}"; do names+=("kiln_fuzz_$t"); done
  ninja -C "$BUILD_DIR" "${names[@]}" >"$WORK.build.log" 2>&1 || {
    echo "fuzz.sh: building ${names[*]} failed (is the compiler clang with libFuzzer?):" >&2
    tail -20 "$WORK.build.log" >&2; exit 2; }
fi

# Seeds: written once per corpus folder (the corpus then keeps what the runs found).
seed() {
  local target="$1" dir="$WORK/corpus/$1"
  mkdir -p "$dir"
  [ -n "$(ls -A "$dir" 2>/dev/null)" ] && return 0
  case "$target" in
    npy)
      [ -x "$PYTHON" ] && "$PYTHON" - "$dir" <<'PY'
import sys, numpy as np
d = sys.argv[1]
arrays = [np.zeros((2, 3), np.float32), np.arange(5, dtype=np.int64), np.array(True),
          np.ones((1, 2, 3), np.uint8), np.zeros((0, 4), np.float16),
          np.arange(4, dtype=np.float64).reshape(2, 2), np.array([1, 0], dtype=bool)]
for i, a in enumerate(arrays):
    np.save(f"{d}/seed{i}.npy", a)
PY
      ;;
    descriptor)
      printf '\000' >"$dir/zeros"
      printf '\000\003abc\000\001\001\001\001a\001\002\002\003' >"$dir/one-input"
      printf '\245KILNSUM2' >"$dir/trailer"
      ;;
    import|compile)
      # Both take ONNX bytes: kiln's own test models, good and bad.
      [ -x "$PYTHON" ] && "$PYTHON" - "$dir" "$ROOT/test/e2e" <<'PY'
import pathlib, shutil, sys, tempfile
out = pathlib.Path(sys.argv[1]); sys.path.insert(0, sys.argv[2])
import models
for case in models.all_cases():
    with tempfile.TemporaryDirectory() as tmp:
        path = case.save(pathlib.Path(tmp))
        if path.stat().st_size < 200_000:  # small models mutate faster
            shutil.copy(path, out / f"{case.name}.onnx")
# The fuzzer's folder holds a 4 KiB weights.bin: tensors that name it are read.
for offset in (None, 64):
    model = models._external_model("weights.bin", offset=offset)
    (out / f"external-{offset}.onnx").write_bytes(model.SerializeToString())
for bad in models.bad_cases():
    with tempfile.TemporaryDirectory() as tmp:
        try:
            path = bad.write(pathlib.Path(tmp))
        except Exception:
            continue
        if path.is_file() and path.stat().st_size < 200_000:
            shutil.copy(path, out / f"bad-{bad.name}.onnx")
# The hostile models of issue 19 (tiny files asking for huge or impossible things).
sys.path.insert(0, sys.argv[2] + "/hostile")
import generate
for case in generate.cases():
    (out / f"hostile-{case.name}.onnx").write_bytes(case.data)
PY
      ;;
  esac
  [ -n "$(ls -A "$dir" 2>/dev/null)" ] || printf '\000' >"$dir/empty"
}

# Huge requests from the descriptor fuzzer must come back as OUT_OF_MEMORY, not
# abort; the importer's leaks on error paths are not what these runs look for.
export ASAN_OPTIONS="allocator_may_return_null=1:detect_leaks=0:${ASAN_OPTIONS:-}"
export UBSAN_OPTIONS="print_stacktrace=1:${UBSAN_OPTIONS:-}"

failed=0
for t in "${TARGETS[@]}"; do
  seed "$t"
  bin="$BUILD_DIR/bin/kiln_fuzz_$t"
  art="$WORK/artifacts/$t"
  log="$WORK/$t.log"
  mkdir -p "$art"
  # Inputs that once crashed a target (fuzz/regressions/<target>/) must not any more;
  # compile also runs the import target's (the same kind of input).
  regressions=()
  for r in "$t" $([ "$t" = compile ] && echo import); do
    [ -d "$ROOT/fuzz/regressions/$r" ] && regressions+=("$ROOT"/fuzz/regressions/"$r"/*)
  done
  if [ ${#regressions[@]} -gt 0 ]; then
    if ! "$bin" -runs=0 "${regressions[@]}" >"$WORK/$t.regressions.log" 2>&1; then
      echo "   $t: a regression input crashes again:" >&2
      grep -E 'ERROR: |runtime error|SUMMARY|Running:' "$WORK/$t.regressions.log" | head -8 >&2
      failed=1
      continue
    fi
  fi
  printf '== fuzz %s for %s s\n' "$t" "$DURATION"
  fork=()
  [ "$JOBS" -gt 1 ] && fork=(-fork="$JOBS" -ignore_crashes=0)
  "$bin" "${fork[@]}" -max_total_time="$DURATION" -timeout=25 -rss_limit_mb=2048 \
    -print_final_stats=1 -artifact_prefix="$art/" "$WORK/corpus/$t" >"$log" 2>&1
  rc=$?
  runs=$(grep -o 'stat::number_of_executed_units: *[0-9]*' "$log" | grep -o '[0-9]*$' | tail -1)
  [ -n "$runs" ] || runs=$(grep -o '^#[0-9]*' "$log" | tail -1 | tr -d '#')
  corpus=$(ls "$WORK/corpus/$t" | wc -l)
  status=clean
  if [ $rc -ne 0 ]; then
    status="FAILED (exit $rc)"; failed=1
    grep -E 'ERROR: |runtime error|SUMMARY|Test unit written' "$log" | head -8
  fi
  printf '   %s: %s inputs in %s s, corpus %s files: %s\n' "$t" "${runs:-?}" "$DURATION" \
    "$corpus" "$status"
  printf '%s %s duration=%ss inputs=%s corpus=%s %s\n' "$(date -u +%FT%TZ)" "$t" \
    "$DURATION" "${runs:-?}" "$corpus" "$status" >>"$WORK/runs.log"
done
exit $failed
