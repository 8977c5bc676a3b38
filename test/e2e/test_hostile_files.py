"""Hostile files (issue 19, the file side): damaged model libraries, FIFOs and folders
where a file is expected, symlink tricks in external data, malformed .npy inputs, bool
inputs other than 0/1, and names the packaging once mangled. Each must be rejected with
a message (or, for the names, work), never a signal or a hang: every command runs under
a time limit (harness.ERROR_TIMEOUT) and in its own process group, the runs under a
4 GiB address-space cap."""

from __future__ import annotations

import os
import shutil
import struct
import subprocess
from pathlib import Path

import numpy as np
import pytest
from onnx import TensorProto, helper

import harness
import models
from conftest import fail


def _model(folder, nodes, inputs, outputs, name="m.onnx", initializers=()):
    graph = helper.make_graph(nodes, "g", inputs, outputs, list(initializers))
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)],
                              ir_version=8)
    path = folder / name
    path.write_bytes(model.SerializeToString())
    return path


def _add_model(folder):
    """x[2,3] + w[2,3] -> y (float32)."""
    return _model(folder, [helper.make_node("Add", ["x", "w"], ["y"], name="add")],
                  [helper.make_tensor_value_info(n, TensorProto.FLOAT, [2, 3]) for n in "xw"],
                  [helper.make_tensor_value_info("y", TensorProto.FLOAT, [2, 3])])


def _not_model(folder):
    """Not(flags: bool[4]) -> y."""
    return _model(folder, [helper.make_node("Not", ["flags"], ["y"], name="not")],
                  [helper.make_tensor_value_info("flags", TensorProto.BOOL, [4])],
                  [helper.make_tensor_value_info("y", TensorProto.BOOL, [4])])


ADD = harness.register(harness.CompileSpec("hostile-files-add", _add_model))
NOT = harness.register(harness.CompileSpec("hostile-files-not", _not_model))
X = np.arange(6, dtype=np.float32).reshape(2, 3)


def _expect_clean_failure(result, expect_any, what):
    problem = harness.check_clean_failure(result, expect_any, what)
    if problem:
        fail(problem)


# Address-space cap for the runs on hostile files (KiB): a file must not make the runner
# allocate what its header claims. Not under a sanitizer, whose shadow memory needs more.
MEMORY_CAP_KIB = 4 << 20


def _capped(cmd):
    if "ASAN_OPTIONS" in os.environ or "TSAN_OPTIONS" in os.environ:
        return cmd
    return ["bash", "-c", f'ulimit -v {MEMORY_CAP_KIB} && exec "$@"', "capped", *map(str, cmd)]


def _run(kiln, artifact, inputs, tmp_path, runner="kiln"):
    out = tmp_path / "out"
    out.mkdir(exist_ok=True)
    cmd = _capped(kiln.run_cmd(artifact, inputs, out, runner=runner))
    return harness.run_command(cmd, harness.ERROR_TIMEOUT * harness.timeout_scale())


def _feeds(tmp_path):
    return harness.save_inputs({"x": X, "w": X}, tmp_path / "in")


RUNNERS = [pytest.param("kiln", id="kiln-run-subcommand"),
           pytest.param("kiln-run", id="kiln-run-binary")]


def _runner(kiln, runner):
    if runner == "kiln-run" and not kiln.has_kiln_run():
        pytest.skip("kiln-run is not built")
    return runner


#===----------------------------------------------------------------------===//
# Model libraries: damaged, truncated, not a file
#===----------------------------------------------------------------------===//


