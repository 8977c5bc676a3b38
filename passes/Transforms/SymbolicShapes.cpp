//===- SymbolicShapes.cpp - kiln-symbolic-shapes
//---------------------------===//
//
// Follows the symbols of a model's symbolic input dims (the function's
// `kiln.symbols`, each argument's `kiln.dims`) through the graph: every `?`
// dim of every value gets an expression over the symbols (an AffineExpr over
// symbols s0, s1, ...: a symbol, a constant, sums and products), with the
// equalities elementwise broadcasting implies checked at compile time. The
// function's results get `kiln.dims` (model_abi.h's encoding: a size, or
// -(symbol id) - 1), which the descriptor reports and the entry binds.
//
// Run symbols: a `?` dim that shape inference left for an op whose output
// shape depends on the *values* of a non-constant input (a Reshape whose
// shape is a graph input: the ops that opt in, ShapeHelpers.h's
// producesRunDims) gets a fresh symbol flagged "run" in `kiln.symbols`
// (`[name, 0, -1, 1]`): its value is decided by the run (the lowering computes
// it from the deciding values; the entry writes it for the runtime,
// model_abi.h's KILN_SYMBOL_RUN). It propagates like any symbol. A function
// without input symbols gets a `kiln.symbols` table when it has run symbols.
//
// Each op that acceptsSymbolicDims (ShapeHelpers.h) has a rule here; any
// other op, and any case a rule cannot express yet (a reduction over a
// symbolic axis, two different symbols broadcast against each other, an
// output dim that is not a single symbol), is an error naming the ONNX node
// and the dim: never a guess. docs/dynamic-shapes.md.
//
//===----------------------------------------------------------------------===//

#include "passes/Transforms/Passes.h"

#include "dialects/ONNX/ConstantValues.h"
#include "dialects/ONNX/ControlFlow.h"
#include "dialects/ONNX/Diagnostics.h"
#include "dialects/ONNX/ONNXOps.h"
#include "dialects/ONNX/ShapeInference/ShapeHelpers.h"

#include "mlir/IR/AffineExpr.h"
#include "mlir/IR/Builders.h"
#include "mlir/IR/BuiltinTypes.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"
#include "llvm/ADT/StringSet.h"

