"""kiln's conformance suite: every ONNX backend node test, through kiln and onnxruntime.

Each test folder (model.onnx + test_data_set_N/) of the pinned onnx package is compiled
with `kiln compile`, run with the runtime-only runner `kiln-run` on every data set, and
compared with the expected outputs at ONNX's tolerances (rtol 1e-3, atol 1e-7; floats also
compare NaN positions, other types compare exactly, dtypes and shapes must match). The same
test runs through onnxruntime (all graph optimizations on) in the same run. Each test ends
as one of:

  pass      every data set matched
  fail      kiln compiled and ran it but an output is wrong (numbers, shape or dtype), or the
            run itself reported an error
  rejected  kiln compile exited non-zero with a diagnostic ("kiln: error: ...") and no
            crash report
  crash     a signal, an abort, an internal-error report, or no answer within the limit

Usage (from the repository root, after scripts/setup.sh):

  .venv/bin/python test/conformance/run.py              # run all, print totals
  .venv/bin/python test/conformance/run.py --check      # CI: compare with the expectations
  .venv/bin/python test/conformance/run.py --update     # rewrite expectations + docs/conformance.md
  .venv/bin/python test/conformance/run.py -k gather    # only tests whose name contains 'gather'

--check fails when a test listed in expected_pass.txt stops passing, when any test crashes,
or when a test fails with wrong numbers and is not listed in known_failures.txt.

Files beside this script:
  expected_pass.txt   the tests that pass (rewritten by --update)
  known_failures.txt  `test_name: cause` for tests allowed to fail with wrong numbers
  tolerances.txt      `test_name rtol atol: reason` for tests whose tolerance is relaxed
  op_notes.txt        `OpType: reason` for default-domain operators kiln does not support

Environment: KILN_BUILD_DIR (default build), KILN_CONFORMANCE_JOBS (default: CPUs, at most 2).
"""

from __future__ import annotations

import argparse
import collections
import concurrent.futures
import dataclasses
import json
import os
import re
import shutil
import sys
import time
from pathlib import Path

import numpy as np

HERE = Path(__file__).resolve().parent
REPO = HERE.parents[1]
sys.path.insert(0, str(REPO / "test" / "e2e"))
sys.path.insert(0, str(HERE))

import harness  # noqa: E402  (run_command, crash markers, tool paths)
import node_data  # noqa: E402

RTOL = 1e-3
ATOL = 1e-7
TIME_LIMIT = 120  # seconds per kiln compile and per kiln-run of one data set

EXPECTED_PASS = HERE / "expected_pass.txt"
KNOWN_FAILURES = HERE / "known_failures.txt"
TOLERANCES = HERE / "tolerances.txt"
OP_NOTES = HERE / "op_notes.txt"
DOC = REPO / "docs" / "conformance.md"


#===----------------------------------------------------------------------===//
# Expectation files
#===----------------------------------------------------------------------===//


def _lines(path: Path) -> list[str]:
    if not path.is_file():
        return []
    out = []
    for line in path.read_text().splitlines():
        line = line.strip()
        if line and not line.startswith("#"):
            out.append(line)
    return out


def read_expected_pass() -> set[str]:
    return set(_lines(EXPECTED_PASS))


def read_colon_file(path: Path) -> dict[str, str]:
    """`key: text` lines."""
    out = {}
    for line in _lines(path):
        key, _, text = line.partition(":")
        out[key.strip()] = text.strip()
    return out


@dataclasses.dataclass
class Tolerance:
    rtol: float
    atol: float
    reason: str


def read_tolerances() -> dict[str, Tolerance]:
    out = {}
    for key, text in read_colon_file(TOLERANCES).items():
        name, rtol, atol = key.split()
        out[name] = Tolerance(float(rtol), float(atol), text)
    return out


#===----------------------------------------------------------------------===//
# One test
#===----------------------------------------------------------------------===//


@dataclasses.dataclass
class Outcome:
    name: str
    op: str
    kiln: str = ""          # pass / fail / rejected / crash
    kiln_detail: str = ""   # first lines of the reason when not pass
    ort: str = ""           # pass / fail / error
    ort_detail: str = ""
    seconds: float = 0.0
    specialized: list = dataclasses.field(default_factory=list)  # inputs compiled for one value