def _damaged_variants(good: bytes):
    yield "empty", b""
    yield "garbage", bytes(range(256)) * 64
    for frac in (0.01, 0.25, 0.5, 0.9):
        yield f"truncated-{int(frac * 100)}pct", good[:int(len(good) * frac)]
    yield "truncated-last-byte", good[:-1]
    flipped = bytearray(good)
    flipped[len(good) // 3] ^= 0x55
    yield "one-byte-flipped", bytes(flipped)
    zeroed = bytearray(good)
    zeroed[64:4096] = bytes(4096 - 64)  # the program headers and more
    yield "headers-zeroed", bytes(zeroed)
    yield "junk-appended", good + b"junk"


@pytest.mark.compiles(ADD.key)
@pytest.mark.parametrize("runner", RUNNERS)
def test_damaged_model_library_is_refused(runner, kiln, compile_cache, tmp_path):
    """A truncated or corrupted .so once crashed inside the dynamic loader (SIGBUS or
    SIGSEGV); kiln_model_open checks the checksum trailer first."""
    runner = _runner(kiln, runner)
    compiled = compile_cache.get(ADD)
    if not compiled.ok:
        fail(compiled.failure())
    good = compiled.artifact.read_bytes()
    inputs = _feeds(tmp_path)
    result = _run(kiln, compiled.artifact, inputs, tmp_path, runner)
    assert result.returncode == 0, result.describe()
    for name, data in _damaged_variants(good):
        bad = tmp_path / f"{name}.so"
        bad.write_bytes(data)
        result = _run(kiln, bad, inputs, tmp_path, runner)
        _expect_clean_failure(result, ["damaged"], f"{runner} on a {name} model")


W_SCALE = np.random.default_rng(19).standard_normal((64, 64)).astype(np.float32)


def _scale_model(folder):
    """x[64,64] * w[64,64] (an initializer of 16 KiB: kept in .rodata as it is)."""
    w = helper.make_tensor("w", TensorProto.FLOAT, [64, 64], W_SCALE.tobytes(), raw=True)
    return _model(folder, [helper.make_node("Mul", ["x", "w"], ["y"], name="scale")],
                  [helper.make_tensor_value_info("x", TensorProto.FLOAT, [64, 64])],
                  [helper.make_tensor_value_info("y", TensorProto.FLOAT, [64, 64])],
                  initializers=[w])


SCALE = harness.register(harness.CompileSpec("hostile-files-scale", _scale_model))


@pytest.mark.compiles(SCALE.key)
@pytest.mark.parametrize("runner", RUNNERS)
def test_flipped_weight_byte_is_refused(runner, kiln, compile_cache, tmp_path):
    """Damage in the weights is no crash but a silent wrong answer, which only the
    checksum catches: one bit flipped in the middle of the weights' bytes."""
    runner = _runner(kiln, runner)
    compiled = compile_cache.get(SCALE)
    if not compiled.ok:
        fail(compiled.failure())
    good = compiled.artifact.read_bytes()
    at = good.find(W_SCALE.tobytes())
    assert at > 0, "the weights are not in the artifact as they are"
    inputs = harness.save_inputs({"x": np.ones((64, 64), np.float32)}, tmp_path / "in")
    result = _run(kiln, compiled.artifact, inputs, tmp_path, runner)
    assert result.returncode == 0, result.describe()
    for offset in (0, W_SCALE.nbytes // 2, W_SCALE.nbytes - 1):
        bad = bytearray(good)
        bad[at + offset] ^= 0x01  # the lowest mantissa bit: a plausible value
        path = tmp_path / f"flipped-{offset}.so"
        path.write_bytes(bytes(bad))
        result = _run(kiln, path, inputs, tmp_path, runner)
        _expect_clean_failure(result, ["the file is damaged: checksum"],
                              f"{runner} on weights flipped at {offset}")


@pytest.mark.parametrize("runner", RUNNERS)
def test_fifo_directory_and_device_as_model(runner, kiln, tmp_path):
    """A FIFO once blocked kiln_model_open forever (the loader's open waits for a
    writer); only regular files are opened now."""
    runner = _runner(kiln, runner)
    fifo = tmp_path / "model.so"
    os.mkfifo(fifo)
    folder = tmp_path / "folder.so"
    folder.mkdir()
    for path, expect in ((fifo, "not a regular file"), (folder, "directory"),
                         ("/dev/zero", "not a regular file")):
        result = _run(kiln, path, {}, tmp_path, runner)
        _expect_clean_failure(result, [expect], f"{runner} on {path}")


#===----------------------------------------------------------------------===//
# .npy inputs
#===----------------------------------------------------------------------===//


def _npy(header: str, data: bytes = b"", major: int = 1, magic=b"\x93NUMPY") -> bytes:
    h = header.encode("latin1")
    if major == 1:
        return magic + bytes([1, 0]) + struct.pack("<H", len(h)) + h + data
    return magic + bytes([major, 0]) + struct.pack("<I", len(h)) + h + data


F32_HEADER = "{'descr': '<f4', 'fortran_order': False, 'shape': (2, 3), }"
BAD_NPY = [
    ("empty", b"", ["not a .npy"]),
    ("no-magic", b"PK\x03\x04" + bytes(100), ["not a .npy"]),
    ("version-9", _npy(F32_HEADER, X.tobytes())[:6] + b"\x09\x00" + bytes(20),
     ["version"]),
    ("header-length-past-end", _npy(F32_HEADER)[:8] + struct.pack("<H", 60000) + b"{",
     ["truncated"]),
    ("v2-header-length-4GiB", _npy(F32_HEADER, major=2)[:8] + b"\xff\xff\xff\xff{",
     ["truncated"]),
    ("unterminated-string", _npy("{'descr': '<f4"), ["malformed"]),
    ("no-dict", _npy("[1, 2, 3]"), ["malformed"]),
    ("unknown-key", _npy("{'descr': '<f4', 'fortran_order': False, 'shape': (2, 3), "
                         "'x': 1}"), ["malformed"]),
    ("missing-shape", _npy("{'descr': '<f4', 'fortran_order': False}"), ["malformed"]),
    ("negative-dim", _npy("{'descr': '<f4', 'fortran_order': False, 'shape': (-2, 3)}"),
     ["malformed"]),
    ("huge-dims", _npy("{'descr': '<f4', 'fortran_order': False, "
                       "'shape': (999999999999999999, 999999999999999999)}"),
     ["too large"]),
    ("dim-too-long", _npy("{'descr': '<f4', 'fortran_order': False, "
                          "'shape': (99999999999999999999999,)}"), ["malformed"]),
    ("structured-dtype", _npy("{'descr': [('a', '<f4')], 'fortran_order': False, "
                              "'shape': (2, 3)}"), ["structured"]),
    ("object-dtype", _npy("{'descr': '|O', 'fortran_order': False, 'shape': (2, 3)}"),
     ["unsupported"]),
    ("big-endian", _npy("{'descr': '>f4', 'fortran_order': False, 'shape': (2, 3)}",
                        X.tobytes()), ["big-endian"]),
    ("fortran-order", _npy("{'descr': '<f4', 'fortran_order': True, 'shape': (2, 3)}",
                           X.tobytes()), ["fortran"]),
    ("data-truncated", _npy(F32_HEADER, X.tobytes()[:-1]), ["truncated"]),
    ("data-too-long", _npy(F32_HEADER, X.tobytes() + b"\0"), ["bytes of data"]),
    ("wrong-shape", _npy("{'descr': '<f4', 'fortran_order': False, 'shape': (3, 2)}",
                         X.tobytes()), ["shape"]),
    ("wrong-dtype", _npy("{'descr': '<i4', 'fortran_order': False, 'shape': (2, 3)}",
                         X.astype(np.int32).tobytes()), ["dtype"]),
]


@pytest.mark.compiles(ADD.key)
@pytest.mark.parametrize("runner", RUNNERS)
def test_bad_npy_inputs_are_refused(runner, kiln, compile_cache, tmp_path):
    runner = _runner(kiln, runner)
    compiled = compile_cache.get(ADD)
    if not compiled.ok:
        fail(compiled.failure())
    inputs = _feeds(tmp_path)
    for name, data, expect in BAD_NPY:
        bad = tmp_path / f"{name}.npy"
        bad.write_bytes(data)
        result = _run(kiln, compiled.artifact, {**inputs, "x": bad}, tmp_path, runner)
        _expect_clean_failure(result, expect, f"{runner} with input x = {name}.npy")
        # The message names the file or the input it was given for.
        assert name in result.stderr or "'x'" in result.stderr, result.describe()


@pytest.mark.compiles(ADD.key)
@pytest.mark.parametrize("runner", RUNNERS)
def test_fifo_and_directory_as_npy_input(runner, kiln, compile_cache, tmp_path):
    """An input file that is a FIFO must not block the runner."""
    runner = _runner(kiln, runner)
    compiled = compile_cache.get(ADD)
    if not compiled.ok:
        fail(compiled.failure())
    inputs = _feeds(tmp_path)
    fifo = tmp_path / "fifo.npy"
    os.mkfifo(fifo)
    folder = tmp_path / "folder.npy"
    folder.mkdir()
    for path, expect in ((fifo, "not a regular file"), (folder, "directory")):
        result = _run(kiln, compiled.artifact, {**inputs, "x": path}, tmp_path, runner)
        _expect_clean_failure(result, [expect], f"{runner} with input x = {path.name}")


@pytest.mark.compiles(NOT.key)
@pytest.mark.parametrize("runner", RUNNERS)
def test_bool_inputs_must_be_zero_or_one(runner, kiln, compile_cache, tmp_path):
    """Bools other than 0/1 were read inconsistently (one op tests the low bit, another
    the whole byte); the runtime now refuses them, naming the input."""
    runner = _runner(kiln, runner)
    compiled = compile_cache.get(NOT)
    if not compiled.ok:
        fail(compiled.failure())
    good = np.array([True, False, True, True])
    harness.run_and_compare(kiln, compiled, {"flags": good}, tmp_path / "ok", runner=runner)
    raw = _npy("{'descr': '|b1', 'fortran_order': False, 'shape': (4,), }",
               bytes([1, 0, 2, 1]))
    bad = tmp_path / "flags.npy"
    bad.write_bytes(raw)
    result = _run(kiln, compiled.artifact, {"flags": bad}, tmp_path, runner)
    _expect_clean_failure(result, ["bool element 2 is 2"], f"{runner} with bool 2")
    assert "'flags'" in result.stderr, result.describe()


#===----------------------------------------------------------------------===//
# External data: symlinks, FIFOs, folders
#===----------------------------------------------------------------------===//


def _external(folder, location):
    return models._external_model(location)


def _compile_external(kiln, folder, location, tmp_path):
    model = folder / "m.onnx"
    model.write_bytes(_external(folder, location).SerializeToString())
    return kiln.compile(model, tmp_path / "out.so", timeout=harness.ERROR_TIMEOUT)


def test_external_data_symlink_inside_folder_is_refused(kiln, tmp_path):
    """External data is opened component by component with O_NOFOLLOW: even a symlink
    that stays inside the folder is refused, since a check of where it leads and the open
    could see different links (time of check, time of use)."""
    folder = tmp_path / "m"
    (folder / "data").mkdir(parents=True)
    (folder / "data" / "weights.bin").write_bytes(models.WEIGHTS_4x4)
    os.symlink("data/weights.bin", folder / "link.bin")
    os.symlink("data", folder / "linkdir")
    result = _compile_external(kiln, folder, "link.bin", tmp_path)
    _expect_clean_failure(result, ["symlink 'link.bin'"], "external data via a symlink")
    result = _compile_external(kiln, folder, "linkdir/weights.bin", tmp_path)
    _expect_clean_failure(result, ["symlink 'linkdir'"], "external data via a symlinked dir")
    # The file itself, by its real path, is fine.
    result = _compile_external(kiln, folder, "data/weights.bin", tmp_path)
    assert result.returncode == 0, result.describe()
    result = _compile_external(kiln, folder, "./data/./weights.bin", tmp_path)
    assert result.returncode == 0, result.describe()


def test_external_data_fifo_and_directory(kiln, tmp_path):
    folder = tmp_path / "m"
    folder.mkdir()
    os.mkfifo(folder / "fifo.bin")
    (folder / "dir.bin").mkdir()
    for location in ("fifo.bin", "dir.bin"):
        result = _compile_external(kiln, folder, location, tmp_path)
        _expect_clean_failure(result, ["not a regular file"], f"external data {location}")


#===----------------------------------------------------------------------===//
# Names in the packaging
#===----------------------------------------------------------------------===//


def _names_model(folder, a, b, y):
    return _model(folder, [helper.make_node("Add", [a, b], [y], name="add")],
                  [helper.make_tensor_value_info(n, TensorProto.FLOAT, [2, 3]) for n in (a, b)],
                  [helper.make_tensor_value_info(y, TensorProto.FLOAT, [2, 3])])


def test_unusual_tensor_names_are_bound(kiln, tmp_path):
    """Names were escaped with a format that is not octal: "xé" and "a\\nb" reached the
    descriptor mangled and the inputs could never be bound."""
    a, b, y = "x\u00e9", "a\nb", "out\t\"q\"\\"
    model = _names_model(tmp_path, a, b, y)
    artifact = tmp_path / "names.so"
    result = kiln.compile(model, artifact, timeout=harness.COMPILE_TIMEOUT_SMALL)
    assert result.returncode == 0, result.describe()
    out = tmp_path / "out"
    inputs = harness.save_inputs({a: X, b: X * 3}, tmp_path / "in")
    result = harness.run_command(kiln.run_cmd(artifact, inputs, out),
                                 harness.RUN_TIMEOUT * harness.timeout_scale())
    assert result.returncode == 0, result.describe()
    files = list(out.glob("*.npy"))
    assert len(files) == 1, files
    np.testing.assert_array_equal(np.load(files[0]), X * 4)


def test_name_with_nul_is_refused(kiln, tmp_path):
    """Names that differ only after a NUL became the same C string: refused at compile."""
    model = _names_model(tmp_path, "a\0one", "a\0two", "y")
    result = kiln.compile(model, tmp_path / "out.so", timeout=harness.ERROR_TIMEOUT)
    _expect_clean_failure(result, ["NUL"], "kiln compile with a NUL in a name")


@pytest.mark.parametrize("stem", ["kiln", "kiln_model", "KILN_x", "Kiln"])
def test_output_named_like_kiln_itself(stem, kiln, tmp_path):
    """`-o kiln.so` once failed inside clang (kiln_descriptor defined twice): the
    default prefix from the output's name collided with kiln's own symbols."""
    model = _add_model(tmp_path)
    artifact = tmp_path / f"{stem}.so"
    result = kiln.compile(model, artifact, timeout=harness.COMPILE_TIMEOUT_SMALL)
    assert result.returncode == 0, result.describe()
    out = tmp_path / "out"
    inputs = harness.save_inputs({"x": X, "w": X}, tmp_path / "in")
    result = harness.run_command(kiln.run_cmd(artifact, inputs, out),
                                 harness.RUN_TIMEOUT * harness.timeout_scale())
    assert result.returncode == 0, result.describe()
    np.testing.assert_array_equal(np.load(out / "y.npy"), X * 2)


def test_header_named_abi_compiles(kiln, tmp_path):
    """`--name abi` once gave the header model_abi.h's own include guard."""
    cc = shutil.which("clang-22") or shutil.which("clang") or shutil.which("cc")
    if not cc:
        pytest.skip("no C compiler")
    model = _add_model(tmp_path)
    obj = tmp_path / "abi.o"
    result = kiln.compile(model, obj, ["--emit", "obj", "--name", "abi"],
                          timeout=harness.COMPILE_TIMEOUT_SMALL)
    assert result.returncode == 0, result.describe()
    user = tmp_path / "user.c"
    user.write_text('#include "abi.h"\n'
                    "const kiln_model_desc *get(void) { return abi_descriptor(); }\n"
                    "int n = ABI_NUM_INPUTS;\n")
    include = Path(__file__).resolve().parents[2] / "runtime" / "include"
    proc = subprocess.run([cc, "-fsyntax-only", f"-I{tmp_path}", f"-I{include}", str(user)],
                          capture_output=True, text=True, timeout=60)
    assert proc.returncode == 0, proc.stderr
