"""kiln.InferenceSession: onnxruntime's interface over the kiln runtime."""

from __future__ import annotations

import os
import re
from pathlib import Path
from typing import Any, Mapping, Sequence

import numpy as np

from . import _compile, _kiln
from ._errors import InvalidArgument

try:  # numpy has no bfloat16 or float8; ml_dtypes (an onnx dependency) does
    import ml_dtypes as _ml_dtypes
    _bfloat16 = _ml_dtypes.bfloat16
except ImportError:
    _ml_dtypes = _bfloat16 = None

# kiln's dtype names -> onnxruntime's type strings and numpy dtypes.
_ORT_TYPE = {
    "float32": "tensor(float)", "float64": "tensor(double)",
    "float16": "tensor(float16)", "bfloat16": "tensor(bfloat16)",
    "int8": "tensor(int8)", "int16": "tensor(int16)", "int32": "tensor(int32)",
    "int64": "tensor(int64)", "uint8": "tensor(uint8)", "uint16": "tensor(uint16)",
    "uint32": "tensor(uint32)", "uint64": "tensor(uint64)", "bool": "tensor(bool)",
    "float8e4m3fn": "tensor(float8e4m3fn)", "float8e4m3fnuz": "tensor(float8e4m3fnuz)",
    "float8e5m2": "tensor(float8e5m2)", "float8e5m2fnuz": "tensor(float8e5m2fnuz)",
    "float8e8m0": "tensor(float8e8m0)", "float4e2m1": "tensor(float4e2m1)",
    "int4": "tensor(int4)", "uint4": "tensor(uint4)", "int2": "tensor(int2)",
    "uint2": "tensor(uint2)",
}
# kiln's one-byte names numpy lacks -> ml_dtypes' (without ml_dtypes: their uint8
# bit patterns). ml_dtypes holds int4, uint4, int2, uint2 and float4_e2m1fn one
# element per byte (the code in the low bits); kiln's runtime packs them (two or
# four per byte, model_abi.h): the extension converts at the boundary.
_FLOAT8 = {"float8e4m3fn": "float8_e4m3fn", "float8e4m3fnuz": "float8_e4m3fnuz",
           "float8e5m2": "float8_e5m2", "float8e5m2fnuz": "float8_e5m2fnuz",
           "float8e8m0": "float8_e8m0fnu", "float4e2m1": "float4_e2m1fn",
           "int4": "int4", "uint4": "uint4", "int2": "int2", "uint2": "uint2"}
_NUMPY = {name: np.dtype(name) for name in _ORT_TYPE
          if name not in ("bfloat16", "bool") and name not in _FLOAT8}
_NUMPY["bool"] = np.dtype(np.bool_)
_NUMPY["bfloat16"] = np.dtype(_bfloat16) if _bfloat16 is not None else np.dtype(np.uint16)
for _name, _ml_name in _FLOAT8.items():
    _NUMPY[_name] = (np.dtype(getattr(_ml_dtypes, _ml_name)) if _ml_dtypes is not None
                     else np.dtype(np.uint8))
_FLOAT8_DTYPES = {_NUMPY[name] for name in _FLOAT8} - {np.dtype(np.uint8)}
_BIT_PATTERNS = {_NUMPY["bfloat16"]: np.uint16,
                 **{_NUMPY[name]: np.uint8 for name in _FLOAT8}}


class NodeArg:
    """An input or output of the model, as onnxruntime's NodeArg: `name`,
    `type` ("tensor(float)", ...) and `shape`: a list whose entries are sizes
    (ints) or, for a dim known only at run time, its symbol's name ("batch"), as
    onnxruntime shows a dim_param."""

    __slots__ = ("name", "type", "shape", "dtype")

    def __init__(self, name: str, dtype: str, shape: Sequence[int],
                 symbols: Sequence[str] = ()):
        self.name = name
        self.type = _ORT_TYPE.get(dtype, f"tensor({dtype})")
        # A negative dim is symbol -(dim) - 1 (model_abi.h's KILN_DIM_SYMBOL).
        self.shape = [d if d >= 0 else symbols[-d - 1] for d in shape]
        self.dtype = _NUMPY[dtype]  # the numpy dtype of the tensor (kiln's extra)

    def __repr__(self) -> str:
        return f"NodeArg(name='{self.name}', type='{self.type}', shape={self.shape})"


def _raw(a: np.ndarray) -> np.ndarray:
    """bfloat16 travels as its uint16 bit patterns, float8 as uint8 ones (the
    extension's view: the model's dtype says which)."""
    bits = _BIT_PATTERNS.get(a.dtype)
    return a.view(bits) if bits is not None and a.dtype != bits else a


