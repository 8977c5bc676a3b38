#!/usr/bin/env bash
#===- scripts/test.sh - Run every kiln test ------------------------------===#
#
#   bash scripts/test.sh
#
# Runs, after scripts/setup.sh has built build/ and .venv:
#   1. ctest in build/: the lit tests (test/lit), the GoogleTest unit tests (test/unit),
#      and the check that the generated ONNX dialect is up to date;
#   2. pytest test/e2e: models compiled with build/bin/kiln, run, and compared with
#      onnxruntime, plus bad-input tests. The reference models come from
#      $KILN_MODELS_DIR (default ../shared/models beside the repository); without them
#      their tests are skipped (in CI, CI=true, they fail).
#   3. a fuzz smoke run: each libFuzzer target of fuzz/ (scripts/fuzz.sh) for
#      KILN_FUZZ_SECONDS (default 20) seconds, under ASan and UBSan; skipped when the
#      compiler has no libFuzzer;
#   4. the conformance suite (test/conformance/run.py --check): every ONNX backend node
#      test of the pinned onnx package through kiln and onnxruntime; fails when a test in
#      test/conformance/expected_pass.txt stops passing, when any test crashes, or when a
#      test computes wrong numbers and is not listed in known_failures.txt; then the same
#      for --device vulkan on lavapipe (expected_pass_vulkan.txt, known_failures_vulkan.txt).
# Prints a summary and exits non-zero if anything failed.
#
# Options:
#   --no-ctest        skip step 1
#   --no-e2e          skip step 2
#   --no-fuzz         skip step 3
#   --no-conformance  skip step 4
#   -- ARGS...        pass ARGS to pytest (e.g. -- -k conv -x)
# Environment:
#   KILN_BUILD_DIR    build folder (default: build)
#   KILN_TEST_JOBS    parallel ctest jobs (default: number of CPUs)
#   KILN_E2E_JOBS     kiln compiles running ahead of the e2e tests (default: CPUs, at most 2)
#===----------------------------------------------------------------------===#
set -uo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$ROOT" || exit 2

RUN_CTEST=1
RUN_E2E=1
RUN_FUZZ=1
RUN_CONFORMANCE=1
PYTEST_ARGS=()
while [ $# -gt 0 ]; do
  case "$1" in
    --no-ctest) RUN_CTEST=0 ;;
    --no-e2e) RUN_E2E=0 ;;
    --no-fuzz) RUN_FUZZ=0 ;;
    --no-conformance) RUN_CONFORMANCE=0 ;;
    --) shift; PYTEST_ARGS=("$@"); break ;;
    -h|--help) sed -n '2,/^#===-----/p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
    *) echo "test.sh: unknown option '$1' (see --help)" >&2; exit 2 ;;
  esac
  shift
done