def main_op(model) -> str:
    """The operator a node test is about: its only node that is not a Constant, else the
    last node."""
    ops = [n.op_type for n in model.graph.node]
    real = [o for o in ops if o != "Constant"]
    if len(real) == 1:
        return real[0]
    return ops[-1] if ops else "?"


def load_data_sets(folder: Path, model) -> list[tuple[dict, list]]:
    """[(inputs by name, expected outputs in order)] per test_data_set_N."""
    from onnx import TensorProto, numpy_helper

    inputs_info = [i for i in model.graph.input]
    sets = []
    for data in sorted(folder.glob("test_data_set_*"), key=lambda p: int(p.name.rsplit("_", 1)[1])):
        feeds, outs = {}, []
        for j, info in enumerate(inputs_info):
            path = data / f"input_{j}.pb"
            if not path.is_file():
                break
            feeds[info.name] = _read_tensor(path, info)
        j = 0
        while (data / f"output_{j}.pb").is_file():
            outs.append(_read_tensor(data / f"output_{j}.pb", model.graph.output[j]))
            j += 1
        sets.append((feeds, outs))
    return sets


class Absent:
    """An optional input or output holding nothing."""

    def __repr__(self):
        return "Absent"


ABSENT = Absent()


def _read_tensor(path: Path, info):
    """A TensorProto as a numpy array, a SequenceProto of tensors as a list of them, an
    OptionalProto as its value or ABSENT; other kinds (maps, sequences of non-tensors) as
    None (kiln rejects such graphs before they run)."""
    import onnx
    from onnx import TensorProto, numpy_helper

    kind = info.type.WhichOneof("value")
    if kind == "tensor_type":
        t = TensorProto()
        t.ParseFromString(path.read_bytes())
        return numpy_helper.to_array(t)
    if kind == "sequence_type":
        seq = onnx.SequenceProto()
        seq.ParseFromString(path.read_bytes())
        return _sequence_value(seq)
    if kind == "optional_type":
        opt = onnx.OptionalProto()
        opt.ParseFromString(path.read_bytes())
        if opt.HasField("tensor_value"):
            return numpy_helper.to_array(opt.tensor_value)
        if opt.HasField("sequence_value"):
            return _sequence_value(opt.sequence_value)
        if opt.HasField("map_value") or opt.HasField("optional_value"):
            return None
        return ABSENT
    return None


def _sequence_value(seq):
    from onnx import numpy_helper

    if seq.sequence_values or seq.map_values or seq.optional_values:
        return None
    return [numpy_helper.to_array(t) for t in seq.tensor_values]


def _is_value(v) -> bool:
    """A value the runner can pass to kiln-run or compare (tensors, sequences of them,
    optionals)."""
    return v is ABSENT or isinstance(v, np.ndarray) or (
        isinstance(v, list) and all(isinstance(t, np.ndarray) for t in v))


def boundary_flags(model, data_sets) -> list[str] | None:
    """`kiln compile` flags for the sequence and optional inputs (docs/runtime-api.md, "Sequences
    and optionals at the boundary"): --sequence NAME=N with every data set's count, --shape
    NAME[i]=... for items whose element type has no shape, --absent NAME for an absent
    optional. None when the data sets disagree on that structure (one compile cannot run
    them all)."""
    flags: list[str] = []
    for info in model.graph.input:
        values = [d[0].get(info.name) for d in data_sets]
        if not values or all(isinstance(v, np.ndarray) for v in values):
            continue
        first = values[0]
        if first is ABSENT:
            if any(v is not ABSENT for v in values):
                return None
            flags += ["--absent", info.name]
            continue
        if not isinstance(first, list):
            continue  # a present optional tensor: an ordinary input
        if any(not isinstance(v, list) or [t.shape for t in v] != [t.shape for t in first]
               for v in values):
            return None
        flags += ["--sequence", f"{info.name}={len(first)}"]
        elem = info.type
        if elem.HasField("optional_type"):
            elem = elem.optional_type.elem_type
        elem = elem.sequence_type.elem_type.tensor_type
        if not elem.HasField("shape"):
            for i, t in enumerate(first):
                flags += ["--shape", f"{info.name}[{i}]=" + ",".join(str(d) for d in t.shape)]
    return flags


