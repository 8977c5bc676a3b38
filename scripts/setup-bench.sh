#!/usr/bin/env bash
#===- scripts/setup-bench.sh - Dependencies of the benchmark suite --------===#
#
# One command (as root, or as a user with sudo), after scripts/setup.sh:
#
#   bash scripts/setup-bench.sh
#
# The benchmark suite (bench/, docs/benchmarks.md) needs more than the tests do, so this
# is separate from scripts/setup.sh (too heavy for CI):
# 1. apt-get: Debian 12's python3-torch 1.13.1, python3-torchvision 0.14.1 (exporting
#    ResNet-50, MobileNetV2 and BERT-base to ONNX) and python3-matplotlib 3.6.3 (the chart),
#    at the versions pinned below. PyPI's torch is never installed (several GB of CUDA).
# 2. .venv-bench: a virtual environment of /usr/bin/python3 with --system-site-packages,
#    so it sees those Debian packages, with numpy<2 pinned (Debian's torch is built against
#    numpy 1.x; Debian 12's own numpy is 1.24.2, so nothing is downloaded).
# The harness itself (bench/bench.py) runs in .venv (onnxruntime and numpy pinned by
# requirements.txt) and calls .venv-bench only to export models and draw the chart.
#
# Idempotent. Options:
#   --dry-run     print what would run, change nothing
#   --skip-apt    do not check or install Debian packages
#   -h, --help    this text
#===----------------------------------------------------------------------===#
set -euo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$ROOT"

# Exact Debian 12 versions the suite was run with (see docs/benchmarks.md).
APT_PACKAGES=(
  python3-torch=1.13.1+dfsg-4
  python3-torchvision=0.14.1-2
  python3-matplotlib=3.6.3-1+b1
  python3-venv
  time                # GNU time: peak RSS of the measured processes
)
VENV="$ROOT/.venv-bench"

DRY_RUN=0
DO_APT=1
while [ $# -gt 0 ]; do
  case "$1" in
    --dry-run) DRY_RUN=1 ;;
    --skip-apt) DO_APT=0 ;;
    -h|--help) sed -n '2,/^#===-----/p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
    *) echo "setup-bench.sh: unknown option '$1' (see --help)" >&2; exit 2 ;;
  esac
  shift
done

say() { printf '\n== %s\n' "$*"; }
die() { printf 'setup-bench.sh: error: %s\n' "$*" >&2; exit 1; }
run() {
  printf '+ %s\n' "$*"
  if [ "$DRY_RUN" = 0 ]; then "$@"; fi
}

if [ "$DO_APT" = 1 ]; then
  say "Debian packages"
  command -v dpkg-query >/dev/null 2>&1 || die "dpkg-query not found: this script expects Debian 12"
  missing=()
  for spec in "${APT_PACKAGES[@]}"; do
    p="${spec%%=*}"
    want="${spec#*=}"
    have="$(dpkg-query -W -f='${Status} ${Version}' "$p" 2>/dev/null || true)"
    case "$have" in
      "install ok installed "*)
        if [ "$want" != "$spec" ] && [ "${have##* }" != "$want" ]; then missing+=("$spec"); fi ;;
      *) missing+=("$spec") ;;
    esac
  done
  if [ ${#missing[@]} -eq 0 ]; then
    echo "all ${#APT_PACKAGES[@]} packages are installed at the pinned versions"
  else
    echo "missing: ${missing[*]}"
    sudo=()
    if [ "$(id -u)" -ne 0 ]; then
      command -v sudo >/dev/null 2>&1 ||
        die "not root and no sudo: install these as root: apt-get install ${missing[*]}"
      sudo=(sudo)
    fi
    run "${sudo[@]}" env DEBIAN_FRONTEND=noninteractive apt-get update
    run "${sudo[@]}" env DEBIAN_FRONTEND=noninteractive apt-get install -y --no-install-recommends "${missing[@]}"
  fi
fi

say "Python environment ($VENV)"
[ -x /usr/bin/python3 ] || die "/usr/bin/python3 not found (apt-get install python3)"
if [ -e "$VENV" ] && ! "$VENV/bin/python" -c 'import sys' >/dev/null 2>&1; then
  echo "$VENV exists but its python does not run: recreating it"
  run rm -rf "$VENV"
fi
if [ ! -e "$VENV/bin/python" ]; then
  run /usr/bin/python3 -m venv --system-site-packages "$VENV"
fi
run "$VENV/bin/python" -m pip install --disable-pip-version-check --no-input "numpy<2"
if [ "$DRY_RUN" = 0 ]; then
  "$VENV/bin/python" -c '
import numpy, torch, torchvision, matplotlib
print(f"numpy {numpy.__version__}, torch {torch.__version__}, "
      f"torchvision {torchvision.__version__}, matplotlib {matplotlib.__version__}")'
fi
say "bench set-up done: .venv/bin/python bench/bench.py --help"
