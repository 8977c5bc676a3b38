#!/usr/bin/env python3
"""Export the benchmark suite's PyTorch models to ONNX (opset 17), seeded and reproducible.

    .venv-bench/bin/python bench/export_models.py [--out bench/_work/models] [--force] [NAME ...]

NAME is one of resnet50, mobilenet_v2, bert_base (default: all three). Needs Debian's
python3-torch 1.13 and python3-torchvision 0.14 (scripts/setup-bench.sh makes .venv-bench).

Every model is built with torch.manual_seed(0) and random initial weights (no trained weights
are available offline; latency and graph structure do not depend on them); the CNNs' BatchNorm
statistics are then set from 4 seeded random batches of 8 (calibrate_batchnorm: keeps the
outputs at a sensible scale, see there). Each model is put in eval mode
and exported with torch.onnx.export(opset_version=17, do_constant_folding=True), batch 1,
fixed shapes. A model already present is kept unless --force is given.

- resnet50: torchvision.models.resnet50 (torchvision's ResNet-50 is v1.5: stride 2 in the
  3x3 convolution of each downsampling bottleneck), input `input` float32 [1,3,224,224].
- mobilenet_v2: torchvision.models.mobilenet_v2, input `input` float32 [1,3,224,224].
- bert_base: the BERT-base encoder written below in torch.nn (12 layers, hidden 768, 12
  heads, intermediate 3072, vocabulary 30522, 512 positions, exact-erf GELU, post-LN), inputs
  `input_ids` int64 [1,128] and `attention_mask` int64 [1,128], output `last_hidden_state`
  float32 [1,128,768]. (Hugging Face transformers is not packaged for Debian 12.)
"""
from __future__ import annotations

import argparse
import math
import pathlib
import sys

import torch
from torch import nn

OPSET = 17
SEED = 0


class BertConfig:
    vocab_size = 30522
    hidden = 768
    layers = 12
    heads = 12
    intermediate = 3072
    max_positions = 512
    type_vocab = 2
    eps = 1e-12


class BertEmbeddings(nn.Module):
    def __init__(self, c: BertConfig):
        super().__init__()
        self.word = nn.Embedding(c.vocab_size, c.hidden)
        self.position = nn.Embedding(c.max_positions, c.hidden)
        self.token_type = nn.Embedding(c.type_vocab, c.hidden)
        self.norm = nn.LayerNorm(c.hidden, eps=c.eps)

    def forward(self, input_ids):
        seq = input_ids.shape[1]
        positions = torch.arange(seq, dtype=torch.long).unsqueeze(0)
        token_types = torch.zeros_like(input_ids)
        x = self.word(input_ids) + self.position(positions) + self.token_type(token_types)
        return self.norm(x)


class BertSelfAttention(nn.Module):
    def __init__(self, c: BertConfig):
        super().__init__()
        self.heads = c.heads
        self.head_dim = c.hidden // c.heads
        self.query = nn.Linear(c.hidden, c.hidden)
        self.key = nn.Linear(c.hidden, c.hidden)
        self.value = nn.Linear(c.hidden, c.hidden)

    def split(self, x):  # [B,S,H] -> [B,heads,S,d]
        b, s, _ = x.shape
        return x.view(b, s, self.heads, self.head_dim).permute(0, 2, 1, 3)

    def forward(self, x, mask_bias):
        q, k, v = self.split(self.query(x)), self.split(self.key(x)), self.split(self.value(x))
        scores = torch.matmul(q, k.transpose(-1, -2)) / math.sqrt(self.head_dim)
        probs = torch.softmax(scores + mask_bias, dim=-1)
        ctx = torch.matmul(probs, v).permute(0, 2, 1, 3).contiguous()
        b, s = ctx.shape[0], ctx.shape[1]
        return ctx.view(b, s, self.heads * self.head_dim)


