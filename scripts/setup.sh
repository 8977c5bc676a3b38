#!/usr/bin/env bash
#===- scripts/setup.sh - Install kiln's dependencies and build it ---------===#
#
# One command on a fresh Debian 12 machine (as root, or as a user with sudo):
#
#   bash scripts/setup.sh
#
# 1. apt-get: LLVM/MLIR 22, clang/lld 22, protobuf, ONNX (C++), GoogleTest, CMake,
#    Ninja, ccache, python3-venv, the AArch64 cross compilers and qemu-user (only the
#    packages that are missing; `apt-get update`
#    runs first whenever something is installed).
# 2. .venv: a Python virtual environment in the repository with the exact versions of
#    requirements.txt (reinstalled only when that file changes).
# 3. build/: CMake + Ninja, Release without debug info, clang-22, ccache when present.
# 4. The Python package `kiln` (python/) built against build/ and installed into .venv
#    (offline: its build backend and nanobind come from requirements.txt; redone only
#    when python/ or the runtime changed).
#
# Idempotent: a second run installs nothing and only rebuilds what changed.
#
# Options:
#   --dry-run     print what would run, change nothing
#   --skip-apt    do not check or install Debian packages
#   --skip-venv   do not create or update .venv (nor install the Python package)
#   --skip-build  do not configure or build
#   --configure-only  configure build/ but do not compile
#   --skip-python do not install the Python package into .venv
#   -h, --help    this text
# Environment:
#   KILN_BUILD_DIR      build folder (default: build)
#   KILN_BUILD_JOBS     parallel build jobs (default: Ninja's choice)
#   KILN_SETUP_PYTHON   interpreter that creates .venv (default: /usr/bin/python3, else python3)
#===----------------------------------------------------------------------===#
set -euo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$ROOT"

APT_PACKAGES=(
  # LLVM / MLIR 22 (Debian 12's bookworm-security suite)
  llvm-22-dev libmlir-22-dev mlir-22-tools llvm-22-tools lld-22 clang-22
  # libFuzzer and the sanitizer runtimes (scripts/fuzz.sh, -DKILN_SANITIZE)
  libclang-rt-22-dev
  # LLVM's CMake package refers to zlib and zstd targets
  zlib1g-dev libzstd-dev
  # ONNX protobuf classes
  libprotobuf-dev protobuf-compiler libonnx-dev
  # unit tests
  libgtest-dev libgmock-dev
  # build tools
  cmake ninja-build ccache build-essential pkg-config
  # Python for tests and generators (.venv); its headers for the kiln package's
  # extension module (python/)
  python3 python3-venv python3-dev
  # cross-compiling for AArch64 Linux (kiln --target aarch64-linux-gnu, the
  # CMake toolchain file cmake/toolchains/aarch64-linux-gnu.cmake) and running
  # the results under qemu in the tests
  gcc-aarch64-linux-gnu g++-aarch64-linux-gnu libc6-dev-arm64-cross
  libgcc-12-dev-arm64-cross qemu-user
  # Vulkan: the headers the runtime's back end is built with (it loads
  # libvulkan.so.1 with dlopen, never links it), lavapipe (a Vulkan device on
  # the CPU) that the Vulkan tests run on, spirv-as/spirv-val for their SPIR-V,
  # the Khronos validation layer they run under once more
  libvulkan-dev mesa-vulkan-drivers spirv-tools vulkan-validationlayers
  # AMD GPUs (--device hip): the ROCm device libraries' bitcode (ocml, ockl:
  # math functions linked into the code objects); ld.lld comes with lld-22
  rocm-device-libs
)

DRY_RUN=0
DO_APT=1
DO_VENV=1
DO_BUILD=1
DO_COMPILE=1
DO_PYTHON=1
while [ $# -gt 0 ]; do
  case "$1" in
    --dry-run) DRY_RUN=1 ;;
    --skip-apt) DO_APT=0 ;;
    --skip-venv) DO_VENV=0 ;;
    --skip-build) DO_BUILD=0 ;;
    --configure-only) DO_COMPILE=0 ;;
    --skip-python) DO_PYTHON=0 ;;
    -h|--help) sed -n '2,/^#===-----/p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
    *) echo "setup.sh: unknown option '$1' (see --help)" >&2; exit 2 ;;
  esac
  shift
done

BUILD_DIR="${KILN_BUILD_DIR:-build}"
VENV="$ROOT/.venv"
REQUIREMENTS="$ROOT/requirements.txt"

say() { printf '\n== %s\n' "$*"; }
die() { printf 'setup.sh: error: %s\n' "$*" >&2; exit 1; }
run() {
  printf '+ %s\n' "$*"
  if [ "$DRY_RUN" = 0 ]; then "$@"; fi
}

