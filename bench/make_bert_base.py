#!/usr/bin/env python3
"""A BERT-base encoder of N layers (hidden 768, 12 heads, FFN 3072, sequence 128) with seeded
weights, built with the onnx helper: the --precision bf16 benchmark of docs/precision.md.

Usage: bench/make_bert_base.py LAYERS OUT.onnx
"""
import sys, numpy as np, onnx
from onnx import helper as h, TensorProto as T, numpy_helper as nh
layers = int(sys.argv[1]); out = sys.argv[2]
S, H, NH, F = 128, 768, 12, 3072
D = H // NH
rng = np.random.default_rng(0)
inits, nodes = [], []
def w(name, shape, scale=0.02):
    inits.append(nh.from_array((rng.standard_normal(shape) * scale).astype(np.float32), name)); return name
def c(name, arr):
    inits.append(nh.from_array(np.asarray(arr), name)); return name
def n(op, ins, outs, **kw):
    nodes.append(h.make_node(op, ins, outs, **kw)); return outs[0]
c('shp_heads', np.array([1, S, NH, D], np.int64)); c('shp_back', np.array([1, S, H], np.int64))
c('scale', np.array(1.0 / np.sqrt(D), np.float32)); c('half', np.array(0.5, np.float32))
c('one', np.array(1.0, np.float32)); c('rsqrt2', np.array(1 / np.sqrt(2), np.float32))
x = 'x'
for l in range(layers):
    p = f'l{l}_'
    def proj(src, name, k, m):
        mm = n('MatMul', [src, w(p + name + '_w', [k, m])], [p + name + '_mm'])
        return n('Add', [mm, w(p + name + '_b', [m])], [p + name])
    q, k_, v = proj(x, 'q', H, H), proj(x, 'k', H, H), proj(x, 'v', H, H)
    def heads(t, perm):
        r = n('Reshape', [t, 'shp_heads'], [t + '_r'])
        return n('Transpose', [r], [t + '_t'], perm=perm)
    qh, kh, vh = heads(q, [0, 2, 1, 3]), heads(k_, [0, 2, 3, 1]), heads(v, [0, 2, 1, 3])
    s = n('MatMul', [qh, kh], [p + 's'])
    s = n('Mul', [s, 'scale'], [p + 'ss'])
    a = n('Softmax', [s], [p + 'a'], axis=-1)
    ctx = n('MatMul', [a, vh], [p + 'ctx'])
    ctx = n('Transpose', [ctx], [p + 'ctx_t'], perm=[0, 2, 1, 3])
    ctx = n('Reshape', [ctx, 'shp_back'], [p + 'ctx_r'])
    o = proj(ctx, 'o', H, H)
    r1 = n('Add', [o, x], [p + 'r1'])
    ln1 = n('LayerNormalization', [r1, w(p + 'g1', [H], 1.0), w(p + 'b1', [H])], [p + 'ln1'], axis=-1)
    f1 = proj(ln1, 'f1', H, F)
    e = n('Mul', [f1, 'rsqrt2'], [p + 'e']); e = n('Erf', [e], [p + 'erf'])
    e = n('Add', [e, 'one'], [p + 'e1']); e = n('Mul', [f1, e], [p + 'e2'])
    g = n('Mul', [e, 'half'], [p + 'gelu'])
    f2 = proj(g, 'f2', F, H)
    r2 = n('Add', [f2, ln1], [p + 'r2'])
    x = n('LayerNormalization', [r2, w(p + 'g2', [H], 1.0), w(p + 'b2', [H])], [p + 'out'], axis=-1)
n('Identity', [x], ['y'])
g = h.make_graph(nodes, 'bert_base', [h.make_tensor_value_info('x', T.FLOAT, [1, S, H])],
                 [h.make_tensor_value_info('y', T.FLOAT, [1, S, H])], inits)
m = h.make_model(g, opset_imports=[h.make_opsetid('', 17)]); m.ir_version = 8
onnx.save(m, out, save_as_external_data=False)