class BertLayer(nn.Module):
    def __init__(self, c: BertConfig):
        super().__init__()
        self.attention = BertSelfAttention(c)
        self.attention_out = nn.Linear(c.hidden, c.hidden)
        self.attention_norm = nn.LayerNorm(c.hidden, eps=c.eps)
        self.intermediate = nn.Linear(c.hidden, c.intermediate)
        self.gelu = nn.GELU()  # exact (erf) GELU, as BERT
        self.output = nn.Linear(c.intermediate, c.hidden)
        self.output_norm = nn.LayerNorm(c.hidden, eps=c.eps)

    def forward(self, x, mask_bias):
        x = self.attention_norm(x + self.attention_out(self.attention(x, mask_bias)))
        return self.output_norm(x + self.output(self.gelu(self.intermediate(x))))


class BertEncoder(nn.Module):
    """BERT-base: embeddings + 12 post-LN transformer layers; returns last_hidden_state."""

    def __init__(self, c: BertConfig = BertConfig()):
        super().__init__()
        self.embeddings = BertEmbeddings(c)
        self.layers = nn.ModuleList(BertLayer(c) for _ in range(c.layers))

    def forward(self, input_ids, attention_mask):
        # [B,S] 1 = attend, 0 = padding -> additive bias [B,1,1,S], as BERT does.
        mask_bias = (1.0 - attention_mask[:, None, None, :].to(torch.float32)) * -10000.0
        x = self.embeddings(input_ids)
        for layer in self.layers:
            x = layer(x, mask_bias)
        return x


def calibrate_batchnorm(model: nn.Module, batches: int = 4, batch: int = 8) -> None:
    """Sets every BatchNorm's running mean/variance from a few seeded random batches, as
    training would. Freshly initialized torchvision MobileNetV2 otherwise produces outputs of
    about 1e-9 (the activations shrink from block to block), which would make the output
    check against onnxruntime (atol 1e-4) vacuous. Only weights change, not the graph."""
    bns = [m for m in model.modules() if isinstance(m, nn.BatchNorm2d)]
    for m in bns:
        m.reset_running_stats()
        m.momentum = None  # cumulative average over the batches
    model.train()
    with torch.no_grad():
        for _ in range(batches):
            model(torch.randn(batch, 3, 224, 224))
    model.eval()


def build(name: str):
    """(module, example inputs, input names, output names) for NAME, seeded."""
    import torchvision

    torch.manual_seed(SEED)
    if name == "resnet50":
        model = torchvision.models.resnet50(weights=None)
        calibrate_batchnorm(model)
        return model, (torch.randn(1, 3, 224, 224),), ["input"], ["output"]
    if name == "mobilenet_v2":
        model = torchvision.models.mobilenet_v2(weights=None)
        calibrate_batchnorm(model)
        return model, (torch.randn(1, 3, 224, 224),), ["input"], ["output"]
    if name == "bert_base":
        model = BertEncoder()
        ids = torch.randint(0, BertConfig.vocab_size, (1, 128), dtype=torch.long)
        mask = torch.ones(1, 128, dtype=torch.long)
        return model, (ids, mask), ["input_ids", "attention_mask"], ["last_hidden_state"]
    raise ValueError(f"unknown model {name!r}")


NAMES = ("resnet50", "mobilenet_v2", "bert_base")


def export(name: str, path: pathlib.Path) -> None:
    model, example, inputs, outputs = build(name)
    model.eval()
    tmp = path.with_suffix(".onnx.tmp")
    with torch.no_grad():
        torch.onnx.export(model, example, str(tmp), opset_version=OPSET,
                          input_names=inputs, output_names=outputs,
                          do_constant_folding=True, export_params=True)
    tmp.replace(path)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("names", nargs="*", metavar="NAME", help=", ".join(NAMES))
    parser.add_argument("--out", default=str(pathlib.Path(__file__).parent / "_work" / "models"))
    parser.add_argument("--force", action="store_true", help="export again even if present")
    args = parser.parse_args()
    for name in args.names:
        if name not in NAMES:
            parser.error(f"unknown model {name!r}; choose from {', '.join(NAMES)}")
    out = pathlib.Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    torch.set_num_threads(1)
    for name in args.names or NAMES:
        path = out / f"{name}.onnx"
        if path.exists() and not args.force:
            print(f"{path}: present (use --force to export again)")
            continue
        export(name, path)
        print(f"{path}: exported ({path.stat().st_size / 1e6:.1f} MB, torch {torch.__version__})")
    return 0


if __name__ == "__main__":
    sys.exit(main())