def _file_stem(name: str, index: int, taken: set) -> str:
    """kiln-run's file name for an output (tools/kiln-run: safeFileStem)."""
    stem = "".join(c if (c.isascii() and (c.isalnum() or c in "_-.")) else "_" for c in name[:200])
    if stem.startswith("."):
        stem = "_" + stem[1:]
    if not stem:
        stem = f"output_{index}"
    while stem in taken:
        stem += f"_{index}"
    taken.add(stem)
    return stem


_FLOAT8 = ("float8_e4m3fn", "float8_e4m3fnuz", "float8_e5m2", "float8_e5m2fnuz",
           # and the other one-byte ml_dtypes kiln-run reads and writes as V1 (int4 and
           # the other packed types one element per byte: kiln-run packs them)
           "float8_e8m0fnu", "float4_e2m1fn", "int4", "uint4", "int2", "uint2")


def _as_runner_array(value: np.ndarray) -> np.ndarray:
    """What kiln-run reads: bfloat16 as its uint16 bit patterns, the float8 formats as their
    uint8 ones, everything C-contiguous."""
    if value.dtype.name == "bfloat16":
        value = value.view(np.uint16)
    elif value.dtype.name in _FLOAT8:
        value = value.view(np.uint8)
    return np.array(value, order="C", copy=True)  # ascontiguousarray would make 0-d arrays 1-d


def compare(got: np.ndarray, want: np.ndarray, rtol: float, atol: float) -> str | None:
    # kiln-run writes bfloat16 as numpy does for ml_dtypes ("<V2"; older: uint16)
    if want.dtype.name == "bfloat16" and (got.dtype == np.uint16 or got.dtype == np.dtype("V2")):
        got = got.view(want.dtype)
    # and the float8 formats as V1 (the model's dtype says which)
    if want.dtype.name in _FLOAT8 and got.dtype in (np.uint8, np.dtype("V1")):
        got = got.view(want.dtype)
    if got.dtype != want.dtype:
        return f"dtype {got.dtype}, expected {want.dtype}"
    if got.shape != want.shape:
        return f"shape {got.shape}, expected {want.shape}"
    if want.dtype.kind in "fc" or want.dtype.name in ("bfloat16", "float16") + _FLOAT8:
        widen = want.dtype.name in ("bfloat16",) + _FLOAT8
        g = got.astype(np.float64) if widen else got
        w = want.astype(np.float64) if widen else want
        try:
            np.testing.assert_allclose(g, w, rtol=rtol, atol=atol, equal_nan=True)
        except AssertionError as e:
            lines = [l for l in str(e).splitlines() if l.strip()]
            return " ".join(lines[1:4])[:300]
        return None
    if not np.array_equal(got, want):
        bad = np.argwhere(got != want)
        idx = tuple(bad[0]) if bad.size else ()
        return f"{len(bad)} of {want.size} elements differ; first at {idx}: {got[idx]!r} vs {want[idx]!r}"
    return None


def _first_lines(text: str, n: int = 2, width: int = 300) -> str:
    lines = [l for l in text.strip().splitlines() if l.strip()]
    return " | ".join(lines[:n])[:width]


NON_CONSTANT = re.compile(r"node '(?P<node>[^']*)' \((?P<op>\w+), opset \d+\): [^\n]*"
                          r"non-constant input '(?P<input>[^']*)'")


def specializable_input(stderr: str, model, data_sets, folder: Path) -> tuple[str, Path] | None:
    """When kiln rejected a node because an output shape depends on an input that is a graph
    input with the same value in every data set: that input's name and data file, for
    `kiln compile --specialize NAME=FILE` (the compiled model keeps the input and fails a
    run given any other value)."""
    import onnx.defs

    m = NON_CONSTANT.search(stderr)
    if not m:
        return None
    node = None
    for i, n in enumerate(model.graph.node):
        if (n.name or f"{n.op_type}_{i}") == m["node"]:
            node = n
            break
    if node is None:
        return None
    try:
        formal = [p.name for p in onnx.defs.get_schema(m["op"]).inputs]
    except Exception:
        return None
    if m["input"] not in formal or formal.index(m["input"]) >= len(node.input):
        return None
    value_name = node.input[formal.index(m["input"])]
    inputs = [i.name for i in model.graph.input]
    if value_name not in inputs or not data_sets:
        return None
    first = data_sets[0][0].get(value_name)
    if first is None or any(not np.array_equal(d[0].get(value_name), first) for d in data_sets):
        return None
    return value_name, folder / "test_data_set_0" / f"input_{inputs.index(value_name)}.pb"


