"""kiln verify: does kiln compute what onnxruntime computes?

Compiles an ONNX model with kiln, runs it and onnxruntime on the same inputs (given as .npy
files, else seeded random ones) and compares every output with the project's tolerances
(rtol 1e-3, atol 1e-4; integers and booleans exactly). On a mismatch it finds the first node
whose result differs:

1. every intermediate value of the main graph becomes an extra graph output (an ONNX
   rewrite), kiln compiles that model once, and the first node in graph order with a
   differing result is the culprit: its inputs still matched;
2. when exposing the values hides the difference (kiln then computes them differently, e.g.
   without a fusion), it bisects over graph order instead, compiling the model truncated
   to one value per step.

It prints that node and its error and writes a reproducer: a model of that node alone with
its recorded inputs (.npy), which `kiln verify` fails on when the node alone is enough.

`kiln verify MODEL.onnx ...` runs this file (tools/kiln/Verify.cpp); it needs numpy, onnx
and onnxruntime, and is also importable as `kiln.verify` (`verify(...)` below). It uses only
the kiln command line, not the compiled extension.
"""

from __future__ import annotations

import argparse
import dataclasses
import re
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Mapping, Sequence

RTOL = 1e-3
ATOL = 1e-4

# Exit codes of the command line.
EXIT_OK, EXIT_MISMATCH, EXIT_ERROR = 0, 1, 2


class VerifyError(Exception):
    """Verification could not be done (compile or run failed, bad arguments)."""


@dataclasses.dataclass
class Difference:
    """How one value of kiln compares with onnxruntime's."""
    name: str
    ok: bool
    max_abs: float = 0.0
    max_rel: float = 0.0
    problem: str = ""  # dtype or shape mismatch, when there is one

    def describe(self) -> str:
        if self.problem:
            return f"{self.name}: {self.problem}"
        verdict = "ok" if self.ok else "MISMATCH"
        return (f"{self.name}: max abs error {self.max_abs:.3g}, max rel error "
                f"{self.max_rel:.3g}  {verdict}")


@dataclasses.dataclass
class BadNode:
    name: str
    op_type: str
    differences: list[Difference]
    how: str  # "exposed" or "bisected"


@dataclasses.dataclass
class VerifyResult:
    ok: bool
    outputs: list[Difference]
    bad_node: BadNode | None = None
    reproducer: Path | None = None
    reproducer_fails: bool | None = None
    reproducer_command: list[str] | None = None


def compare(name: str, got, want, rtol: float = RTOL, atol: float = ATOL) -> Difference:
    import numpy as np
    if got.dtype != want.dtype:
        return Difference(name, False, problem=f"dtype {got.dtype}, onnxruntime gives {want.dtype}")
    if got.shape != want.shape:
        return Difference(name, False, problem=f"shape {got.shape}, onnxruntime gives {want.shape}")
    if got.size == 0:
        return Difference(name, True)
    if np.issubdtype(want.dtype, np.floating):
        g, w = got.astype(np.float64), want.astype(np.float64)
        both_nan = np.isnan(g) & np.isnan(w)
        err = np.where(both_nan, 0.0, np.abs(g - w))
        err = np.where(np.isnan(err), np.inf, err)
        rel = err / np.maximum(np.abs(w), np.finfo(np.float32).tiny)
        ok = bool(np.all(err <= atol + rtol * np.abs(np.where(both_nan, 0.0, w))))
        return Difference(name, ok, float(err.max()), float(np.nan_to_num(rel, nan=0.0).max()))
    diff = got != want
    err = float(np.abs(got.astype(np.float64) - want.astype(np.float64)).max())
    return Difference(name, not bool(diff.any()), err, 0.0)


def safe_file_stem(name: str, index: int, taken: set[str]) -> str:
    """The file stem kiln-run writes output `index` to (safeFileStem in kiln-run.cpp)."""
    stem = "".join(c if (c.isascii() and c.isalnum()) or c in "_-." else "_" for c in name[:200])
    if stem.startswith("."):
        stem = "_" + stem[1:]
    if not stem:
        stem = f"output_{index}"
    while stem in taken:
        stem += f"_{index}"
    taken.add(stem)
    return stem


def _onnx_dtype(elem_type: int):
    from onnx import helper
    return helper.tensor_dtype_to_np_dtype(elem_type)


