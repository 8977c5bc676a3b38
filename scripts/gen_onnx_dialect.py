#!/usr/bin/env python3
"""Generates the `onnx` dialect's op definitions from the ONNX schemas.

Writes dialects/ONNX/ONNXOps.td (ODS, one op per default-domain ONNX op at its newest
version) and dialects/ONNX/ONNXOpSchemas.inc (per-op version history and arities, used by
the importer). Both files are committed; `--check` regenerates them in memory and fails with
a diff when the committed ones are stale (the onnx package was upgraded, or someone edited
them by hand).

Usage: gen_onnx_dialect.py [--check] [--root REPO_ROOT]
"""

import argparse
import difflib
import os
import re
import sys

import numpy as np
import onnx
from onnx import defs, helper

# Ops whose C++ (verifier, folder, canonicalization patterns) is hand-written in
# dialects/ONNX. Keys: verifier, folder, canonicalizer (bool), traits (extra ODS traits),
# extra (ODS lines pasted into the def, e.g. builders).
HAND_WRITTEN = {
    "Constant": {
        "folder": True,
        "traits": ["ConstantLike"],
        "extra": """  let builders = [OpBuilder<(ins "::mlir::ElementsAttr":$value), [{
    $_state.getOrAddProperties<Properties>().value = value;
    $_state.addTypes(value.getType());
  }]>];""",
    },
    "Identity": {"folder": True},
    "Shape": {"folder": True},
    "Size": {"folder": True},
    "Gather": {"folder": True},
    "Concat": {"folder": True, "verifier": True},
    "Unsqueeze": {"folder": True},
    "Squeeze": {"folder": True},
    "Cast": {"folder": True},
    "Slice": {"folder": True},
    "Reshape": {"folder": True, "verifier": True},
    "Add": {"folder": True},
    "Sub": {"folder": True},
    "Mul": {"folder": True},
    "Div": {"folder": True},
    "Equal": {"folder": True},
    "Where": {"folder": True},
    "Less": {"folder": True},
    "Greater": {"folder": True},
    "LessOrEqual": {"folder": True},
    "GreaterOrEqual": {"folder": True},
    "And": {"folder": True},
    "Or": {"folder": True},
    "Xor": {"folder": True},
    "Mod": {"folder": True},
    "Min": {"folder": True},
    "Max": {"folder": True},
    "Neg": {"folder": True},
    "Abs": {"folder": True},
    "Not": {"folder": True},
    "Range": {"folder": True},
    "ConstantOfShape": {"folder": True},
    "Expand": {"folder": True},
    "Flatten": {"folder": True},
    "Transpose": {"folder": True, "verifier": True},
    "Conv": {"verifier": True},
    "Gemm": {"verifier": True},
    "MatMul": {"verifier": True},
}

# Ops with GRAPH attributes whose subgraphs are regions: their ODS is hand-written in
# dialects/ONNX/ONNXControlFlow.td (regions, onnx.Yield); their schemas still go into
# ONNXOpSchemas.inc, without the GRAPH attributes (regions, not attributes).
REGION_OPS = {"If", "Loop", "Scan"}

# Sequence/optional ops produce or consume seq(...)/optional(...) values, for which kiln has
# no MLIR type (every value is a tensor or `none`), so they cannot be imported meaningfully;
# Optional's TYPE_PROTO attribute `type` would moreover collide with the result's getType().
SEQUENCE_OPTIONAL_OPS = {
    "ConcatFromSequence", "Optional", "OptionalGetElement", "OptionalHasElement",
    "SequenceAt", "SequenceConstruct", "SequenceEmpty", "SequenceErase",
    "SequenceInsert", "SequenceLength", "SplitToSequence",
}

AT = defs.OpSchema.AttrType
OPT = defs.OpSchema.FormalParameterOption

ATTR_ODS = {
    AT.INT: "I64Attr",
    AT.FLOAT: "F32Attr",
    AT.STRING: "StrAttr",
    AT.INTS: "I64ArrayAttr",
    AT.FLOATS: "F32ArrayAttr",
    AT.STRINGS: "StrArrayAttr",
    AT.TENSOR: "ElementsAttr",
    # Not in the architecture's table; only Constant's `sparse_value` uses it.
    AT.SPARSE_TENSOR: "ElementsAttr",
}