#===--- 1. Debian packages ------------------------------------------------===#
install_packages() {
  say "Debian packages"
  command -v dpkg-query >/dev/null 2>&1 || die "dpkg-query not found: this script expects Debian 12"
  local missing=() p
  for p in "${APT_PACKAGES[@]}"; do
    if ! dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed"; then
      missing+=("$p")
    fi
  done
  if [ ${#missing[@]} -eq 0 ]; then
    echo "all ${#APT_PACKAGES[@]} packages are installed"
    return
  fi
  echo "missing: ${missing[*]}"
  local sudo=()
  if [ "$(id -u)" -ne 0 ]; then
    command -v sudo >/dev/null 2>&1 ||
      die "not root and no sudo: install these as root: apt-get install ${missing[*]}"
    sudo=(sudo)
  fi
  run "${sudo[@]}" env DEBIAN_FRONTEND=noninteractive apt-get update
  run "${sudo[@]}" env DEBIAN_FRONTEND=noninteractive apt-get install -y "${missing[@]}"
}

#===--- 2. Python virtual environment -------------------------------------===#
setup_venv() {
  say "Python environment ($VENV)"
  [ -f "$REQUIREMENTS" ] || die "$REQUIREMENTS not found"
  local base="${KILN_SETUP_PYTHON:-}"
  if [ -z "$base" ]; then
    # Debian's interpreter where it exists (stock Debian; also what a later
    # --system-site-packages venv for Debian's torch needs), else whatever python3 is.
    if [ -x /usr/bin/python3 ]; then base=/usr/bin/python3; else base="$(command -v python3 || true)"; fi
  fi
  [ -n "$base" ] || die "no python3 found (apt-get install python3 python3-venv)"

  if [ -e "$VENV" ] && ! "$VENV/bin/python" -c 'import sys' >/dev/null 2>&1; then
    echo "$VENV exists but its python does not run: recreating it"
    run rm -rf "$VENV"
  fi
  if [ ! -e "$VENV/bin/python" ]; then
    run "$base" -m venv "$VENV"
  fi

  # Reinstall only when requirements.txt (or the interpreter) changed.
  local stamp="$VENV/.kiln-requirements.sha256" want have=""
  want="$(cat "$REQUIREMENTS" <("$VENV/bin/python" -c 'import sys; print(sys.version)' 2>/dev/null || true) | sha256sum | cut -d' ' -f1)"
  [ -f "$stamp" ] && have="$(cat "$stamp")"
  if [ "$want" = "$have" ]; then
    echo "requirements.txt unchanged since the last install"
    return
  fi
  run "$VENV/bin/python" -m pip install --disable-pip-version-check --no-input -r "$REQUIREMENTS"
  run "$VENV/bin/python" -m pip check
  if [ "$DRY_RUN" = 0 ]; then echo "$want" >"$stamp"; fi
}

#===--- 3. Build ----------------------------------------------------------===#
build() {
  say "Build ($BUILD_DIR, Release)"
  local args=(-S "$ROOT" -B "$BUILD_DIR" -G Ninja
    -DCMAKE_BUILD_TYPE=Release
    -DLLVM_DIR=/usr/lib/llvm-22/lib/cmake/llvm
    -DMLIR_DIR=/usr/lib/llvm-22/lib/cmake/mlir
    -DKILN_PYTHON="$VENV/bin/python")
  if [ -f "$BUILD_DIR/CMakeCache.txt" ]; then
    local gen
    gen="$(sed -n 's/^CMAKE_GENERATOR:INTERNAL=//p' "$BUILD_DIR/CMakeCache.txt")"
    [ "$gen" = "Ninja" ] ||
      die "$BUILD_DIR was configured with generator '$gen', not Ninja: remove it (rm -rf $BUILD_DIR) and run again"
  else
    # The compiler is chosen once, at the first configure (changing it later would make
    # CMake drop its cache). clang-22 finds LLVM 22's ld.lld for -fuse-ld=lld by itself.
    args+=(-DCMAKE_C_COMPILER=clang-22 -DCMAKE_CXX_COMPILER=clang++-22 -DCMAKE_ASM_COMPILER=clang-22)
  fi
  run cmake "${args[@]}"
  [ "$DO_COMPILE" = 1 ] || return 0
  local jobs=()
  [ -n "${KILN_BUILD_JOBS:-}" ] && jobs=(-j "$KILN_BUILD_JOBS")
  run cmake --build "$BUILD_DIR" "${jobs[@]}"
}

#===--- 4. The Python package ---------------------------------------------===#
install_python_package() {
  say "Python package kiln (python/ into $VENV)"
  if [ ! -x "$VENV/bin/python" ]; then
    echo "no $VENV: skipped"
    return 0
  fi
  local build_abs stamp="$VENV/.kiln-python.sha256" want have=""
  build_abs="$(cd "$BUILD_DIR" 2>/dev/null && pwd)" || die "$BUILD_DIR does not exist"
  # What the installed package is made of: its sources, the runtime's, the build it
  # points at and the interpreter.
  want="$( (cd "$ROOT" && find python runtime -path python/build -prune -o -type f -print |
      LC_ALL=C sort | xargs sha256sum; echo "$build_abs";
      "$VENV/bin/python" -c 'import sys; print(sys.version)') | sha256sum | cut -d' ' -f1)"
  [ -f "$stamp" ] && have="$(cat "$stamp")"
  if [ "$want" = "$have" ] && "$VENV/bin/python" -c 'import kiln' >/dev/null 2>&1; then
    echo "python/ unchanged since the last install"
    return 0
  fi
  # No build isolation: nanobind and scikit-build-core are pinned in requirements.txt,
  # so this needs no network.
  run "$VENV/bin/python" -m pip install --disable-pip-version-check --no-input \
    --no-build-isolation --no-deps --force-reinstall \
    --config-settings=cmake.define.kiln_DIR="$build_abs" "$ROOT/python"
  if [ "$DRY_RUN" = 0 ]; then echo "$want" >"$stamp"; fi
}

start=$SECONDS
[ "$DO_APT" = 1 ] && install_packages
[ "$DO_VENV" = 1 ] && setup_venv
[ "$DO_BUILD" = 1 ] && build
[ "$DO_PYTHON" = 1 ] && [ "$DO_VENV" = 1 ] && [ "$DO_BUILD" = 1 ] && [ "$DO_COMPILE" = 1 ] && install_python_package
say "setup done in $((SECONDS - start)) s"