def random_inputs(model, shapes: Mapping[str, Sequence[int]], given: Mapping[str, object],
                  seed: int) -> dict:
    """Inputs of the main graph: the given arrays, seeded random values for the others
    (floats N(0, 1), integers in [0, 10), booleans), shaped by the model or `shapes`."""
    import numpy as np
    rng = np.random.default_rng(seed)
    initializers = {t.name for t in model.graph.initializer}
    known = {v.name for v in model.graph.input} - initializers
    for name in given:
        if name not in known:
            raise VerifyError(f"--input {name}: the model has no input '{name}' (its inputs: "
                              f"{', '.join(sorted(known))})")
    feeds = {}
    for value in model.graph.input:
        if value.name in initializers:
            continue
        if value.name in given:
            feeds[value.name] = given[value.name]
            continue
        tensor = value.type.tensor_type
        if value.name in shapes:
            dims = list(shapes[value.name])
        else:
            dims = []
            for i, d in enumerate(tensor.shape.dim):
                if not d.HasField("dim_value"):
                    raise VerifyError(
                        f"input '{value.name}' has dynamic dimension {i}: give --shape "
                        f"{value.name}=D0,D1,... or --input {value.name}=FILE.npy")
                dims.append(d.dim_value)
        dtype = np.dtype(_onnx_dtype(tensor.elem_type))
        if dtype == np.bool_:
            feeds[value.name] = rng.integers(0, 2, dims).astype(np.bool_)
        elif np.issubdtype(dtype, np.integer):
            feeds[value.name] = rng.integers(0, 10, dims).astype(dtype)
        else:
            feeds[value.name] = rng.standard_normal(dims).astype(dtype)
    return feeds


class Runner:
    """kiln (through its command line) and onnxruntime on one set of feeds."""

    def __init__(self, kiln: str, work: Path, compile_args: Sequence[str],
                 run_args: Sequence[str], log):
        self.kiln = kiln
        self.work = work
        self.compile_args = list(compile_args)
        self.run_args = list(run_args)
        self.log = log
        self.count = 0

    def _save_model(self, model, stem: str) -> Path:
        import onnx
        path = self.work / f"{stem}.onnx"
        large = model.ByteSize() > 1_500_000_000
        onnx.save(model, str(path), save_as_external_data=large,
                  location=f"{stem}.data" if large else None)
        return path

    def save_feeds(self, feeds: Mapping[str, object], folder: Path) -> dict[str, Path]:
        import numpy as np
        folder.mkdir(parents=True, exist_ok=True)
        taken: set[str] = set()
        paths = {}
        for i, (name, value) in enumerate(feeds.items()):
            path = folder / f"{safe_file_stem(name, i, taken)}.npy"
            np.save(path, np.ascontiguousarray(value))
            paths[name] = path
        return paths

    def kiln_run(self, model_path: Path, output_names: Sequence[str],
                 feed_paths: Mapping[str, Path]) -> dict:
        import numpy as np
        self.count += 1
        artifact = self.work / f"kiln{self.count}.so"
        out_dir = self.work / f"out{self.count}"
        cmd = [self.kiln, "compile", str(model_path), "-o", str(artifact), *self.compile_args]
        done = subprocess.run(cmd, capture_output=True, text=True)
        if done.returncode != 0:
            raise VerifyError(f"kiln compile failed ({' '.join(cmd)}):\n"
                              f"{done.stderr.strip() or done.stdout.strip()}")
        cmd = [self.kiln, "run", str(artifact)]
        for name, path in feed_paths.items():
            cmd += ["--input", f"{name}={path}"]
        cmd += ["--output-dir", str(out_dir), *self.run_args]
        done = subprocess.run(cmd, capture_output=True, text=True)
        if done.returncode != 0:
            raise VerifyError(f"kiln run failed ({' '.join(cmd)}):\n"
                              f"{done.stderr.strip() or done.stdout.strip()}")
        # kiln-run names the files in the model's output order.
        import onnx
        order = [o.name for o in onnx.load(str(model_path), load_external_data=False).graph.output]
        taken: set[str] = set()
        stems = {name: safe_file_stem(name, i, taken) for i, name in enumerate(order)}
        got = {}
        for name in output_names:
            got[name] = np.load(out_dir / f"{stems[name]}.npy")
        artifact.unlink(missing_ok=True)
        shutil.rmtree(out_dir, ignore_errors=True)
        return got

    @staticmethod
    def ort_run(model_or_path, output_names: Sequence[str], feeds: Mapping[str, object]) -> dict:
        import onnxruntime as ort
        options = ort.SessionOptions()
        # The reference computes the graph as written.
        options.graph_optimization_level = ort.GraphOptimizationLevel.ORT_DISABLE_ALL
        options.log_severity_level = 3
        source = model_or_path if isinstance(model_or_path, (str, Path)) else \
            model_or_path.SerializeToString()
        session = ort.InferenceSession(str(source) if isinstance(source, Path) else source,
                                       options, providers=["CPUExecutionProvider"])
        values = session.run(list(output_names), dict(feeds))
        return dict(zip(output_names, values))


