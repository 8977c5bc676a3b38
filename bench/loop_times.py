"""Per-loop times of a compiled model (bench/loop_times.c): each thread-pool
loop of a run, its wall time and the busiest thread's time, and the sequential
time between loops. For finding where a model loses time, and how much of a
2-thread run is waiting.

Usage: .venv/bin/python bench/loop_times.py MODEL.so [THREADS] [REPEAT]
Builds the tool with clang (clang-22 where present) against build/runtime/libkiln_runtime.a
($KILN_BUILD_DIR overrides build/).
"""
import os
import pathlib
import shutil
import subprocess
import sys
import tempfile

ROOT = pathlib.Path(__file__).resolve().parent.parent


def main():
    if len(sys.argv) < 2:
        sys.exit(__doc__)
    build = pathlib.Path(os.environ.get("KILN_BUILD_DIR", ROOT / "build"))
    runtime = build / "runtime/libkiln_runtime.a"
    if not runtime.exists():
        sys.exit(f"loop_times: {runtime} not found; build kiln first")
    with tempfile.TemporaryDirectory() as tmp:
        tool = pathlib.Path(tmp) / "loop_times"
        cc = shutil.which("clang-22") or shutil.which("clang") or "cc"
        subprocess.run([cc, "-O2", "-I", ROOT / "runtime/include",
                        "-I", ROOT / "runtime/src", ROOT / "bench/loop_times.c",
                        runtime, "-o", tool, "-ldl", "-lpthread", "-lm"], check=True)
        sys.exit(subprocess.run([tool, *sys.argv[1:]]).returncode)


if __name__ == "__main__":
    main()