# A clean rejection names what it is about (a node, an input or output, the model, a flag);
# an MLIR verifier message ("'llvm.call' op ...") or any other text is an internal error.
LOCATED_ERROR = re.compile(r"^kiln: error: (node '|input '|graph (input|output) '|model |"
                           r"initializer '|--)", re.MULTILINE)


def run_kiln(folder: Path, model, data_sets, tol: Tolerance | None, work: Path,
             tools: dict, specialized: list[str],
             flags: list[str] | None = None) -> tuple[str, str]:
    work.mkdir(parents=True, exist_ok=True)
    artifact = work / "model.so"
    extra: list[str] = list(flags or [])
    for _ in range(8):
        r = harness.run_command([tools["kiln"], "compile", folder / "model.onnx", "-o", artifact,
                                 *tools["device_args"], *extra], TIME_LIMIT)
        if r.returncode != 1 or harness.crash_marker(r.stderr):
            break
        spec = specializable_input(r.stderr, model, data_sets, folder)
        if spec is None or spec[0] in specialized:
            break
        specialized.append(spec[0])
        extra += ["--specialize", f"{spec[0]}={spec[1]}"]
    if r.timed_out:
        return "crash", f"kiln compile did not finish within {TIME_LIMIT} s"
    if r.returncode < 0:
        return "crash", f"kiln compile killed by signal {-r.returncode}: {_first_lines(r.stderr)}"
    marker = harness.crash_marker(r.stderr)
    if marker:
        return "crash", f"kiln compile internal error ({marker}): {_first_lines(r.stderr)}"
    if r.returncode != 0:
        if not LOCATED_ERROR.search(r.stderr):
            return "crash", f"kiln compile failed without a located diagnostic: " \
                            f"{_first_lines(r.stderr)}"
        return "rejected", _first_lines(r.stderr, 1)
    if not artifact.is_file():
        return "crash", "kiln compile exited 0 but wrote no artifact"
    rtol, atol = (tol.rtol, tol.atol) if tol else (RTOL, ATOL)
    for k, (feeds, expected) in enumerate(data_sets):
        out_dir = work / f"out{k}"
        out_dir.mkdir(exist_ok=True)
        cmd = [tools["kiln-run"], artifact, "--threads", "1", "--output-dir", out_dir,
               *tools["device_args"]]
        for j, (name, value) in enumerate(feeds.items()):
            if value is ABSENT:
                continue
            # A sequence's items are the inputs NAME[0], NAME[1], ...
            items = [(f"{name}[{i}]", t) for i, t in enumerate(value)] \
                if isinstance(value, list) else [(name, value)]
            for i, (item_name, item) in enumerate(items):
                path = work / f"in{k}_{j}_{i}.npy"
                np.save(path, _as_runner_array(item))
                cmd += ["--input", f"{item_name}={path}"]
        r = harness.run_command(cmd, TIME_LIMIT)
        if r.timed_out:
            return "crash", f"kiln-run did not finish within {TIME_LIMIT} s (data set {k})"
        if r.returncode < 0:
            return "crash", f"kiln-run killed by signal {-r.returncode} (data set {k})"
        if r.returncode != 0:
            return "fail", f"kiln-run failed on data set {k}: {_first_lines(r.stderr, 1)}"
        # kiln-run's files, in the order of the compiled model's outputs (a sequence
        # output is its items NAME[0], NAME[1], ...).
        taken: set = set()
        wanted = []
        for j, want in enumerate(expected):
            out_name = model.graph.output[j].name
            if want is ABSENT:
                return "fail", f"output {out_name!r} should be absent (data set {k})"
            if isinstance(want, list):
                wanted += [(f"{out_name}[{i}]", t) for i, t in enumerate(want)]
                wanted.append((f"{out_name}[{len(want)}]", None))  # must not exist
            else:
                wanted.append((out_name, want))
        index = 0
        for out_name, want in wanted:
            if want is None:
                stem = _file_stem(out_name, index, set(taken))
                if (out_dir / f"{stem}.npy").is_file():
                    return "fail", f"sequence output has more items than {out_name!r} " \
                                   f"(data set {k})"
                continue
            path = out_dir / f"{_file_stem(out_name, index, taken)}.npy"
            index += 1
            if not path.is_file():
                return "fail", f"no output {out_name!r} written (data set {k})"
            problem = compare(np.load(path, allow_pickle=False), want, rtol, atol)
            if problem:
                return "fail", f"output {out_name!r} (data set {k}): {problem}"
    return "pass", ""


