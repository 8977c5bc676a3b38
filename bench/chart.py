#!/usr/bin/env python3
"""Bar chart (PNG) of kiln / onnxruntime latency ratios from bench/bench.py's results.json.

    .venv-bench/bin/python bench/chart.py results.json ratios.png

One group of bars per model, one bar per thread count; below 1 means kiln is faster. A model
without a ratio (failed, or its outputs did not match onnxruntime's) gets a label instead of
a bar. Needs matplotlib (Debian's python3-matplotlib in .venv-bench, scripts/setup-bench.sh).
"""
import json
import sys

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402


def main() -> int:
    if len(sys.argv) != 3:
        print(__doc__, file=sys.stderr)
        return 2
    doc = json.load(open(sys.argv[1]))
    threads = doc["settings"]["threads"]
    results = doc["results"]
    models = [r["model"] for r in results]
    width = 0.8 / max(1, len(threads))
    fig, ax = plt.subplots(figsize=(max(6, 1.4 * len(models) + 2), 4.5))
    ratios = []
    for j, t in enumerate(threads):
        xs, ys = [], []
        for i, r in enumerate(results):
            e = (r.get("latency") or {}).get(str(t)) if r.get("ok") else None
            x = i + (j - (len(threads) - 1) / 2) * width
            if e and e.get("ratio") is not None:
                xs.append(x)
                ys.append(e["ratio"])
            else:
                why = "failed" if not r.get("ok") else "outputs\ndiffer"
                ax.text(x, 1.0, why, ha="center", va="bottom", fontsize=7, rotation=90, color="red")
        bars = ax.bar(xs, ys, width, label=f"{t} thread{'s' if t != 1 else ''}")
        for b, y in zip(bars, ys):
            ax.text(b.get_x() + b.get_width() / 2, y, f"{y:.2f}", ha="center", va="bottom", fontsize=7)
        ratios += ys
    ax.axhline(1.0, color="black", linewidth=0.8)
    if ratios and max(ratios) / max(min(ratios), 1e-9) > 20:
        ax.set_yscale("log")
    ax.set_xticks(range(len(models)))
    ax.set_xticklabels(models, rotation=20, ha="right")
    ax.set_ylabel("latency kiln / onnxruntime (lower is better for kiln)")
    m = doc.get("machine", {})
    ax.set_title(f"kiln / onnxruntime {m.get('onnxruntime', '')} median latency, "
                 f"{m.get('cpu', '')} ({m.get('cores', '?')} cores), {doc.get('date', '')[:10]}",
                 fontsize=9)
    ax.legend(fontsize=8)
    fig.tight_layout()
    fig.savefig(sys.argv[2], dpi=110)
    return 0


if __name__ == "__main__":
    sys.exit(main())