def _sequences(names: Sequence[str]) -> dict[str, list[str]]:
    """The sequences among a model's inputs or outputs: NAME -> [NAME[0], ...] for each
    NAME whose items NAME[0] .. NAME[N-1] are all there (and no tensor is NAME)."""
    found: dict[str, dict[int, str]] = {}
    for name in names:
        m = re.fullmatch(r"(.+)\[(0|[1-9][0-9]*)\]", name)
        if m:
            found.setdefault(m.group(1), {})[int(m.group(2))] = name
    return {base: [items[i] for i in range(len(items))] for base, items in found.items()
            if base not in names and sorted(items) == list(range(len(items)))}


class InferenceSession:
    """A compiled model, opened once and run many times.

    `path` is a model compiled by kiln (a shared library, `.so`) or an `.onnx`
    model, which is compiled on first use into the cache ($KILN_CACHE_DIR,
    default ~/.cache/kiln) and taken from there afterwards. `threads` is the
    number of threads of one run, the calling thread included (0: one per CPU).
    `device` is where the model runs ("auto", "cpu", "vulkan", "vulkan:SEL", "cuda",
    "cuda:SEL", or several tried in order: "vulkan,cpu" or ["vulkan", "cpu"];
    kiln_model_options.device); an `.onnx` model is compiled for Vulkan when it
    starts with "vulkan" (CUDA for "cuda"), for each device of a list (one artifact). `cpu_variant` opens that CPU variant of a
    multi-variant artifact (kiln_model_options.cpu_variant; None: the best).
    `shape` gives dynamic input dimensions a size (an int) or bounds ("1..64",
    "1.."), kiln compile --shape; without it they stay symbolic and each run takes
    any size (kiln's dynamic shapes). `cpu` picks the CPU to compile for (kiln
    compile --cpu). Both only apply to an `.onnx` model.
    run() may be called from several threads at once; each call releases the GIL.
    """

    def __init__(self, path: str | os.PathLike, device: str | Sequence[str] = "auto",
                 threads: int = 0,
                 cpu_variant: str | None = None, *, shape: Mapping[str, Sequence[int | str]] | None = None,
                 cpu: str | None = None):
        _compile.check_device(device)
        if isinstance(threads, bool) or not isinstance(threads, int) or threads < 0:
            raise InvalidArgument(f"threads must be an integer >= 0, got {threads!r}")
        if cpu_variant is not None and not isinstance(cpu_variant, str):
            raise InvalidArgument(f"cpu_variant must be a string or None, got {cpu_variant!r}")
        if isinstance(path, (bytes, bytearray, memoryview)):
            raise InvalidArgument(
                "kiln.InferenceSession takes a path: write serialized model bytes to an "
                ".onnx file first")
        path = Path(os.fspath(path))
        self.cache_hit: bool | None = None
        if path.suffix == ".onnx":
            self.onnx_path: Path | None = path
            self.model_path, self.cache_hit = _compile.compiled_model(path, shape, cpu,
                                                                       device)
        else:
            if shape is not None or cpu is not None:
                raise InvalidArgument(
                    f"shape and cpu apply to an .onnx model, not to the compiled '{path}'")
            self.onnx_path = None
            self.model_path = path
        # The runtime reads a path without '/' from the working directory.
        self._model = _kiln.Model(str(self.model_path.absolute()), threads,
                                  _compile.runtime_device(device), cpu_variant)
        # (name, min, max): each symbolic dim's bounds; max -1 is unbounded.
        self._symbols = self._model.symbols()
        names = [name for name, _, _ in self._symbols]
        self._inputs = [NodeArg(*d, names) for d in self._model.inputs()]
        self._outputs = [NodeArg(*d, names) for d in self._model.outputs()]
        self._input_by_name = {i.name: i for i in self._inputs}
        # Outputs sized per run: the runtime allocates them (run_allocating).
        self._sized_per_run = any(isinstance(d, str) for o in self._outputs for d in o.shape)
        self._output_index = {o.name: i for i, o in enumerate(self._outputs)}
        self._all_output_names = [o.name for o in self._outputs]
        # Sequences at the boundary (docs/python.md): a sequence is the tensors
        # NAME[0] .. NAME[N-1]; run() takes and returns it as a list.
        self._input_sequences = _sequences([i.name for i in self._inputs])
        self._output_sequences = _sequences(self._all_output_names)

    @property
    def device(self) -> str:
        """Where the model runs: "cpu" or "vulkan" (kiln_model_device)."""
        return self._model.device

    @property
    def cpu_variant(self) -> str | None:
        """The CPU variant opened ("x86-64-v3"; kiln_model_variant), None for a
        model without variants."""
        return self._model.variant or None

    @property
    def num_threads(self) -> int:
        """Threads of one run, the calling thread included."""
        return self._model.num_threads

    def get_symbols(self) -> dict[str, tuple[int, int | None]]:
        """kiln's extra: each symbol of the shapes (a dim known only at run time)
        -> its bounds (min, max), max None when unbounded. Empty for static
        shapes."""
        return {name: (lo, None if hi < 0 else hi) for name, lo, hi in self._symbols}

    def get_inputs(self) -> list[NodeArg]:
        return list(self._inputs)

    def get_outputs(self) -> list[NodeArg]:
        return list(self._outputs)

    def run(self, output_names: Sequence[str] | None,
            input_feed: Mapping[str, Any], run_options: None = None) -> list[np.ndarray]:
        """Runs the model on `input_feed` ({name: array}) and returns the outputs
        named in `output_names` (all of them, in model order, for None or []).
        C-contiguous arrays of the model's dtype are read in place; other
        layouts are copied, other dtypes are an error (InvalidArgument)."""
        if run_options is not None:
            raise InvalidArgument("run_options is not supported by kiln")
        if not isinstance(input_feed, Mapping):
            raise InvalidArgument(
                f"input_feed must be a mapping of input names to arrays, "
                f"got {type(input_feed).__name__}")
        wanted: list[int | list[int]] | None = None
        if output_names:
            if isinstance(output_names, str):
                raise InvalidArgument("output_names must be a list of names, not a string")
            # An unknown name raises the runtime's NotFound, listing the outputs.
            wanted = [self._output_index[n] if n in self._output_index
                      else [self._output_index[i] for i in self._output_sequences[n]]
                      if n in self._output_sequences
                      else self._model.find_output(n) for n in output_names]
        names: list[str] = []
        arrays: list[np.ndarray] = []
        feed: list[tuple[str, Any]] = []
        for name, value in input_feed.items():
            items = self._input_sequences.get(name)
            if items is None or name in self._input_by_name:
                feed.append((name, value))
                continue
            if isinstance(value, np.ndarray) or not isinstance(value, (list, tuple)):
                raise InvalidArgument(
                    f"input '{name}' is a sequence of {len(items)} tensors: pass a list")
            if len(value) != len(items):
                raise InvalidArgument(
                    f"input '{name}' is a sequence of {len(items)} tensors (compiled "
                    f"with --sequence {name}={len(items)}), got {len(value)}")
            feed += list(zip(items, value))
        for name, value in feed:
            if not isinstance(name, str):
                raise InvalidArgument(f"input names must be strings, got {name!r}")
            a = value if isinstance(value, np.ndarray) else np.asarray(value)
            if a.dtype.kind not in "biuf" and a.dtype not in _BIT_PATTERNS:
                raise InvalidArgument(
                    f"input '{name}': numpy dtype {a.dtype} is not a tensor element "
                    f"type kiln runs")
            # The float8 formats (and int4, ...) all travel as uint8: tell them
            # apart here.
            model_input = self._input_by_name.get(name)
            if (a.dtype in _FLOAT8_DTYPES and model_input is not None
                    and a.dtype != model_input.dtype):
                raise InvalidArgument(
                    f"input '{name}': numpy dtype {a.dtype}, but the model takes "
                    f"{model_input.type}")
            if not a.dtype.isnative:
                a = a.astype(a.dtype.newbyteorder("="))
            if not a.flags.c_contiguous:
                a = np.ascontiguousarray(a)
            names.append(name)
            arrays.append(_raw(a))
        if self._sized_per_run:
            # The outputs' sizes come from this run's symbols: the runtime allocates
            # each output and the array owns that buffer.
            outputs = [data.view(_NUMPY[dtype]).reshape(shape)
                       for dtype, shape, data in self._model.run_allocating(names, arrays)]
        else:
            # Every output gets a buffer: the runtime writes straight into numpy.
            outputs = [np.empty(o.shape, o.dtype) for o in self._outputs]
            self._model.run(names, arrays, self._all_output_names,
                            [_raw(o) for o in outputs])
        if wanted is None:
            # In model order, a sequence output's items as one list.
            wanted, seen = [], set()
            for i, name in enumerate(self._all_output_names):
                seq = next((s for s, items in self._output_sequences.items()
                            if name in items), None)
                if seq is None:
                    wanted.append(i)
                elif seq not in seen:
                    seen.add(seq)
                    wanted.append([self._output_index[n] for n in self._output_sequences[seq]])
        return [[outputs[j] for j in i] if isinstance(i, list) else outputs[i]
                for i in wanted]
