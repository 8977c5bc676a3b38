"""int8 latency of a transformer quantized with onnxruntime.quantization.quantize_dynamic (QInt8
weights: DynamicQuantizeLinear + MatMulInteger): kiln builds (each compiled natively) against
onnxruntime on the same model, 1 thread, CPU ms per run (kiln-run's user + system time for N
runs minus 1 run, over N - 1; onnxruntime's process time over N runs), 3 interleaved rounds.
Inputs: token ids in [0, 1000) for inputs named *ids*, ones elsewhere (int64).

    N=6 .venv/bin/python bench/int8_dynamic_bench.py /work/suite-models/bert_base.onnx WORK_DIR \
        build [/work/main/build ...]
"""
import pathlib, resource, subprocess, sys, time, statistics
import numpy as np, onnx
src = pathlib.Path(sys.argv[1]); work = pathlib.Path(sys.argv[2]); builds = sys.argv[3:]
work.mkdir(parents=True, exist_ok=True)
q = work / (src.stem + ".dyn.onnx")
if not q.exists():
    from onnxruntime.quantization import quantize_dynamic, QuantType
    quantize_dynamic(str(src), str(q), weight_type=QuantType.QInt8)
m = onnx.load(str(q), load_external_data=False)
rng = np.random.default_rng(3)
feeds = {}
for i in m.graph.input:
    shape = [d.dim_value for d in i.type.tensor_type.shape.dim]
    feeds[i.name] = (rng.integers(0, 1000, shape) if "ids" in i.name else np.ones(shape)).astype(np.int64)
    np.save(work / f"{i.name}.npy", feeds[i.name])
sos = {}
for b in builds:
    so = work / f"{src.stem}.dyn.{pathlib.Path(b).parent.name}.so"
    if not so.exists():
        subprocess.run([f"{b}/bin/kiln", "compile", str(q), "-o", str(so)], check=True)
    sos[b] = so
import onnxruntime as ort
so_ = ort.SessionOptions(); so_.intra_op_num_threads = 1; so_.inter_op_num_threads = 1
sess = ort.InferenceSession(str(q), so_, providers=["CPUExecutionProvider"])
want = sess.run(None, feeds)[0]
def cpu():
    u = resource.getrusage(resource.RUSAGE_CHILDREN); return u.ru_utime + u.ru_stime
N = int(__import__("os").environ.get("N", "10"))
rows = {k: [] for k in list(sos) + ["ort"]}
for r in range(3):
    for b, so in sos.items():
        spent = []
        for rep in (1, N):
            cmd = [f"{b}/bin/kiln-run", str(so), "--threads", "1", "--repeat", str(rep), "--output-dir", str(work / "out")]
            for name in feeds: cmd += ["--input", f"{name}={work / (name + '.npy')}"]
            c0 = cpu(); subprocess.run(cmd, check=True, capture_output=True); spent.append(cpu() - c0)
        rows[b].append((spent[1] - spent[0]) * 1e3 / (N - 1))
        got = np.load(sorted((work / "out").glob("*.npy"))[0])
        print(b, "max|diff|", float(np.max(np.abs(got.astype(np.float64) - want))), "max|want|", float(np.max(np.abs(want))), flush=True)
    c0 = time.process_time()
    for _ in range(N): sess.run(None, feeds)
    rows["ort"].append((time.process_time() - c0) * 1e3 / N)
    print(r, {k: round(v[-1], 2) for k, v in rows.items()}, flush=True)
o = statistics.median(rows["ort"])
for k, v in rows.items():
    print(f"{k:40s} CPU ms median {statistics.median(v):8.2f}  x{statistics.median(v)/o:.2f} of onnxruntime  rounds {[round(x,2) for x in v]}")
