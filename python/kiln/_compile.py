"""Compiling ONNX models with the `kiln` command line, and the compile cache."""

from __future__ import annotations

import hashlib
import json
import os
import platform
import shutil
import subprocess
import tempfile
from pathlib import Path
from typing import Mapping, Sequence

from ._errors import CompileError, InvalidArgument, KilnNotFound

try:
    from . import _build_config
except ImportError:  # run from the source folder without a build
    _build_config = None

# The devices kiln compiles for and runs on; "vulkan:SEL" and "cuda:SEL" pick a
# device at open (its index or part of its name), compiled as "vulkan" or "cuda".
_DEVICES = ("auto", "cpu", "vulkan", "cuda")


def find_kiln() -> Path:
    """The `kiln` executable: $KILN_EXECUTABLE, else `kiln` on PATH, else the
    kiln build this package was built against."""
    env = os.environ.get("KILN_EXECUTABLE")
    if env:
        p = Path(env)
        if not (p.is_file() and os.access(p, os.X_OK)):
            raise KilnNotFound(f"KILN_EXECUTABLE={env} is not an executable file")
        return p
    on_path = shutil.which("kiln")
    if on_path:
        return Path(on_path)
    built = getattr(_build_config, "KILN_EXECUTABLE", "")
    if built and os.access(built, os.X_OK):
        return Path(built)
    raise KilnNotFound(
        "cannot find the kiln compiler: set KILN_EXECUTABLE, put `kiln` on PATH, "
        "or install this package against a kiln build "
        f"(the one it was built against: {built or 'none recorded'})")


def cache_dir() -> Path:
    """Where compiled .onnx models are kept: $KILN_CACHE_DIR, else ~/.cache/kiln."""
    env = os.environ.get("KILN_CACHE_DIR")
    if env:
        return Path(env)
    xdg = os.environ.get("XDG_CACHE_HOME")
    return (Path(xdg) if xdg else Path.home() / ".cache") / "kiln"


def check_device(device: str | None) -> None:
    if device is None or device in _DEVICES:
        return
    if isinstance(device, str) and any(
            device.startswith(d + ":") and len(device) > len(d) + 1 for d in ("vulkan", "cuda")):
        return
    raise InvalidArgument(
        f"device '{device}' is not supported: kiln compiles for and runs on "
        f"{', '.join(repr(d) for d in _DEVICES)}, 'vulkan:DEVICE' or 'cuda:DEVICE'")


def compile_device(device: str | None) -> str | None:
    """`kiln compile --device` for a session's device: vulkan for "vulkan" and
    "vulkan:SEL", cuda for "cuda" and "cuda:SEL", the default (the CPU)
    otherwise."""
    if device is not None and device.startswith("vulkan"):
        return "vulkan"
    if device is not None and (device == "cuda" or device.startswith("cuda:")):
        return "cuda"
    return None


def _args(device, target, cpu, shape, name, emit, specialize, precision,
          keep_intermediates) -> list[str]:
    args: list[str] = []
    if device is not None and device != "auto":
        args += ["--device", "vulkan" if device.startswith("vulkan") else str(device)]
    if target is not None:
        args += ["--target", str(target)]
    if cpu is not None:
        args += ["--cpu", str(cpu)]
    for input_name, dims in (shape or {}).items():
        try:
            text = ",".join(str(int(d)) for d in dims)
        except (TypeError, ValueError):
            raise InvalidArgument(
                f"shape of input '{input_name}': expected a sequence of integers, "
                f"got {dims!r}") from None
        args += ["--shape", f"{input_name}={text}"]
    if name is not None:
        args += ["--name", str(name)]
    if emit is not None:
        args += ["--emit", str(emit)]
    for input_name, file in (specialize or {}).items():
        args += ["--specialize", f"{input_name}={os.fspath(file)}"]
    if precision is not None:
        args += ["--precision", str(precision)]
    if keep_intermediates:
        args.append("--keep-intermediates")
    return args