def run_ort(folder: Path, data_sets, tol: Tolerance | None) -> tuple[str, str]:
    import onnxruntime as ort

    rtol, atol = (tol.rtol, tol.atol) if tol else (RTOL, ATOL)
    try:
        opts = ort.SessionOptions()
        opts.log_severity_level = 4
        opts.intra_op_num_threads = 1
        opts.graph_optimization_level = ort.GraphOptimizationLevel.ORT_ENABLE_ALL
        sess = ort.InferenceSession(str(folder / "model.onnx"), opts,
                                    providers=["CPUExecutionProvider"])
        names = [o.name for o in sess.get_outputs()]
        for k, (feeds, expected) in enumerate(data_sets):
            if any(not _is_value(v) for v in list(feeds.values()) + expected):
                return "error", "non-tensor inputs or outputs (not compared here)"
            # Sequences as lists (onnxruntime's form), an absent optional as None.
            got = sess.run(names, {n: None if v is ABSENT else v for n, v in feeds.items()})
            for j, want in enumerate(expected):
                if want is ABSENT or isinstance(want, list):
                    g = got[j]
                    if want is ABSENT:
                        problem = None if g is None else "present, expected absent"
                    elif not isinstance(g, list) or len(g) != len(want):
                        problem = f"{type(g).__name__}, expected a sequence of {len(want)}"
                    else:
                        problem = next((p for gi, wi in zip(g, want)
                                        if (p := compare(np.asarray(gi), wi, rtol, atol))), None)
                else:
                    problem = compare(np.asarray(got[j]), want, rtol, atol)
                if problem:
                    return "fail", f"output {names[j]!r} (data set {k}): {problem}"
    except Exception as e:  # onnxruntime rejects the model or fails to run it
        return "error", _first_lines(f"{type(e).__name__}: {e}", 1)
    return "pass", ""


def run_one(folder: Path, work_root: Path, tolerances: dict, tools: dict, keep: bool,
            with_ort: bool) -> Outcome:
    import onnx

    start = time.monotonic()
    model = onnx.load(str(folder / "model.onnx"), load_external_data=False)
    out = Outcome(folder.name, main_op(model))
    try:
        data_sets = load_data_sets(folder, model)
    except Exception as e:
        out.kiln, out.kiln_detail = "crash", f"the runner could not read the test data: {e}"
        return out
    tol = tolerances.get(folder.name)
    work = work_root / folder.name
    if work.exists():
        shutil.rmtree(work)
    flags = boundary_flags(model, data_sets) if all(
        _is_value(v) for f, e in data_sets for v in list(f.values()) + e) else None
    if flags is None:
        # Map values, or sequences whose structure differs between data sets: kiln must
        # reject the graph; running is not possible.
        out.kiln, out.kiln_detail = run_kiln(folder, model, [], tol, work, tools,
                                             out.specialized)
        if out.kiln == "pass":
            out.kiln, out.kiln_detail = "fail", "compiled a graph with non-tensor values"
    else:
        out.kiln, out.kiln_detail = run_kiln(folder, model, data_sets, tol, work, tools,
                                             out.specialized, flags)
    if out.kiln == "pass" and not keep:
        shutil.rmtree(work, ignore_errors=True)
    if with_ort:
        out.ort, out.ort_detail = run_ort(folder, data_sets, tol)
    out.seconds = time.monotonic() - start
    return out


#===----------------------------------------------------------------------===//
# The suite
#===----------------------------------------------------------------------===//


