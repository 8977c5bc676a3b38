"""kiln's exceptions: the runtime's status codes as a class hierarchy."""

from __future__ import annotations


class KilnError(Exception):
    """Every error kiln raises. `code` is the runtime's status code name
    ("INVALID_ARGUMENT", ...) or "COMPILE_FAILED"; str(e) is the message."""

    code = "INTERNAL"

    def __init__(self, message: str, code: str | None = None):
        super().__init__(message)
        if code is not None:
            self.code = code


class InvalidArgument(KilnError, ValueError):
    """A bad feed or option: wrong dtype, shape or rank, missing input, ..."""

    code = "INVALID_ARGUMENT"


class NotFound(KilnError, LookupError):
    """An input or output name the model does not have."""

    code = "NOT_FOUND"

    def __str__(self) -> str:  # LookupError would not quote, but be explicit
        return self.args[0] if self.args else ""


class Unsupported(KilnError):
    """A model this runtime cannot run (another ABI version, missing CPU features)."""

    code = "UNSUPPORTED"


class RuntimeCheckFailed(KilnError, RuntimeError):
    """A run-time check in the model failed; the message names the node."""

    code = "RUNTIME_CHECK_FAILED"


class CompileError(KilnError):
    """`kiln compile` failed; the message is its diagnostics (node named)."""

    code = "COMPILE_FAILED"

    def __init__(self, message: str, returncode: int | None = None,
                 command: list[str] | None = None):
        super().__init__(message)
        self.returncode = returncode
        self.command = command


class KilnNotFound(KilnError, FileNotFoundError):
    """The `kiln` compiler could not be found (see docs/python.md)."""

    code = "NOT_FOUND"


_BY_CODE = {
    "INVALID_ARGUMENT": InvalidArgument,
    "NOT_FOUND": NotFound,
    "UNSUPPORTED": Unsupported,
    "RUNTIME_CHECK_FAILED": RuntimeCheckFailed,
}


def from_status(code: str, message: str) -> KilnError:
    """The exception for a runtime status (called by the extension)."""
    cls = _BY_CODE.get(code, KilnError)
    return cls(message, code)