CXX_KEYWORDS = set("""alignas alignof and and_eq asm auto bitand bitor bool break case catch char
char16_t char32_t class compl const constexpr const_cast continue decltype default delete do
double dynamic_cast else enum explicit export extern false float for friend goto if inline int
long mutable namespace new noexcept not not_eq nullptr operator or or_eq private protected
public register reinterpret_cast return short signed sizeof static static_assert static_cast
struct switch template this thread_local throw true try typedef typeid typename union unsigned
using virtual void volatile wchar_t while xor xor_eq""".split())

# Accessor stems (compared lower-case, without underscores) that ODS or the Op class already
# use: an operand/result named like this would shadow or clash with them.
RESERVED_STEMS = {
    "type", "operation", "context", "loc", "properties", "operands", "results",
    "attributes", "attributenames", "name", "operandsegmentsizes", "resultsegmentsizes",
    "odsoperands", "odsresults", "result", "operand", "region", "regions", "successors",
    "inherentattr", "attrdictionary", "asmresultnames",
}


def stem(name):
    return name.replace("_", "").lower()


def sanitize(name):
    s = re.sub(r"[^A-Za-z0-9_]", "_", name)
    if not s or s[0].isdigit():
        s = "_" + s
    if s in CXX_KEYWORDS:
        s = s + "_"
    return s


def newest_schemas():
    latest, versions = {}, {}
    for s in defs.get_all_schemas_with_history():
        if s.domain not in ("", "ai.onnx"):
            continue
        versions.setdefault(s.name, set()).add(s.since_version)
        if s.name not in latest or s.since_version > latest[s.name].since_version:
            latest[s.name] = s
    return latest, versions


def tg_string(s):
    """A TableGen "..." string literal."""
    return '"' + s.replace("\\", "\\\\").replace('"', '\\"').replace("\n", " ") + '"'


def tg_code(s):
    """Body for a TableGen [{ ... }] code block: it must not contain `}]`."""
    s = s.replace("}]", "} ]")
    lines = [l.rstrip() for l in s.strip("\n").split("\n")]
    return "\n".join(("    " + l) if l else "" for l in lines)


def summary_of(doc, name):
    text = " ".join(doc.strip().split())
    # Strip markdown links/backticks noise from the first sentence.
    m = re.match(r"(.+?\.)(\s|$)", text)
    first = m.group(1) if m else text
    if len(first) > 100 or not first:
        first = "ONNX " + name + " operation"
    return first


def float_literal(v):
    s = str(np.float32(v))
    if s in ("inf", "-inf", "nan"):
        raise ValueError("non-finite float default")
    if "." not in s and "e" not in s:
        s += ".0"
    return s


def default_literal(attr):
    v = helper.get_attribute_value(attr.default_value)
    t = attr.type
    if t == AT.INT:
        return str(int(v))
    if t == AT.FLOAT:
        return float_literal(v)
    if t == AT.STRING:
        return '"' + v.decode() + '"'
    if t == AT.INTS:
        return "{" + ", ".join(str(int(x)) for x in v) + "}"
    if t == AT.FLOATS:
        return "{" + ", ".join(float_literal(x) + "f" for x in v) + "}"
    if t == AT.STRINGS:
        return "{" + ", ".join('"' + x.decode() + '"' for x in v) + "}"
    return None  # TENSOR defaults have no C++ literal: OptionalAttr instead.


def attr_decl(attr):
    base = ATTR_ODS[attr.type]
    if attr.required:
        return base
    if attr.default_value.ListFields():
        lit = default_literal(attr)
        if lit is not None:
            return "DefaultValuedAttr<%s, %s>" % (base, tg_string(lit))
    return "OptionalAttr<%s>" % base