def run_suite(names_filter: list[str], jobs: int, keep: bool, with_ort: bool,
              progress: bool, device: str = "cpu") -> tuple[list[Outcome], float, Path]:
    build = harness.build_dir()
    tools = {"kiln": harness.tool_path("kiln"), "kiln-run": harness.tool_path("kiln-run")}
    for t in tools.values():
        if not t.is_file():
            sys.exit(f"run.py: {t} not found: build kiln first (bash scripts/setup.sh)")
    data_dir = node_data.node_test_dir(build / "conformance" / "node-data")
    folders = sorted(p for p in data_dir.iterdir() if (p / "model.onnx").is_file())
    if names_filter:
        folders = [f for f in folders if any(k in f.name for k in names_filter)]
    work_root = build / "conformance" / ("work" if device == "cpu" else f"work-{device}")
    tools["device_args"] = [] if device == "cpu" else ["--device", device]
    work_root.mkdir(parents=True, exist_ok=True)
    tolerances = read_tolerances()
    start = time.monotonic()
    results: list[Outcome] = []
    with concurrent.futures.ThreadPoolExecutor(max_workers=jobs) as pool:
        futures = [pool.submit(run_one, f, work_root, tolerances, tools, keep, with_ort)
                   for f in folders]
        for i, fut in enumerate(futures):
            results.append(fut.result())
            if progress and (i + 1) % 100 == 0:
                print(f"  {i + 1}/{len(futures)} tests, {time.monotonic() - start:.0f} s",
                      flush=True)
    return results, time.monotonic() - start, data_dir


def totals(results: list[Outcome]) -> dict:
    c = collections.Counter(r.kiln for r in results)
    o = collections.Counter(r.ort for r in results)
    return {"tests": len(results), "pass": c["pass"], "fail": c["fail"],
            "rejected": c["rejected"], "crash": c["crash"], "ort_pass": o["pass"],
            "ort_fail": o["fail"], "ort_error": o["error"]}


def check(results: list[Outcome], full_run: bool) -> list[str]:
    """What makes --check fail."""
    expected = read_expected_pass()
    known = read_colon_file(KNOWN_FAILURES)
    by_name = {r.name: r for r in results}
    problems = []
    for r in results:
        if r.kiln == "crash":
            problems.append(f"CRASH {r.name}: {r.kiln_detail}")
        elif r.kiln == "fail" and r.name not in known:
            problems.append(f"WRONG {r.name}: {r.kiln_detail} (kiln must reject what it cannot "
                            f"compute; or list it in known_failures.txt with its cause)")
    for name in sorted(expected):
        r = by_name.get(name)
        if r is None:
            if full_run:
                problems.append(f"MISSING {name}: listed in expected_pass.txt but no such test")
        elif r.kiln != "pass":
            problems.append(f"REGRESSED {name}: now {r.kiln}: {r.kiln_detail}")
    if len(known) > 10:
        problems.append(f"known_failures.txt lists {len(known)} tests; the limit is 10")
    return problems


def print_summary(results: list[Outcome], seconds: float) -> None:
    t = totals(results)
    n = max(1, t["tests"])
    print(f"\nkiln: {t['pass']} pass ({100 * t['pass'] / n:.1f}%), {t['fail']} fail, "
          f"{t['rejected']} rejected, {t['crash']} crash, of {t['tests']} node tests "
          f"in {seconds:.0f} s")
    if any(r.ort for r in results):
        print(f"onnxruntime: {t['ort_pass']} pass ({100 * t['ort_pass'] / n:.1f}%), "
              f"{t['ort_fail']} fail, {t['ort_error']} error")
    for r in results:
        if r.kiln in ("fail", "crash"):
            print(f"  {r.kiln.upper():5s} {r.name}: {r.kiln_detail}")


#===----------------------------------------------------------------------===//
# docs/conformance.md
#===----------------------------------------------------------------------===//


def _reason_class(detail: str) -> str:
    """A rejection message with the node's name taken out, to group by cause."""
    d = re.sub(r"^kiln: error: ", "", detail)
    d = re.sub(r"node '[^']*' ", "", d)
    d = re.sub(r"'[^']*'", "'…'", d)
    d = re.sub(r"\d+", "N", d)
    return d[:160]


def default_domain_ops() -> list[str]:
    import onnx.defs

    ops = set()
    for s in onnx.defs.get_all_schemas_with_history():
        if s.domain == "" and not s.deprecated:
            ops.add(s.name)
    return sorted(ops)