def _typed_values(model) -> dict:
    """name -> elem_type of every value shape inference types in the main graph."""
    import onnx
    try:
        inferred = onnx.shape_inference.infer_shapes(model)
    except Exception:  # noqa: BLE001 - a model shape inference rejects: fewer candidates
        inferred = model
    types = {}
    for value in list(inferred.graph.value_info) + list(inferred.graph.output) + \
            list(inferred.graph.input):
        if value.type.HasField("tensor_type") and value.type.tensor_type.elem_type:
            types[value.name] = value.type.tensor_type.elem_type
    return types


def _with_outputs(model, names: Sequence[str], types: Mapping[str, int], keep=True):
    """A copy of `model` whose outputs are the original ones (when `keep`) plus `names`."""
    from onnx import helper
    copy = model.__class__()
    copy.CopyFrom(model)
    if not keep:
        del copy.graph.output[:]
    for name in names:
        copy.graph.output.append(helper.make_tensor_value_info(name, types[name], None))
    return copy


def _node_name(node, index: int) -> str:
    # As kiln's importer names a node without one.
    return node.name or f"{node.op_type}_{index}"


def write_reproducer(model, node, index: int, values: Mapping[str, object],
                     types: Mapping[str, int], folder: Path) -> tuple[Path, dict[str, Path]]:
    """`node` alone in a model whose inputs are its recorded inputs (.npy beside it)."""
    import numpy as np
    import onnx
    from onnx import helper
    folder.mkdir(parents=True, exist_ok=True)
    initializers = {t.name: t for t in model.graph.initializer}
    inputs, inits, feeds = [], [], {}
    for name in node.input:
        if not name or name in feeds or any(i.name == name for i in inits):
            continue
        if name in initializers:
            inits.append(initializers[name])
            continue
        value = np.asarray(values[name])
        inputs.append(helper.make_tensor_value_info(
            name, helper.np_dtype_to_tensor_dtype(value.dtype), list(value.shape)))
        feeds[name] = value
    outputs = [helper.make_tensor_value_info(name, types[name], None)
               for name in node.output if name and name in types]
    single = helper.make_node(node.op_type, list(node.input), list(node.output),
                              name=_node_name(node, index), domain=node.domain or None)
    single.attribute.extend(node.attribute)
    graph = helper.make_graph([single], "reproducer", inputs, outputs, inits)
    repro = helper.make_model(graph, opset_imports=list(model.opset_import))
    repro.ir_version = model.ir_version
    path = folder / "repro.onnx"
    onnx.save(repro, str(path))
    taken: set[str] = set()
    paths = {}
    for i, (name, value) in enumerate(feeds.items()):
        p = folder / f"{safe_file_stem(name, i, taken)}.npy"
        np.save(p, value)
        paths[name] = p
    return path, paths


def _default_kiln() -> str:
    """The package's kiln (kiln.find_kiln) when imported as kiln.verify, else PATH's."""
    if __package__:
        from ._compile import find_kiln
        return str(find_kiln())
    return shutil.which("kiln") or "kiln"


