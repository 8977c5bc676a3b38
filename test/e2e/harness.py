"""Helpers for kiln's end-to-end tests: run the built tools, run onnxruntime, compare.

Nothing here imports pytest, so the module also serves scripts (see models.py --check).

Environment:
  KILN_BUILD_DIR        build folder holding bin/kiln (default: <repo>/build)
  KILN_MODELS_DIR       the reference models (default: <repo>/../shared/models)
  KILN_E2E_RUNNER       "kiln" (`kiln run`, default) or "kiln-run" (the runtime-only runner)
  KILN_E2E_JOBS         compiles run in the background ahead of the tests, this many at a
                        time (default: the number of CPUs, at most 2)
  KILN_E2E_TIMEOUT_SCALE  multiplies every time limit (default 1)
"""

from __future__ import annotations

import concurrent.futures
import dataclasses
import os
import shlex
import signal
import subprocess
import threading
import time
from pathlib import Path
from typing import Callable, Mapping, Sequence

import numpy as np

REPO = Path(__file__).resolve().parents[2]

# Tolerances of the comparison with onnxruntime (float outputs; others compare exactly).
RTOL = 1e-3
ATOL = 1e-4

# Time limits in seconds (before KILN_E2E_TIMEOUT_SCALE).
COMPILE_TIMEOUT_SMALL = 180
COMPILE_TIMEOUT_LARGE = 600
RUN_TIMEOUT = 120
ERROR_TIMEOUT = 60

# Text that shows a tool crashed or hit an internal error instead of reporting bad input.
CRASH_MARKERS = (
    "Stack dump",
    "PLEASE submit a bug report",
    "LLVM ERROR:",
    "UNREACHABLE executed",
    "Assertion `",
    "Segmentation fault",
    "terminate called",
    "core dumped",
    "AddressSanitizer",
    "Traceback (most recent call last)",
)


def _resolve(path: str | os.PathLike) -> Path:
    p = Path(path)
    return p if p.is_absolute() else (REPO / p)


def build_dir() -> Path:
    return _resolve(os.environ.get("KILN_BUILD_DIR", "build"))


def tool_path(name: str) -> Path:
    return build_dir() / "bin" / name


def models_dir() -> Path:
    return _resolve(os.environ.get("KILN_MODELS_DIR", "../shared/models")).resolve()


def timeout_scale() -> float:
    return float(os.environ.get("KILN_E2E_TIMEOUT_SCALE", "1"))


def _cpu_flags() -> set[str]:
    try:
        line = next(line for line in Path("/proc/cpuinfo").read_text().splitlines()
                    if line.startswith("flags"))
    except (OSError, StopIteration):
        return set()
    return set(line.split(":", 1)[1].split())


def host_has_avx512() -> bool:
    """The features of `--cpu x86-64-v4`."""
    return {"avx512f", "avx512bw", "avx512cd", "avx512dq", "avx512vl"} <= _cpu_flags()


def host_has_avx2() -> bool:
    """The vector features of `--cpu x86-64-v3`."""
    return {"avx2", "fma"} <= _cpu_flags()


def default_jobs() -> int:
    env = os.environ.get("KILN_E2E_JOBS")
    if env:
        return max(1, int(env))
    return max(1, min(2, os.cpu_count() or 1))


#===----------------------------------------------------------------------===//
# Running commands
#===----------------------------------------------------------------------===//


@dataclasses.dataclass
class Result:
    cmd: list[str]
    returncode: int | None  # None when it was killed for running past its limit
    stdout: str
    stderr: str
    seconds: float
    timeout: float

    @property
    def timed_out(self) -> bool:
        return self.returncode is None

    def describe(self, tail: int = 4000) -> str:
        if self.timed_out:
            status = f"killed after the {self.timeout:.0f} s limit"
        elif self.returncode < 0:
            try:
                name = signal.Signals(-self.returncode).name
            except ValueError:
                name = str(-self.returncode)
            status = f"killed by signal {name} (a crash)"
        else:
            status = f"exit code {self.returncode}"
        err = self.stderr if len(self.stderr) <= tail else "..." + self.stderr[-tail:]
        out = self.stdout if len(self.stdout) <= tail else "..." + self.stdout[-tail:]
        text = f"$ {shlex.join(self.cmd)}\n  -> {status} in {self.seconds:.1f} s\n"
        if err.strip():
            text += "--- stderr ---\n" + err.rstrip() + "\n"
        if out.strip():
            text += "--- stdout ---\n" + out.rstrip() + "\n"
        return text


