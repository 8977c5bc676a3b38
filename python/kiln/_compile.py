"""Compiling ONNX models with the `kiln` command line, and the compile cache."""

from __future__ import annotations

import hashlib
import json
import operator
import os
import re
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
# device at open (its index or part of its name), compiled as "vulkan" or "cuda";
# the same for "hip" and "hip:SEL".
_DEVICES = ("auto", "cpu", "vulkan", "cuda", "hip")


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


def _device_items(device) -> list[str]:
    """A device, a comma-separated list of them ("vulkan,cpu") or a sequence of them,
    as a list."""
    if isinstance(device, str):
        return device.split(",")
    if isinstance(device, (list, tuple)) and all(isinstance(d, str) for d in device):
        return [i for d in device for i in d.split(",")]
    return [device]


def _valid_device(item) -> bool:
    return isinstance(item, str) and (item in _DEVICES[1:] or any(
        item.startswith(d + ":") and len(item) > len(d) + 1
        for d in ("vulkan", "cuda", "hip")))


def check_device(device) -> None:
    """`device`: "auto", a device, or several tried in order (a comma-separated list or a
    sequence; kiln_model_options.device takes the list)."""
    if device is None or device == "auto":
        return
    items = _device_items(device)
    if items and all(_valid_device(i) for i in items):
        return
    raise InvalidArgument(
        f"device {device!r} is not supported: kiln compiles for and runs on "
        f"{', '.join(repr(d) for d in _DEVICES)}, 'vulkan:DEVICE', 'cuda:DEVICE' or 'hip:DEVICE' (or a "
        f"list of them tried in order, 'vulkan,cpu')")


def runtime_device(device) -> str | None:
    """kiln_model_options.device for a session's `device` (a sequence joined by ',')."""
    return device if device is None or isinstance(device, str) else ",".join(device)


def _compile_kind(item: str) -> str:
    return "vulkan" if item.startswith("vulkan") else \
        "cuda" if item == "cuda" or item.startswith("cuda:") else \
        "hip" if item == "hip" or item.startswith("hip:") else "cpu"


def compile_device(device):
    """`kiln compile --device` for a session's device: vulkan for "vulkan" and
    "vulkan:SEL", cuda for "cuda" and "cuda:SEL", hip for "hip" and "hip:SEL", the
    default (the CPU)
    otherwise; for several devices ("vulkan,cpu") the list of them, one artifact
    holding each (the runtime takes the first that runs here)."""
    if device is None or device == "auto":
        return None
    kinds: list[str] = []
    for item in _device_items(device):
        kind = _compile_kind(item)
        if kind not in kinds:
            kinds.append(kind)
    if len(kinds) > 1:  # in auto's order: one cache entry whatever the list's order
        return sorted(kinds, key=("cuda", "hip", "vulkan", "cpu").index)
    return None if kinds == ["cpu"] else kinds[0]


_DIM_RANGE = re.compile(r"[0-9]+\.\.[0-9]*")


def shape_dims(input_name: str, dims) -> list:
    """An input's dims for `--shape`: each a size (an integer) or bounds for a
    symbolic dim as kiln compile takes them ("1..64", "1..": at least 1)."""
    def one(d):
        if isinstance(d, str) and _DIM_RANGE.fullmatch(d):
            return d
        if isinstance(d, bool):
            raise TypeError
        return operator.index(d)  # ints and numpy ints; not 1.5
    try:
        if isinstance(dims, (str, bytes)):
            raise TypeError
        return [one(d) for d in dims]
    except (TypeError, ValueError):
        raise InvalidArgument(
            f"shape of input '{input_name}': expected a sequence of sizes (integers) or "
            f"bounds ('1..64', '1..'), got {dims!r}") from None


def _args(device, target, cpu, shape, name, emit, specialize, precision,
          keep_intermediates) -> list[str]:
    args: list[str] = []
    if device is not None and device != "auto":
        # Several devices: one artifact holding each (`--device` repeated).
        for item in _device_items(device):
            args += ["--device", "vulkan" if item.startswith("vulkan") else str(item)]
    if target is not None:
        args += ["--target", str(target)]
    if cpu is not None:
        args += ["--cpu", str(cpu)]
    for input_name, dims in (shape or {}).items():
        text = ",".join(str(d) for d in shape_dims(input_name, dims))
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
            shape: Mapping[str, Sequence[int | str]] | None = None,
            name: str | None = None, emit: str | None = None,
            specialize: Mapping[str, str | os.PathLike] | None = None,
            precision: str | None = None, device: str | None = None,
            keep_intermediates: bool = False,
            sequence: Mapping[str, int] | None = None,
            absent: Sequence[str] | None = None) -> Path:
    """Runs `kiln compile MODEL -o OUTPUT` with the matching flags (see
    `kiln --help`) and returns OUTPUT. A failure raises CompileError with
    kiln's diagnostics. `device` is `--device` ("vulkan:SEL" compiles for
    "vulkan"; None and "auto" compile for the CPU); a sequence of devices
    (["cpu", "vulkan"]) or a comma-separated list compiles one artifact holding
    each. `sequence` gives each sequence input's number of items (`--sequence
    NAME=N`: the inputs NAME[0] .. NAME[N-1]), `absent` the optional inputs
    compiled empty (`--absent NAME`)."""
    check_device(device)
    exe = find_kiln()
    cmd = [str(exe), "compile", os.fspath(model), "-o", os.fspath(output)]
    cmd += _args(device, target, cpu, shape, name, emit, specialize, precision,
                 keep_intermediates)
    for input_name, count in (sequence or {}).items():
        if isinstance(count, bool) or not isinstance(count, int) or count < 0:
            raise InvalidArgument(
                f"sequence['{input_name}'] must be a number of items >= 0, got {count!r}")
        cmd += ["--sequence", f"{input_name}={count}"]
    if isinstance(absent, str):
        raise InvalidArgument("absent must be a list of input names, not a string")
    for input_name in absent or ():
        cmd += ["--absent", str(input_name)]
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


