"""The official ONNX backend node tests of the pinned `onnx` package, as files on disk.

The onnx wheel (1.23.2) ships the test *definitions* (onnx/backend/test/case/node/*.py) but
not their data folder (onnx/backend/test/data/node is absent). This module writes that folder
the way the ONNX project generates it (`model.onnx` plus `test_data_set_N/{input,output}_K.pb`
per test), from the installed package only, so the data always matches the pinned version.

    python test/conformance/node_data.py OUT_DIR     # writes OUT_DIR/<test name>/...

Writing is skipped when OUT_DIR/.stamp names the installed onnx version and test count.
When the installed package does ship the folder, that folder is used as it is.
"""

from __future__ import annotations

import os
import shutil
import sys
import warnings
from pathlib import Path

import onnx

STAMP = ".stamp"


def shipped_node_dir() -> Path | None:
    """The data folder inside the onnx package, when the wheel ships it."""
    d = Path(onnx.__file__).parent / "backend" / "test" / "data" / "node"
    return d if d.is_dir() and any(d.iterdir()) else None


def _tensor_bytes(value, value_info) -> bytes:
    from onnx import TensorProto, numpy_helper

    if isinstance(value, TensorProto):
        return value.SerializeToString()
    kind = value_info.type.WhichOneof("value")
    if kind == "sequence_type":
        return numpy_helper.from_list(value, value_info.name).SerializeToString()
    if kind == "optional_type":
        return numpy_helper.from_optional(value, value_info.name).SerializeToString()
    if kind == "map_type":
        return numpy_helper.from_dict(value, value_info.name).SerializeToString()
    return numpy_helper.from_array(value, value_info.name).SerializeToString()


def write_node_tests(out_dir: Path) -> int:
    """Writes every node test case; returns how many."""
    import onnx.backend.test.case.node as node_cases

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # the case scripts divide by zero on purpose
        cases = node_cases.collect_testcases()
    stamp = f"onnx {onnx.__version__} node tests {len(cases)}\n"
    stamp_path = out_dir / STAMP
    if stamp_path.is_file() and stamp_path.read_text() == stamp:
        return len(cases)
    if out_dir.exists():
        shutil.rmtree(out_dir)
    out_dir.mkdir(parents=True)
    for case in cases:
        folder = out_dir / case.name
        folder.mkdir()
        (folder / "model.onnx").write_bytes(case.model.SerializeToString())
        graph = case.model.graph
        for i, (inputs, outputs) in enumerate(case.data_sets):
            data = folder / f"test_data_set_{i}"
            data.mkdir()
            for j, value in enumerate(inputs):
                (data / f"input_{j}.pb").write_bytes(_tensor_bytes(value, graph.input[j]))
            for j, value in enumerate(outputs):
                (data / f"output_{j}.pb").write_bytes(_tensor_bytes(value, graph.output[j]))
    stamp_path.write_text(stamp)
    return len(cases)


def node_test_dir(cache_dir: Path) -> Path:
    """The folder of node tests to run: the package's own when shipped, else written into
    cache_dir (once per onnx version)."""
    shipped = shipped_node_dir()
    if shipped is not None:
        return shipped
    write_node_tests(cache_dir)
    return cache_dir


if __name__ == "__main__":
    if len(sys.argv) != 2:
        sys.exit("usage: node_data.py OUT_DIR")
    n = write_node_tests(Path(sys.argv[1]))
    print(f"{n} node tests of onnx {onnx.__version__} in {os.path.abspath(sys.argv[1])}")