def kill_group(proc: subprocess.Popen) -> None:
    try:
        os.killpg(proc.pid, signal.SIGKILL)
    except (ProcessLookupError, PermissionError):
        pass


def run_command(cmd: Sequence[str | os.PathLike], timeout: float, cwd=None,
                live: set | None = None) -> Result:
    """Runs cmd with a time limit; on expiry kills its whole process group (kiln may have
    started clang or lld). While it runs, the process is in `live` (if given)."""
    cmd = [str(c) for c in cmd]
    start = time.monotonic()
    proc = subprocess.Popen(cmd, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, cwd=cwd, start_new_session=True,
                            text=True, errors="replace")
    if live is not None:
        live.add(proc)
    try:
        out, err = proc.communicate(timeout=timeout)
        rc = proc.returncode
    except subprocess.TimeoutExpired:
        kill_group(proc)
        out, err = proc.communicate()
        rc = None
    finally:
        if live is not None:
            live.discard(proc)
    return Result(cmd, rc, out, err, time.monotonic() - start, timeout)


def crash_marker(text: str) -> str | None:
    for marker in CRASH_MARKERS:
        if marker in text:
            return marker
    return None


def check_clean_failure(result: Result, expect_any: Sequence[str], what: str) -> str | None:
    """The contract for bad input: a non-zero exit (not a signal), within the time limit,
    a message on stderr that mentions one of `expect_any` (case-insensitive), and no
    crash report. Returns None when met, else what went wrong."""
    if result.timed_out:
        return f"{what}: hung (killed after {result.timeout:.0f} s)\n" + result.describe()
    if result.returncode == 0:
        return f"{what}: exited 0 on bad input\n" + result.describe()
    if result.returncode < 0:
        return f"{what}: crashed\n" + result.describe()
    if not result.stderr.strip():
        return f"{what}: failed with no message on stderr\n" + result.describe()
    marker = crash_marker(result.stderr)
    if marker:
        return f"{what}: internal error or crash report ({marker!r}) instead of a diagnostic\n" + \
            result.describe()
    low = result.stderr.lower()
    if expect_any and not any(e.lower() in low for e in expect_any):
        return (f"{what}: the message mentions none of {list(expect_any)}\n" + result.describe())
    return None


#===----------------------------------------------------------------------===//
# kiln
#===----------------------------------------------------------------------===//


class ToolMissing(RuntimeError):
    pass


class Kiln:
    """The built kiln tools."""

    def __init__(self, bin_dir: Path | None = None, runner: str | None = None):
        self.bin_dir = bin_dir or (build_dir() / "bin")
        self.kiln = self.bin_dir / "kiln"
        self.runner = runner or os.environ.get("KILN_E2E_RUNNER", "kiln")
        if self.runner not in ("kiln", "kiln-run"):
            raise ValueError(f"KILN_E2E_RUNNER must be 'kiln' or 'kiln-run', not {self.runner!r}")

    def check(self) -> None:
        needed = [self.kiln] + ([self.bin_dir / "kiln-run"] if self.runner == "kiln-run" else [])
        for tool in needed:
            if not (tool.is_file() and os.access(tool, os.X_OK)):
                raise ToolMissing(
                    f"{tool} not found: build kiln first (bash scripts/setup.sh), or point "
                    f"KILN_BUILD_DIR at a build folder")

    def has_kiln_run(self) -> bool:
        return (self.bin_dir / "kiln-run").is_file()

    def compile_cmd(self, model: Path, out: Path, args: Sequence[str] = ()) -> list[str]:
        return [str(self.kiln), "compile", str(model), "-o", str(out), *args]

    def compile(self, model: Path, out: Path, args: Sequence[str] = (),
                timeout: float = COMPILE_TIMEOUT_SMALL, live: set | None = None) -> Result:
        return run_command(self.compile_cmd(model, out, args), timeout * timeout_scale(),
                           live=live)

    def run_cmd(self, artifact: Path, inputs: Mapping[str, Path], out_dir: Path,
                args: Sequence[str] = (), runner: str | None = None) -> list[str]:
        runner = runner or self.runner
        head = [str(self.kiln), "run"] if runner == "kiln" else [str(self.bin_dir / "kiln-run")]
        cmd = head + [str(artifact)]
        for name, path in inputs.items():
            cmd += ["--input", f"{name}={path}"]
        return cmd + ["--output-dir", str(out_dir), *args]

    def run(self, artifact: Path, inputs: Mapping[str, Path], out_dir: Path,
            args: Sequence[str] = (), runner: str | None = None,
            timeout: float = RUN_TIMEOUT) -> Result:
        return run_command(self.run_cmd(artifact, inputs, out_dir, args, runner),
                           timeout * timeout_scale())


