"""An onnxruntime user's script, run unchanged by test_python.py and again with
its import line swapped for `import kiln as rt`: both must print the same.

    python python_ort_script.py MODEL.onnx RESULT.npz
"""
import onnxruntime as rt  # test_python.py swaps this line

import json
import sys

import numpy as np

model, result = sys.argv[1], sys.argv[2]
sess = rt.InferenceSession(model)
rng = np.random.default_rng(7)
feeds = {}
for arg in sess.get_inputs():
    if arg.type == "tensor(float)":
        feeds[arg.name] = rng.standard_normal(arg.shape).astype(np.float32)
    elif arg.type == "tensor(int64)":
        feeds[arg.name] = rng.integers(0, 4, arg.shape).astype(np.int64)
    else:
        raise SystemExit(f"no data for {arg.type}")
described = {
    "inputs": [[a.name, a.type, a.shape] for a in sess.get_inputs()],
    "outputs": [[a.name, a.type, a.shape] for a in sess.get_outputs()],
}
every = sess.run(None, feeds)
last = sess.run([sess.get_outputs()[-1].name], feeds)
np.savez(result, described=np.array(json.dumps(described)),
         last=last[0], **{f"out{i}": a for i, a in enumerate(every)})
