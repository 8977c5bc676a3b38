"""kiln: run models compiled by kiln, and compile ONNX models, from Python.

    import kiln
    sess = kiln.InferenceSession("model.onnx")    # or a compiled model.so
    outputs = sess.run(None, {"x": x})

The interface follows onnxruntime's InferenceSession. See docs/python.md.
"""

from __future__ import annotations

from . import _errors
from ._errors import (CompileError, InvalidArgument, KilnError, KilnNotFound,
                      NotFound, RuntimeCheckFailed, Unsupported)
from . import _kiln
from ._compile import cache_dir, compile, find_kiln
from ._session import InferenceSession, NodeArg

_kiln._set_error_factory(_errors.from_status)

__version__ = "0.1.0"
api_version = _kiln.api_version

__all__ = [
    "InferenceSession", "NodeArg", "compile", "find_kiln", "cache_dir",
    "KilnError", "InvalidArgument", "NotFound", "Unsupported", "RuntimeCheckFailed",
    "CompileError", "KilnNotFound",
]