@dataclasses.dataclass
class CompileSpec:
    """One artifact a test needs: `prepare(folder)` writes the model into a fresh folder
    and returns its path; the artifact is compiled from it with `args`."""
    key: str
    prepare: Callable[[Path], Path]
    args: tuple[str, ...] = ()
    timeout: float = COMPILE_TIMEOUT_SMALL


@dataclasses.dataclass
class Compiled:
    spec: CompileSpec
    model: Path | None
    artifact: Path
    result: Result | None  # None when prepare() failed
    error: str = ""

    @property
    def ok(self) -> bool:
        return self.result is not None and self.result.returncode == 0 and self.artifact.is_file()

    def failure(self) -> str:
        if self.result is None:
            return f"could not write the model for {self.spec.key}: {self.error}"
        if self.result.returncode == 0 and not self.artifact.is_file():
            return f"kiln compile exited 0 but wrote no {self.artifact}\n" + self.result.describe()
        return f"kiln compile failed for {self.spec.key}\n" + self.result.describe()


class CompileCache:
    """Compiles each artifact once per session; compiles can start ahead of the tests that
    need them (prefetch), `jobs` at a time."""

    def __init__(self, kiln: Kiln, work_dir: Path, jobs: int):
        self.kiln = kiln
        self.work_dir = work_dir
        self.pool = concurrent.futures.ThreadPoolExecutor(max_workers=jobs,
                                                          thread_name_prefix="kiln-compile")
        self.futures: dict[str, concurrent.futures.Future] = {}
        self.lock = threading.Lock()
        self.live: set = set()  # running kiln processes

    def _compile(self, spec: CompileSpec) -> Compiled:
        folder = self.work_dir / spec.key
        folder.mkdir(parents=True, exist_ok=True)
        artifact = folder / "model.so"
        try:
            model = spec.prepare(folder)
        except Exception as e:  # a bug in the test itself: report it on the test
            return Compiled(spec, None, artifact, None, f"{type(e).__name__}: {e}")
        result = self.kiln.compile(model, artifact, spec.args, spec.timeout, live=self.live)
        return Compiled(spec, model, artifact, result)

    def submit(self, spec: CompileSpec) -> concurrent.futures.Future:
        with self.lock:
            fut = self.futures.get(spec.key)
            if fut is None:
                fut = self.pool.submit(self._compile, spec)
                self.futures[spec.key] = fut
            return fut

    def get(self, spec: CompileSpec) -> Compiled:
        return self.submit(spec).result()

    def close(self) -> None:
        """Drops compiles nobody waited for (e.g. after pytest -x) and kills running ones."""
        self.pool.shutdown(wait=False, cancel_futures=True)
        for proc in list(self.live):
            kill_group(proc)
        self.pool.shutdown(wait=True)


#===----------------------------------------------------------------------===//
# onnxruntime and comparison
#===----------------------------------------------------------------------===//


