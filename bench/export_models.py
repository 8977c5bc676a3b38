#!/usr/bin/env python3
"""Export the benchmark suite's PyTorch models to ONNX (opset 17), seeded and reproducible.

    .venv-bench/bin/python bench/export_models.py [--out bench/_work/models] [--force] [NAME ...]

NAME is one of NAMES below (default: all 19). Needs Debian's python3-torch 1.13 and
python3-torchvision 0.14 (scripts/setup-bench.sh makes .venv-bench).

Every model is built with torch.manual_seed(0) and random initial weights (weights=None: no
trained weights are available offline; latency and graph structure do not depend on them),
then made non-vacuous: weights that initialization leaves near zero for training are
re-initialized (randomize_degenerate: ViT's zeroed head, ConvNeXt's 1e-6 layer scales,
classifiers at std 0.01) and BatchNorm statistics are set from 4 seeded random batches of 8
(calibrate_batchnorm). The export fails if the largest |output| on a seeded input is below
MIN_OUTPUT_SCALE (1e-2 = 100 x bench.py's atol) or not finite. Each model is put in eval mode
and exported with torch.onnx.export(opset_version=17, do_constant_folding=True), batch 1,
fixed shapes. A model already present is kept unless --force is given.

- torchvision CNNs and vision transformers (TORCHVISION below: name, constructor, input
  size): input `input` float32 [1,3,S,S] (S = 224, 299 for inception_v3), output `output`.
  resnet50 is torchvision's v1.5 (stride 2 in the 3x3 convolution of each downsampling
  bottleneck); googlenet and inception_v3 without their auxiliary heads.
- bert_base: the BERT-base encoder written below in torch.nn (12 layers, hidden 768, 12
  heads, intermediate 3072, vocabulary 30522, 512 positions, exact-erf GELU, post-LN), inputs
  `input_ids` int64 [1,128] and `attention_mask` int64 [1,128], output `last_hidden_state`
  float32 [1,128,768]. distilbert: the same with 6 layers and no token-type embedding.
  (Hugging Face transformers is not packaged for Debian 12.)
- gpt_decoder / llama_decoder: the causal decoders below (Decoder: GPT-2-small sizes with
  tanh GELU; Llama-style with RMSNorm, rotary positions, SwiGLU), input `input_ids` int64
  [1,128], output `logits`.
- lstm / gru: RecurrentModel, a 2-layer LSTM or GRU (128 features, hidden 256) and a Linear
  per step, input `input` float32 [1,32,128].

bench/README.md ("The suite") has the table of all of them.
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
    """BERT-base; DistilBertConfig below is the same with 6 layers and no token types."""
    vocab_size = 30522
    hidden = 768
    layers = 12
    heads = 12
    intermediate = 3072
    max_positions = 512
    type_vocab = 2
    eps = 1e-12
    token_types = True


class DistilBertConfig(BertConfig):
    layers = 6
    token_types = False


class BertEmbeddings(nn.Module):
    def __init__(self, c: BertConfig):
        super().__init__()
        self.word = nn.Embedding(c.vocab_size, c.hidden)
        self.position = nn.Embedding(c.max_positions, c.hidden)
        self.token_type = nn.Embedding(c.type_vocab, c.hidden) if c.token_types else None
        self.norm = nn.LayerNorm(c.hidden, eps=c.eps)

    def forward(self, input_ids):
        seq = input_ids.shape[1]
        positions = torch.arange(seq, dtype=torch.long).unsqueeze(0)
        x = self.word(input_ids) + self.position(positions)
        if self.token_type is not None:
            x = x + self.token_type(torch.zeros_like(input_ids))
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


class DecoderConfig:
    """A GPT-2-small-sized decoder: pre-LN, learned positions, tanh-GELU MLP, tied-free LM head."""
    vocab_size = 50257
    hidden = 768
    layers = 12
    heads = 12
    intermediate = 3072
    max_positions = 1024
    eps = 1e-5
    style = "gpt"  # "gpt": LayerNorm, learned positions, GELU MLP; "llama": below


class LlamaConfig(DecoderConfig):
    """A small Llama-style decoder: RMSNorm, rotary positions, SiLU-gated (SwiGLU) MLP, no biases."""
    vocab_size = 32000
    hidden = 512
    layers = 8
    heads = 8
    intermediate = 1376
    eps = 1e-6
    style = "llama"


class RMSNorm(nn.Module):
    def __init__(self, dim: int, eps: float):
        super().__init__()
        self.eps = eps
        self.weight = nn.Parameter(torch.ones(dim))

    def forward(self, x):
        return x * torch.rsqrt(x.pow(2).mean(-1, keepdim=True) + self.eps) * self.weight


def rotate_half(x):
    half = x.shape[-1] // 2
    return torch.cat((-x[..., half:], x[..., :half]), dim=-1)


class DecoderAttention(nn.Module):
    def __init__(self, c: DecoderConfig):
        super().__init__()
        self.heads, self.head_dim, self.style = c.heads, c.hidden // c.heads, c.style
        bias = c.style == "gpt"
        self.qkv = nn.Linear(c.hidden, 3 * c.hidden, bias=bias)
        self.out = nn.Linear(c.hidden, c.hidden, bias=bias)

    def forward(self, x, causal_bias, cos, sin):
        b, s, h = x.shape
        q, k, v = self.qkv(x).split(h, dim=-1)
        q, k, v = (t.view(b, s, self.heads, self.head_dim).transpose(1, 2) for t in (q, k, v))
        if self.style == "llama":
            q = q * cos + rotate_half(q) * sin
            k = k * cos + rotate_half(k) * sin
        scores = torch.matmul(q, k.transpose(-1, -2)) / math.sqrt(self.head_dim)
        probs = torch.softmax(scores + causal_bias, dim=-1)
        return self.out(torch.matmul(probs, v).transpose(1, 2).reshape(b, s, h))


class DecoderLayer(nn.Module):
    def __init__(self, c: DecoderConfig):
        super().__init__()
        self.style = c.style
        norm = (lambda: nn.LayerNorm(c.hidden, eps=c.eps)) if c.style == "gpt" else \
            (lambda: RMSNorm(c.hidden, c.eps))
        self.norm1, self.norm2 = norm(), norm()
        self.attention = DecoderAttention(c)
        if c.style == "gpt":
            self.up = nn.Linear(c.hidden, c.intermediate)
            self.act = nn.GELU(approximate="tanh")  # GPT-2's GELU
            self.down = nn.Linear(c.intermediate, c.hidden)
        else:
            self.gate = nn.Linear(c.hidden, c.intermediate, bias=False)
            self.up = nn.Linear(c.hidden, c.intermediate, bias=False)
            self.act = nn.SiLU()
            self.down = nn.Linear(c.intermediate, c.hidden, bias=False)

    def forward(self, x, causal_bias, cos, sin):
        x = x + self.attention(self.norm1(x), causal_bias, cos, sin)
        y = self.norm2(x)
        if self.style == "gpt":
            return x + self.down(self.act(self.up(y)))
        return x + self.down(self.act(self.gate(y)) * self.up(y))


class Decoder(nn.Module):
    """A causal (decoder-only) language model: input_ids [B,S] -> logits [B,S,vocab]. The
    causal mask (an additive -inf-like bias above the diagonal) and the rotary tables depend
    only on S, so the export folds them into constants."""

    def __init__(self, c: DecoderConfig = DecoderConfig()):
        super().__init__()
        self.c = c
        self.embed = nn.Embedding(c.vocab_size, c.hidden)
        nn.init.normal_(self.embed.weight, std=0.02)
        self.position = nn.Embedding(c.max_positions, c.hidden) if c.style == "gpt" else None
        if self.position is not None:
            nn.init.normal_(self.position.weight, std=0.02)
        self.layers = nn.ModuleList(DecoderLayer(c) for _ in range(c.layers))
        self.norm = nn.LayerNorm(c.hidden, eps=c.eps) if c.style == "gpt" else RMSNorm(c.hidden, c.eps)
        self.lm_head = nn.Linear(c.hidden, c.vocab_size, bias=False)

    def forward(self, input_ids):
        s = input_ids.shape[1]
        positions = torch.arange(s, dtype=torch.long)
        x = self.embed(input_ids)
        if self.position is not None:
            x = x + self.position(positions).unsqueeze(0)
        causal_bias = torch.triu(torch.full((s, s), -1e9), diagonal=1)[None, None]
        d = self.c.hidden // self.c.heads
        inv_freq = 1.0 / (10000.0 ** (torch.arange(0, d, 2, dtype=torch.float32) / d))
        angles = positions.to(torch.float32)[:, None] * inv_freq[None, :]
        angles = torch.cat((angles, angles), dim=-1)
        cos, sin = angles.cos()[None, None], angles.sin()[None, None]
        for layer in self.layers:
            x = layer(x, causal_bias, cos, sin)
        return self.lm_head(self.norm(x))


class RecurrentModel(nn.Module):
    """A sequence classifier/tagger: [B,T,F] -> 2-layer LSTM or GRU -> Linear per step."""

    def __init__(self, cell: str, features: int = 128, hidden: int = 256, layers: int = 2,
                 classes: int = 64):
        super().__init__()
        rnn = nn.LSTM if cell == "lstm" else nn.GRU
        self.rnn = rnn(features, hidden, num_layers=layers, batch_first=True)
        self.head = nn.Linear(hidden, classes)

    def forward(self, x):
        y, _ = self.rnn(x)
        return self.head(y)


def calibrate_batchnorm(model: nn.Module, batches: int = 4, batch: int = 8, size: int = 224) -> None:
    """Sets every BatchNorm's running mean/variance from a few seeded random batches, as
    training would. Freshly initialized torchvision MobileNetV2 otherwise produces outputs of
    about 1e-9 (the activations shrink from block to block), which would make the output
    check against onnxruntime (atol 1e-4) vacuous. Only weights change, not the graph."""
    bns = [m for m in model.modules() if isinstance(m, nn.BatchNorm2d)]
    if not bns:
        return
    for m in bns:
        m.reset_running_stats()
        m.momentum = None  # cumulative average over the batches
    model.train()
    with torch.no_grad():
        for _ in range(batches):
            model(torch.randn(batch, 3, size, size))
    model.eval()


def randomize_degenerate(model: nn.Module) -> list[str]:
    """Re-initializes, seeded, the weights that initialization leaves (near) zero on purpose
    for training: torchvision's ViT zeroes its classifier (the output would be the bias: 0),
    ConvNeXt scales every residual branch by a layer scale of 1e-6 (the blocks would
    contribute nothing), several classifiers start at std 0.01. Matrices get N(0, 1/fan_in),
    per-channel scales U(0.2, 1). Biases are left alone. Returns the names changed. Only
    weights change, not the graph."""
    changed = []
    with torch.no_grad():
        for name, m in model.named_modules():
            # Classifier heads initialized at std 0.01 (MobileNetV3, RegNet, ...): the logits
            # would be ~1e-2, too small for an atol-based check. N(0, 1/fan_in) instead.
            if isinstance(m, nn.Linear) and float(m.weight.std()) < 0.5 / math.sqrt(m.in_features):
                m.weight.normal_(0.0, 1.0 / math.sqrt(m.in_features))
                changed.append(name + ".weight")
        for name, p in model.named_parameters():
            if name in changed:
                continue
            if name.endswith("bias") or p.numel() == 0 or p.abs().max() >= 1e-4:
                continue
            if p.dim() >= 2 and p[0].numel() > 1:
                p.normal_(0.0, 1.0 / math.sqrt(p[0].numel()))
            else:
                p.uniform_(0.2, 1.0)
            changed.append(name)
    return changed


# name -> (torchvision constructor, keyword arguments, input size): batch 1, 3 channels.
TORCHVISION = {
    "resnet50": ("resnet50", {}, 224),
    "mobilenet_v2": ("mobilenet_v2", {}, 224),
    "mobilenet_v3_small": ("mobilenet_v3_small", {}, 224),
    "efficientnet_b0": ("efficientnet_b0", {}, 224),
    "densenet121": ("densenet121", {}, 224),
    "shufflenet_v2": ("shufflenet_v2_x1_0", {}, 224),
    "resnext50": ("resnext50_32x4d", {}, 224),
    "regnet_y_400mf": ("regnet_y_400mf", {}, 224),
    "convnext_tiny": ("convnext_tiny", {}, 224),
    "googlenet": ("googlenet", {"aux_logits": False, "init_weights": True}, 224),
    "inception_v3": ("inception_v3", {"aux_logits": False, "init_weights": True}, 299),
    "vit_b_16": ("vit_b_16", {}, 224),
    "swin_t": ("swin_t", {}, 224),
}


def build(name: str):
    """(module, example inputs, input names, output names) for NAME, seeded."""
    import torchvision

    torch.manual_seed(SEED)
    if name in TORCHVISION:
        ctor, kwargs, size = TORCHVISION[name]
        model = getattr(torchvision.models, ctor)(weights=None, **kwargs)
        randomize_degenerate(model)
        calibrate_batchnorm(model, size=size)
        return model, (torch.randn(1, 3, size, size),), ["input"], ["output"]
    if name in ("bert_base", "distilbert"):
        c = BertConfig() if name == "bert_base" else DistilBertConfig()
        model = BertEncoder(c)
        ids = torch.randint(0, c.vocab_size, (1, 128), dtype=torch.long)
        mask = torch.ones(1, 128, dtype=torch.long)
        return model, (ids, mask), ["input_ids", "attention_mask"], ["last_hidden_state"]
    if name in ("gpt_decoder", "llama_decoder"):
        c = DecoderConfig() if name == "gpt_decoder" else LlamaConfig()
        model = Decoder(c)
        ids = torch.randint(0, c.vocab_size, (1, 128), dtype=torch.long)
        return model, (ids,), ["input_ids"], ["logits"]
    if name in ("lstm", "gru"):
        model = RecurrentModel(name)
        return model, (torch.randn(1, 32, 128),), ["input"], ["output"]
    raise ValueError(f"unknown model {name!r}")


NAMES = ("resnet50", "mobilenet_v2", "bert_base", "mobilenet_v3_small", "efficientnet_b0",
         "densenet121", "shufflenet_v2", "resnext50", "regnet_y_400mf", "convnext_tiny",
         "googlenet", "inception_v3", "vit_b_16", "swin_t", "distilbert", "gpt_decoder",
         "llama_decoder", "lstm", "gru")
# Below 100 x bench.py's atol (1e-4) the check against onnxruntime cannot fail.
MIN_OUTPUT_SCALE = 1e-2


def export(name: str, path: pathlib.Path) -> float:
    model, example, inputs, outputs = build(name)
    model.eval()
    with torch.no_grad():
        scale = max(float(t.abs().max()) for t in _flatten(model(*example)))
    if not math.isfinite(scale) or scale < MIN_OUTPUT_SCALE:
        raise SystemExit(f"{name}: output scale {scale:.3g} (largest |output| on a seeded "
                         f"input) is below {MIN_OUTPUT_SCALE} or not finite: the check against "
                         f"onnxruntime would be vacuous")
    tmp = path.with_suffix(".onnx.tmp")
    # Traced with autograd on: in no_grad mode torch 1.13's nn.MultiheadAttention (ViT, Swin)
    # takes its fused fast path, aten::_native_multi_head_attention, which has no ONNX export.
    torch.onnx.export(model, example, str(tmp), opset_version=OPSET,
                      input_names=inputs, output_names=outputs,
                      do_constant_folding=True, export_params=True)
    tmp.replace(path)
    return scale


def _flatten(out):
    return [out] if isinstance(out, torch.Tensor) else [t for o in out for t in _flatten(o)]


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
        scale = export(name, path)
        print(f"{path}: exported ({path.stat().st_size / 1e6:.1f} MB, torch {torch.__version__}, "
              f"largest |output| {scale:.3g})", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