def write_doc(results: list[Outcome], seconds: float, data_dir: Path) -> None:
    import onnx
    import onnxruntime

    t = totals(results)
    n = max(1, t["tests"])
    known = read_colon_file(KNOWN_FAILURES)
    tols = read_tolerances()
    notes = read_colon_file(OP_NOTES)
    by_op: dict[str, list[Outcome]] = collections.defaultdict(list)
    for r in results:
        by_op[r.op].append(r)

    L = []
    L.append("# Conformance: the ONNX backend node tests\n")
    L.append("Generated by `.venv/bin/python test/conformance/run.py --update`; do not edit by "
             "hand. How the suite works: [test/conformance/run.py](../test/conformance/run.py).\n")
    L.append(f"Every test of onnx {onnx.__version__}'s `onnx/backend/test/case/node` (each "
             f"`_expanded` variant on its own; the wheel ships the definitions, the data is "
             f"written from them by test/conformance/node_data.py), compiled with kiln, run "
             f"with kiln-run, compared with the expected outputs at rtol {RTOL:g}, atol "
             f"{ATOL:g}. onnxruntime {onnxruntime.__version__} (all graph optimizations on) "
             f"runs the same tests in the same run. Time for the whole suite: {seconds:.0f} s "
             f"on {os.cpu_count()} CPUs.\n")
    L.append("## Totals\n")
    L.append("| | pass | fail (wrong numbers) | rejected (clean error) | crash | tests |")
    L.append("|---|---|---|---|---|---|")
    L.append(f"| kiln | {t['pass']} ({100 * t['pass'] / n:.1f}%) | {t['fail']} | "
             f"{t['rejected']} | {t['crash']} | {t['tests']} |")
    L.append(f"| onnxruntime {onnxruntime.__version__} | {t['ort_pass']} "
             f"({100 * t['ort_pass'] / n:.1f}%) | {t['ort_fail']} | {t['ort_error']} "
             f"(error) | – | {t['tests']} |\n")
    spec = [r for r in results if r.kiln == "pass" and r.specialized]
    L.append(f"{len(spec)} of kiln's passes feed an input that decides a shape (a Reshape "
             f"target, Resize scales, reduction axes, ...) to `kiln compile --specialize`: "
             f"kiln compiles for that value, and the compiled model still takes the input "
             f"and fails a run given another value. The runner does this only after kiln "
             f"rejected the node naming that graph input, and only when every data set "
             f"gives the same value. onnxruntime computes such shapes at run time.\n")

    L.append("## Tests that fail with wrong numbers\n")
    fails = [r for r in results if r.kiln in ("fail", "crash")]
    if not fails:
        L.append("None.\n")
    else:
        L.append("| test | result | cause |")
        L.append("|---|---|---|")
        for r in fails:
            cause = known.get(r.name, "not analysed yet")
            L.append(f"| {r.name} | {r.kiln}: {r.kiln_detail.replace('|', '/')} | {cause} |")
        L.append("")

    L.append("## Relaxed tolerances\n")
    if not tols:
        L.append("None: every test uses rtol 1e-3, atol 1e-7.\n")
    else:
        L.append("| test | rtol | atol | reason |")
        L.append("|---|---|---|---|")
        for name, tl in sorted(tols.items()):
            L.append(f"| {name} | {tl.rtol:g} | {tl.atol:g} | {tl.reason} |")
        L.append("")

    L.append("## Why tests are rejected\n")
    L.append("kiln rejects what it cannot compile with an error naming the node. The causes, "
             "grouped (node names and numbers elided):\n")
    causes = collections.Counter(_reason_class(r.kiln_detail) for r in results
                                 if r.kiln == "rejected")
    L.append("| tests | cause |")
    L.append("|---|---|")
    for cause, count in causes.most_common():
        L.append(f"| {count} | {cause.replace('|', '/')} |")
    L.append("")

    L.append("## Default-domain operators kiln does not support\n")
    L.append("Operators of the default ONNX domain with no passing node test. The reason is "
             "from test/conformance/op_notes.txt where one is written, else kiln's own "
             "rejection message.\n")
    L.append("| operator | tests | reason |")
    L.append("|---|---|---|")
    for op in default_domain_ops():
        rs = by_op.get(op, [])
        if any(r.kiln == "pass" for r in rs):
            continue
        reason = notes.get(op)
        if reason is None:
            rej = [r for r in rs if r.kiln == "rejected"]
            reason = (_reason_class(rej[0].kiln_detail) if rej else
                      "no node test of its own" if not rs else rs[0].kiln_detail)
        L.append(f"| {op} | {len(rs)} | {reason.replace('|', '/')} |")
    L.append("")

    L.append("## Pass rate per operator\n")
    L.append("| operator | kiln pass | onnxruntime pass | tests |")
    L.append("|---|---|---|---|")
    for op in sorted(by_op):
        rs = by_op[op]
        kp = sum(r.kiln == "pass" for r in rs)
        op_ = sum(r.ort == "pass" for r in rs)
        L.append(f"| {op} | {kp} | {op_} | {len(rs)} |")
    L.append("")
    DOC.write_text("\n".join(L))