def gen_op(schema):
    name = schema.name
    hw = HAND_WRITTEN.get(name, {})
    attrs = sorted(schema.attributes.values(), key=lambda a: a.name)
    used = {stem(a.name) for a in attrs}
    notes = []

    def param_name(pname, suffix):
        n = sanitize(pname)
        if stem(n) in used or stem(n) in RESERVED_STEMS:
            old = n
            n = n + suffix
            while stem(n) in used:
                n += "_"
            notes.append("%s renamed to %s" % (old, n))
        used.add(stem(n))
        return n

    args = []
    n_variadic_in = 0
    for inp in schema.inputs:
        n = param_name(inp.name, "_in")
        if inp.option == OPT.Variadic:
            n_variadic_in += 1
            args.append("Variadic<AnyType>:$%s" % n)
        else:
            args.append("AnyType:$%s" % n)
    for a in attrs:
        args.append("%s:$%s" % (attr_decl(a), a.name))
    results = []
    n_variadic_out = 0
    for out in schema.outputs:
        n = param_name(out.name, "_out")
        if out.option == OPT.Variadic:
            n_variadic_out += 1
            results.append("Variadic<AnyType>:$%s" % n)
        else:
            results.append("AnyType:$%s" % n)

    traits = []
    if schema.node_determinism != defs.OpSchema.NodeDeterminism.NonDeterministic:
        traits.append("Pure")
    else:
        notes.append("not Pure: the schema marks it non-deterministic")
    if n_variadic_in > 1:
        traits.append("AttrSizedOperandSegments")
    if n_variadic_out > 1:
        traits.append("AttrSizedResultSegments")
    traits += hw.get("traits", [])

    out = []
    out.append("//===" + "-" * 70 + "===//")
    out.append("// %s (opset %d)" % (name, schema.since_version))
    for n in notes:
        out.append("// " + n)
    out.append("//===" + "-" * 70 + "===//")
    out.append("")
    out.append('def ONNX_%sOp : ONNX_Op<"%s", [%s]> {' % (name, name, ", ".join(traits)))
    out.append("  let summary = %s;" % tg_string(summary_of(schema.doc or "", name)))
    out.append("  let description = [{")
    out.append(tg_code(schema.doc or ""))
    out.append("  }];")
    out.append("  let arguments = (ins%s);" % (
        "" if not args else "\n    " + ",\n    ".join(args)))
    out.append("  let results = (outs%s);" % (
        "" if not results else "\n    " + ",\n    ".join(results)))
    if n_variadic_in > 1 or n_variadic_out > 1:
        # The generic form carries the segment sizes; `operands` cannot.
        out.append("  let assemblyFormat = ?;")
    if hw.get("verifier"):
        out.append("  let hasVerifier = 1;")
    if hw.get("folder"):
        out.append("  let hasFolder = 1;")
    if hw.get("canonicalizer"):
        out.append("  let hasCanonicalizer = 1;")
    if hw.get("extra"):
        out.append(hw["extra"])
    out.append("}")
    out.append("")
    return "\n".join(out)


def arity(params):
    """(min, max, last_is_variadic) from formal parameters."""
    mn = 0
    for i, p in enumerate(params):
        if p.option == OPT.Single:
            mn = i + 1
        elif p.option == OPT.Variadic and p.min_arity > 0:
            mn = i + p.min_arity
    variadic = bool(params) and params[-1].option == OPT.Variadic
    mx = -1 if variadic else len(params)
    return mn, mx, variadic


def select():
    latest, versions = newest_schemas()
    kept, skipped, region = [], [], []
    for name in sorted(latest):
        s = latest[name]
        if name in REGION_OPS:
            region.append(s)
        elif s.deprecated:
            skipped.append((name, "deprecated"))
        elif any(a.type in (AT.GRAPH, AT.GRAPHS) for a in s.attributes.values()):
            skipped.append((name, "graph attribute (needs regions)"))
        elif name in SEQUENCE_OPTIONAL_OPS:
            skipped.append((name, "sequence/optional types"))
        elif any(a.type == AT.TYPE_PROTO for a in s.attributes.values()):
            skipped.append((name, "TYPE_PROTO attribute"))
        else:
            kept.append(s)
    return kept, skipped, region, versions