def verify(model_path, inputs: Mapping[str, object] | None = None, *, kiln: str | None = None,
           compile_args: Sequence[str] = (), run_args: Sequence[str] = (),
           shapes: Mapping[str, Sequence[int]] | None = None, seed: int = 0,
           rtol: float = RTOL, atol: float = ATOL, bisect: bool = True,
           reproducer_dir=None, work_dir=None, log=None) -> VerifyResult:
    """Compiles `model_path` with `kiln`, compares kiln's outputs with onnxruntime's on
    `inputs` (name -> numpy array; seeded random for the missing ones) and, on a mismatch
    and with `bisect`, finds the first node that differs and writes its reproducer into
    `reproducer_dir` (default: `<model stem>.repro` in the current folder). `kiln` is the
    executable (default: kiln.find_kiln()). Raises VerifyError when kiln or onnxruntime
    cannot run the model."""
    import onnx
    log = log or (lambda text: print(text, flush=True))
    kiln = str(kiln or _default_kiln())
    model_path = Path(model_path)
    model = onnx.load(str(model_path))
    shapes = dict(shapes or {})
    feeds = random_inputs(model, shapes, dict(inputs or {}), seed)
    # kiln compiles static shapes: an input with dynamic dims is compiled for the shape of
    # the value it gets (unless --shape fixed it already).
    compile_args = list(compile_args)
    for value in model.graph.input:
        dims = value.type.tensor_type.shape.dim
        if value.name in feeds and value.name not in shapes and \
                any(not d.HasField("dim_value") for d in dims):
            shape = ",".join(str(d) for d in feeds[value.name].shape)
            compile_args += ["--shape", f"{value.name}={shape}"]
    tmp = None
    if work_dir is None:
        tmp = tempfile.TemporaryDirectory(prefix="kiln-verify-")
        work = Path(tmp.name)
    else:
        work = Path(work_dir)
        work.mkdir(parents=True, exist_ok=True)
    try:
        runner = Runner(kiln, work, compile_args, run_args, log)
        feed_paths = runner.save_feeds(feeds, work / "inputs")
        output_names = [o.name for o in model.graph.output]
        got = runner.kiln_run(model_path, output_names, feed_paths)
        want = Runner.ort_run(model_path, output_names, feeds)
        diffs = [compare(n, got[n], want[n], rtol, atol) for n in output_names]
        log(f"outputs (rtol {rtol:g}, atol {atol:g}):")
        for d in diffs:
            log("  " + d.describe())
        result = VerifyResult(all(d.ok for d in diffs), diffs)
        if result.ok or not bisect:
            return result
        result.bad_node, reference = _find_bad_node(model, runner, feeds, feed_paths, rtol,
                                                    atol, log)
        if result.bad_node is None:
            log("no single node found: every intermediate value matches onnxruntime")
            return result
        bad = result.bad_node
        log(f"first node that differs ({bad.how}): '{bad.name}' ({bad.op_type})")
        for d in bad.differences:
            log("  " + d.describe())
        index, node = next((i, n) for i, n in enumerate(model.graph.node)
                           if _node_name(n, i) == bad.name)
        # Its inputs as onnxruntime computed them (kiln's matched them).
        values = {**feeds, **reference}
        types = _typed_values(model)
        folder = Path(reproducer_dir) if reproducer_dir else \
            Path.cwd() / f"{model_path.stem}.repro"
        repro, repro_feeds = write_reproducer(model, node, index, values, types, folder)
        result.reproducer = repro
        result.reproducer_command = [kiln, "verify", str(repro), *[
            a for n, p in repro_feeds.items() for a in ("--input", f"{n}={p}")],
            *compile_args]
        log(f"reproducer: {repro}")
        log("  " + " ".join(result.reproducer_command))
        try:
            check = verify(repro, {n: values[n] for n in repro_feeds}, kiln=kiln,
                           compile_args=compile_args, run_args=run_args, rtol=rtol,
                           atol=atol, bisect=False, work_dir=work / "repro",
                           log=lambda text: None)
            result.reproducer_fails = not check.ok
        except VerifyError as e:
            log(f"  (the reproducer does not run: {e})")
            result.reproducer_fails = True
        log("  kiln verify fails on it" if result.reproducer_fails else
            "  kiln verify passes on it: the difference needs the surrounding graph")
        return result
    finally:
        if tmp is not None:
            tmp.cleanup()


