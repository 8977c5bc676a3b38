#!/usr/bin/env python3
"""kiln vs onnxruntime benchmark suite: compile time, artifact size, start-up, latency, memory.

    .venv/bin/python bench/bench.py resnet50            # one model of the suite
    .venv/bin/python bench/bench.py --all               # the whole suite (22 models)
    .venv/bin/python bench/bench.py --all --docs        # ... and rewrite docs/benchmarks.md
    .venv/bin/python bench/bench.py --model tiny=/path/model.onnx   # any ONNX file

Runs in .venv (onnxruntime and numpy pinned by requirements.txt). Exporting the PyTorch
models and drawing the chart use .venv-bench (scripts/setup-bench.sh); without it the
exported models are failure rows and the chart is skipped (said in the output).

For each model, in one process, one model at a time:
  1. compile with build/bin/kiln (copied with kiln-run to bench/_work/bin-HASH/ at the start,
     so one run uses one kiln even if build/ is rebuilt meanwhile; compiles are cached in
     bench/_work/cache/, keyed by the model's sha256, the kiln binary's sha256 and the
     compile arguments; --recompile ignores the cache);
  2. start-up: kiln = from starting a `kiln-run MODEL.so --inspect` process to its model
     being opened and ready (the time it reports, on the same monotonic clock; its exit is
     left out; timed by bench/spawn_ready.c, a small C launcher, so this process's own
     state does not count; all kiln starts, then all session creations; one thread), and
     in brackets kiln_model_open alone as that process reports it (in-process, like
     onnxruntime's figure); onnxruntime = InferenceSession creation in this process;
     median of --startup-runs after one untimed run of each;
  3. latency at each --threads count: after warm-up, --rounds rounds, each one kiln-run
     process (one warm-up run, then --repeat timed runs, outputs written) followed by the
     same number of timed onnxruntime runs on the same inputs; the round's kiln outputs are
     compared with onnxruntime's (rtol 1e-3, atol 1e-4) and the ratio kiln/onnxruntime is
     reported only if every round at that thread count matched;
  4. peak RSS of a process that loads the model and runs it 10 times: kiln-run (C++) and
     a Python process running onnxruntime; each also minus its own baseline process
     (kiln-run that exits before loading a model; Python that imports numpy + onnxruntime
     and reads the inputs but creates no session).
With --dynamic, each model is also compiled with dim 0 of its inputs (and of the outputs
of that size) symbolic (docs/dynamic-shapes.md), run in the same rounds at the bench size
right before or after kiln (alternating), and reported as kiln-dynamic ms and dynamic /
static in a table of its own.
Writes results.json, results.md and ratios.png (kiln/onnxruntime latency) to --out.
"""
from __future__ import annotations

import argparse
import copy
import datetime
import hashlib
import json
import math
import os
import pathlib
import platform
import re
import shlex
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
import traceback

import numpy as np

HERE = pathlib.Path(__file__).resolve().parent
ROOT = HERE.parent
RTOL, ATOL = 1e-3, 1e-4


def _env_path(var: str, default: pathlib.Path) -> pathlib.Path:
    p = pathlib.Path(os.environ.get(var, str(default)))
    return p if p.is_absolute() else (ROOT / p)


# The suite: name -> where the ONNX file comes from.
#   ("export", NAME): bench/export_models.py NAME (PyTorch, opset 17, seeded)
#   ("shared", FILE): the reference models in $KILN_MODELS_DIR (../shared/models)
SUITE = {
    "resnet50": ("export", "resnet50"),
    "mobilenet_v2": ("export", "mobilenet_v2"),
    "bert_base": ("export", "bert_base"),
    "bert_mini": ("shared", "bert_mini.onnx"),
    "mobilenet_v2_shared": ("shared", "mobilenet_v2.onnx"),
    "squeezenet1_1": ("shared", "squeezenet1_1.onnx"),
    # The architecture suite of issue 21 (bench/README.md, "The suite").
    **{name: ("export", name) for name in (
        "mobilenet_v3_small", "efficientnet_b0", "densenet121", "shufflenet_v2", "resnext50",
        "regnet_y_400mf", "convnext_tiny", "googlenet", "inception_v3", "vit_b_16", "swin_t",
        "distilbert", "gpt_decoder", "llama_decoder", "lstm", "gru")},
}


class StageError(Exception):
    """A model failed at one stage; becomes a failure row, never aborts the suite."""

    def __init__(self, stage: str, message: str, command: list[str] | None = None):
        super().__init__(f"{stage}: {message}")
        self.stage, self.message, self.command = stage, message, command


def tail(text: str, lines: int = 25, chars: int = 4000) -> str:
    text = "\n".join(text.strip().splitlines()[-lines:])
    return text[-chars:]


TIME = "/usr/bin/time"


def address_space_limit(gib: float | None):
    """A preexec_fn capping the child's address space (RLIMIT_AS) at GIB GiB, or None."""
    if not gib:
        return None
    import resource
    limit = int(gib * 2**30)

    def apply():
        resource.setrlimit(resource.RLIMIT_AS, (limit, limit))
    return apply


def _vm_hwm_kb(pid: int) -> int | None:
    try:
        m = re.search(r"^VmHWM:\s*(\d+) kB", pathlib.Path(f"/proc/{pid}/status").read_text(), re.M)
        return int(m.group(1)) if m else None
    except OSError:
        return None


def peak_rss_kb(cmd, timeout: float, cpu: dict | None = None,
                **kw) -> tuple[int | None, str, str, float, int]:
    """Runs CMD to completion: (peak RSS in KiB, stdout, stderr, wall s, exit code). With
    CPU (a dict), sets CPU["seconds"] to the process's user + system CPU time (GNU time's
    %U + %S, children included; without GNU time, this process's reaped-children rusage).

    The peak comes from GNU time (/usr/bin/time -f %M), not from wait4() here: on Linux a
    child started from this Python process starts with this process's high-water RSS, which
    would hide a small process's own peak. Without /usr/bin/time, the child's VmHWM is polled
    from /proc every 2 ms instead (the last few ms before exit can be missed)."""
    cmd = [str(c) for c in cmd]
    use_time = os.path.exists(TIME)
    with tempfile.NamedTemporaryFile("r", suffix=".rss") as rss_file, \
            tempfile.TemporaryFile("w+") as fo, tempfile.TemporaryFile("w+") as fe:
        full = ([TIME, "-f", "%U %S %M", "-o", rss_file.name] if use_time else []) + cmd
        import resource
        usage0 = resource.getrusage(resource.RUSAGE_CHILDREN)
        start = time.perf_counter()
        proc = subprocess.Popen(full, stdout=fo, stderr=fe, text=True,
                                start_new_session=True, **kw)
        polled = None
        while proc.poll() is None:
            if time.perf_counter() - start > timeout:
                os.killpg(proc.pid, 9)
                proc.wait()
                raise TimeoutError(f"timed out after {timeout:.0f} s: {shlex.join(cmd)}")
            if not use_time:
                hwm = _vm_hwm_kb(proc.pid)
                if hwm is not None and (polled is None or hwm > polled):
                    polled = hwm
            time.sleep(0.002 if not use_time else 0.01)
        wall = time.perf_counter() - start
        fo.seek(0)
        fe.seek(0)
        out, err = fo.read(), fe.read()
        cpu_s = None
        if use_time:
            lines = rss_file.read().split()
            rss = int(lines[-1]) if lines and lines[-1].isdigit() else None
            try:
                cpu_s = float(lines[-3]) + float(lines[-2])
            except (IndexError, ValueError):
                pass
        else:
            rss = polled
            usage1 = resource.getrusage(resource.RUSAGE_CHILDREN)
            cpu_s = (usage1.ru_utime - usage0.ru_utime) + (usage1.ru_stime - usage0.ru_stime)
        if cpu is not None:
            cpu["seconds"] = None if cpu_s is None else round(cpu_s, 2)
    return rss, out, err, wall, proc.returncode


#===----------------------------------------------------------------------===#
# Configuration and machine
#===----------------------------------------------------------------------===#