def _varint(buf, i: int) -> tuple[int, int]:
    value = shift = 0
    while True:
        byte = buf[i]
        i += 1
        value |= (byte & 0x7F) << shift
        if byte < 0x80:
            return value, i
        shift += 7
        if shift > 63:
            raise ValueError("varint too long")


def _messages(buf, start: int, end: int):
    """(field number, start, end) of each length-delimited field of one message."""
    i = start
    while i < end:
        key, i = _varint(buf, i)
        wire = key & 7
        if wire == 0:
            _, i = _varint(buf, i)
        elif wire == 1:
            i += 8
        elif wire == 5:
            i += 4
        elif wire == 2:
            n, i = _varint(buf, i)
            if i + n > end:
                raise ValueError("field past the end of its message")
            yield key >> 3, i, i + n
            i += n
        else:
            raise ValueError(f"wire type {wire}")


# The fields that lead to tensors, by message: a tensor's external_data (13) is a list of
# key/value entries (1, 2). ModelProto.graph (7) and .functions (25); GraphProto.node (1),
# .initializer (5), .sparse_initializer (15); NodeProto.attribute (5); AttributeProto.t (5),
# .g (6), .tensors (10), .graphs (11), .sparse_tensor (22), .sparse_tensors (23);
# FunctionProto.node (7); SparseTensorProto.values (1), .indices (2).
_WALK = {
    "model": {7: "graph", 25: "function"},
    "graph": {1: "node", 5: "tensor", 15: "sparse"},
    "function": {7: "node"},
    "node": {5: "attribute"},
    "attribute": {5: "tensor", 6: "graph", 10: "tensor", 11: "graph", 22: "sparse",
                  23: "sparse"},
    "sparse": {1: "tensor", 2: "tensor"},
}


def _external_data_files(onnx_path: Path) -> list[str]:
    """The files the model's tensors keep their data in (external data `location`s), read
    from the protobuf's wire format without parsing the rest (onnx is not a dependency).
    [] when the file does not parse: `kiln compile` then says what is wrong."""
    import mmap
    found: set[str] = set()

    def walk(buf, kind, start, end, depth):
        if depth > 64:
            raise ValueError("nested too deeply")
        for field, a, b in _messages(buf, start, end):
            if kind == "tensor":
                if field == 13:
                    entry = dict((f, bytes(buf[x:y])) for f, x, y in _messages(buf, a, b))
                    if entry.get(1) == b"location" and 2 in entry:
                        found.add(entry[2].decode("utf-8", "replace"))
            elif field in _WALK[kind]:
                walk(buf, _WALK[kind][field], a, b, depth + 1)

    try:
        with open(onnx_path, "rb") as f:
            if os.fstat(f.fileno()).st_size == 0:
                return []
            with mmap.mmap(f.fileno(), 0, access=mmap.ACCESS_READ) as buf:
                walk(buf, "model", 0, len(buf), 0)
    except (OSError, ValueError, IndexError):
        return []
    return sorted(found)


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
    model's sha256 and its external data files' sha256, the options (the device
    compiled for included), kiln's identity and (for the host CPU) the CPU.
    Returns (path, whether it was a cache hit)."""
    onnx_path = Path(onnx_path)
    if not onnx_path.is_file():
        raise InvalidArgument(f"model '{onnx_path}' does not exist")
    exe = find_kiln()
    options = {"shape": {k: shape_dims(k, v) for k, v in (shape or {}).items()},
               "cpu": cpu, "device": compile_device(device)}
    # The external data is part of the model: new weights beside an unchanged .onnx
    # must not reuse the old compile.
    external = {}
    for location in _external_data_files(onnx_path):
        data = onnx_path.parent / location
        external[location] = _sha256_file(data) if data.is_file() else None
    key_doc = {
        "model": _sha256_file(onnx_path),
        "external_data": external,
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