def gen_td(kept, skipped, region):
    out = []
    out.append("//===- ONNXOps.td - ONNX operations (generated) -" + "-" * 30 + "===//")
    out.append("//")
    out.append("// generated by scripts/gen_onnx_dialect.py from onnx %s; do not edit" %
               onnx.__version__)
    out.append("//")
    out.append("// %d ops; %s hand-written in ONNXControlFlow.td. Skipped ops:" % (
        len(kept), ", ".join(s.name for s in region)))
    for name, why in skipped:
        out.append("//   %s: %s" % (name, why))
    out.append("//")
    out.append("//===" + "-" * 70 + "===//")
    out.append("")
    out.append("#ifndef KILN_DIALECTS_ONNX_ONNXOPS_TD")
    out.append("#define KILN_DIALECTS_ONNX_ONNXOPS_TD")
    out.append("")
    out.append('include "dialects/ONNX/ONNXBase.td"')
    out.append('include "dialects/ONNX/ONNXNoValue.td"')
    out.append('include "dialects/ONNX/ONNXControlFlow.td"')
    out.append("")
    for s in kept:
        out.append(gen_op(s))
    out.append("#endif // KILN_DIALECTS_ONNX_ONNXOPS_TD")
    return "\n".join(out) + "\n"


def gen_inc(kept, versions):
    out = []
    out.append("// generated by scripts/gen_onnx_dialect.py from onnx %s; do not edit" %
               onnx.__version__)
    out.append("//")
    out.append("// KILN_ONNX_OP(name, {since_versions...}, minIn, maxIn, variadicIn, minOut,")
    out.append("//              maxOut, variadicOut, requiredAttributes)")
    out.append("// One entry per op of ONNXOps.td and ONNXControlFlow.td, sorted by name. `versions` lists every opset")
    out.append("// at which the op changed (ascending); a max of -1 means unbounded (variadic).")
    out.append("// Counts are those of the newest version, i.e. of the dialect op.")
    out.append("// requiredAttributes: the attributes the op must have, comma-separated (the")
    out.append("// dialect op's accessors of these assume they are present).")
    out.append("// The macro must be defined by the includer; it is undefined at the end. The")
    out.append("// version list is a braced list whose commas split macro arguments, so take it")
    out.append("// through __VA_ARGS__: #define KILN_ONNX_OP(NAME, ...) f(NAME, __VA_ARGS__)")
    out.append("")
    out.append("#ifndef KILN_ONNX_OP")
    out.append("#error \"define KILN_ONNX_OP before including ONNXOpSchemas.inc\"")
    out.append("#endif")
    out.append("")
    for s in sorted(kept, key=lambda s: s.name):
        mi, xi, vi = arity(s.inputs)
        mo, xo, vo = arity(s.outputs)
        vs = ", ".join(str(v) for v in sorted(versions[s.name]))
        required = ",".join(sorted(a.name for a in s.attributes.values()
                                   if a.required and a.type not in (AT.GRAPH, AT.GRAPHS)))
        out.append('KILN_ONNX_OP("%s", /*versions*/ {%s}, %d, %d, %s, %d, %d, %s, "%s")' % (
            s.name, vs, mi, xi, "true" if vi else "false", mo, xo,
            "true" if vo else "false", required))
    out.append("")
    out.append("#undef KILN_ONNX_OP")
    return "\n".join(out) + "\n"


def main():
    ap = argparse.ArgumentParser(description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--check", action="store_true",
                    help="compare with the committed files; exit 1 with a diff if stale")
    ap.add_argument("--root", default=os.path.join(os.path.dirname(__file__), ".."))
    a = ap.parse_args()

    kept, skipped, region, versions = select()
    files = {
        os.path.join(a.root, "dialects/ONNX/ONNXOps.td"): gen_td(kept, skipped, region),
        os.path.join(a.root, "dialects/ONNX/ONNXOpSchemas.inc"): gen_inc(kept + region, versions),
    }
    if a.check:
        stale = False
        for path, text in files.items():
            try:
                with open(path) as f:
                    old = f.read()
            except FileNotFoundError:
                old = ""
            if old != text:
                stale = True
                sys.stdout.writelines(difflib.unified_diff(
                    old.splitlines(True), text.splitlines(True), path, path + " (generated)"))
        if stale:
            print("error: generated dialect files are stale; run "
                  "scripts/gen_onnx_dialect.py", file=sys.stderr)
            return 1
        return 0
    for path, text in files.items():
        with open(path, "w") as f:
            f.write(text)
    print("wrote %d ops (%d skipped)" % (len(kept), len(skipped)))
    return 0


if __name__ == "__main__":
    sys.exit(main())