namespace kiln {

#define GEN_PASS_DEF_KILNSYMBOLICSHAPESPASS
#include "passes/Transforms/Passes.h.inc"

namespace {

using namespace mlir;
using Dims = SmallVector<AffineExpr>;

struct KilnSymbolicShapesPass
    : public impl::KilnSymbolicShapesPassBase<KilnSymbolicShapesPass> {
  using Base::Base;

  SmallVector<std::string> names;
  SmallVector<int64_t> minimums; ///< each symbol's lower bound
  /// The symbols of the function's `kiln.symbols` (input symbols); the ones
  /// after them are run symbols this pass made.
  size_t numInputSymbols = 0;
  DenseMap<Value, Dims> dims;
  /// The contents of small integer tensors computed from shapes (Shape ->
  /// Gather -> Concat chains): one expression per element.
  DenseMap<Value, Dims> values;

  /// `e` with the symbols' names: "batch", "batch * seq", "4".
  std::string text(AffineExpr e) {
    if (!e)
      return "?";
    if (auto c = dyn_cast<AffineConstantExpr>(e))
      return std::to_string(c.getValue());
    if (auto s = dyn_cast<AffineSymbolExpr>(e))
      return s.getPosition() < names.size()
                 ? names[s.getPosition()]
                 : "s" + std::to_string(s.getPosition());
    auto bin = cast<AffineBinaryOpExpr>(e);
    const char *op = e.getKind() == AffineExprKind::Add        ? " + "
                     : e.getKind() == AffineExprKind::Mul      ? " * "
                     : e.getKind() == AffineExprKind::FloorDiv ? " floordiv "
                     : e.getKind() == AffineExprKind::CeilDiv  ? " ceildiv "
                                                               : " mod ";
    return "(" + text(bin.getLHS()) + op + text(bin.getRHS()) + ")";
  }

  InFlightDiagnostic fail(Operation *op, const Twine &what) {
    InFlightDiagnostic diag = onnx::emitNodeError(op);
    diag << what;
    return diag;
  }

  /// The expressions of `v`'s dims; static dims are constants. A `?` with no
  /// expression (a value this pass has not reached) is a null expr.
  Dims get(Value v) {
    auto type = dyn_cast<RankedTensorType>(v.getType());
    if (!type)
      return {};
    auto it = dims.find(v);
    if (it != dims.end())
      return it->second;
    Dims out;
    for (int64_t d : type.getShape())
      out.push_back(ShapedType::isDynamic(d)
                        ? AffineExpr()
                        : getAffineConstantExpr(d, v.getContext()));
    return out;
  }

  static bool isConstant(AffineExpr e) {
    return e && isa<AffineConstantExpr>(e);
  }
  static bool isSymbolic(const Dims &d) {
    return llvm::any_of(d, [](AffineExpr e) { return !isConstant(e); });
  }

  /// Records `d` as result `i`'s dims after checking them against its type.
  LogicalResult set(Operation *op, unsigned i, Dims d) {
    auto type = cast<RankedTensorType>(op->getResult(i).getType());
    if (static_cast<int64_t>(d.size()) != type.getRank())
      return fail(op, "symbolic shapes: rank mismatch on output ") << i;
    for (auto [axis, e] : llvm::enumerate(d)) {
      int64_t t = type.getDimSize(axis);
      if (!e)
        return fail(op, "output ")
               << i << " dimension " << axis << " has no symbolic expression";
      auto c = dyn_cast<AffineConstantExpr>(e);
      if (ShapedType::isDynamic(t) != !c || (c && c.getValue() != t))
        return fail(op, "output ")
               << i << " dimension " << axis << " is "
               << (ShapedType::isDynamic(t) ? std::string("?")
                                            : std::to_string(t))
               << " by shape inference but '" << text(e)
               << "' by its symbols; this case is not supported yet";
    }
    dims[op->getResult(i)] = std::move(d);
    return success();
  }

  /// A fresh run symbol for dim `axis` of result `result` of `op`, named for
  /// messages after the node ("Reshape_3.dim1"; the driver renames one that
  /// a graph output's dim names after the output, "y.dim1").
  AffineExpr newRunSymbol(Operation *op, unsigned result, int64_t axis) {
    std::string node = onnx::getNodeName(op).value_or(
        op->getName().stripDialect().str());
    if (op->getNumResults() > 1)
      node += ".out" + std::to_string(result);
    names.push_back(node + ".dim" + std::to_string(axis));
    minimums.push_back(0);
    return getAffineSymbolExpr(names.size() - 1, op->getContext());
  }

  bool isRunSymbol(AffineExpr e) const {
    bool run = false;
    if (e)
      e.walk([&](AffineExpr sub) {
        if (auto s = dyn_cast<AffineSymbolExpr>(sub))
          run |= s.getPosition() >= numInputSymbols;
      });
    return run;
  }

  /// Result `i` of an op whose output shape the run decides: each dim is
  /// `known[axis]` where given (non-null), else its static size, else a
  /// fresh run symbol.
  LogicalResult setRunDims(Operation *op, unsigned i, Dims known,
                           StringRef input) {
    auto type = cast<RankedTensorType>(op->getResult(i).getType());
    // A device without run dims: the error of before (run.py and users
    // --specialize the input it names).
    if (!runDims && !type.hasStaticShape())
      return fail(op, "output shape depends on a non-constant input '")
             << input
             << "' (sizes decided by the run's values are supported on the "
                "cpu device only so far)";
    Dims d;
    for (int64_t axis = 0; axis < type.getRank(); ++axis) {
      if (axis < static_cast<int64_t>(known.size()) && known[axis])
        d.push_back(known[axis]);
      else if (!type.isDynamicDim(axis))
        d.push_back(getAffineConstantExpr(type.getDimSize(axis),
                                          op->getContext()));
      else
        d.push_back(newRunSymbol(op, i, axis));
    }
    return set(op, i, d);
  }

  /// Whether `op`'s `?` result dims are chosen by the values of a non-constant
  /// input: Reduce* with run-time `axes` (static data) and Resize with
  /// run-time `scales` or `sizes` (static X).
  static bool decidedByRunValues(Operation *op) {
    if (op->getNumResults() != 1)
      return false;
    auto type = dyn_cast<RankedTensorType>(op->getResult(0).getType());
    auto data = op->getNumOperands() > 0
                    ? dyn_cast<RankedTensorType>(op->getOperand(0).getType())
                    : RankedTensorType();
    if (!type || type.hasStaticShape() || !data || !data.hasStaticShape())
      return false;
    StringRef name = op->getName().getStringRef();
    if (name == "onnx.Resize")
      return onnx::isRunTimeOperand(op, 2) || onnx::isRunTimeOperand(op, 3);
    if (name.starts_with("onnx.Reduce"))
      return onnx::isRunTimeOperand(op, 1);
    return false;
  }

  /// Numpy broadcasting of the operands' dims: per result dim, every operand
  /// dim that is not the constant 1 must be the same expression.
  FailureOr<Dims> broadcast(Operation *op, ArrayRef<Dims> operands) {
    size_t rank = 0;
    for (const Dims &d : operands)
      rank = std::max(rank, d.size());
    MLIRContext *ctx = op->getContext();
    Dims out(rank, getAffineConstantExpr(1, ctx));
    for (const Dims &d : operands) {
      size_t offset = rank - d.size();
      for (auto [i, e] : llvm::enumerate(d)) {
        AffineExpr &r = out[offset + i];
        if (!e) {
          fail(op, "dimension ") << offset + i << " has no symbolic expression";
          return failure();
        }
        auto c = dyn_cast<AffineConstantExpr>(e);
        if (e == r || (c && c.getValue() == 1))
          continue;
        auto rc = dyn_cast<AffineConstantExpr>(r);
        if (rc && rc.getValue() == 1) {
          r = e;
          continue;
        }
        fail(op, "dimension ")
            << offset + i << " broadcasts '" << text(e) << "' against '"
            << text(r)
            << "': a symbolic dimension broadcasts only against 1 or the "
               "same symbols (not supported yet otherwise)";
        return failure();
      }
    }
    return out;
  }

  /// `e` as a constant times a list of factors (its Mul operands).
  static void factor(AffineExpr e, int64_t &constant,
                     SmallVectorImpl<AffineExpr> &factors) {
    if (auto c = dyn_cast<AffineConstantExpr>(e)) {
      constant *= c.getValue();
      return;
    }
    if (e.getKind() == AffineExprKind::Mul) {
      auto bin = cast<AffineBinaryOpExpr>(e);
      factor(bin.getLHS(), constant, factors);
      factor(bin.getRHS(), constant, factors);
      return;
    }
    factors.push_back(e);
  }

  /// `num / den` when it is exact as products (every factor of `den` is one
  /// of `num`'s, and the constants divide); null otherwise.
  AffineExpr divideExactly(AffineExpr num, AffineExpr den, MLIRContext *ctx) {
    int64_t nc = 1, dc = 1;
    SmallVector<AffineExpr> nf, df;
    factor(num, nc, nf);
    factor(den, dc, df);
    for (AffineExpr f : df) {
      auto it = llvm::find(nf, f);
      if (it == nf.end())
        return AffineExpr();
      nf.erase(it);
    }
    if (dc == 0 || nc % dc != 0)
      return AffineExpr();
    return product(nf, ctx) * getAffineConstantExpr(nc / dc, ctx);
  }

  /// True when `a` and `b` are the same product (factors in any order).
  bool isEqualProduct(AffineExpr a, AffineExpr b) {
    AffineExpr q = divideExactly(a, b, a.getContext());
    auto c = q ? dyn_cast<AffineConstantExpr>(q) : AffineConstantExpr();
    return c && c.getValue() == 1;
  }

  AffineExpr product(ArrayRef<AffineExpr> d, MLIRContext *ctx) {
    AffineExpr p = getAffineConstantExpr(1, ctx);
    for (AffineExpr e : d)
      p = p * e;
    return p;
  }

  /// Error unless the dims at `axes` are static (a reduction or normalization
  /// over a symbolic axis is not supported yet).
  LogicalResult requireStatic(Operation *op, const Dims &d,
                              ArrayRef<int64_t> axes, StringRef what) {
    for (int64_t a : axes)
      if (!isConstant(d[a]))
        return fail(op, what) << " over dimension " << a << " ('" << text(d[a])
                              << "'), a symbolic one, is not supported yet";
    return success();
  }

  /// The elements of `v` as expressions: a constant's values, or what
  /// trackValues recorded. std::nullopt otherwise.
  std::optional<Dims> getValues(Value v) {
    if (!v || onnx::isNoneValue(v))
      return std::nullopt;
    auto it = values.find(v);
    if (it != values.end())
      return it->second;
    auto type = dyn_cast<RankedTensorType>(v.getType());
    if (!type || type.getRank() > 1 || !type.hasStaticShape() ||
        type.getNumElements() > 64)
      return std::nullopt;
    std::optional<SmallVector<int64_t>> c = onnx::getConstantIntValues(v);
    if (!c)
      return std::nullopt;
    Dims out;
    for (int64_t x : *c)
      out.push_back(getAffineConstantExpr(x, v.getContext()));
    return out;
  }

  /// Records the elements of a small integer result computed from shapes
  /// (the rules of onnx::getShapeValues, with expressions).
  void trackValues(Operation *op) {
    if (op->getNumResults() != 1)
      return;
    Value r = op->getResult(0);
    auto type = dyn_cast<RankedTensorType>(r.getType());
    if (!type || type.getRank() > 1 || !type.hasStaticShape() ||
        type.getNumElements() > 64 || !isa<IntegerType>(type.getElementType()))
      return;
    StringRef name = op->getName().getStringRef();
    std::optional<Dims> out;
    if (name == "onnx.Shape") {
      Dims d = get(op->getOperand(0));
      int64_t rank = d.size();
      auto clamp = [&](int64_t a) {
        return std::clamp<int64_t>(a < 0 ? a + rank : a, 0, rank);
      };
      int64_t start = clamp(onnx::getIntAttr(op, "start", 0));
      int64_t end = clamp(onnx::getIntAttr(op, "end", rank));
      out = Dims(ArrayRef(d).slice(start, std::max<int64_t>(end - start, 0)));
      // Run symbols are not known before the run: a shape computed from
      // them is a run-time value (not followed).
      if (llvm::any_of(*out, [&](AffineExpr e) { return isRunSymbol(e); }))
        return;
    } else if (name == "onnx.Identity" || name == "onnx.Cast" ||
               name == "onnx.Unsqueeze" || name == "onnx.Squeeze") {
      out = getValues(op->getOperand(0));
    } else if (name == "onnx.Gather") {
      std::optional<Dims> data = getValues(op->getOperand(0));
      std::optional<SmallVector<int64_t>> indices =
          onnx::getConstantIntValues(op->getOperand(1));
      if (!data || !indices)
        return;
      out.emplace();
      int64_t n = data->size();
      for (int64_t i : *indices) {
        i = i < 0 ? i + n : i;
        if (i < 0 || i >= n)
          return;
        out->push_back((*data)[i]);
      }
    } else if (name == "onnx.Concat") {
      out.emplace();
      for (Value v : op->getOperands()) {
        std::optional<Dims> part = getValues(v);
        if (!part)
          return;
        out->append(part->begin(), part->end());
      }
    } else if (name == "onnx.Slice") {
      std::optional<Dims> data = getValues(op->getOperand(0));
      std::optional<SmallVector<int64_t>> starts =
          onnx::getConstantIntValues(op->getOperand(1));
      std::optional<SmallVector<int64_t>> ends =
          onnx::getConstantIntValues(op->getOperand(2));
      if (!data || !starts || !ends || starts->size() != 1 || ends->size() != 1)
        return;
      if (op->getNumOperands() > 4 && !onnx::isNoneValue(op->getOperand(4))) {
        std::optional<SmallVector<int64_t>> steps =
            onnx::getConstantIntValues(op->getOperand(4));
        if (!steps || steps->size() != 1 || (*steps)[0] != 1)
          return;
      }
      int64_t n = data->size();
      int64_t b = std::clamp<int64_t>(
          (*starts)[0] < 0 ? (*starts)[0] + n : (*starts)[0], 0, n);
      int64_t e = std::clamp<int64_t>(
          (*ends)[0] < 0 ? (*ends)[0] + n : (*ends)[0], 0, n);
      out = Dims(ArrayRef(*data).slice(b, std::max<int64_t>(e - b, 0)));
    } else if (name == "onnx.Add" || name == "onnx.Sub" || name == "onnx.Mul" ||
               name == "onnx.Div") {
      std::optional<Dims> a = getValues(op->getOperand(0));
      std::optional<Dims> b = getValues(op->getOperand(1));
      if (!a || !b)
        return;
      size_t n = std::max(a->size(), b->size());
      if ((a->size() != n && a->size() != 1) ||
          (b->size() != n && b->size() != 1))
        return;
      out.emplace();
      for (size_t i = 0; i < n; ++i) {
        AffineExpr x = (*a)[a->size() == 1 ? 0 : i];
        AffineExpr y = (*b)[b->size() == 1 ? 0 : i];
        if (name == "onnx.Add") {
          out->push_back(x + y);
        } else if (name == "onnx.Sub") {
          out->push_back(x - y);
        } else if (name == "onnx.Mul") {
          out->push_back(x * y); // a product of symbols is one too
        } else {
          // Exact division only (the sizes are non-negative).
          AffineExpr q = divideExactly(x, y, op->getContext());
          if (!q)
            return;
          out->push_back(q);
        }
      }
    } else {
      return;
    }
    if (out && static_cast<int64_t>(out->size()) == type.getNumElements())
      values[r] = std::move(*out);
  }

  /// Dims of results whose sizes the lowering cannot read from an operand
  /// (Range): `kiln.result_dims`, a map of the symbols, which the lowering
  /// materializes from the entry arguments that bind them.
  void recordResultDims(Operation *op, const Dims &d) {
    op->setAttr("kiln.result_dims", AffineMapAttr::get(AffineMap::get(
                                        0, names.size(), d, op->getContext())));
  }

  /// Completes a Reshape's result dims `out` from its input's dims `x`: the
  /// -1 at `inferred` (none when < 0) becomes the input's elements over
  /// `known` (the product of the other dims); without one, both must be the
  /// same product of symbols.
  LogicalResult completeReshape(Operation *op, const Dims &x, AffineExpr known,
                                int64_t inferred, Dims &out) {
    AffineExpr total = product(x, op->getContext());
    if (inferred >= 0) {
      AffineExpr q = divideExactly(total, known, op->getContext());
      if (!q)
        return fail(op, "cannot express the -1 of shape as a product of "
                        "symbols ('")
               << text(total) << "' elements over '" << text(known) << "')";
      out[inferred] = q;
    } else if (!isEqualProduct(known, total)) {
      return fail(op, "reshapes '")
             << text(total) << "' elements to '" << text(known)
             << "'; they must be the same symbols";
    }
    return success();
  }

  /// A Reshape whose shape is computed from symbolic dims: its result from
  /// the shape's expressions, and the shape replaced by a constant of sizes,
  /// 0 (the same dim as the input's) and one -1, which the lowering takes.
  LogicalResult reshapeFromValues(Operation *op, const Dims &x) {
    std::optional<Dims> target = getValues(op->getOperand(1));
    if (!target)
      return setRunDims(op, 0, {}, "shape"); // a run-time shape
    if (onnx::getIntAttr(op, "allowzero", 0) != 0)
      return fail(op, "allowzero with a computed shape is not supported yet");
    MLIRContext *ctx = op->getContext();
    Dims out;
    int64_t inferred = -1;
    AffineExpr known = getAffineConstantExpr(1, ctx);
    for (auto [i, e] : llvm::enumerate(*target)) {
      auto c = dyn_cast<AffineConstantExpr>(e);
      if (c && c.getValue() == -1) {
        if (inferred >= 0)
          return fail(op, "shape has more than one -1");
        inferred = i;
        out.push_back(AffineExpr());
        continue;
      }
      if (c && c.getValue() == 0 && i < x.size())
        e = x[i];
      out.push_back(e);
      known = known * e;
    }
    if (failed(completeReshape(op, x, known, inferred, out)))
      return failure();
    // The constant shape: sizes, 0 for a dim equal to the input's at the
    // same axis, -1 for the one other symbolic dim.
    SmallVector<int64_t> shape;
    bool minusOne = false;
    for (auto [i, e] : llvm::enumerate(out)) {
      if (auto c = dyn_cast<AffineConstantExpr>(e)) {
        if (c.getValue() == 0)
          return fail(op, "a computed shape with a 0-sized dim is not "
                          "supported yet");
        shape.push_back(c.getValue());
      } else if (i < x.size() && x[i] == e) {
        shape.push_back(0);
      } else if (!minusOne) {
        minusOne = true;
        shape.push_back(-1);
      } else {
        return fail(op, "shape has two symbolic dims ('")
               << text(e) << "' at " << i
               << ") that are not the input's at the same axis; not "
                  "supported yet";
      }
    }
    OpBuilder b(op);
    auto type = RankedTensorType::get({static_cast<int64_t>(shape.size())},
                                      b.getI64Type());
    Value constant = onnx::ConstantOp::create(
        b, op->getLoc(), DenseIntElementsAttr::get(type, shape));
    op->setOperand(1, constant);
    return set(op, 0, out);
  }

  /// Ops over images with a symbolic batch: dim 0 of X and of every result
  /// is the batch, every other dim and operand is static.
  LogicalResult batchOnly(Operation *op, const Dims &x) {
    for (auto [i, v] : llvm::enumerate(op->getOperands())) {
      Dims d = get(v);
      for (auto [axis, e] : llvm::enumerate(d))
        if (!isConstant(e) && (i != 0 || axis != 0))
          return fail(op, "input ")
                 << i << " has the symbolic dimension '" << text(e)
                 << "' at axis " << axis << "; " << op->getName().stripDialect()
                 << " takes a symbolic batch (axis 0 of X) only";
    }
    for (auto [i, r] : llvm::enumerate(op->getResults())) {
      auto type = dyn_cast<RankedTensorType>(r.getType());
      if (!type)
        continue;
      if (!type.isDynamicDim(0))
        continue; // BatchNormalization's running statistics
      Dims out = get(r);
      out[0] = x[0];
      if (failed(set(op, i, out)))
        return failure();
    }
    return success();
  }

  /// Set by runDimsRule when it gave `op`'s results their dims.
  bool handledByRunDims = false;

  /// The ops whose sizes are read at run time (shape inference opted them in
  /// to run dims, onnx::isRunTimeOperand): dims their deciding values choose
  /// get run symbols; the others keep the input's.
  LogicalResult runDimsRule(Operation *op, StringRef name) {
    handledByRunDims = false;
    auto runTime = [&](unsigned i) { return onnx::isRunTimeOperand(op, i); };
    Dims x = op->getNumOperands() ? get(op->getOperand(0)) : Dims();
    // Sizes counted during the run (selected boxes, true conditions): run
    // dims whatever the inputs.
    if (isa<onnx::NonMaxSuppressionOp, onnx::CompressOp, onnx::NonZeroOp>(
            op)) {
      handledByRunDims = true;
      return setRunDims(op, 0, {},
                        isa<onnx::CompressOp>(op)   ? "condition"
                        : isa<onnx::NonZeroOp>(op) ? "X"
                                                   : "scores");
    }
    // A Loop whose number of iterations is known only when it starts (a
    // computed trip count): its scan outputs share one run symbol, their axis 0
    // (shape inference left it `?`); the carried values are static.
    if (auto loop = dyn_cast<onnx::LoopOp>(op)) {
      unsigned carried = onnx::getNumCarried(loop);
      bool runLength = false;
      for (unsigned i = carried; i < op->getNumResults(); ++i)
        runLength |= cast<RankedTensorType>(op->getResult(i).getType())
                         .isDynamicDim(0);
      if (!runLength)
        return success();
      handledByRunDims = true;
      StringRef input = onnx::isRunTimeOperand(op, 0) ? "M" : "cond";
      AffineExpr trips;
      for (unsigned i = 0; i < op->getNumResults(); ++i) {
        Dims known;
        if (i >= carried && trips)
          known.push_back(trips);
        if (failed(setRunDims(op, i, known, input)))
          return failure();
        if (i >= carried && !trips)
          trips = get(op->getResult(i))[0];
      }
      return success();
    }
    // Unique: one run symbol, the number of unique slices, for Y's axis,
    // indices and counts; inverse_indices is static.
    if (isa<onnx::UniqueOp>(op)) {
      handledByRunDims = true;
      if (failed(setRunDims(op, 0, {}, "X")))
        return failure();
      auto y = cast<RankedTensorType>(op->getResult(0).getType());
      Dims yDims = get(op->getResult(0));
      AffineExpr count;
      for (int64_t a = 0; a < y.getRank(); ++a)
        if (y.isDynamicDim(a))
          count = yDims[a];
      if (!count)
        return fail(op, "Y has no run dim");
      if (failed(set(op, 1, {count})) || failed(set(op, 3, {count})))
        return failure();
      auto inverse = cast<RankedTensorType>(op->getResult(2).getType());
      return set(op, 2,
                 {getAffineConstantExpr(inverse.getDimSize(0), op->getContext())});
    }
    // Reductions whose axes, and Resizes whose scales or sizes, the run
    // decides (their shape inference gave `?` for the dims those values
    // choose).
    if (decidedByRunValues(op)) {
      handledByRunDims = true;
      return setRunDims(op, 0, {},
                        name == "onnx.Resize"
                            ? (runTime(3) ? "sizes" : "scales")
                            : "axes");
    }
    if ((name == "onnx.Unsqueeze" || name == "onnx.Squeeze") && runTime(1)) {
      handledByRunDims = true;
      return setRunDims(op, 0, {}, "axes");
    }
    if (name == "onnx.Pad" && (runTime(1) || runTime(3))) {
      // Static data (shape inference checked): the dims shape inference
      // left `?` are the padded ones.
      handledByRunDims = true;
      return setRunDims(op, 0, {}, runTime(1) ? "pads" : "axes");
    }
    // Sizes read at run time: ConstantOfShape's shape, Expand's shape,
    // Tile's repeats, OneHot's depth, CenterCropPad's shape (static data; the dims shape inference
    // left `?` are the ones those values choose).
    if (name == "onnx.ConstantOfShape" && runTime(0)) {
      handledByRunDims = true;
      return setRunDims(op, 0, {}, "input");
    }
    if ((name == "onnx.Expand" || name == "onnx.Tile" ||
         name == "onnx.OneHot" || name == "onnx.CenterCropPad") &&
        runTime(1)) {
      handledByRunDims = true;
      return setRunDims(op, 0, {},
                        name == "onnx.Tile"     ? "repeats"
                        : name == "onnx.OneHot" ? "depth"
                                                : "shape");
    }
    if (name == "onnx.TopK" && runTime(1)) {
      // Values and indices share K: one run symbol.
      handledByRunDims = true;
      int64_t axis = onnx::getIntAttr(op, "axis", -1);
      axis = axis < 0 ? axis + static_cast<int64_t>(x.size()) : axis;
      Dims known = x;
      if (axis >= 0 && axis < static_cast<int64_t>(known.size()))
        known[axis] = AffineExpr();
      if (failed(setRunDims(op, 0, known, "K")))
        return failure();
      return op->getNumResults() > 1 ? set(op, 1, get(op->getResult(0)))
                                     : success();
    }
    if (name == "onnx.Split" && runTime(1)) {
      handledByRunDims = true;
      int64_t axis = onnx::getIntAttr(op, "axis", 0);
      axis = axis < 0 ? axis + static_cast<int64_t>(x.size()) : axis;
      for (unsigned i = 0; i < op->getNumResults(); ++i) {
        Dims known = x;
        if (axis >= 0 && axis < static_cast<int64_t>(known.size()))
          known[axis] = AffineExpr();
        if (failed(setRunDims(op, i, known, "split")))
          return failure();
      }
      return success();
    }
    if (name == "onnx.Slice" &&
        (runTime(1) || runTime(2) || runTime(3) || runTime(4))) {
      handledByRunDims = true;
      Dims known;
      if (!runTime(3)) {
        // Constant axes: the dims not sliced are the input's.
        known = x;
        std::optional<SmallVector<int64_t>> axes;
        if (op->getNumOperands() > 3 && !onnx::isNoneValue(op->getOperand(3))) {
          axes = onnx::getConstantIntValues(op->getOperand(3));
        } else {
          axes.emplace();
          auto starts = cast<RankedTensorType>(op->getOperand(1).getType());
          for (int64_t i = 0; i < starts.getDimSize(0); ++i)
            axes->push_back(i);
        }
        if (!axes)
          return fail(op, "slice axes are neither constant nor run-time");
        int64_t rank = known.size();
        for (int64_t a : *axes) {
          a = a < 0 ? a + rank : a;
          if (a >= 0 && a < rank)
            known[a] = AffineExpr();
        }
      }
      return setRunDims(op, 0, known,
                        runTime(1)   ? "starts"
                        : runTime(2) ? "ends"
                        : runTime(3) ? "axes"
                                     : "steps");
    }
    return success();
  }

  LogicalResult visit(Operation *op) {
    trackValues(op);
    StringRef opName = op->getName().getStringRef();
    if (opName == "onnx.Range") {
      std::optional<Dims> start = getValues(op->getOperand(0));
      std::optional<Dims> limit = getValues(op->getOperand(1));
      std::optional<Dims> delta = getValues(op->getOperand(2));
      if (!limit || isConstant((*limit)[0])) {
        // Values read at run time (shape inference gave a `?`): a run dim.
        if (!cast<RankedTensorType>(op->getResult(0).getType())
                 .hasStaticShape())
          return setRunDims(op, 0, {},
                            onnx::isRunTimeOperand(op, 0)   ? "start"
                            : onnx::isRunTimeOperand(op, 1) ? "limit"
                                             : "delta");
        return success(); // static (shape inference gave the size)
      }
      if (!start || !delta || !isConstant((*start)[0]) ||
          !isConstant((*delta)[0]) ||
          cast<AffineConstantExpr>((*delta)[0]).getValue() <= 0)
        return fail(op, "a range of symbolic length needs constant start and "
                        "a constant positive delta");
      int64_t step = cast<AffineConstantExpr>((*delta)[0]).getValue();
      AffineExpr size = ((*limit)[0] - (*start)[0]).ceilDiv(step);
      if (failed(set(op, 0, {size})))
        return failure();
      recordResultDims(op, {size});
      return success();
    }
    if (opName == "onnx.Reshape" && !onnx::getConstantAttr(op->getOperand(1)))
      return reshapeFromValues(op, get(op->getOperand(0)));
    if (failed(runDimsRule(op, opName)))
      return failure();
    if (handledByRunDims)
      return success();
    bool symbolic = false;
    for (Value v : op->getOperands())
      symbolic |= isSymbolic(get(v));
    if (!symbolic) {
      // Results of an op with static inputs are static too.
      for (auto [i, r] : llvm::enumerate(op->getResults()))
        if (auto t = dyn_cast<RankedTensorType>(r.getType());
            t && !t.hasStaticShape())
          return fail(op, "output ")
                 << i
                 << " has a dynamic dimension that "
                    "depends on no symbol; not supported yet";
      return success();
    }
    StringRef name = op->getName().getStringRef();
    MLIRContext *ctx = op->getContext();
    Dims x = get(op->getOperand(0));
    int64_t rank = x.size();

    if (!onnx::acceptsSymbolicDims(op)) {
      for (auto [i, v] : llvm::enumerate(op->getOperands())) {
        Dims d = get(v);
        for (auto [axis, e] : llvm::enumerate(d))
          if (!isConstant(e))
            return fail(op, "input ")
                   << i << " has the symbolic dimension '" << text(e)
                   << "' at axis " << axis << "; "
                   << op->getName().stripDialect()
                   << " does not take symbolic dimensions yet";
      }
    }

    // Same shape as input 0.
    if (llvm::is_contained(
            {"onnx.Abs",         "onnx.Ceil",      "onnx.Cos",
             "onnx.Erf",         "onnx.Exp",       "onnx.Floor",
             "onnx.Log",         "onnx.Neg",       "onnx.Reciprocal",
             "onnx.Sin",         "onnx.Sqrt",      "onnx.Tanh",
             "onnx.Identity",    "onnx.Relu",      "onnx.Sigmoid",
             "onnx.Softplus",    "onnx.Elu",       "onnx.Gelu",
             "onnx.HardSigmoid", "onnx.HardSwish", "onnx.LeakyRelu",
             "onnx.Selu",        "onnx.Cast",      "onnx.CastLike",
             "onnx.Clip"},
            name))
      return set(op, 0, x);

    if (llvm::is_contained({"onnx.Add", "onnx.Sub", "onnx.Mul", "onnx.Div",
                            "onnx.Max", "onnx.Min", "onnx.Pow", "onnx.Sum"},
                           name)) {
      SmallVector<Dims> operands;
      for (Value v : op->getOperands())
        operands.push_back(get(v));
      FailureOr<Dims> out = broadcast(op, operands);
      if (failed(out))
        return failure();
      return set(op, 0, *out);
    }

    // Split and Pad along static axes (shape inference refuses a symbolic
    // one): the other dims are the input's.
    if (name == "onnx.Split" || name == "onnx.Pad") {
      for (auto [i, r] : llvm::enumerate(op->getResults())) {
        auto type = cast<RankedTensorType>(r.getType());
        Dims out = x;
        for (int64_t a = 0; a < rank; ++a)
          if (!type.isDynamicDim(a))
            out[a] = getAffineConstantExpr(type.getDimSize(a), ctx);
        if (failed(set(op, i, out)))
          return failure();
      }
      return success();
    }

    if (name == "onnx.Softmax" || name == "onnx.LogSoftmax")
      return set(op, 0, x); // over any axis, symbolic ones too

    if (name == "onnx.LayerNormalization") {
      int64_t axis = onnx::getIntAttr(op, "axis", -1);
      axis = axis < 0 ? axis + rank : axis;
      SmallVector<int64_t> axes;
      for (int64_t a = axis; a < rank; ++a)
        axes.push_back(a);
      if (failed(requireStatic(op, x, axes, "the normalization")))
        return failure();
      if (failed(set(op, 0, x)))
        return failure();
      Dims stats = x;
      for (int64_t a : axes)
        stats[a] = getAffineConstantExpr(1, ctx);
      for (unsigned i = 1; i < op->getNumResults(); ++i)
        if (isa<RankedTensorType>(op->getResult(i).getType()) &&
            failed(set(op, i, stats)))
          return failure();
      return success();
    }

    if (name == "onnx.ReduceMean" || name == "onnx.ReduceSum" ||
        name == "onnx.ReduceMax") {
      SmallVector<int64_t> axes;
      if (op->getNumOperands() > 1 && !onnx::isNoneValue(op->getOperand(1))) {
        std::optional<SmallVector<int64_t>> a =
            onnx::getConstantIntValues(op->getOperand(1));
        if (!a)
          return fail(op, "axes must be a constant with symbolic dimensions");
        axes = *a;
      } else if (auto a = onnx::getI64ArrayAttr(op, "axes")) {
        axes = *a;
      }
      if (axes.empty() && onnx::getIntAttr(op, "noop_with_empty_axes", 0))
        return set(op, 0, x);
      if (axes.empty())
        for (int64_t a = 0; a < rank; ++a)
          axes.push_back(a);
      for (int64_t &a : axes)
        a = a < 0 ? a + rank : a;
      if (failed(requireStatic(op, x, axes, "the reduction")))
        return failure();
      bool keep = onnx::getIntAttr(op, "keepdims", 1) != 0;
      Dims out;
      for (int64_t a = 0; a < rank; ++a) {
        if (!llvm::is_contained(axes, a))
          out.push_back(x[a]);
        else if (keep)
          out.push_back(getAffineConstantExpr(1, ctx));
      }
      return set(op, 0, out);
    }

    if (name == "onnx.MatMul") {
      Dims b = get(op->getOperand(1));
      if (x.size() < 2 || b.size() < 2)
        return fail(op, "a 1-D operand with symbolic dimensions is not "
                        "supported yet");
      // The reduced dim K: static, or the same symbols on both sides
      // (attention's probabilities x values over the sequence).
      if (x[rank - 1] != b[b.size() - 2])
        return fail(op, "the product's K is '")
               << text(x[rank - 1]) << "' in A but '" << text(b[b.size() - 2])
               << "' in B";
      FailureOr<Dims> batch = broadcast(
          op, {Dims(ArrayRef(x).drop_back(2)), Dims(ArrayRef(b).drop_back(2))});
      if (failed(batch))
        return failure();
      Dims out = *batch;
      out.push_back(x[rank - 2]);
      out.push_back(b.back());
      return set(op, 0, out);
    }

    if (name == "onnx.Gemm") {
      Dims b = get(op->getOperand(1));
      bool transA = onnx::getIntAttr(op, "transA", 0) != 0;
      bool transB = onnx::getIntAttr(op, "transB", 0) != 0;
      if (failed(requireStatic(op, x, {transA ? 0 : 1}, "the product")))
        return failure();
      Dims out = {x[transA ? 1 : 0], b[transB ? 0 : 1]};
      if (op->getNumOperands() > 2 && !onnx::isNoneValue(op->getOperand(2))) {
        FailureOr<Dims> withC = broadcast(op, {out, get(op->getOperand(2))});
        if (failed(withC))
          return failure();
        if (*withC != out)
          return fail(op, "C does not broadcast to the product's shape");
      }
      return set(op, 0, out);
    }

    if (name == "onnx.Transpose") {
      SmallVector<int64_t> perm;
      if (auto p = onnx::getI64ArrayAttr(op, "perm"))
        perm = *p;
      else
        for (int64_t i = rank - 1; i >= 0; --i)
          perm.push_back(i);
      Dims out;
      for (int64_t p : perm)
        out.push_back(x[p < 0 ? p + rank : p]);
      return set(op, 0, out);
    }

    if (name == "onnx.Flatten") {
      int64_t axis = onnx::getIntAttr(op, "axis", 1);
      axis = axis < 0 ? axis + rank : axis;
      return set(op, 0,
                 {product(ArrayRef(x).take_front(axis), ctx),
                  product(ArrayRef(x).drop_front(axis), ctx)});
    }

    if (name == "onnx.Reshape") {
      std::optional<SmallVector<int64_t>> target =
          onnx::getConstantIntValues(op->getOperand(1));
      if (!target)
        return fail(op, "shape must be a constant when data has symbolic "
                        "dimensions");
      bool allowZero = onnx::getIntAttr(op, "allowzero", 0) != 0;
      Dims out;
      int64_t inferred = -1;
      AffineExpr known = getAffineConstantExpr(1, ctx);
      for (auto [i, d] : llvm::enumerate(*target)) {
        if (d == -1) {
          inferred = i;
          out.push_back(AffineExpr());
          continue;
        }
        AffineExpr e =
            d == 0 && !allowZero ? x[i] : getAffineConstantExpr(d, ctx);
        out.push_back(e);
        known = known * e;
      }
      if (failed(completeReshape(op, x, known, inferred, out)))
        return failure();
      return set(op, 0, out);
    }

    if (name == "onnx.Gather") {
      Dims indices = get(op->getOperand(1));
      int64_t axis = onnx::getIntAttr(op, "axis", 0);
      axis = axis < 0 ? axis + rank : axis;
      // Along a symbolic axis: constant indices below the symbol's minimum
      // only (the pooler's token 0 of [batch, seq, hidden]).
      if (!isConstant(x[axis])) {
        std::optional<SmallVector<int64_t>> constant =
            onnx::getConstantIntValues(op->getOperand(1));
        auto symbol = dyn_cast<AffineSymbolExpr>(x[axis]);
        int64_t min = symbol && symbol.getPosition() < minimums.size()
                          ? minimums[symbol.getPosition()]
                          : 0;
        if (!constant || !llvm::all_of(*constant, [&](int64_t i) {
              return i >= 0 && i < min;
            }))
          return fail(op, "gathering along dimension ")
                 << axis << " ('" << text(x[axis])
                 << "'), a symbolic one, takes constant indices below the "
                    "symbol's minimum only (not supported yet otherwise)";
      }
      Dims out(ArrayRef(x).take_front(axis));
      llvm::append_range(out, indices);
      llvm::append_range(out, ArrayRef(x).drop_front(axis + 1));
      return set(op, 0, out);
    }

    if (name == "onnx.GatherND") {
      // Static data (shape inference checked): the indices' dims but the
      // last, then data's past batch_dims and the index depth.
      Dims indices = get(op->getOperand(1));
      int64_t b = onnx::getIntAttr(op, "batch_dims", 0);
      auto depth = indices.empty() ? AffineConstantExpr()
                                   : dyn_cast<AffineConstantExpr>(indices.back());
      if (!depth || b + depth.getValue() > rank)
        return fail(op, "the index depth must be static");
      Dims out(ArrayRef(indices).drop_back());
      llvm::append_range(out, ArrayRef(x).drop_front(b + depth.getValue()));
      return set(op, 0, out);
    }

    if (name == "onnx.Unsqueeze" || name == "onnx.Squeeze") {
      std::optional<SmallVector<int64_t>> axes;
      if (op->getNumOperands() > 1 && !onnx::isNoneValue(op->getOperand(1)))
        axes = onnx::getConstantIntValues(op->getOperand(1));
      bool unsqueeze = name == "onnx.Unsqueeze";
      if (!axes && (unsqueeze || op->getNumOperands() > 1))
        return fail(op, "axes must be a constant with symbolic dimensions");
      Dims out;
      if (unsqueeze) {
        int64_t outRank = rank + axes->size();
        SmallVector<bool> inserted(outRank, false);
        for (int64_t a : *axes)
          inserted[a < 0 ? a + outRank : a] = true;
        for (int64_t i = 0, j = 0; i < outRank; ++i)
          out.push_back(inserted[i] ? getAffineConstantExpr(1, ctx) : x[j++]);
      } else {
        SmallVector<int64_t> list;
        if (axes)
          list = *axes;
        for (int64_t &a : list)
          a = a < 0 ? a + rank : a;
        for (int64_t i = 0; i < rank; ++i) {
          bool dropped = axes
                             ? llvm::is_contained(list, i)
                             : (isConstant(x[i]) &&
                                cast<AffineConstantExpr>(x[i]).getValue() == 1);
          if (dropped && !isConstant(x[i]))
            return fail(op, "squeezes the symbolic dimension '")
                   << text(x[i]) << "'";
          if (!dropped)
            out.push_back(x[i]);
        }
      }
      return set(op, 0, out);
    }

    if (name == "onnx.Concat") {
      int64_t axis = onnx::getIntAttr(op, "axis", 0);
      axis = axis < 0 ? axis + rank : axis;
      Dims out = x;
      out[axis] = getAffineConstantExpr(0, ctx);
      for (Value v : op->getOperands()) {
        Dims d = get(v);
        for (int64_t i = 0; i < rank; ++i) {
          if (i == axis)
            continue;
          if (d[i] != out[i])
            return fail(op, "dimension ")
                   << i << " is '" << text(d[i]) << "' in one input and '"
                   << text(out[i]) << "' in another";
        }
        out[axis] = out[axis] + d[axis];
      }
      return set(op, 0, out);
    }

    if (name == "onnx.Shape")
      return success(); // a static result; its values are tracked

    if (llvm::is_contained({"onnx.Conv", "onnx.BatchNormalization",
                            "onnx.MaxPool", "onnx.AveragePool",
                            "onnx.GlobalAveragePool", "onnx.GlobalMaxPool"},
                           name))
      return batchOnly(op, x);

    return fail(op, "symbolic dimensions: no rule for this op yet");
  }

  void runOnOperation() override {
    func::FuncOp func = getOperation();
    if (func.isExternal())
      return;
    // A scan's run-time axis is read on the host: the cpu device only
    // (elsewhere the error run.py and users answer with --specialize).
    if (!runDims) {
      WalkResult hostAxis = func.walk([&](Operation *op) {
        if (isa<onnx::CumSumOp, onnx::CumProdOp>(op) &&
            !onnx::getConstantAttr(op->getOperand(1))) {
          (void)fail(op, "needs a compile-time constant for the non-constant "
                         "input 'axis' (a run-time axis runs on the cpu "
                         "device only so far)");
          return WalkResult::interrupt();
        }
        return WalkResult::advance();
      });
      if (hostAxis.wasInterrupted())
        return signalPassFailure();
    }
    auto table = func->getAttrOfType<ArrayAttr>("kiln.symbols");
    // Without input symbols, only ops whose output shapes the run decides
    // leave `?` dims (run symbols); none: a static model, nothing to do.
    if (!table) {
      WalkResult dynamic = func.walk([](Operation *op) {
        for (Type t : op->getResultTypes())
          if (auto r = dyn_cast<RankedTensorType>(t); r && !r.hasStaticShape())
            return WalkResult::interrupt();
        return WalkResult::advance();
      });
      if (!dynamic.wasInterrupted())
        return;
      table = ArrayAttr::get(func.getContext(), {});
    }
    for (Attribute entry : table) {
      auto fields = cast<ArrayAttr>(entry);
      names.push_back(cast<StringAttr>(fields[0]).str());
      auto min =
          fields.size() > 1 ? dyn_cast<IntegerAttr>(fields[1]) : IntegerAttr();
      minimums.push_back(min ? min.getInt() : 0);
    }
    numInputSymbols = names.size();
    MLIRContext *ctx = func.getContext();
    for (BlockArgument arg : func.getArguments()) {
      auto abi = func.getArgAttrOfType<DenseI64ArrayAttr>(arg.getArgNumber(),
                                                          "kiln.dims");
      if (!abi)
        continue;
      Dims d;
      for (int64_t v : abi.asArrayRef())
        d.push_back(v >= 0 ? getAffineConstantExpr(v, ctx)
                           : getAffineSymbolExpr(-v - 1, ctx));
      dims[arg] = d;
    }
    Block &body = func.getBody().front();
    for (Operation &op : body.without_terminator()) {
      if (failed(visit(&op)))
        return signalPassFailure();
      if (annotate)
        for (auto [i, r] : llvm::enumerate(op.getResults())) {
          Dims d = get(r);
          if (!isSymbolic(d))
            continue;
          SmallVector<Attribute> parts;
          for (AffineExpr e : d)
            parts.push_back(StringAttr::get(ctx, text(e)));
          op.setAttr("kiln.symbolic_dims" +
                         (i ? "_" + std::to_string(i) : std::string()),
                     ArrayAttr::get(ctx, parts));
        }
    }
    // The run symbols join the table: [name, 0, -1 (no maximum), 1 (run)].
    if (names.size() > numInputSymbols || !table.empty()) {
      SmallVector<Attribute> entries(table.begin(), table.end());
      Builder b(ctx);
      for (size_t id = numInputSymbols; id < names.size(); ++id)
        entries.push_back(b.getArrayAttr(
            {b.getStringAttr(names[id]), b.getI64IntegerAttr(0),
             b.getI64IntegerAttr(-1), b.getI64IntegerAttr(1)}));
      func->setAttr("kiln.symbols", b.getArrayAttr(entries));
    }
    // The shape computations the Reshapes no longer read (Shape -> Gather
    // -> Concat chains now constants).
    SmallVector<Operation *> ops;
    for (Operation &op : body.without_terminator())
      ops.push_back(&op);
    auto isShapeValue = [](Value v) {
      auto t = dyn_cast<RankedTensorType>(v.getType());
      return t && t.getRank() <= 1 && isa<IntegerType>(t.getElementType());
    };
    for (Operation *op : llvm::reverse(ops))
      if (op->use_empty() && isOpTriviallyDead(op) &&
          llvm::all_of(op->getResults(), isShapeValue))
        op->erase();
    // Outputs: each symbolic dim must be one symbol (the ABI's encoding).
    Operation *ret = body.getTerminator();
    for (auto [i, v] : llvm::enumerate(ret->getOperands())) {
      Dims d = get(v);
      if (!isSymbolic(d))
        continue;
      SmallVector<int64_t> abi;
      for (auto [axis, e] : llvm::enumerate(d)) {
        if (auto c = dyn_cast<AffineConstantExpr>(e)) {
          abi.push_back(c.getValue());
        } else if (auto s = dyn_cast<AffineSymbolExpr>(e)) {
          abi.push_back(-static_cast<int64_t>(s.getPosition()) - 1);
        } else {
          Operation *producer = v.getDefiningOp();
          (producer ? fail(producer, "") : func.emitError())
              << "graph output " << i << " dimension " << axis << " is '"
              << text(e)
              << "'; an output dim computed from several symbols is not "
                 "supported yet";
          return signalPassFailure();
        }
      }
      func.setResultAttr(i, "kiln.dims", DenseI64ArrayAttr::get(ctx, abi));
    }
    if (batchLoop && isBatchSeparable(func))
      func->setAttr("kiln.batch_loop", UnitAttr::get(ctx));
  }

  /// --batch-loop: whether every image of the function's one symbol, the
  /// batch, is computed from that image alone, so that the graph compiled for
  /// one image and run once per image computes the batch (docs/dynamic-
  /// shapes.md, "Speed"). A value is batched when its dims are the symbol at
  /// axis 0 and sizes elsewhere; every value is batched or static, an op
  /// reading or making a batched value is one that keeps images apart (the
  /// list below, with the axis checks of the ops that mix along an axis),
  /// and a shape computed from the batch (Shape) is only followed into the
  /// shape-computing ops or the shape operand of Expand / ConstantOfShape.
  /// False for anything else: the model is then compiled over the batch.
  bool isBatchSeparable(func::FuncOp func) {
    if (names.size() != 1 || numInputSymbols != 1)
      return false;
    AffineExpr batch = getAffineSymbolExpr(0, func.getContext());
    auto batched = [&](Value v) { return isSymbolic(get(v)); };
    auto wellFormed = [&](Value v) {
      Dims d = get(v);
      if (!isSymbolic(d))
        return true;
      if (d.empty() || d[0] != batch)
        return false;
      return llvm::all_of(ArrayRef(d).drop_front(), isConstant);
    };
    auto tainted = [&](Value v) {
      auto it = values.find(v);
      return it != values.end() && llvm::any_of(it->second, [](AffineExpr e) {
               return !isConstant(e);
             });
    };
    for (BlockArgument arg : func.getArguments())
      if (!wellFormed(arg))
        return false;
    // Ops whose result images are the operands' images, whatever their
    // attributes (a result whose batch moved or merged is not well formed).
    // clang-format off
    static const llvm::StringSet<> imageOps = {
        "onnx.Add", "onnx.Sub", "onnx.Mul", "onnx.Div", "onnx.Pow",
        "onnx.Max", "onnx.Min", "onnx.Sum", "onnx.Mean", "onnx.Where",
        "onnx.Equal", "onnx.Less", "onnx.LessOrEqual", "onnx.Greater",
        "onnx.GreaterOrEqual", "onnx.And", "onnx.Or", "onnx.Xor", "onnx.Not",
        "onnx.Relu", "onnx.LeakyRelu", "onnx.PRelu", "onnx.Elu", "onnx.Selu",
        "onnx.Celu", "onnx.Sigmoid", "onnx.HardSigmoid", "onnx.HardSwish",
        "onnx.Tanh", "onnx.Exp", "onnx.Log", "onnx.Sqrt", "onnx.Reciprocal",
        "onnx.Neg", "onnx.Abs", "onnx.Floor", "onnx.Ceil", "onnx.Round",
        "onnx.Sign", "onnx.Erf", "onnx.Gelu", "onnx.Softplus", "onnx.Softsign",
        "onnx.Mish", "onnx.Sin", "onnx.Cos", "onnx.Clip", "onnx.Cast",
        "onnx.CastLike", "onnx.Identity", "onnx.Conv", "onnx.ConvTranspose",
        "onnx.AveragePool", "onnx.GlobalAveragePool", "onnx.GlobalMaxPool",
        "onnx.LpPool", "onnx.LRN", "onnx.InstanceNormalization",
        "onnx.DepthToSpace", "onnx.SpaceToDepth", "onnx.Reshape",
        "onnx.Flatten", "onnx.Squeeze", "onnx.Unsqueeze", "onnx.Transpose",
        "onnx.Concat", "onnx.Split", "onnx.Pad", "onnx.Tile", "onnx.MatMul",
        "onnx.Gemm", "onnx.ReduceMean", "onnx.ReduceSum", "onnx.ReduceMax",
        "onnx.ReduceMin", "onnx.ReduceProd", "onnx.ReduceL1", "onnx.ReduceL2",
        "onnx.ReduceSumSquare", "onnx.ReduceLogSumExp", "onnx.ArgMax",
        "onnx.ArgMin", "onnx.Expand", "onnx.ConstantOfShape"};
    // clang-format on
    // Ops with results only the first of which may be read per image:
    // MaxPool's Indices are flat over the batch, BatchNormalization's and
    // Dropout's others are training outputs.
    static const llvm::StringSet<> firstResultOnly = {
        "onnx.MaxPool", "onnx.BatchNormalization", "onnx.Dropout"};
    // Ops that mix along `axis` (default -1): it must not be the batch.
    static const llvm::StringSet<> axisOps = {"onnx.Softmax", "onnx.LogSoftmax",
                                              "onnx.Hardmax",
                                              "onnx.LayerNormalization"};
    // The work of one image's products, and of those with fewer than 16 rows
    // per image (a classifier's Gemm: M is the batch), which run as well or
    // better over the whole batch.
    double work = 0, fewRows = 0;
    auto sizes = [&](Value v, size_t from) {
      double n = 1;
      Dims d = get(v);
      for (size_t a = from; a < d.size(); ++a)
        n *= cast<AffineConstantExpr>(d[a]).getValue();
      return n;
    };
    Block &body = func.getBody().front();
    for (Operation &op : body.without_terminator()) {
      if (op.getNumRegions())
        return false; // a subgraph may read any value above it
      for (Value v : op.getOperands())
        if (!wellFormed(v))
          return false;
      for (Value v : op.getResults())
        if (!wellFormed(v))
          return false;
      bool readsBatch = llvm::any_of(op.getOperands(), batched);
      bool makesBatch = llvm::any_of(op.getResults(), batched);
      bool readsShape = llvm::any_of(op.getOperands(), tainted);
      if (!readsBatch && !makesBatch && !readsShape)
        continue;
      StringRef name = op.getName().getStringRef();
      if (name == "onnx.Shape")
        continue; // its values are followed (tainted)
      if (readsBatch && (name == "onnx.Conv" || name == "onnx.ConvTranspose") &&
          !batched(op.getOperand(1))) {
        // Each result (or, transposed, input) element: one per weight of
        // its filter.
        Value each = name == "onnx.Conv" ? op.getResult(0) : op.getOperand(0);
        work += sizes(each, 1) * sizes(op.getOperand(1), 1);
      } else if (readsBatch && (name == "onnx.MatMul" || name == "onnx.Gemm")) {
        Dims a = get(op.getOperand(0));
        Dims out = get(op.getResult(0));
        if (a.empty() || out.empty())
          return false;
        bool transA = name == "onnx.Gemm" && onnx::getIntAttr(&op, "transA", 0);
        auto k = dyn_cast<AffineConstantExpr>(a[transA ? 0 : a.size() - 1]);
        auto n = dyn_cast<AffineConstantExpr>(out.back());
        if (!k || !n || out.size() < 2 || n.getValue() <= 0)
          return false; // the batch is K or N: not computed apart
        double each = sizes(op.getResult(0), 1) * k.getValue();
        work += each;
        // Rows per image: the result's dims but the batch and the last.
        if (sizes(op.getResult(0), 1) / n.getValue() < 16)
          fewRows += each;
      }
      // A shape computed from the batch: followed through the ops that
      // compute shapes (their results tracked too), or the shape of an
      // Expand / ConstantOfShape (the image's shape at batch 1).
      if (readsShape) {
        bool follows = op.getNumResults() == 1 && tainted(op.getResult(0));
        for (auto [i, v] : llvm::enumerate(op.getOperands()))
          if (tainted(v) && !follows && !(name == "onnx.Expand" && i == 1) &&
              !(name == "onnx.ConstantOfShape" && i == 0))
            return false;
        if (follows)
          continue;
      }
      // Every result read afterwards is batched (nothing reduced over it).
      for (Value r : op.getResults())
        if (!r.use_empty() && !batched(r))
          return false;
      if (firstResultOnly.contains(name)) {
        for (Value r : op.getResults().drop_front())
          if (!r.use_empty())
            return false;
        continue;
      }
      if (imageOps.contains(name)) {
        // A result image is made from the operands' images: a batched result
        // of unbatched operands only by Expand / ConstantOfShape (the same
        // for every image).
        if (!readsBatch && name != "onnx.Expand" &&
            name != "onnx.ConstantOfShape")
          return false;
        continue;
      }
      int64_t rank = op.getNumOperands()
                         ? static_cast<int64_t>(get(op.getOperand(0)).size())
                         : 0;
      auto normalized = [&](int64_t axis) {
        return axis < 0 ? axis + rank : axis;
      };
      if (axisOps.contains(name)) {
        if (normalized(onnx::getIntAttr(&op, "axis", -1)) == 0)
          return false;
        continue;
      }
      if (name == "onnx.Gather" || name == "onnx.GatherElements") {
        // Along the batch of the data: images picked across the batch.
        if (batched(op.getOperand(0)) &&
            normalized(onnx::getIntAttr(&op, "axis", 0)) == 0)
          return false;
        if (name == "onnx.GatherElements" && batched(op.getOperand(1)) &&
            normalized(onnx::getIntAttr(&op, "axis", 0)) == 0)
          return false;
        continue;
      }
      if (name == "onnx.Slice") {
        // Constant axes, none the batch (a step along it would reorder it).
        if (op.getNumOperands() < 4 || onnx::isNoneValue(op.getOperand(3)))
          return false;
        std::optional<SmallVector<int64_t>> axes =
            onnx::getConstantIntValues(op.getOperand(3));
        if (!axes ||
            llvm::any_of(*axes, [&](int64_t a) { return normalized(a) == 0; }))
          return false;
        continue;
      }
      return false;
    }
    // Outputs: batched, or static and not computed from the batch.
    for (Value v : body.getTerminator()->getOperands())
      if (!wellFormed(v) || tainted(v))
        return false;
    // Worth it when most of the work is in products of many rows per image
    // (convolutions): an MLP's rows are its batch.
    return work > 0 && fewRows * 10 < work;
  }
};

} // namespace
} // namespace kiln