def _find_bad_node(model, runner: Runner, feeds, feed_paths, rtol, atol, log):
    """(the first node whose result differs or None, onnxruntime's intermediate values)."""
    types = _typed_values(model)
    graph_inputs = {v.name for v in model.graph.input} | \
        {t.name for t in model.graph.initializer}
    originals = {o.name for o in model.graph.output}
    # (node index, value) in graph order: the values a node computes.
    candidates = []
    for i, node in enumerate(model.graph.node):
        for name in node.output:
            if name and name in types and name not in graph_inputs:
                candidates.append((i, name))
    if not candidates:
        return None, {}
    names = [n for _, n in candidates]
    reference = Runner.ort_run(_with_outputs(model, [n for n in names if n not in originals],
                                             types), names, feeds)

    def first_bad(got) -> BadNode | None:
        for i, node in enumerate(model.graph.node):
            outs = [n for n in node.output if n in got]
            diffs = [compare(n, got[n], reference[n], rtol, atol) for n in outs]
            if any(not d.ok for d in diffs):
                return BadNode(_node_name(node, i), node.op_type, diffs, "exposed")
        return None

    # 1. Everything exposed at once: one compile.
    log(f"bisecting: {len(names)} intermediate values exposed as outputs")
    exposed = _with_outputs(model, [n for n in names if n not in originals], types)
    try:
        got = runner.kiln_run(runner._save_model(exposed, "exposed"), names, feed_paths)
        bad = first_bad(got)
        if bad is not None:
            return bad, reference
        log("  every exposed value matches: bisecting over graph order")
    except VerifyError as e:
        log(f"  the model with every value exposed does not compile or run ({e}); "
            "bisecting over graph order")

    # 2. Bisection: the model truncated to one value per step. The last value (a graph
    # output) differs; find the first value that does.
    def differs(k: int) -> list[Difference] | None:
        name = names[k]
        truncated = _with_outputs(model, [name], types, keep=False)
        got = runner.kiln_run(runner._save_model(truncated, f"upto{k}"), [name], feed_paths)
        d = compare(name, got[name], reference[name], rtol, atol)
        return None if d.ok else [d]

    lo, hi, hi_diff = 0, len(names) - 1, None
    hi_diff = differs(hi)
    if hi_diff is None:
        return None, reference
    while lo < hi:
        mid = (lo + hi) // 2
        log(f"  value {mid + 1}/{len(names)}: {names[mid]}")
        d = differs(mid)
        if d is None:
            lo = mid + 1
        else:
            hi, hi_diff = mid, d
    i = candidates[hi][0]
    node = model.graph.node[i]
    return BadNode(_node_name(node, i), node.op_type, hi_diff, "bisected"), reference


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="kiln verify",
        description="Compile MODEL with kiln, run it and onnxruntime on the same inputs, "
                    "compare; on a mismatch find the first node that differs. Options not "
                    "listed here go to kiln compile (e.g. --cpu, --shape).")
    parser.add_argument("model")
    parser.add_argument("--kiln", default=shutil.which("kiln") or "kiln",
                        help="the kiln executable (default: kiln on PATH)")
    parser.add_argument("--input", action="append", default=[], metavar="NAME=FILE.npy",
                        help="an input's value (others: seeded random)")
    parser.add_argument("--seed", type=int, default=0, help="seed of the random inputs")
    parser.add_argument("--rtol", type=float, default=RTOL)
    parser.add_argument("--atol", type=float, default=ATOL)
    parser.add_argument("--threads", type=int, help="threads of the kiln run")
    parser.add_argument("--no-bisect", action="store_true",
                        help="only compare the outputs")
    parser.add_argument("--reproducer", metavar="DIR",
                        help="where the reproducer goes (default: ./MODEL_STEM.repro)")
    parser.add_argument("--work-dir", metavar="DIR",
                        help="keep the compiled models and values here")
    args, compile_args = parser.parse_known_args(argv)

    import numpy as np
    given, shapes = {}, {}
    for spec in args.input:
        name, sep, path = spec.partition("=")
        if not sep or not name or not path:
            print(f"kiln: error: --input expects NAME=FILE.npy (got '{spec}')", file=sys.stderr)
            return EXIT_ERROR
        try:
            given[name] = np.load(path, allow_pickle=False)
        except (OSError, ValueError) as e:
            print(f"kiln: error: --input {name}: cannot read '{path}': {e}", file=sys.stderr)
            return EXIT_ERROR
    # --shape goes to kiln compile and also shapes the random inputs.
    for i, arg in enumerate(compile_args):
        spec = None
        if arg == "--shape" and i + 1 < len(compile_args):
            spec = compile_args[i + 1]
        elif arg.startswith("--shape="):
            spec = arg[len("--shape="):]
        if spec:
            name, _, dims = spec.rpartition("=")
            if re.fullmatch(r"\d+(,\d+)*", dims):
                shapes[name] = [int(d) for d in dims.split(",")]
    run_args = ["--threads", str(args.threads)] if args.threads else []
    try:
        result = verify(args.model, given, kiln=args.kiln, compile_args=compile_args,
                        run_args=run_args, shapes=shapes, seed=args.seed, rtol=args.rtol,
                        atol=args.atol, bisect=not args.no_bisect,
                        reproducer_dir=args.reproducer, work_dir=args.work_dir)
    except VerifyError as e:
        print(f"kiln: error: {e}", file=sys.stderr)
        return EXIT_ERROR
    except Exception as e:  # noqa: BLE001 - onnx / onnxruntime refusing the model
        print(f"kiln: error: {type(e).__name__}: {e}", file=sys.stderr)
        return EXIT_ERROR
    print("result: kiln matches onnxruntime" if result.ok else
          "result: kiln DIFFERS from onnxruntime")
    return EXIT_OK if result.ok else EXIT_MISMATCH


if __name__ == "__main__":
    sys.exit(main())