class Config:
    def __init__(self, args):
        self.build = _env_path("KILN_BUILD_DIR", ROOT / "build") if args.build is None \
            else pathlib.Path(args.build).resolve()
        self.kiln = self.build / "bin" / "kiln"
        self.kiln_run = self.build / "bin" / "kiln-run"
        self.models_dir = (pathlib.Path(args.models_dir) if args.models_dir else
                           _env_path("KILN_MODELS_DIR", ROOT / ".." / "shared" / "models")).resolve()
        self.work = pathlib.Path(args.work).resolve()
        self.export_dir = self.work / "models"
        self.cache = self.work / "cache"
        self.bench_python = pathlib.Path(os.environ.get("KILN_BENCH_PYTHON",
                                                        str(ROOT / ".venv-bench" / "bin" / "python")))
        self.threads = [int(t) for t in args.threads.split(",")]
        self.rounds = args.rounds
        self.repeat = args.repeat
        self.round_seconds = args.round_seconds
        self.startup_runs = args.startup_runs
        self.compile_timeout = args.compile_timeout
        self.compile_mem_gib = args.compile_mem_gib
        self.run_timeout = args.run_timeout
        self.recompile = args.recompile
        self.compile_only = args.compile_only
        self.seed = args.seed
        self.chart = not args.no_chart
        # Also the model compiled with a symbolic batch, timed in the same rounds.
        self.dynamic = getattr(args, "dynamic", False)
        # Another kiln build (e.g. main before a change) timed in the same rounds.
        self.baseline = None
        if getattr(args, "baseline_build", None):
            base = copy.copy(self)
            base.build = pathlib.Path(args.baseline_build).resolve()
            base.kiln = base.build / "bin" / "kiln"
            base.kiln_run = base.build / "bin" / "kiln-run"
            base.baseline = None
            self.baseline = base


def machine_info() -> dict:
    info = {"hostname": platform.node(), "kernel": platform.release(),
            "python": platform.python_version(), "cores": os.cpu_count()}
    try:
        cpuinfo = pathlib.Path("/proc/cpuinfo").read_text()
        m = re.search(r"^model name\s*:\s*(.+)$", cpuinfo, re.M)
        info["cpu"] = m.group(1).strip() if m else platform.processor()
        fam = re.search(r"^cpu family\s*:\s*(\d+)$", cpuinfo, re.M)
        mod = re.search(r"^model\s*:\s*(\d+)$", cpuinfo, re.M)
        if fam and mod:
            info["cpu_family_model"] = f"family {fam.group(1)}, model {mod.group(1)}"
        flags = re.search(r"^flags\s*:\s*(.+)$", cpuinfo, re.M)
        if flags:
            fl = flags.group(1).split()
            info["simd"] = [f for f in ("avx2", "fma", "avx512f", "avx512_vnni", "avx512_bf16")
                            if f in fl]
        meminfo = pathlib.Path("/proc/meminfo").read_text()
        m = re.search(r"^MemTotal:\s*(\d+) kB", meminfo, re.M)
        info["memory_gib"] = round(int(m.group(1)) / 2**20, 1) if m else None
        hv = subprocess.run(["lscpu"], capture_output=True, text=True).stdout
        m = re.search(r"^Hypervisor vendor:\s*(.+)$", hv, re.M)
        if m:
            info["hypervisor"] = m.group(1).strip()
    except OSError:
        pass
    import onnxruntime as ort
    info["onnxruntime"] = ort.__version__
    info["numpy"] = np.__version__
    try:
        info["kiln_commit"] = subprocess.run(["git", "-C", str(ROOT), "rev-parse", "--short", "HEAD"],
                                             capture_output=True, text=True).stdout.strip()
    except OSError:
        pass
    return info


def loadavg() -> list[float]:
    try:
        return [float(x) for x in pathlib.Path("/proc/loadavg").read_text().split()[:3]]
    except OSError:
        return []


#===----------------------------------------------------------------------===#
# Stages
#===----------------------------------------------------------------------===#

def resolve_model(cfg: Config, name: str, source) -> pathlib.Path:
    kind, what = source
    if kind == "file":
        path = pathlib.Path(what)
        if not path.is_file():
            raise StageError("model", f"{path} not found")
        return path.resolve()
    if kind == "shared":
        path = cfg.models_dir / what
        if not path.is_file():
            raise StageError("model", f"{path} not found (set KILN_MODELS_DIR or --models-dir)")
        return path
    path = cfg.export_dir / f"{what}.onnx"
    if path.is_file():
        return path
    if not cfg.bench_python.exists():
        raise StageError("export", f"{path} is missing and {cfg.bench_python} does not exist: "
                         f"run scripts/setup-bench.sh (or set KILN_BENCH_PYTHON)")
    cmd = [cfg.bench_python, HERE / "export_models.py", "--out", cfg.export_dir, what]
    print(f"  exporting: {shlex.join(map(str, cmd))}", flush=True)
    r = subprocess.run([str(c) for c in cmd], capture_output=True, text=True)
    if r.returncode != 0 or not path.is_file():
        raise StageError("export", tail(r.stderr or r.stdout), [str(c) for c in cmd])
    return path


def sha256(path: pathlib.Path) -> str:
    h = hashlib.sha256()
    with open(path, "rb") as f:
        for chunk in iter(lambda: f.read(1 << 20), b""):
            h.update(chunk)
    return h.hexdigest()


def snapshot_tools(cfg: Config) -> None:
    """Copies build/bin/kiln and kiln-run to WORK/bin-HASH/ and uses the copies, so that the
    whole run uses one kiln even if build/ is rebuilt meanwhile (kiln finds its runtime
    headers in the source tree when not installed). HASH: sha256 of the kiln binary."""
    cfg.kiln_build_mtime = datetime.datetime.fromtimestamp(
        cfg.kiln.stat().st_mtime, datetime.timezone.utc).isoformat(timespec="seconds")
    cfg.kiln_sha256 = sha256(cfg.kiln)
    folder = cfg.work / f"bin-{cfg.kiln_sha256[:16]}-{sha256(cfg.kiln_run)[:8]}"
    if cfg.kiln.parent.parent == folder:  # --build names a snapshot already
        return
    if not (folder / "bin" / "kiln-run").is_file():
        tmp = folder.with_name(folder.name + ".tmp")
        shutil.rmtree(tmp, ignore_errors=True)
        (tmp / "bin").mkdir(parents=True)
        shutil.copy2(cfg.kiln, tmp / "bin" / "kiln")
        shutil.copy2(cfg.kiln_run, tmp / "bin" / "kiln-run")
        shutil.rmtree(folder, ignore_errors=True)
        tmp.rename(folder)
    cfg.kiln, cfg.kiln_run = folder / "bin" / "kiln", folder / "bin" / "kiln-run"


def symbolic_batch_model(cfg: Config, name: str, model: pathlib.Path, digest: str) -> pathlib.Path:
    """MODEL with dim 0 of its inputs symbolic ("batch"): every graph input whose dim 0 has
    the first such input's size, and every output whose dim 0 has that size too; the
    intermediate value_info shapes dropped (kiln infers them). Written once to
    WORK/dynamic/NAME-DIGEST.onnx."""
    import onnx
    out = cfg.work / "dynamic" / f"{name}-{digest[:16]}.onnx"
    if out.is_file():
        return out
    m = onnx.load(str(model))
    weights = {t.name for t in m.graph.initializer}
    size = None
    changed = 0
    for is_input, values in ((True, m.graph.input), (False, m.graph.output)):
        for v in values:
            if v.name in weights or not v.type.HasField("tensor_type"):
                continue
            dims = v.type.tensor_type.shape.dim
            if not dims or not dims[0].HasField("dim_value"):
                continue
            if size is None and is_input:
                size = dims[0].dim_value
            if size is not None and dims[0].dim_value == size:
                dims[0].dim_param = "batch"  # clears dim_value (a oneof)
                changed += is_input
    if not changed:
        raise StageError("dynamic", "no input with a static dim 0 to make symbolic")
    del m.graph.value_info[:]
    out.parent.mkdir(parents=True, exist_ok=True)
    tmp = out.with_suffix(".tmp")
    onnx.save(m, str(tmp))
    tmp.rename(out)
    return out