def ort_run(model_path: Path, feeds: Mapping[str, np.ndarray]) -> dict[str, np.ndarray]:
    """Reference outputs from onnxruntime's CPU provider, graph optimizations off."""
    import onnxruntime as ort

    opts = ort.SessionOptions()
    opts.log_severity_level = 3
    opts.graph_optimization_level = ort.GraphOptimizationLevel.ORT_DISABLE_ALL
    opts.intra_op_num_threads = 1
    sess = ort.InferenceSession(str(model_path), opts, providers=["CPUExecutionProvider"])
    names = [o.name for o in sess.get_outputs()]
    return dict(zip(names, sess.run(names, dict(feeds))))


def save_inputs(feeds: Mapping[str, np.ndarray], folder: Path) -> dict[str, Path]:
    """Writes each input to folder/in<i>.npy (value names may hold any character)."""
    folder.mkdir(parents=True, exist_ok=True)
    paths = {}
    for i, (name, value) in enumerate(feeds.items()):
        path = folder / f"in{i}.npy"
        np.save(path, np.array(value, order="C"))  # ascontiguousarray makes 0-d 1-d
        paths[name] = path
    return paths


def load_outputs(out_dir: Path, names: Sequence[str]) -> dict[str, np.ndarray]:
    got = {}
    for name in names:
        path = out_dir / f"{name}.npy"
        if not path.is_file():
            present = sorted(p.name for p in out_dir.iterdir()) if out_dir.is_dir() else []
            raise AssertionError(f"kiln run wrote no {path} (the folder holds {present})")
        got[name] = np.load(path, allow_pickle=False)
    return got


def compare(name: str, got: np.ndarray, want: np.ndarray, rtol: float = RTOL,
            atol: float = ATOL) -> str | None:
    """None when `got` matches `want`, else a description of the difference."""
    if got.dtype != want.dtype:
        return f"output {name!r}: dtype {got.dtype}, onnxruntime gives {want.dtype}"
    if got.shape != want.shape:
        return f"output {name!r}: shape {got.shape}, onnxruntime gives {want.shape}"
    if np.issubdtype(want.dtype, np.floating):
        try:
            np.testing.assert_allclose(got, want, rtol=rtol, atol=atol, equal_nan=True)
        except AssertionError as e:
            return f"output {name!r} differs from onnxruntime (rtol {rtol}, atol {atol}):{e}"
    elif not np.array_equal(got, want):
        bad = np.argwhere(got != want)
        idx = tuple(bad[0]) if bad.size else ()
        return (f"output {name!r}: {len(bad)} of {want.size} elements differ from onnxruntime; "
                f"first at {idx}: {got[idx]!r} vs {want[idx]!r}")
    return None


def run_and_compare(kiln: Kiln, compiled: Compiled, feeds: Mapping[str, np.ndarray],
                    work: Path, reference: Mapping[str, np.ndarray] | None = None,
                    rtol: float = RTOL, atol: float = ATOL, args: Sequence[str] = (),
                    runner: str | None = None) -> None:
    """Runs the compiled model on `feeds` and compares every output with onnxruntime's;
    raises AssertionError naming what went wrong."""
    if not compiled.ok:
        raise AssertionError(compiled.failure())
    if reference is None:
        reference = ort_run(compiled.model, feeds)
    inputs = save_inputs(feeds, work / "inputs")
    out_dir = work / "outputs"
    out_dir.mkdir(parents=True, exist_ok=True)
    result = kiln.run(compiled.artifact, inputs, out_dir, args, runner)
    if result.returncode != 0:
        raise AssertionError("kiln run failed\n" + result.describe())
    got = load_outputs(out_dir, list(reference))
    problems = [p for n in reference
                if (p := compare(n, got[n], reference[n], rtol, atol)) is not None]
    if problems:
        raise AssertionError("\n".join(problems) + f"\n(files in {work})")


#===----------------------------------------------------------------------===//
# Registry of what the tests compile (so that compiles can start early)
#===----------------------------------------------------------------------===//

SPECS: dict[str, CompileSpec] = {}


def register(spec: CompileSpec) -> CompileSpec:
    old = SPECS.get(spec.key)
    if old is not None and (old.args != spec.args):
        raise ValueError(f"two different compile specs named {spec.key!r}")
    SPECS[spec.key] = spec
    return spec