def compile(model: str | os.PathLike, output: str | os.PathLike, *,
            target: str | None = None, cpu: str | None = None,
            shape: Mapping[str, Sequence[int]] | None = None,
            name: str | None = None, emit: str | None = None,
            specialize: Mapping[str, str | os.PathLike] | None = None,
            precision: str | None = None, device: str | None = None,
            keep_intermediates: bool = False) -> Path:
    """Runs `kiln compile MODEL -o OUTPUT` with the matching flags (see
    `kiln --help`) and returns OUTPUT. A failure raises CompileError with
    kiln's diagnostics. `device` is `--device` ("vulkan:SEL" compiles for
    "vulkan"; None and "auto" compile for the CPU)."""
    check_device(device)
    exe = find_kiln()
    cmd = [str(exe), "compile", os.fspath(model), "-o", os.fspath(output)]
    cmd += _args(device, target, cpu, shape, name, emit, specialize, precision,
                 keep_intermediates)
    proc = subprocess.run(cmd, stdin=subprocess.DEVNULL, capture_output=True, text=True)
    if proc.returncode != 0:
        message = proc.stderr.strip() or f"kiln exited with status {proc.returncode}"
        raise CompileError(message, proc.returncode, cmd)
    return Path(output)


#===--- The compile cache -------------------------------------------------===#

_identity_memo: dict[tuple, str] = {}


def _sha256_file(path: Path) -> str:
    h = hashlib.sha256()
    with open(path, "rb") as f:
        for block in iter(lambda: f.read(1 << 20), b""):
            h.update(block)
    return h.hexdigest()


def _kiln_identity(exe: Path) -> str:
    """kiln's version: the sha256 of its executable (memoized per file state)."""
    st = exe.stat()
    key = (str(exe.resolve()), st.st_size, st.st_mtime_ns)
    if key not in _identity_memo:
        _identity_memo[key] = _sha256_file(exe.resolve())
    return _identity_memo[key]


def _host_cpu() -> str:
    """For `--cpu native` (the default): the machine and its CPU's features."""
    flags = ""
    try:
        with open("/proc/cpuinfo") as f:
            for line in f:
                if line.startswith(("flags", "Features")):
                    flags = line
                    break
    except OSError:
        pass
    return platform.machine() + ":" + hashlib.sha256(flags.encode()).hexdigest()[:16]


def compiled_model(onnx_path: str | os.PathLike, shape=None, cpu=None,
                   device=None) -> tuple[Path, bool]:
    """The cached .so for an .onnx model, compiling it on a miss. The key is the
    model's sha256, the options (the device compiled for included), kiln's
    identity and (for the host CPU) the CPU.
    Returns (path, whether it was a cache hit)."""
    onnx_path = Path(onnx_path)
    if not onnx_path.is_file():
        raise InvalidArgument(f"model '{onnx_path}' does not exist")
    exe = find_kiln()
    options = {"shape": {k: [int(d) for d in v] for k, v in (shape or {}).items()},
               "cpu": cpu, "device": compile_device(device)}
    key_doc = {
        "model": _sha256_file(onnx_path),
        "options": options,
        "kiln": _kiln_identity(exe),
        "host": _host_cpu() if cpu in (None, "native") else None,
    }
    key = hashlib.sha256(json.dumps(key_doc, sort_keys=True).encode()).hexdigest()[:32]
    root = cache_dir()
    entry = root / key
    so = entry / "model.so"
    if so.is_file():
        return so, True
    root.mkdir(parents=True, exist_ok=True)
    tmp = Path(tempfile.mkdtemp(prefix=".tmp-", dir=root))
    try:
        compile(onnx_path, tmp / "model.so", cpu=cpu, shape=shape,
                device=compile_device(device))
        (tmp / "key.json").write_text(json.dumps(
            dict(key_doc, source=str(onnx_path.resolve()), kiln_path=str(exe)),
            indent=1, sort_keys=True) + "\n")
        try:
            os.rename(tmp, entry)  # atomic: a reader sees all of it or nothing
        except OSError:
            if not so.is_file():  # not another process that won the race
                raise
    finally:
        if tmp.exists():
            shutil.rmtree(tmp, ignore_errors=True)
    return so, False