#===----------------------------------------------------------------------===//
# main
#===----------------------------------------------------------------------===//


def main() -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("-k", action="append", default=[], metavar="TEXT",
                   help="only tests whose name contains TEXT (repeatable)")
    p.add_argument("--check", action="store_true", help="fail on regressions (CI)")
    p.add_argument("--update", action="store_true",
                   help="rewrite expected_pass.txt and docs/conformance.md (full runs only)")
    p.add_argument("--jobs", type=int,
                   default=int(os.environ.get("KILN_CONFORMANCE_JOBS",
                                              max(1, min(2, os.cpu_count() or 1)))))
    p.add_argument("--keep", action="store_true", help="keep the work folders of passing tests")
    p.add_argument("--no-ort", action="store_true", help="skip onnxruntime")
    p.add_argument("--json", type=Path, help="write every outcome to this JSON file")
    p.add_argument("--quiet", action="store_true")
    p.add_argument("--from-json", type=Path, metavar="FILE",
                   help="do not run: take the outcomes of an earlier full run from FILE "
                        "(with --update or --check)")
    p.add_argument("--device", default="cpu", choices=["cpu", "vulkan"],
                   help="compile and run for this device; a device other than cpu is a "
                        "tracked run of its own: expected_pass_DEVICE.txt, "
                        "known_failures_DEVICE.txt (vulkan: set VK_ICD_FILENAMES for lavapipe)")
    args = p.parse_args()
    if args.device != "cpu":
        global EXPECTED_PASS, KNOWN_FAILURES
        EXPECTED_PASS = HERE / f"expected_pass_{args.device}.txt"
        KNOWN_FAILURES = HERE / f"known_failures_{args.device}.txt"
    if args.update and args.k:
        p.error("--update needs the whole suite (no -k)")

    if args.from_json:
        saved = json.loads(args.from_json.read_text())
        results = [Outcome(**t) for t in saved["tests"]]
        seconds, data_dir = saved["seconds"], None
    else:
        results, seconds, data_dir = run_suite(args.k, args.jobs, args.keep,
                                               not args.no_ort, not args.quiet, args.device)
    json_path = args.json or (harness.build_dir() / "conformance" / (
        "results.json" if args.device == "cpu" else f"results-{args.device}.json"))
    json_path.parent.mkdir(parents=True, exist_ok=True)
    if not args.from_json:
        json_path.write_text(json.dumps({"totals": totals(results), "seconds": round(seconds, 1),
                                         "tests": [dataclasses.asdict(r) for r in results]},
                                        indent=1))
    print_summary(results, seconds)
    if not args.from_json:
        print(f"results: {json_path}")
    if args.update:
        EXPECTED_PASS.write_text(
            f"# ONNX backend node tests kiln passes on {args.device} "
            f"(test/conformance/run.py{'' if args.device == 'cpu' else ' --device ' + args.device}"
            f" --update).\n" +
            "".join(f"{r.name}\n" for r in sorted(results, key=lambda r: r.name)
                    if r.kiln == "pass"))
        if args.device == "cpu":
            write_doc(results, seconds, data_dir)
        print(f"wrote {EXPECTED_PASS}" + (f" and {DOC}" if args.device == "cpu" else ""))
    if args.check:
        problems = check(results, full_run=not args.k)
        if problems:
            print(f"\nconformance check FAILED ({len(problems)} problems):")
            for line in problems:
                print("  " + line)
            return 1
        newly = [r.name for r in results
                 if r.kiln == "pass" and r.name not in read_expected_pass()]
        if newly:
            print(f"\n{len(newly)} tests pass that expected_pass.txt does not list yet "
                  f"(run --update): {', '.join(newly[:10])}{' ...' if len(newly) > 10 else ''}")
        print("conformance check passed")
    return 0


if __name__ == "__main__":
    sys.exit(main())