def compile_model(cfg: Config, name: str, model: pathlib.Path, digest: str) -> dict:
    """Compiles MODEL with kiln, or reuses the cached result (success or failure)."""
    args: list[str] = []
    key_text = json.dumps([digest, cfg.kiln_sha256, args])
    key = hashlib.sha256(key_text.encode()).hexdigest()[:16]
    folder = cfg.cache / f"{name}-{key}"
    record_path = folder / "compile.json"
    so = folder / f"{name}.so"
    if record_path.is_file() and not cfg.recompile:
        record = json.loads(record_path.read_text())
        # A failure for want of time or memory is retried when more is given.
        retry = not record["ok"] and (
            (record.get("timed_out") and record.get("timeout_s", 0) < cfg.compile_timeout)
            or (record.get("mem_limit_gib") or 1e9) < (cfg.compile_mem_gib or 1e9))
        if not retry and (not record["ok"] or so.is_file()):
            record["cached"] = True
            print(f"  compile: cached ({folder})", flush=True)
            return record
    folder.mkdir(parents=True, exist_ok=True)
    cmd = [str(cfg.kiln), "compile", str(model), "-o", str(so), *args]
    print(f"  compile: {shlex.join(cmd)}", flush=True)
    record = {"command": cmd, "kiln_sha256": cfg.kiln_sha256,
              "kiln_build_mtime": cfg.kiln_build_mtime, "model_sha256": digest,
              "timeout_s": cfg.compile_timeout, "mem_limit_gib": cfg.compile_mem_gib,
              "date": datetime.datetime.now(datetime.timezone.utc).isoformat(timespec="seconds")}
    try:
        cpu: dict = {}
        rss, out, err, wall, rc = peak_rss_kb(cmd, cfg.compile_timeout, cpu=cpu,
                                              preexec_fn=address_space_limit(cfg.compile_mem_gib))
        record.update(ok=rc == 0 and so.is_file(), seconds=round(wall, 2),
                      cpu_seconds=cpu.get("seconds"),
                      peak_rss_mb=round(rss / 1024, 1) if rss else None, returncode=rc)
        if not record["ok"]:
            record["error"] = tail(err or out)
            if rc < 0 or rc > 128:
                # Killed or aborted (134 = SIGABRT, e.g. LLVM's "out of memory" at the
                # address-space limit; 137 = SIGKILL, e.g. the OOM killer).
                record["error"] = (f"kiln exited with status {rc} (peak RSS "
                                   f"{record['peak_rss_mb']} MB, address-space limit "
                                   f"{cfg.compile_mem_gib} GiB)\n" + record["error"]).strip()
    except TimeoutError as e:
        record.update(ok=False, timed_out=True, error=str(e))
    record_path.write_text(json.dumps(record, indent=1))
    record["cached"] = False
    prune_cache(cfg, name, keep=folder)
    return record


def prune_cache(cfg: Config, name: str, keep: pathlib.Path, count: int = 2) -> None:
    """Keeps the COUNT newest cache entries of model NAME (artifacts reach 400+ MB)."""
    entries = sorted((d for d in cfg.cache.glob(f"{name}-*")
                      if d.is_dir() and re.fullmatch(re.escape(name) + r"-[0-9a-f]{16}", d.name)),
                     key=lambda d: d.stat().st_mtime, reverse=True)
    for d in [e for e in entries if e != keep][count - 1:]:
        shutil.rmtree(d, ignore_errors=True)