BUILD_DIR="${KILN_BUILD_DIR:-build}"
case "$BUILD_DIR" in /*) ;; *) BUILD_DIR="$ROOT/$BUILD_DIR" ;; esac
export KILN_BUILD_DIR="$BUILD_DIR"
PYTHON="$ROOT/.venv/bin/python"
RESULTS="$BUILD_DIR/test-results"

die() { printf 'test.sh: error: %s\n' "$*" >&2; exit 2; }
[ -x "$PYTHON" ] || die "$PYTHON not found: run scripts/setup.sh first"
[ -f "$BUILD_DIR/CMakeCache.txt" ] || die "$BUILD_DIR is not configured: run scripts/setup.sh first"
rm -rf "$RESULTS"
mkdir -p "$RESULTS"

ctest_status=skipped
e2e_status=skipped
fuzz_status=skipped
conformance_status=skipped
failed=0

if [ "$RUN_CTEST" = 1 ]; then
  printf '\n== ctest (lit, unit tests, generated dialect)\n'
  ctest --test-dir "$BUILD_DIR" --output-on-failure \
    --parallel "${KILN_TEST_JOBS:-$(nproc)}" --output-junit "$RESULTS/ctest.xml"
  rc=$?
  if [ $rc -eq 0 ]; then ctest_status=passed; else ctest_status="FAILED (exit $rc)"; failed=1; fi
fi

if [ "$RUN_E2E" = 1 ]; then
  printf '\n== pytest test/e2e (compile, run, compare with onnxruntime)\n'
  "$PYTHON" -m pytest "$ROOT/test/e2e" -o cache_dir="$BUILD_DIR/pytest-cache" \
    --junitxml="$RESULTS/e2e.xml" "${PYTEST_ARGS[@]}"
  rc=$?
  case $rc in
    0) e2e_status=passed ;;
    5) e2e_status="FAILED (pytest collected no tests)"; failed=1 ;;
    *) e2e_status="FAILED (exit $rc)"; failed=1 ;;
  esac
fi

if [ "$RUN_FUZZ" = 1 ]; then
  if grep -q '^KILN_HAVE_LIBFUZZER:INTERNAL=1' "$BUILD_DIR/CMakeCache.txt"; then
    printf '\n== fuzz smoke run (libFuzzer, ASan+UBSan, %s s per target)\n' \
      "${KILN_FUZZ_SECONDS:-20}"
    bash "$ROOT/scripts/fuzz.sh" --duration "${KILN_FUZZ_SECONDS:-20}"
    rc=$?
    if [ $rc -eq 0 ]; then fuzz_status=passed; else fuzz_status="FAILED (exit $rc)"; failed=1; fi
  else
    fuzz_status="skipped (no libFuzzer in this compiler)"
  fi
fi

if [ "$RUN_CONFORMANCE" = 1 ]; then
  printf '\n== conformance (ONNX backend node tests, kiln and onnxruntime)\n'
  "$PYTHON" "$ROOT/test/conformance/run.py" --check --quiet \
    --json "$RESULTS/conformance.json"
  rc=$?
  if [ $rc -eq 0 ]; then conformance_status=passed; else conformance_status="FAILED (exit $rc)"; failed=1; fi
  # The second tracked run: the same tests compiled for vulkan, on lavapipe unless
  # VK_ICD_FILENAMES names another driver (expected_pass_vulkan.txt).
  printf '\n== conformance on vulkan (run.py --device vulkan)\n'
  lvp=/usr/share/vulkan/icd.d/lvp_icd.x86_64.json
  if [ -z "${VK_ICD_FILENAMES:-}" ] && [ -f "$lvp" ]; then export VK_ICD_FILENAMES="$lvp"; fi
  "$PYTHON" "$ROOT/test/conformance/run.py" --device vulkan --check --quiet --no-ort \
    --json "$RESULTS/conformance-vulkan.json"
  rc=$?
  if [ $rc -ne 0 ]; then conformance_status="$conformance_status; vulkan FAILED (exit $rc)"; failed=1; fi
fi

# Summary from the JUnit files both runners wrote.
printf '\n== summary\n'
printf '  fuzz   %s\n' "$fuzz_status"
"$PYTHON" - "$RESULTS" "$ctest_status" "$e2e_status" "$conformance_status" <<'EOF'
import sys
import xml.etree.ElementTree as ET
from pathlib import Path

results, ctest_status, e2e_status = Path(sys.argv[1]), sys.argv[2], sys.argv[3]
conformance_status = sys.argv[4]
total = {"passed": 0, "failed": 0, "skipped": 0}


def counts(path):
    """passed/failed/skipped from a JUnit XML file (ctest's or pytest's)."""
    c = {"passed": 0, "failed": 0, "skipped": 0}
    for case in ET.parse(path).getroot().iter("testcase"):
        kinds = {child.tag for child in case}
        status = case.get("status", "")
        if kinds & {"failure", "error"} or status == "fail":
            c["failed"] += 1
        elif "skipped" in kinds or status in ("notrun", "disabled"):
            c["skipped"] += 1
        else:
            c["passed"] += 1
    return c


for label, name, status in (("ctest", "ctest.xml", ctest_status),
                            ("e2e", "e2e.xml", e2e_status)):
    path = results / name
    if status == "skipped":
        print(f"  {label:6s} not run")
        continue
    if not path.is_file():
        print(f"  {label:6s} {status}, no results file")
        continue
    c = counts(path)
    if status != "passed" and c["failed"] == 0:
        c["failed"] = 1  # the runner itself failed (no tests found, crashed, ...)
    for k in total:
        total[k] += c[k]
    print(f"  {label:6s} {status}: {c['passed']} passed, {c['failed']} failed, "
          f"{c['skipped']} skipped")
print(f"total: {total['passed']} passed, {total['failed']} failed, {total['skipped']} skipped")
import json
conf = results / "conformance.json"
if conformance_status == "skipped":
    print("  conformance not run")
elif conf.is_file():
    t = json.loads(conf.read_text())["totals"]
    print(f"  conformance {conformance_status}: kiln {t['pass']} pass, {t['fail']} fail, "
          f"{t['rejected']} rejected, {t['crash']} crash of {t['tests']} ONNX node tests "
          f"(onnxruntime {t['ort_pass']} pass)")
else:
    print(f"  conformance {conformance_status}, no results file")
EOF

exit $failed