def make_inputs(session, seed: int) -> dict[str, np.ndarray]:
    """Seeded inputs: floats standard normal, token ids in [0, 1000), masks 1 with the last
    eighth 0 (padding), other integers in [0, 100), bools 0/1."""
    rng = np.random.default_rng(seed)
    feeds = {}
    for i in session.get_inputs():
        shape = list(i.shape)
        if any(not isinstance(d, int) for d in shape):
            raise StageError("inputs", f"input {i.name} has dynamic shape {shape}")
        t = i.type
        if t == "tensor(float)":
            feeds[i.name] = rng.standard_normal(shape).astype(np.float32)
        elif t in ("tensor(int64)", "tensor(int32)"):
            dtype = np.int64 if t == "tensor(int64)" else np.int32
            if "mask" in i.name.lower():
                a = np.ones(shape, dtype)
                if shape and shape[-1] >= 8:
                    a[..., shape[-1] - shape[-1] // 8:] = 0
                feeds[i.name] = a
            elif "id" in i.name.lower():
                feeds[i.name] = rng.integers(0, 1000, size=shape, dtype=dtype)
            else:
                feeds[i.name] = rng.integers(0, 100, size=shape, dtype=dtype)
        elif t == "tensor(bool)":
            feeds[i.name] = rng.integers(0, 2, size=shape).astype(bool)
        else:
            raise StageError("inputs", f"input {i.name}: type {t} not handled by the harness")
    return feeds


def ort_session(path: pathlib.Path, threads: int):
    import onnxruntime as ort
    so = ort.SessionOptions()
    so.graph_optimization_level = ort.GraphOptimizationLevel.ORT_ENABLE_ALL
    so.intra_op_num_threads = threads
    so.inter_op_num_threads = 1
    so.execution_mode = ort.ExecutionMode.ORT_SEQUENTIAL
    return ort.InferenceSession(str(path), so, providers=["CPUExecutionProvider"])


def compare(outputs: dict, names: list[str], expected: list[np.ndarray]) -> dict:
    """Max abs error, max rel error (|k - o| / max(|o|, atol)), and allclose over all outputs."""
    abs_err = rel_err = scale = 0.0
    ok = True
    problems = []
    for n, want in zip(names, expected):
        got = outputs.get(n)
        if got is None:
            ok = False
            problems.append(f"output {n} missing")
            continue
        if got.shape != want.shape:
            ok = False
            problems.append(f"output {n}: shape {got.shape} vs {want.shape}")
            continue
        g, w = got.astype(np.float64), want.astype(np.float64)
        if not np.all(np.isfinite(g)) and np.all(np.isfinite(w)):
            problems.append(f"output {n}: kiln produced non-finite values")
        d = np.abs(g - w)
        if d.size:
            abs_err = max(abs_err, float(np.nanmax(d)))
            scale = max(scale, float(np.max(np.abs(w))))
            rel_err = max(rel_err, float(np.nanmax(d / np.maximum(np.abs(w), ATOL))))
        if not np.allclose(got, want, rtol=RTOL, atol=ATOL):
            ok = False
            problems.append(f"output {n}: not within rtol {RTOL}, atol {ATOL}")
    return {"match": ok, "max_abs_err": abs_err, "max_rel_err": rel_err, "ort_max_abs": scale,
            "problems": problems}


LAT_RE = re.compile(r"latency_ms median=([0-9.]+) min=([0-9.]+) max=([0-9.]+) \((\d+) runs, (\d+) threads\)")


def kiln_run_cmd(cfg: Config, so: pathlib.Path, input_files: dict, threads: int) -> list[str]:
    cmd = [str(cfg.kiln_run), str(so), "--threads", str(threads)]
    for k, p in input_files.items():
        cmd += ["--input", f"{k}={p}"]
    return cmd


def load_kiln_outputs(out_dir: pathlib.Path, names: list[str]) -> dict:
    # kiln-run writes DIR/NAME.npy with NAME made file-name safe.
    res = {}
    for n in names:
        p = out_dir / f"{n}.npy"
        if not p.is_file():
            safe = re.sub(r"[^A-Za-z0-9_.-]", "_", n)
            p = out_dir / f"{safe}.npy"
        if p.is_file():
            res[n] = np.load(p)
    return res


def spawn_ready_tool(cfg) -> pathlib.Path:
    """bench/spawn_ready.c, built once (its name carries the source's hash): it
    times process start to model ready from a small process of its own."""
    src = HERE / "spawn_ready.c"
    tool = cfg.work / f"spawn_ready-{hashlib.sha256(src.read_bytes()).hexdigest()[:12]}"
    if not tool.exists():
        cc = shutil.which("clang-22") or shutil.which("clang") or shutil.which("cc")
        if not cc:
            raise StageError("startup", "no C compiler (clang-22, clang or cc) to build "
                             f"{src}: run scripts/setup.sh")
        cfg.work.mkdir(parents=True, exist_ok=True)
        cmd = [cc, "-O2", str(src), "-o", str(tool)]
        r = subprocess.run(cmd, capture_output=True, text=True)
        if r.returncode != 0:
            raise StageError("startup", tail(r.stderr), cmd)
    return tool


def measure_startup(cfg, so, path, result):
    ready_times, process_times, open_times, floor_times, ort_times = [], [], [], [], []
    launcher = str(spawn_ready_tool(cfg))

    def spawn(cmd):
        r = subprocess.run([launcher, *cmd], capture_output=True, text=True,
                           timeout=cfg.run_timeout)
        if r.returncode != 0:
            raise StageError("startup", tail(r.stderr), cmd)
        return {k: float(v) for k, v in re.findall(r"^(\w+_ms): ([0-9.]+)$", r.stdout, re.M)}

    # One thread, like the onnxruntime session timed below (more threads: each
    # engine also creates its pool's threads).
    cmd = [str(cfg.kiln_run), str(so), "--inspect", "--threads", "1"]
    for i in range(cfg.startup_runs + 1):
        times = spawn(cmd)
        floor = spawn([launcher, "--ready"])  # a minimal C program's start
        if i:
            ready_times.append(times["spawn_ready_ms"])
            process_times.append(times["spawn_exit_ms"])
            open_times.append(times["open_ms"])
            floor_times.append(floor["spawn_ready_ms"])
    # onnxruntime's session creations after kiln's starts, not between them: a
    # kiln process started right after a session creation (caches full of
    # onnxruntime's data) took 0.2-0.3 ms longer than one after another kiln
    # process, which is how onnxruntime's repeated creations are timed.
    for i in range(cfg.startup_runs + 1):
        start = time.perf_counter()
        s = ort_session(path, 1)
        t = (time.perf_counter() - start) * 1e3
        del s
        if i:
            ort_times.append(t)
    result["startup_ms"] = {
        "kiln": round(statistics.median(ready_times), 2),
        "kiln_min": round(min(ready_times), 2), "kiln_max": round(max(ready_times), 2),
        "kiln_process": round(statistics.median(process_times), 2),
        "kiln_open": round(statistics.median(open_times), 3),
        # The part of kiln's figure that any process pays on this machine.
        "process_floor": round(statistics.median(floor_times), 3),
        "ort": round(statistics.median(ort_times), 2),
        "ort_min": round(min(ort_times), 2), "ort_max": round(max(ort_times), 2),
        "runs": cfg.startup_runs}


def measure_latency(cfg, so, path, feeds, input_files, tmp, result, base_so=None, dyn_so=None):
    names = None
    result["latency"] = {}
    for threads in cfg.threads:
        sess = ort_session(path, threads)
        names = [o.name for o in sess.get_outputs()]
        # Warm-up (and timing estimate) for both.
        for _ in range(2):
            t0 = time.perf_counter()
            sess.run(None, feeds)
            ort_est = time.perf_counter() - t0
        base = kiln_run_cmd(cfg, so, input_files, threads)
        r = subprocess.run(base + ["--repeat", "1"], capture_output=True, text=True,
                           timeout=cfg.run_timeout)
        if r.returncode != 0:
            raise StageError("run", tail(r.stderr), base + ["--repeat", "1"])
        kiln_est = float(LAT_RE.search(r.stdout).group(1)) / 1e3
        if cfg.repeat:
            repeat = cfg.repeat
        else:
            repeat = int(min(50, max(5, cfg.round_seconds / max(kiln_est, ort_est, 1e-6))))
        rounds = []
        def run_baseline(rnd):
            """The --baseline-build kiln-run's round: (median ms, its output folder)."""
            base_dir = tmp / f"base-t{threads}-r{rnd}"
            bcmd = (kiln_run_cmd(cfg.baseline, base_so, input_files, threads)
                    + ["--repeat", str(repeat), "--output-dir", str(base_dir)])
            br = subprocess.run(bcmd, capture_output=True, text=True, timeout=cfg.run_timeout)
            if br.returncode != 0:
                raise StageError("run (baseline)", tail(br.stderr), bcmd)
            bm = LAT_RE.search(br.stdout)
            if not bm:
                raise StageError("run (baseline)", "no latency line:\n" + tail(br.stdout), bcmd)
            return float(bm.group(1)), base_dir

        def run_dynamic(rnd):
            """The symbolic-batch model's round (same kiln-run): (median ms, its output
            folder), or None once it has failed (its error goes to the result)."""
            if "dynamic_error" in result:
                return None
            dyn_dir = tmp / f"dyn-t{threads}-r{rnd}"
            dcmd = (kiln_run_cmd(cfg, dyn_so, input_files, threads)
                    + ["--repeat", str(repeat), "--output-dir", str(dyn_dir)])
            dr = subprocess.run(dcmd, capture_output=True, text=True, timeout=cfg.run_timeout)
            dm = LAT_RE.search(dr.stdout) if dr.returncode == 0 else None
            if not dm:
                result["dynamic_error"] = (f"{shlex.join(dcmd)}\n"
                                           + tail(dr.stderr if dr.returncode else dr.stdout))
                print(f"  dynamic run FAILED: {tail(dr.stderr or dr.stdout, 6)}", flush=True)
                return None
            return float(dm.group(1)), dyn_dir

        for rnd in range(cfg.rounds):
            out_dir = tmp / f"out-t{threads}-r{rnd}"
            base_round = None
            # The baseline goes first in odd rounds, so neither build always
            # runs right after the other's process (caches, frequency).
            if base_so is not None and rnd % 2 == 1:
                base_round = run_baseline(rnd)
            dyn_round = None
            if dyn_so is not None and rnd % 2 == 1:
                dyn_round = run_dynamic(rnd)
            cmd = base + ["--repeat", str(repeat), "--output-dir", str(out_dir)]
            r = subprocess.run(cmd, capture_output=True, text=True, timeout=cfg.run_timeout)
            if r.returncode != 0:
                raise StageError("run", tail(r.stderr), cmd)
            m = LAT_RE.search(r.stdout)
            if not m:
                raise StageError("run", "no latency line in kiln-run's output:\n" + tail(r.stdout), cmd)
            k_med, k_min, k_max = (float(m.group(i)) for i in (1, 2, 3))
            kiln_threads = int(m.group(5))
            if dyn_so is not None and rnd % 2 == 0:
                dyn_round = run_dynamic(rnd)
            if base_so is not None and rnd % 2 == 0:
                base_round = run_baseline(rnd)
            times = []
            expected = None
            sess.run(None, feeds)  # one untimed run per round, as kiln-run does
            for _ in range(repeat):
                t0 = time.perf_counter()
                expected = sess.run(None, feeds)
                times.append((time.perf_counter() - t0) * 1e3)
            cmp = compare(load_kiln_outputs(out_dir, names), names, expected)
            rounds.append({"kiln_median": k_med, "kiln_min": k_min, "kiln_max": k_max,
                           "ort_median": statistics.median(times), "ort_min": min(times),
                           "ort_max": max(times), **cmp})
            if base_round is not None:
                bcmp = compare(load_kiln_outputs(base_round[1], names), names, expected)
                rounds[-1].update(base_median=base_round[0], base_match=bcmp["match"])
                shutil.rmtree(base_round[1], ignore_errors=True)
            if dyn_round is not None:
                dcmp = compare(load_kiln_outputs(dyn_round[1], names), names, expected)
                rounds[-1].update(dyn_median=dyn_round[0], dyn_match=dcmp["match"],
                                  dyn_problems=dcmp["problems"])
                shutil.rmtree(dyn_round[1], ignore_errors=True)
            shutil.rmtree(out_dir, ignore_errors=True)
        del sess
        k = statistics.median(r_["kiln_median"] for r_ in rounds)
        o = statistics.median(r_["ort_median"] for r_ in rounds)
        matched = all(r_["match"] for r_ in rounds)
        # The ratio pairs each kiln round with the onnxruntime round right after it (same
        # machine load), then takes the median over rounds.
        round_ratios = [r_["kiln_median"] / r_["ort_median"] for r_ in rounds]
        ratio = statistics.median(round_ratios)
        entry = {
            "repeat": repeat, "rounds": cfg.rounds, "kiln_threads_reported": kiln_threads,
            "kiln_ms": k, "kiln_min_ms": min(r_["kiln_min"] for r_ in rounds),
            "kiln_max_ms": max(r_["kiln_max"] for r_ in rounds),
            "ort_ms": o, "ort_min_ms": min(r_["ort_min"] for r_ in rounds),
            "ort_max_ms": max(r_["ort_max"] for r_ in rounds),
            "round_ratios": [round(x, 3) for x in round_ratios],
            "ratio_of_medians": round(k / o, 3),
            "matched": matched,
            "ratio": round(ratio, 3) if matched else None,
            "ratio_min": round(min(round_ratios), 3), "ratio_max": round(max(round_ratios), 3),
            "max_abs_err": max(r_["max_abs_err"] for r_ in rounds),
            "max_rel_err": max(r_["max_rel_err"] for r_ in rounds),
            "ort_max_abs": max(r_["ort_max_abs"] for r_ in rounds),
        }
        if base_so is not None:
            # kiln / baseline kiln: each round's two kiln-run processes ran back to back
            # (in alternating order).
            base_ratios = [r_["kiln_median"] / r_["base_median"] for r_ in rounds]
            both = matched and all(r_["base_match"] for r_ in rounds)
            entry["baseline"] = {
                "ms": statistics.median(r_["base_median"] for r_ in rounds),
                "matched": all(r_["base_match"] for r_ in rounds),
                "round_ratios": [round(x, 3) for x in base_ratios],
                "ratio": round(statistics.median(base_ratios), 3) if both else None}
        if dyn_so is not None and all("dyn_median" in r_ for r_ in rounds):
            # dynamic / static: each round's two kiln-run processes ran back to back (in
            # alternating order), at the same size.
            dyn_ratios = [r_["dyn_median"] / r_["kiln_median"] for r_ in rounds]
            both = matched and all(r_["dyn_match"] for r_ in rounds)
            entry["dynamic"] = {
                "ms": statistics.median(r_["dyn_median"] for r_ in rounds),
                "matched": all(r_["dyn_match"] for r_ in rounds),
                "round_ratios": [round(x, 3) for x in dyn_ratios],
                "ratio": round(statistics.median(dyn_ratios), 3) if both else None}
            dyn_problems = sorted({p for r_ in rounds for p in r_["dyn_problems"]})
            if dyn_problems:
                entry["dynamic"]["problems"] = dyn_problems
        problems = sorted({p for r_ in rounds for p in r_["problems"]})
        if problems:
            entry["problems"] = problems
        result["latency"][str(threads)] = entry
        print(f"  {threads} thread(s): kiln {ms(k)} ms, onnxruntime {ms(o)} ms, "
              f"{'ratio %.2f' % ratio if matched else 'OUTPUTS DIFFER: no ratio'} "
              f"({cfg.rounds} rounds x {repeat} runs)", flush=True)
        if "baseline" in entry:
            b = entry["baseline"]
            print(f"    baseline kiln {ms(b['ms'])} ms: kiln / baseline "
                  f"{'%.3f' % b['ratio'] if b['ratio'] is not None else 'OUTPUTS DIFFER'}",
                  flush=True)
        if "dynamic" in entry:
            d = entry["dynamic"]
            print(f"    kiln-dynamic {ms(d['ms'])} ms: dynamic / static "
                  f"{'%.3f' % d['ratio'] if d['ratio'] is not None else 'OUTPUTS DIFFER'}",
                  flush=True)
    lat = result["latency"].values()
    result["max_abs_err"] = max(e["max_abs_err"] for e in lat)
    result["max_rel_err"] = max(e["max_rel_err"] for e in lat)
    result["outputs_match"] = all(e["matched"] for e in lat)
    result["ort_max_abs"] = max(e["ort_max_abs"] for e in lat)


ORT_RSS_CHILD = r"""
import sys, numpy as np, onnxruntime as ort
model, inputs, mode = sys.argv[1], sys.argv[2], sys.argv[3]
feeds = dict(np.load(inputs))
if mode == "run":
    so = ort.SessionOptions()
    so.graph_optimization_level = ort.GraphOptimizationLevel.ORT_ENABLE_ALL
    so.intra_op_num_threads = 1
    so.inter_op_num_threads = 1
    s = ort.InferenceSession(model, so, providers=["CPUExecutionProvider"])
    for _ in range(10):
        s.run(None, feeds)
"""


def measure_rss(cfg, so, path, input_files, npz, result):
    # kiln: kiln-run runs once to warm up, then --repeat 9: 10 runs in all.
    cmd = kiln_run_cmd(cfg, so, input_files, 1) + ["--repeat", "9"]
    k_rss, _, err, _, rc = peak_rss_kb(cmd, cfg.run_timeout)
    if rc != 0:
        raise StageError("rss", tail(err), cmd)
    # Baseline: the same binary exiting before it opens a model (usage error, exit 1).
    k_base, _, _, _, _ = peak_rss_kb([cfg.kiln_run], 60)
    py = [sys.executable, "-c", ORT_RSS_CHILD, str(path), str(npz)]
    o_rss, _, err, _, rc = peak_rss_kb(py + ["run"], cfg.run_timeout)
    if rc != 0:
        raise StageError("rss", tail(err), py + ["run"])
    o_base, _, err, _, rc = peak_rss_kb(py + ["baseline"], cfg.run_timeout)
    if None in (k_rss, k_base, o_rss, o_base):
        raise StageError("rss", "could not read the peak RSS of the measured processes")
    mb = lambda kb: round(kb / 1024, 1)  # noqa: E731
    result["peak_rss_mb"] = {"method": "GNU time %M" if os.path.exists(TIME) else "polled VmHWM",
                             "kiln": mb(k_rss), "kiln_baseline": mb(k_base),
                             "kiln_net": mb(k_rss - k_base),
                             "ort": mb(o_rss), "ort_baseline": mb(o_base),
                             "ort_net": mb(o_rss - o_base)}


def compile_dynamic(cfg: Config, name: str, path: pathlib.Path, digest: str,
                    result: dict) -> pathlib.Path | None:
    """--dynamic: compiles NAME with a symbolic batch (symbolic_batch_model); its .so, or
    None with result["dynamic_error"] set. A failure here leaves the static row alone."""
    try:
        dyn = symbolic_batch_model(cfg, name, path, digest)
        comp = compile_model(cfg, f"{name}_dynamic", dyn, sha256(dyn))
    except Exception as e:  # an odd model (e.g. no static dim 0): a note, not a failure
        result["dynamic_error"] = f"{type(e).__name__}: {e}"
        print(f"  dynamic: FAILED: {e}", flush=True)
        return None
    result["dynamic_compile"] = {k: comp.get(k) for k in
                                 ("ok", "seconds", "cpu_seconds", "peak_rss_mb", "cached")
                                 if k in comp}
    if not comp["ok"]:
        result["dynamic_error"] = (f"{shlex.join(comp['command'])}\n"
                                   + comp.get("error", "failed"))
        print(f"  dynamic compile FAILED: {tail(comp.get('error', ''), 6)}", flush=True)
        return None
    print(f"  dynamic (symbolic batch) compiled in {comp['seconds']} s"
          f"{' (cached)' if comp['cached'] else ''}", flush=True)
    return pathlib.Path(comp["command"][comp["command"].index("-o") + 1])


def bench_model(cfg: Config, name: str, source) -> dict:
    result = {"model": name, "source": f"{source[0]}:{source[1]}", "ok": False}
    t_start = time.monotonic()
    print(f"== {name}", flush=True)
    try:
        path = resolve_model(cfg, name, source)
        result["onnx_file"] = str(path)
        result["onnx_mb"] = round(path.stat().st_size / 1e6, 2)
        digest = sha256(path)
        result["model_sha256"] = digest
        comp = compile_model(cfg, name, path, digest)
        result["compile"] = {k: comp.get(k) for k in
                             ("ok", "seconds", "cpu_seconds", "peak_rss_mb", "cached", "date",
                              "timed_out")
                             if k in comp}
        if not comp["ok"]:
            raise StageError("compile", comp.get("error", "failed"), comp["command"])
        so = pathlib.Path(comp["command"][comp["command"].index("-o") + 1])
        result["compile_s"] = comp["seconds"]
        result["artifact_mb"] = round(so.stat().st_size / 1e6, 2)
        print(f"  compiled in {comp['seconds']} s{' (cached)' if comp['cached'] else ''}, "
              f"{result['artifact_mb']} MB", flush=True)
        base_so = None
        if cfg.baseline is not None:
            bcomp = compile_model(cfg.baseline, name, path, digest)
            result["baseline_compile"] = {k: bcomp.get(k) for k in
                                          ("ok", "seconds", "cpu_seconds", "peak_rss_mb", "cached")
                                          if k in bcomp}
            if not bcomp["ok"]:
                raise StageError("compile (baseline)", bcomp.get("error", "failed"), bcomp["command"])
            base_so = pathlib.Path(bcomp["command"][bcomp["command"].index("-o") + 1])
            print(f"  baseline compiled in {bcomp['seconds']} s"
                  f"{' (cached)' if bcomp['cached'] else ''}", flush=True)
        dyn_so = None
        if cfg.dynamic:
            dyn_so = compile_dynamic(cfg, name, path, digest, result)
        if cfg.compile_only:
            result["ok"] = True
            return result
        with tempfile.TemporaryDirectory(prefix=f"kiln-bench-{name}-") as tmp:
            tmp = pathlib.Path(tmp)
            sess = ort_session(path, 1)
            feeds = make_inputs(sess, cfg.seed)
            del sess
            input_files = {}
            for k, v in feeds.items():
                p = tmp / f"input{len(input_files)}.npy"
                np.save(p, v)
                input_files[k] = p
            npz = tmp / "inputs.npz"
            np.savez(npz, **feeds)
            measure_startup(cfg, so, path, result)
            print(f"  start-up: kiln {result['startup_ms']['kiln']} ms "
                  f"(kiln_model_open {result['startup_ms'].get('kiln_open')} ms; "
                  f"a minimal process {result['startup_ms'].get('process_floor')} ms), "
                  f"onnxruntime {result['startup_ms']['ort']} ms", flush=True)
            measure_latency(cfg, so, path, feeds, input_files, tmp, result, base_so, dyn_so)
            measure_rss(cfg, so, path, input_files, npz, result)
            r = result["peak_rss_mb"]
            print(f"  peak RSS: kiln {r['kiln']} MB (net {r['kiln_net']}), "
                  f"onnxruntime {r['ort']} MB (net {r['ort_net']})", flush=True)
        result["ok"] = True
    except StageError as e:
        result.update(failed_stage=e.stage, error=e.message)
        if e.command:
            result["failed_command"] = shlex.join(map(str, e.command))
        print(f"  FAILED at {e.stage}: {tail(e.message, 6)}", flush=True)
    except (subprocess.TimeoutExpired, TimeoutError) as e:
        result.update(failed_stage="timeout", error=str(e))
        print(f"  FAILED: {e}", flush=True)
    except Exception as e:  # a harness bug or an odd model: still a row, not an abort
        result.update(failed_stage="harness", error=f"{type(e).__name__}: {e}\n"
                      + tail(traceback.format_exc(), 12))
        print(f"  FAILED (harness): {type(e).__name__}: {e}", flush=True)
    finally:
        result["bench_seconds"] = round(time.monotonic() - t_start, 1)
    return result


#===----------------------------------------------------------------------===#
# Reports
#===----------------------------------------------------------------------===#

def fmt(x, digits=2):
    if x is None:
        return "-"
    if isinstance(x, float):
        return f"{x:.{digits}f}"
    return str(x)


def ms(x: float) -> str:
    """Milliseconds with 3 significant digits (at least 2 decimals below 10 ms)."""
    if x >= 100:
        return f"{x:.0f}"
    if x >= 10:
        return f"{x:.1f}"
    if x >= 0.1:
        return f"{x:.2f}"
    return f"{x:.3g}"


def fmt_lat(e, which):
    return f"{ms(e[which + '_ms'])} ({ms(e[which + '_min_ms'])}-{ms(e[which + '_max_ms'])})"


def compile_cell(c: dict) -> str:
    """Wall s (CPU s), e.g. "7.3 (6.9)"; "(cached)" when this run reused an earlier compile."""
    text = fmt(c.get("seconds"), 1)
    if c.get("cpu_seconds") is not None:
        text += f" ({c['cpu_seconds']:.1f})"
    return text + (" (cached)" if c.get("cached") else "")


def markdown_table(results: list[dict], threads: list[int]) -> str:
    head = ["model", "compile s (CPU s)", "compile peak MB", ".so MB",
            "start-up kiln ready (open) / ort ms"]
    for t in threads:
        head += [f"kiln {t}t ms", f"ort {t}t ms", f"ratio {t}t"]
    head += ["peak RSS kiln / ort MB", "net RSS kiln / ort MB", "max abs err", "max rel err",
             "max abs output"]
    lines = ["| " + " | ".join(head) + " |", "|" + "---|" * len(head)]
    failures = []
    weak = []
    for r in results:
        if not r.get("ok"):
            comp = r.get("compile", {})
            cells = [r["model"], compile_cell(comp) if comp else "-",
                     fmt(comp.get("peak_rss_mb"), 0) if comp else "-",
                     f"FAILED ({r.get('failed_stage')})"]
            cells += ["-"] * (len(head) - len(cells))
            lines.append("| " + " | ".join(cells) + " |")
            failures.append(r)
            continue
        c = r["compile"]
        cells = [r["model"], compile_cell(c), fmt(c.get("peak_rss_mb"), 0),
                 fmt(r.get("artifact_mb"), 1)]
        s = r.get("startup_ms")
        opened = f" ({s['kiln_open']:.2f})" if s and "kiln_open" in s else ""
        cells.append(f"{ms(s['kiln'])}{opened} / {ms(s['ort'])}" if s else "-")
        for t in threads:
            e = r.get("latency", {}).get(str(t))
            if not e:
                cells += ["-", "-", "-"]
                continue
            ratio = (f"{e['ratio']:.2f} ({e['ratio_min']:.2f}-{e['ratio_max']:.2f})"
                     if e["ratio"] is not None and "ratio_min" in e else
                     f"{e['ratio']:.2f}" if e["ratio"] is not None else "outputs differ")
            cells += [fmt_lat(e, "kiln"), fmt_lat(e, "ort"), ratio]
        m = r.get("peak_rss_mb")
        cells.append(f"{m['kiln']:.0f} / {m['ort']:.0f}" if m else "-")
        cells.append(f"{m['kiln_net']:.0f} / {m['ort_net']:.0f}" if m else "-")
        cells.append(f"{r['max_abs_err']:.2e}" if "max_abs_err" in r else "-")
        cells.append(f"{r['max_rel_err']:.2e}" if "max_rel_err" in r else "-")
        cells.append(f"{r['ort_max_abs']:.3g}" if "ort_max_abs" in r else "-")
        lines.append("| " + " | ".join(cells) + " |")
        if r.get("ort_max_abs") is not None and r["ort_max_abs"] < 100 * ATOL:
            weak.append(r)
    text = "\n".join(lines) + "\n"
    geo = []
    for t in threads:
        ratios = [r["latency"][str(t)]["ratio"] for r in results if r.get("ok")
                  and (r.get("latency", {}).get(str(t)) or {}).get("ratio") is not None]
        if ratios:
            g = math.exp(sum(math.log(x) for x in ratios) / len(ratios))
            geo.append(f"{t}t {g:.2f} over {len(ratios)} models, "
                       f"{sum(x > 0.95 for x in ratios)} above 0.95")
    if geo:
        text += "\nGeometric mean of the ratios: " + "; ".join(geo) + ".\n"
    for r in weak:
        text += (f"\nWeak check: {r['model']}'s outputs are at most {r['ort_max_abs']:.3g} in "
                 f"magnitude, so atol {ATOL} makes the match check vacuous; relative to that "
                 f"scale the largest error is {r['max_abs_err'] / max(r['ort_max_abs'], 1e-300):.2e}.\n")
    if failures:
        text += "\nFailures:\n"
        for r in failures:
            text += f"\n- **{r['model']}** failed at {r.get('failed_stage')}"
            if r.get("failed_command"):
                text += f": `{r['failed_command']}`"
            text += "\n\n  ```\n" + "\n".join("  " + l for l in tail(r.get("error", ""), 15).splitlines()) + "\n  ```\n"
    return text


def report_markdown(doc: dict) -> str:
    m = doc["machine"]
    threads = doc["settings"]["threads"]
    text = (f"kiln vs onnxruntime {m.get('onnxruntime')} on {m.get('cpu')} "
            f"({m.get('cores')} cores, {m.get('memory_gib')} GiB), {doc['date']}, "
            f"kiln {doc['settings'].get('kiln_sha256', '?')[:12]} (tree at {m.get('kiln_commit', '?')}). Latency: median of round medians (min-max of all "
            f"timed runs) in ms; ratio = kiln / onnxruntime: median over rounds of the kiln round "
            f"median / the onnxruntime round median right after it (min-max over rounds), only "
            f"when the outputs of every round matched (rtol {RTOL}, atol {ATOL}).\n\n")
    text += markdown_table(doc["results"], threads)
    if any("baseline_compile" in r for r in doc["results"]):
        text += "\n" + baseline_table(doc["results"], threads)
    if any("dynamic_compile" in r or "dynamic_error" in r for r in doc["results"]):
        text += "\n" + dynamic_table(doc["results"], threads)
    return text


def dynamic_table(results: list[dict], threads: list[int]) -> str:
    """kiln with a symbolic batch (--dynamic) against kiln static, in the same rounds."""
    head = ["model", "compile s static / dynamic"]
    for t in threads:
        head += [f"kiln-dynamic {t}t ms", f"dynamic/static {t}t"]
    lines = ["| " + " | ".join(head) + " |", "|" + "---|" * len(head)]
    notes = []
    for r in results:
        if not r.get("ok") or not ("dynamic_compile" in r or "dynamic_error" in r):
            continue
        d = r.get("dynamic_compile") or {}
        cells = [r["model"], f"{fmt(r.get('compile_s'), 1)} / {fmt(d.get('seconds'), 1)}"]
        for t in threads:
            e = r.get("latency", {}).get(str(t), {}).get("dynamic")
            if not e:
                cells += ["-", "failed" if "dynamic_error" in r else "-"]
                continue
            ratio = ("outputs differ" if e["ratio"] is None else
                     f"{e['ratio']:.3f} ({min(e['round_ratios']):.3f}-{max(e['round_ratios']):.3f})")
            cells += [ms(e["ms"]), ratio]
        lines.append("| " + " | ".join(cells) + " |")
        if "dynamic_error" in r:
            err_lines = r["dynamic_error"].strip().splitlines() or ["failed"]
            first = next((l for l in err_lines if "error:" in l), err_lines[-1])
            notes.append(f"- **{r['model']}** dynamic: {first.strip()}")
    return ("kiln-dynamic: the model with dim 0 of its inputs symbolic (--dynamic), run at the "
            "bench size; dynamic/static: median over rounds of the two kiln-run round medians, "
            "run back to back, only when both matched onnxruntime in every round.\n\n"
            + "\n".join(lines) + "\n" + ("\n" + "\n".join(notes) + "\n" if notes else ""))


def baseline_table(results: list[dict], threads: list[int]) -> str:
    """kiln against the --baseline-build kiln, timed in the same rounds."""
    head = ["model", "compile s kiln / baseline"]
    for t in threads:
        head += [f"kiln / baseline {t}t ms", f"ratio {t}t"]
    lines = ["| " + " | ".join(head) + " |", "|" + "---|" * len(head)]
    for r in results:
        b = r.get("baseline_compile")
        if not r.get("ok") or not b:
            continue
        cells = [r["model"], f"{fmt(r.get('compile_s'), 1)} / {fmt(b.get('seconds'), 1)}"]
        for t in threads:
            e = r.get("latency", {}).get(str(t), {}).get("baseline")
            if not e:
                cells += ["-", "-"]
                continue
            ratio = ("outputs differ" if e["ratio"] is None else
                     f"{e['ratio']:.3f} ({min(e['round_ratios']):.3f}-{max(e['round_ratios']):.3f})")
            cells += [f"{ms(r['latency'][str(t)]['kiln_ms'])} / {ms(e['ms'])}", ratio]
        lines.append("| " + " | ".join(cells) + " |")
    return ("kiln / baseline kiln (--baseline-build): median over rounds of the two kiln-run "
            "round medians, run back to back.\n\n" + "\n".join(lines) + "\n")


def draw_chart(cfg: Config, json_path: pathlib.Path, png: pathlib.Path) -> str:
    """Draws the ratio chart with matplotlib: here if importable, else with .venv-bench."""
    script = HERE / "chart.py"
    try:
        import matplotlib  # noqa: F401
        py = sys.executable
    except ImportError:
        py = str(cfg.bench_python)
        if not pathlib.Path(py).exists():
            return (f"chart skipped: matplotlib is not importable here and {py} does not exist "
                    f"(run scripts/setup-bench.sh)")
    r = subprocess.run([py, str(script), str(json_path), str(png)], capture_output=True, text=True)
    if r.returncode != 0:
        return f"chart skipped: {tail(r.stderr, 5)}"
    return f"chart: {png}"


def write_outputs(cfg: Config, out: pathlib.Path, doc: dict, final: bool) -> None:
    out.mkdir(parents=True, exist_ok=True)
    (out / "results.json").write_text(json.dumps(doc, indent=1) + "\n")
    (out / "results.md").write_text(report_markdown(doc))
    if final:
        if cfg.chart:
            doc["chart"] = draw_chart(cfg, out / "results.json", out / "ratios.png")
        else:
            doc["chart"] = "chart skipped: --no-chart"
        (out / "results.json").write_text(json.dumps(doc, indent=1) + "\n")
        print(doc["chart"], flush=True)


DOC_INTRO = """# Benchmarks: kiln vs onnxruntime

This page is written by `bench/bench.py --all --docs` from its latest full run (the notes at
the end are added with `--docs-from RESULTS.json --notes FILE`); every figure below comes from
that run (the raw data is [benchmarks/results.json](benchmarks/results.json)).
How to run it and what each column means: [bench/README.md](../bench/README.md).

"""


def write_docs(cfg: Config, out: pathlib.Path, doc: dict) -> None:
    docs = ROOT / "docs"
    (docs / "benchmarks").mkdir(parents=True, exist_ok=True)
    (docs / "benchmarks" / "results.json").write_text(json.dumps(doc, indent=1) + "\n")
    chart = ""
    if (out / "ratios.png").is_file():
        shutil.copy(out / "ratios.png", docs / "benchmarks" / "ratios.png")
        chart = "![kiln / onnxruntime latency ratio](benchmarks/ratios.png)\n\n"
    m = doc["machine"]
    s = doc["settings"]
    text = DOC_INTRO
    text += (f"## Machine\n\n- CPU: {m.get('cpu')}"
             f"{' (' + m['cpu_family_model'] + ')' if m.get('cpu_family_model') else ''}, "
             f"{m.get('cores')} cores"
             f"{', ' + m['hypervisor'] + ' virtual machine' if m.get('hypervisor') else ''}; "
             f"SIMD: {', '.join(m.get('simd', []))}\n- Memory: {m.get('memory_gib')} GiB\n"
             f"- onnxruntime {m.get('onnxruntime')} (CPUExecutionProvider, "
             f"ORT_ENABLE_ALL, sequential execution), numpy {m.get('numpy')}, Python {m.get('python')}\n"
             f"- kiln: binary sha256 {s.get('kiln_sha256', '?')[:16]}..., built "
             f"{s.get('kiln_build_mtime', '?')} from the working tree at commit "
             f"{m.get('kiln_commit')} (a shared tree: the build may include changes not yet "
             f"committed); kernel {m.get('kernel')}\n"
             f"- run: {doc['date']}, {s['rounds']} interleaved rounds per thread count, "
             f"load average {doc.get('loadavg_start')} at the start, {doc.get('loadavg_end')} at the end "
             f"(the machine is shared: absolute times are noisy, the interleaved ratio less so)\n\n")
    text += "## Results\n\n" + report_markdown(doc) + "\n" + chart
    notes = doc.get("notes")
    if notes:
        text += "## Notes\n\n" + notes + "\n"
    (docs / "benchmarks.md").write_text(text)
    print(f"wrote {docs / 'benchmarks.md'}", flush=True)


def default_mem_gib() -> float:
    try:
        kb = int(re.search(r"^MemTotal:\s*(\d+) kB", pathlib.Path("/proc/meminfo").read_text(),
                           re.M).group(1))
        return round(0.6 * kb / 2**20, 1)
    except (OSError, AttributeError):
        return 0


def main(argv=None) -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0],
                                formatter_class=argparse.RawDescriptionHelpFormatter,
                                epilog="\n".join(__doc__.splitlines()[2:]))
    p.add_argument("models", nargs="*", metavar="MODEL", help=f"suite models: {', '.join(SUITE)}")
    p.add_argument("--all", action="store_true", help="the whole suite")
    p.add_argument("--model", action="append", default=[], metavar="NAME=FILE.onnx",
                   help="benchmark any ONNX file (repeatable)")
    p.add_argument("--out", default=str(HERE / "results"), help="output folder (default bench/results)")
    p.add_argument("--work", default=os.environ.get("KILN_BENCH_WORK", str(HERE / "_work")),
                   help="exported models and compile cache (default bench/_work)")
    p.add_argument("--build", default=None, help="kiln build folder (default $KILN_BUILD_DIR or build)")
    p.add_argument("--baseline-build", default=None, metavar="DIR",
                   help="another kiln build folder (e.g. main before a change): each model is "
                   "also compiled with it and timed in the same rounds, right after kiln; "
                   "reports kiln / baseline per thread count")
    p.add_argument("--dynamic", action="store_true",
                   help="also compile each model with dim 0 of its inputs symbolic and time it in "
                   "the same rounds at the bench size: reports kiln-dynamic ms and dynamic/static")
    p.add_argument("--models-dir", default=None, help="shared models (default $KILN_MODELS_DIR or ../shared/models)")
    p.add_argument("--threads", default="1,2", help="thread counts (default 1,2)")
    p.add_argument("--rounds", type=int, default=7, help="interleaved rounds per thread count (default 7)")
    p.add_argument("--repeat", type=int, default=0,
                   help="timed runs per round and engine (default 0: about --round-seconds, 3..50)")
    p.add_argument("--round-seconds", type=float, default=1.5)
    p.add_argument("--startup-runs", type=int, default=5)
    p.add_argument("--seed", type=int, default=0, help="seed of the inputs")
    p.add_argument("--compile-timeout", type=float, default=3600)
    p.add_argument("--compile-mem-gib", type=float, default=default_mem_gib(),
                   help="address-space limit of kiln compile in GiB, so that a runaway compile "
                   "fails by itself instead of starving the machine (default: 60%% of RAM; 0: none)")
    p.add_argument("--run-timeout", type=float, default=900)
    p.add_argument("--recompile", action="store_true", help="ignore the compile cache")
    p.add_argument("--compile-only", action="store_true", help="export and compile only")
    p.add_argument("--no-chart", action="store_true")
    p.add_argument("--docs", action="store_true", help="rewrite docs/benchmarks.md (needs --all)")
    p.add_argument("--notes", default=None, help="a file whose text goes under Notes in docs/benchmarks.md")
    p.add_argument("--docs-from", default=None, metavar="RESULTS.json",
                   help="rewrite docs/benchmarks.md from an earlier full run's results.json (and the "
                   "ratios.png beside it), with --notes; measures nothing")
    args = p.parse_args(argv)
    if args.docs_from:
        src = pathlib.Path(args.docs_from)
        doc = json.loads(src.read_text())
        if args.notes:
            doc["notes"] = pathlib.Path(args.notes).read_text()
        names = [r["model"] for r in doc["results"]]
        if names != list(SUITE):
            p.error(f"{src} holds {names}, not the full suite {list(SUITE)}")
        write_docs(None, src.parent, doc)
        return 0

    todo: list[tuple[str, tuple]] = []
    names = list(SUITE) if args.all else args.models
    for n in names:
        if n not in SUITE:
            p.error(f"unknown model {n!r}; the suite: {', '.join(SUITE)}")
        todo.append((n, SUITE[n]))
    for spec in args.model:
        n, sep, f = spec.partition("=")
        if not sep or not n:
            p.error(f"--model takes NAME=FILE.onnx, not {spec!r}")
        todo.append((n, ("file", f)))
    if not todo:
        p.error("name a model, --model NAME=FILE, or --all")
    if args.docs and not args.all:
        p.error("--docs needs --all (the page holds the full table)")

    cfg = Config(args)
    for tool in (cfg.kiln, cfg.kiln_run):
        if not tool.is_file():
            print(f"bench.py: {tool} not found: build kiln first (scripts/setup.sh)", file=sys.stderr)
            return 2
    snapshot_tools(cfg)
    if cfg.baseline is not None:
        for tool in (cfg.baseline.kiln, cfg.baseline.kiln_run):
            if not tool.is_file():
                print(f"bench.py: {tool} not found (--baseline-build)", file=sys.stderr)
                return 2
        snapshot_tools(cfg.baseline)
    out = pathlib.Path(args.out)
    doc = {"date": datetime.datetime.now(datetime.timezone.utc).isoformat(timespec="seconds"),
           "machine": machine_info(), "loadavg_start": loadavg(),
           "settings": {"threads": cfg.threads, "rounds": cfg.rounds, "repeat": cfg.repeat or "auto",
                        "round_seconds": cfg.round_seconds, "startup_runs": cfg.startup_runs,
                        "seed": cfg.seed, "rtol": RTOL, "atol": ATOL,
                        "command": shlex.join([sys.executable, *sys.argv]),
                        "kiln_sha256": cfg.kiln_sha256, "kiln_build_mtime": cfg.kiln_build_mtime,
                        "kiln_snapshot": str(cfg.kiln.parent)},
           "results": []}
    if cfg.dynamic:
        doc["settings"]["dynamic"] = True
    if args.notes:
        doc["notes"] = pathlib.Path(args.notes).read_text()
    for name, source in todo:
        doc["results"].append(bench_model(cfg, name, source))
        write_outputs(cfg, out, doc, final=False)
    doc["loadavg_end"] = loadavg()
    write_outputs(cfg, out, doc, final=not cfg.compile_only)
    print()
    print(report_markdown(doc))
    print(f"results: {out / 'results.json'}, {out / 'results.md'}")
    if args.docs:
        write_docs(cfg, out, doc)
    return 0 if all(r["ok"] for r in doc["results"]) else 1


if __name__ == "__main__":
    sys.exit(main())
