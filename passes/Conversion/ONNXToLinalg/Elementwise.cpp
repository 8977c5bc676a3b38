//===- Elementwise.cpp - elementwise onnx ops -> linalg.generic -----------===//
//
// Every op here becomes one linalg.generic over the (static) result shape;
// operands of smaller rank or with size-1 dims are read through broadcasting
// indexing maps (multidirectional numpy broadcasting), never materialized.
// Transcendental functions on f16/bf16 are computed in f32.
//
//===----------------------------------------------------------------------===//

#include "passes/Conversion/ONNXToLinalg/PopulatePatterns.h"
#include "passes/Conversion/ONNXToLinalg/Utils.h"

#include "dialects/ONNX/ConstantValues.h"
#include "dialects/ONNX/Diagnostics.h"
#include "dialects/ONNX/ONNXOps.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"

#include <cmath>
#include <functional>
#include <string>

using namespace mlir;
namespace onnx = kiln::onnx;

namespace kiln::onnx_to_linalg {
namespace {

//===----------------------------------------------------------------------===//
// Scalar body builders
//===----------------------------------------------------------------------===//

/// What a scalar body builder sees: the block arguments (one per non-none
/// input, signless), the result element type, and the original (pre
/// conversion) element types of the inputs, which tell signedness.
struct Body {
  Operation *op;
  OpBuilder &b;
  Location loc;
  ValueRange args;
  Type resultElem;
  SmallVector<Type> origElems;
  std::string error;

  bool isF(unsigned i = 0) const { return isa<FloatType>(args[i].getType()); }
  bool isI(unsigned i = 0) const {
    return isa<IntegerType>(args[i].getType());
  }
  bool isBoolArg(unsigned i = 0) const {
    return args[i].getType().isInteger(1);
  }
  bool isU(unsigned i = 0) const { return isUnsignedInt(origElems[i]); }
  Value cst(Type type, double v) { return createScalarConstant(b, loc, type, v); }
  Value cst(double v) { return cst(args[0].getType(), v); }
  Value fail(const Twine &msg) {
    error = msg.str();
    return nullptr;
  }
};

using BodyFn = std::function<Value(Body &)>;

/// Applies `fn` in f32 when `x` is f16/bf16 (math functions are only
/// reliably lowered for f32/f64), in its own type otherwise.
Value inF32(OpBuilder &b, Location loc, Value x,
            llvm::function_ref<Value(Value)> fn) {
  auto type = cast<FloatType>(x.getType());
  if (type.getWidth() >= 32)
    return fn(x);
  Value wide = arith::ExtFOp::create(b, loc, b.getF32Type(), x);
  return arith::TruncFOp::create(b, loc, type, fn(wide));
}

template <typename MathOp>
BodyFn floatUnary(StringRef what) {
  std::string name = what.str();
  return [name](Body &c) -> Value {
    if (!c.isF())
      return c.fail(name + " supports float inputs only");
    return inF32(c.b, c.loc, c.args[0], [&](Value x) -> Value {
      return MathOp::create(c.b, c.loc, x);
    });
  };
}

/// A float unary computed by `fn` (in f32 for f16/bf16).
BodyFn floatUnaryFn(StringRef what,
                    std::function<Value(OpBuilder &, Location, Value)> fn) {
  std::string name = what.str();
  return [name, fn](Body &c) -> Value {
    if (!c.isF())
      return c.fail(name + " supports float inputs only");
    return inF32(c.b, c.loc, c.args[0],
                 [&](Value x) { return fn(c.b, c.loc, x); });
  };
}

Value fconst(OpBuilder &b, Location loc, Value like, double v) {
  return createScalarConstant(b, loc, like.getType(), v);
}

template <typename FOp, typename IOp>
BodyFn arithBinary(StringRef what) {
  std::string name = what.str();
  return [name](Body &c) -> Value {
    if (c.isF())
      return FOp::create(c.b, c.loc, c.args[0], c.args[1]);
    if (c.isI() && !c.isBoolArg())
      return IOp::create(c.b, c.loc, c.args[0], c.args[1]);
    return c.fail(name + " supports float and integer inputs only");
  };
}

/// Folds a variadic op over its arguments with `combine`.
BodyFn variadic(std::function<Value(Body &, Value, Value)> combine) {
  return [combine](Body &c) -> Value {
    Value acc = c.args[0];
    for (Value arg : c.args.drop_front()) {
      acc = combine(c, acc, arg);
      if (!acc)
        return nullptr;
    }
    return acc;
  };
}

Value minOrMax(Body &c, Value a, Value b, bool isMax) {
  if (isa<FloatType>(a.getType()))
    return isMax ? Value(arith::MaximumFOp::create(c.b, c.loc, a, b))
                 : Value(arith::MinimumFOp::create(c.b, c.loc, a, b));
  if (c.isU())
    return isMax ? Value(arith::MaxUIOp::create(c.b, c.loc, a, b))
                 : Value(arith::MinUIOp::create(c.b, c.loc, a, b));
  return isMax ? Value(arith::MaxSIOp::create(c.b, c.loc, a, b))
               : Value(arith::MinSIOp::create(c.b, c.loc, a, b));
}

BodyFn compare(arith::CmpFPredicate fpred, arith::CmpIPredicate spred,
               arith::CmpIPredicate upred) {
  return [=](Body &c) -> Value {
    if (c.isF())
      return arith::CmpFOp::create(c.b, c.loc, fpred, c.args[0], c.args[1]);
    if (c.isU() || c.isBoolArg())
      return arith::CmpIOp::create(c.b, c.loc, upred, c.args[0], c.args[1]);
    return arith::CmpIOp::create(c.b, c.loc, spred, c.args[0], c.args[1]);
  };
}

template <typename IOp>
BodyFn logical(StringRef what) {
  std::string name = what.str();
  return [name](Body &c) -> Value {
    if (!c.isBoolArg(0) || !c.isBoolArg(1))
      return c.fail(name + " supports bool inputs only");
    return IOp::create(c.b, c.loc, c.args[0], c.args[1]);
  };
}

double getF32Attr(Operation *op, StringRef name, double dflt) {
  if (auto attr = op->getAttrOfType<FloatAttr>(name))
    return attr.getValueAsDouble();
  return dflt;
}

int64_t getI64Attr(Operation *op, StringRef name, int64_t dflt) {
  if (auto attr = op->getAttrOfType<IntegerAttr>(name))
    return attr.getInt();
  return dflt;
}

Value softplus(OpBuilder &b, Location loc, Value x) {
  // max(x, 0) + log1p(exp(-|x|)): never overflows.
  Value zero = fconst(b, loc, x, 0.0);
  Value absX = math::AbsFOp::create(b, loc, x);
  Value negAbs = arith::NegFOp::create(b, loc, absX);
  Value e = math::ExpOp::create(b, loc, negAbs);
  Value l = math::Log1pOp::create(b, loc, e);
  Value m = arith::MaximumFOp::create(b, loc, x, zero);
  return arith::AddFOp::create(b, loc, m, l);
}

//===----------------------------------------------------------------------===//
// The generic pattern
//===----------------------------------------------------------------------===//

/// Lowers an elementwise op with any number of (broadcasting) tensor inputs
/// to one linalg.generic whose body is built by `body`. `none` operands are
/// skipped.
struct ElementwiseLowering : ConversionPattern {
  ElementwiseLowering(const TypeConverter &converter, MLIRContext *ctx,
                      StringRef opName, BodyFn body)
      : ConversionPattern(converter, opName, /*benefit=*/1, ctx),
        body(std::move(body)) {}

  LogicalResult
  matchAndRewrite(Operation *op, ArrayRef<Value> operands,
                  ConversionPatternRewriter &rewriter) const override {
    if (op->getNumResults() != 1)
      return onnx::emitNodeError(op) << "expected one result";
    // Symbolic (`?`) dims are allowed: kiln-symbolic-shapes checked them.
    RankedTensorType resultType =
        getConvertedRankedResultType(getTypeConverter(), op);
    if (!resultType)
      return onnx::emitNodeError(op) << "result must be a ranked tensor";
    SmallVector<Value> inputs;
    SmallVector<Type> origElems;
    for (auto [orig, converted] : llvm::zip(op->getOperands(), operands)) {
      if (isa<NoneType>(orig.getType()))
        continue;
      auto type = dyn_cast<RankedTensorType>(converted.getType());
      if (!type)
        return onnx::emitNodeError(op) << "inputs must be ranked tensors";
      if (!isBroadcastableTo(type.getShape(), resultType.getShape()))
        return onnx::emitNodeError(op)
               << "input shape " << type
               << " does not broadcast to the result " << resultType;
      inputs.push_back(converted);
      origElems.push_back(getElementTypeOrSelf(orig.getType()));
    }
    if (inputs.empty())
      return onnx::emitNodeError(op) << "no inputs";

    std::string error;
    Value result = createElementwiseGeneric(
        rewriter, op->getLoc(), resultType, inputs,
        [&](OpBuilder &b, Location loc, ValueRange args) -> Value {
          Body c{op, b, loc, args, resultType.getElementType(), origElems, {}};
          Value v = body(c);
          if (!v) {
            error = c.error.empty() ? "unsupported element type" : c.error;
            // Keep the generic well formed; the pattern fails below.
            return createScalarConstant(b, loc, resultType.getElementType(),
                                        0.0);
          }
          if (v.getType() != resultType.getElementType()) {
            llvm::raw_string_ostream os(error);
            os << "internal: body produced " << v.getType()
               << " for a result of " << resultType.getElementType();
            return createScalarConstant(b, loc, resultType.getElementType(),
                                        0.0);
          }
          return v;
        });
    if (!error.empty() || !result) {
      if (result)
        rewriter.eraseOp(result.getDefiningOp());
      return onnx::emitNodeError(op)
             << (error.empty() ? std::string("cannot build the loop") : error)
             << " (input element type " << origElems[0] << ")";
    }
    rewriter.replaceOp(op, result);
    return success();
  }

  BodyFn body;
};

//===----------------------------------------------------------------------===//
// Clip: min / max optional, usually constants
//===----------------------------------------------------------------------===//

struct ClipLowering : OpConversionPattern<onnx::ClipOp> {
  using OpConversionPattern::OpConversionPattern;
  LogicalResult
  matchAndRewrite(onnx::ClipOp op, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    // A symbolic batch (MobileNet's ReLU6) is sized from the input.
    RankedTensorType resultType =
        getConvertedRankedResultType(getTypeConverter(), op);
    auto inputType = dyn_cast<RankedTensorType>(adaptor.getInput().getType());
    if (!resultType || !inputType || inputType != resultType)
      return onnx::emitNodeError(op)
             << "input and result must be the same tensor type";
    Type elem = resultType.getElementType();
    bool isU = isUnsignedInt(op.getInput().getType());
    if (!isa<FloatType>(elem) && !isIntNotBool(elem))
      return onnx::emitNodeError(op)
             << "unsupported element type " << elem;

    // Each bound: absent, a compile-time scalar, or a 0-d/1-element tensor
    // read by the generic.
    SmallVector<Value> inputs{adaptor.getInput()};
    struct Bound {
      bool present = false;
      std::optional<double> constant;
      int inputIndex = -1;
    } lo, hi;
    auto classify = [&](Value orig, Value converted, Bound &bound) -> bool {
      if (onnx::isNoneValue(orig))
        return true;
      bound.present = true;
      if (std::optional<double> v = readConstantScalar(orig)) {
        // Integers above 2^53 would not survive a double: read them as ints.
        if (isa<IntegerType>(elem)) {
          auto ints = readConstantInts(orig);
          if (!ints || ints->size() != 1)
            return false;
        }
        bound.constant = v;
        return true;
      }
      auto type = dyn_cast<RankedTensorType>(converted.getType());
      if (!type || !type.hasStaticShape() || type.getNumElements() != 1)
        return false;
      // A 1-element tensor of any rank <= result rank broadcasts.
      if (!isBroadcastableTo(type.getShape(), resultType.getShape())) {
        return false;
      }
      bound.inputIndex = inputs.size();
      inputs.push_back(converted);
      return true;
    };
    if (!classify(op.getMin(), adaptor.getMin(), lo) ||
        !classify(op.getMax(), adaptor.getMax(), hi))
      return onnx::emitNodeError(op)
             << "min and max must be absent or one-element tensors";
    if (!lo.present && !hi.present) {
      rewriter.replaceOp(op, adaptor.getInput());
      return success();
    }
    auto readInt = [&](Value orig) -> int64_t {
      return (*readConstantInts(orig))[0];
    };

    Value result = createElementwiseGeneric(
        rewriter, op.getLoc(), resultType, inputs,
        [&](OpBuilder &b, Location loc, ValueRange args) -> Value {
          Value x = args[0];
          auto boundValue = [&](const Bound &bound, Value orig) -> Value {
            if (bound.inputIndex >= 0)
              return args[bound.inputIndex];
            if (isa<FloatType>(elem))
              return createScalarConstant(b, loc, elem, *bound.constant);
            return createIntConstant(b, loc, elem, readInt(orig));
          };
          auto maxOf = [&](Value a, Value c) -> Value {
            if (isa<FloatType>(elem))
              return arith::MaximumFOp::create(b, loc, a, c);
            return isU ? Value(arith::MaxUIOp::create(b, loc, a, c))
                       : Value(arith::MaxSIOp::create(b, loc, a, c));
          };
          auto minOf = [&](Value a, Value c) -> Value {
            if (isa<FloatType>(elem))
              return arith::MinimumFOp::create(b, loc, a, c);
            return isU ? Value(arith::MinUIOp::create(b, loc, a, c))
                       : Value(arith::MinSIOp::create(b, loc, a, c));
          };
          if (lo.present)
            x = maxOf(x, boundValue(lo, op.getMin()));
          if (hi.present)
            x = minOf(x, boundValue(hi, op.getMax()));
          return x;
        });
    if (!result)
      return onnx::emitNodeError(op) << "cannot build the loop";
    rewriter.replaceOp(op, result);
    return success();
  }
};

//===----------------------------------------------------------------------===//
// Pow: constant exponents specialized
//===----------------------------------------------------------------------===//

struct PowLowering : OpConversionPattern<onnx::PowOp> {
  using OpConversionPattern::OpConversionPattern;
  LogicalResult
  matchAndRewrite(onnx::PowOp op, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    // Symbolic dims as in the other broadcasting ops (kiln-symbolic-shapes
    // checked them; the generic sizes them from the inputs).
    RankedTensorType resultType =
        getConvertedRankedResultType(getTypeConverter(), op);
    auto xType = dyn_cast<RankedTensorType>(adaptor.getX().getType());
    auto yType = dyn_cast<RankedTensorType>(adaptor.getY().getType());
    if (!resultType || !xType || !yType)
      return onnx::emitNodeError(op) << "inputs and result must be ranked";
    Type elem = resultType.getElementType();
    Type yElem = yType.getElementType();
    if ((!isa<FloatType>(elem) && !isIntNotBool(elem)) ||
        (!isa<FloatType>(yElem) && !isIntNotBool(yElem)))
      return onnx::emitNodeError(op)
             << "unsupported element types " << xType.getElementType()
             << " ^ " << yElem;
    bool xU = isUnsignedInt(op.getX().getType());
    bool yU = isUnsignedInt(op.getY().getType());

    // A splat constant exponent that does not change the result shape:
    // small integer powers become multiplications, 0.5 a square root.
    std::optional<double> exponent;
    if (xType.getShape() == resultType.getShape())
      exponent = readConstantScalar(op.getY());
    SmallVector<Value> inputs{adaptor.getX()};
    if (!exponent)
      inputs.push_back(adaptor.getY());

    Value result = createElementwiseGeneric(
        rewriter, op.getLoc(), resultType, inputs,
        [&](OpBuilder &b, Location loc, ValueRange args) -> Value {
          Value x = args[0];
          if (exponent && isa<FloatType>(elem)) {
            double e = *exponent;
            if (e == 1.0)
              return x;
            if (e == 2.0)
              return arith::MulFOp::create(b, loc, x, x);
            if (e == 3.0) {
              Value sq = arith::MulFOp::create(b, loc, x, x);
              return arith::MulFOp::create(b, loc, sq, x);
            }
            if (e == 0.5)
              return inF32(b, loc, x, [&](Value v) -> Value {
                return math::SqrtOp::create(b, loc, v);
              });
            if (e == -1.0)
              return arith::DivFOp::create(
                  b, loc, createScalarConstant(b, loc, elem, 1.0), x);
          }
          if (exponent && isIntNotBool(elem) && *exponent == 2.0)
            return arith::MulIOp::create(b, loc, x, x);
          Value y = exponent ? createScalarConstant(b, loc, b.getF64Type(),
                                                    *exponent)
                             : args[1];
          if (isa<FloatType>(elem)) {
            // Float base: pow in the base's type (f32 for f16/bf16).
            return inF32(b, loc, x, [&](Value xv) -> Value {
              Value yv = convertScalar(b, loc, y, xv.getType(), yU);
              return math::PowFOp::create(b, loc, xv, yv);
            });
          }
          // Integer base (as onnxruntime: pow in double, then converted).
          Value xd = convertScalar(b, loc, x, b.getF64Type(), xU);
          Value yd = convertScalar(b, loc, y, b.getF64Type(), yU);
          Value p = math::PowFOp::create(b, loc, xd, yd);
          return convertScalar(b, loc, p, elem, false, xU);
        });
    if (!result)
      return onnx::emitNodeError(op)
             << "input shapes do not broadcast to the result";
    rewriter.replaceOp(op, result);
    return success();
  }
};

//===----------------------------------------------------------------------===//
// Op table
//===----------------------------------------------------------------------===//

void addElementwise(RewritePatternSet &patterns, TypeConverter &converter,
                    StringRef opType, BodyFn body) {
  patterns.add<ElementwiseLowering>(converter, patterns.getContext(),
                                    ("onnx." + opType).str(), std::move(body));
}

} // namespace

void populateElementwisePatterns(TypeConverter &converter,
                                 RewritePatternSet &patterns) {
  using FP = arith::CmpFPredicate;
  using IP = arith::CmpIPredicate;
  auto add = [&](StringRef opType, BodyFn body) {
    addElementwise(patterns, converter, opType, std::move(body));
  };

  patterns.add<ClipLowering, PowLowering>(converter, patterns.getContext());

  //===--- binary arithmetic ----------------------------------------------===//
  add("Add", arithBinary<arith::AddFOp, arith::AddIOp>("Add"));
  add("Sub", arithBinary<arith::SubFOp, arith::SubIOp>("Sub"));
  add("Mul", arithBinary<arith::MulFOp, arith::MulIOp>("Mul"));
  add("Div", [](Body &c) -> Value {
    if (c.isF())
      return arith::DivFOp::create(c.b, c.loc, c.args[0], c.args[1]);
    if (!c.isI() || c.isBoolArg())
      return c.fail("Div supports float and integer inputs only");
    if (c.isU())
      return arith::DivUIOp::create(c.b, c.loc, c.args[0], c.args[1]);
    return arith::DivSIOp::create(c.b, c.loc, c.args[0], c.args[1]);
  });
  add("Mod", [](Body &c) -> Value {
    bool fmod = getI64Attr(c.op, "fmod", 0) != 0;
    Value a = c.args[0], d = c.args[1];
    bool isF = c.isF();
    if (!isF && (!c.isI() || c.isBoolArg()))
      return c.fail("Mod supports float and integer inputs only");
    if (!isF && c.isU())
      return arith::RemUIOp::create(c.b, c.loc, a, d);
    // The sign of the dividend (C fmod).
    Value r = isF ? Value(arith::RemFOp::create(c.b, c.loc, a, d))
                  : Value(arith::RemSIOp::create(c.b, c.loc, a, d));
    if (fmod)
      return r;
    // fmod = 0: the result takes the divisor's sign, like Python's % (for
    // floats outside the spec, but what the reference and its tests do).
    Value zero = c.cst(0);
    auto negative = [&](Value v) -> Value {
      return isF ? Value(arith::CmpFOp::create(c.b, c.loc, FP::OLT, v, zero))
                 : Value(arith::CmpIOp::create(c.b, c.loc, IP::slt, v, zero));
    };
    Value rNonZero =
        isF ? Value(arith::CmpFOp::create(c.b, c.loc, FP::ONE, r, zero))
            : Value(arith::CmpIOp::create(c.b, c.loc, IP::ne, r, zero));
    Value signDiffers =
        arith::XOrIOp::create(c.b, c.loc, negative(r), negative(d));
    Value fix = arith::AndIOp::create(c.b, c.loc, rNonZero, signDiffers);
    Value adjusted = isF ? Value(arith::AddFOp::create(c.b, c.loc, r, d))
                         : Value(arith::AddIOp::create(c.b, c.loc, r, d));
    return arith::SelectOp::create(c.b, c.loc, fix, adjusted, r);
  });
  add("BitShift", [](Body &c) -> Value {
    if (!c.isI() || c.isBoolArg())
      return c.fail("BitShift supports integer inputs only");
    auto dir = c.op->getAttrOfType<StringAttr>("direction");
    if (!dir || (dir.getValue() != "LEFT" && dir.getValue() != "RIGHT"))
      return c.fail("BitShift direction must be LEFT or RIGHT");
    Value x = c.args[0], s = c.args[1];
    unsigned width = x.getType().getIntOrFloatBitWidth();
    bool left = dir.getValue() == "LEFT", isSigned = !c.isU();
    Value shifted =
        left ? Value(arith::ShLIOp::create(c.b, c.loc, x, s))
             : isSigned ? Value(arith::ShRSIOp::create(c.b, c.loc, x, s))
                        : Value(arith::ShRUIOp::create(c.b, c.loc, x, s));
    // A shift by the width or more (or, signed, by a negative amount) gives 0,
    // or -1 for a negative value shifted right (LLVM would give poison).
    Value tooFar = arith::CmpIOp::create(c.b, c.loc, isSigned ? IP::sge : IP::uge,
                                         s, c.cst(static_cast<double>(width)));
    if (isSigned)
      tooFar = arith::OrIOp::create(
          c.b, c.loc, tooFar,
          arith::CmpIOp::create(c.b, c.loc, IP::slt, s, c.cst(0)));
    Value outOfRange = c.cst(0);
    if (!left && isSigned)
      outOfRange = arith::ShRSIOp::create(
          c.b, c.loc, x, c.cst(static_cast<double>(width - 1)));
    return arith::SelectOp::create(c.b, c.loc, tooFar, outOfRange, shifted);
  });
  add("PRelu", [](Body &c) -> Value {
    Value x = c.args[0], slope = c.args[1];
    if (c.isF()) {
      Value neg = arith::CmpFOp::create(c.b, c.loc, FP::OLT, x, c.cst(0));
      Value scaled = arith::MulFOp::create(c.b, c.loc, slope, x);
      return arith::SelectOp::create(c.b, c.loc, neg, scaled, x);
    }
    if (!c.isI() || c.isBoolArg())
      return c.fail("PRelu supports float and integer inputs only");
    if (c.isU())
      return x;
    Value neg = arith::CmpIOp::create(c.b, c.loc, IP::slt, x, c.cst(0));
    Value scaled = arith::MulIOp::create(c.b, c.loc, slope, x);
    return arith::SelectOp::create(c.b, c.loc, neg, scaled, x);
  });

  //===--- variadic ---------------------------------------------------------===//
  add("Sum", variadic([](Body &c, Value a, Value b) -> Value {
        if (isa<FloatType>(a.getType()))
          return arith::AddFOp::create(c.b, c.loc, a, b);
        if (!a.getType().isInteger(1))
          return arith::AddIOp::create(c.b, c.loc, a, b);
        return c.fail("Sum supports float and integer inputs only");
      }));
  add("Max", variadic([](Body &c, Value a, Value b) -> Value {
        if (a.getType().isInteger(1))
          return c.fail("Max supports float and integer inputs only");
        return minOrMax(c, a, b, /*isMax=*/true);
      }));
  add("Min", variadic([](Body &c, Value a, Value b) -> Value {
        if (a.getType().isInteger(1))
          return c.fail("Min supports float and integer inputs only");
        return minOrMax(c, a, b, /*isMax=*/false);
      }));
  add("Mean", [](Body &c) -> Value {
    if (!c.isF())
      return c.fail("Mean supports float inputs only");
    Value acc = c.args[0];
    for (Value arg : c.args.drop_front())
      acc = arith::AddFOp::create(c.b, c.loc, acc, arg);
    if (c.args.size() == 1)
      return acc;
    return arith::DivFOp::create(c.b, c.loc, acc,
                                 c.cst(static_cast<double>(c.args.size())));
  });

  //===--- comparisons and logic -----------------------------------------===//
  add("Equal", compare(FP::OEQ, IP::eq, IP::eq));
  add("Less", compare(FP::OLT, IP::slt, IP::ult));
  add("LessOrEqual", compare(FP::OLE, IP::sle, IP::ule));
  add("Greater", compare(FP::OGT, IP::sgt, IP::ugt));
  add("GreaterOrEqual", compare(FP::OGE, IP::sge, IP::uge));
  add("And", logical<arith::AndIOp>("And"));
  add("Or", logical<arith::OrIOp>("Or"));
  add("Xor", logical<arith::XOrIOp>("Xor"));
  auto bitwise = [](StringRef name, auto build) {
    return [name, build](Body &c) -> Value {
      if (!c.isI() || c.isBoolArg())
        return c.fail((name + " supports integer inputs only").str());
      return build(c);
    };
  };
  add("BitwiseAnd", bitwise("BitwiseAnd", [](Body &c) -> Value {
        return arith::AndIOp::create(c.b, c.loc, c.args[0], c.args[1]);
      }));
  add("BitwiseOr", bitwise("BitwiseOr", [](Body &c) -> Value {
        return arith::OrIOp::create(c.b, c.loc, c.args[0], c.args[1]);
      }));
  add("BitwiseXor", bitwise("BitwiseXor", [](Body &c) -> Value {
        return arith::XOrIOp::create(c.b, c.loc, c.args[0], c.args[1]);
      }));
  add("BitwiseNot", bitwise("BitwiseNot", [](Body &c) -> Value {
        return arith::XOrIOp::create(c.b, c.loc, c.args[0], c.cst(-1));
      }));
  add("Not", [](Body &c) -> Value {
    if (!c.isBoolArg())
      return c.fail("Not supports bool inputs only");
    return arith::XOrIOp::create(c.b, c.loc, c.args[0], c.cst(1));
  });
  add("Where", [](Body &c) -> Value {
    if (!c.isBoolArg(0))
      return c.fail("Where requires a bool condition");
    return arith::SelectOp::create(c.b, c.loc, c.args[0], c.args[1],
                                   c.args[2]);
  });
  add("IsNaN", [](Body &c) -> Value {
    if (!c.isF())
      return c.fail("IsNaN supports float inputs only");
    return arith::CmpFOp::create(c.b, c.loc, FP::UNO, c.args[0], c.args[0]);
  });
  add("IsInf", [](Body &c) -> Value {
    if (!c.isF())
      return c.fail("IsInf supports float inputs only");
    bool neg = getI64Attr(c.op, "detect_negative", 1) != 0;
    bool pos = getI64Attr(c.op, "detect_positive", 1) != 0;
    Value x = c.args[0];
    Value result = createScalarConstant(c.b, c.loc, c.b.getI1Type(), 0);
    if (pos)
      result = arith::OrIOp::create(
          c.b, c.loc, result,
          arith::CmpFOp::create(c.b, c.loc, FP::OEQ, x, c.cst(INFINITY)));
    if (neg)
      result = arith::OrIOp::create(
          c.b, c.loc, result,
          arith::CmpFOp::create(c.b, c.loc, FP::OEQ, x, c.cst(-INFINITY)));
    return result;
  });

  //===--- simple unary ------------------------------------------------------===//
  add("Relu", [](Body &c) -> Value {
    if (c.isF())
      return arith::MaximumFOp::create(c.b, c.loc, c.args[0], c.cst(0));
    if (c.isI() && !c.isBoolArg())
      return c.isU() ? c.args[0]
                     : Value(arith::MaxSIOp::create(c.b, c.loc, c.args[0],
                                                    c.cst(0)));
    return c.fail("Relu supports float and integer inputs only");
  });
  add("Abs", [](Body &c) -> Value {
    if (c.isF())
      return math::AbsFOp::create(c.b, c.loc, c.args[0]);
    if (c.isI() && !c.isBoolArg())
      return c.isU() ? c.args[0]
                     : Value(math::AbsIOp::create(c.b, c.loc, c.args[0]));
    return c.fail("Abs supports float and integer inputs only");
  });
  add("Neg", [](Body &c) -> Value {
    if (c.isF())
      return arith::NegFOp::create(c.b, c.loc, c.args[0]);
    if (c.isI() && !c.isBoolArg() && !c.isU())
      return arith::SubIOp::create(c.b, c.loc, c.cst(0), c.args[0]);
    return c.fail("Neg supports float and signed integer inputs only");
  });
  add("Sign", [](Body &c) -> Value {
    Value x = c.args[0];
    if (c.isF()) {
      Value pos = arith::CmpFOp::create(c.b, c.loc, FP::OGT, x, c.cst(0));
      Value neg = arith::CmpFOp::create(c.b, c.loc, FP::OLT, x, c.cst(0));
      // Zero and NaN map to themselves.
      Value negOrX = arith::SelectOp::create(c.b, c.loc, neg, c.cst(-1), x);
      return arith::SelectOp::create(c.b, c.loc, pos, c.cst(1), negOrX);
    }
    if (!c.isI() || c.isBoolArg())
      return c.fail("Sign supports float and integer inputs only");
    if (c.isU()) {
      Value nz = arith::CmpIOp::create(c.b, c.loc, IP::ne, x, c.cst(0));
      return arith::ExtUIOp::create(c.b, c.loc, x.getType(), nz);
    }
    Value pos = arith::CmpIOp::create(c.b, c.loc, IP::sgt, x, c.cst(0));
    Value neg = arith::CmpIOp::create(c.b, c.loc, IP::slt, x, c.cst(0));
    Value negOr0 =
        arith::SelectOp::create(c.b, c.loc, neg, c.cst(-1), c.cst(0));
    return arith::SelectOp::create(c.b, c.loc, pos, c.cst(1), negOr0);
  });
  add("Reciprocal", [](Body &c) -> Value {
    if (!c.isF())
      return c.fail("Reciprocal supports float inputs only");
    return arith::DivFOp::create(c.b, c.loc, c.cst(1), c.args[0]);
  });
  add("Floor", floatUnary<math::FloorOp>("Floor"));
  add("Ceil", floatUnary<math::CeilOp>("Ceil"));
  add("Round", floatUnary<math::RoundEvenOp>("Round"));

  //===--- transcendental --------------------------------------------------===//
  add("Sqrt", floatUnary<math::SqrtOp>("Sqrt"));
  add("Exp", floatUnary<math::ExpOp>("Exp"));
  add("Log", floatUnary<math::LogOp>("Log"));
  add("Erf", floatUnary<math::ErfOp>("Erf"));
  add("Tanh", floatUnary<math::TanhOp>("Tanh"));
  add("Sin", floatUnary<math::SinOp>("Sin"));
  add("Cos", floatUnary<math::CosOp>("Cos"));
  add("Tan", floatUnary<math::TanOp>("Tan"));
  add("Asin", floatUnary<math::AsinOp>("Asin"));
  add("Acos", floatUnary<math::AcosOp>("Acos"));
  add("Atan", floatUnary<math::AtanOp>("Atan"));
  add("Sinh", floatUnary<math::SinhOp>("Sinh"));
  add("Cosh", floatUnary<math::CoshOp>("Cosh"));
  add("Asinh", floatUnary<math::AsinhOp>("Asinh"));
  add("Acosh", floatUnary<math::AcoshOp>("Acosh"));
  add("Atanh", floatUnary<math::AtanhOp>("Atanh"));
  add("Sigmoid", floatUnaryFn("Sigmoid", [](OpBuilder &b, Location loc,
                                            Value x) -> Value {
        // 1 / (1 + exp(-x)); exp overflow gives inf and the result 0.
        Value negX = arith::NegFOp::create(b, loc, x);
        Value e = math::ExpOp::create(b, loc, negX);
        Value den = arith::AddFOp::create(b, loc, fconst(b, loc, x, 1.0), e);
        return arith::DivFOp::create(b, loc, fconst(b, loc, x, 1.0), den);
      }));
  add("Softplus", floatUnaryFn("Softplus", softplus));
  add("Softsign", floatUnaryFn("Softsign", [](OpBuilder &b, Location loc,
                                              Value x) -> Value {
        Value absX = math::AbsFOp::create(b, loc, x);
        Value den =
            arith::AddFOp::create(b, loc, fconst(b, loc, x, 1.0), absX);
        return arith::DivFOp::create(b, loc, x, den);
      }));
  add("Mish", floatUnaryFn("Mish", [](OpBuilder &b, Location loc,
                                      Value x) -> Value {
        Value t = math::TanhOp::create(b, loc, softplus(b, loc, x));
        return arith::MulFOp::create(b, loc, x, t);
      }));
  add("HardSwish", floatUnaryFn("HardSwish", [](OpBuilder &b, Location loc,
                                                Value x) -> Value {
        // x * max(0, min(1, x / 6 + 0.5))
        Value s = arith::MulFOp::create(b, loc, x,
                                        fconst(b, loc, x, 1.0 / 6.0));
        s = arith::AddFOp::create(b, loc, s, fconst(b, loc, x, 0.5));
        s = arith::MinimumFOp::create(b, loc, s, fconst(b, loc, x, 1.0));
        s = arith::MaximumFOp::create(b, loc, s, fconst(b, loc, x, 0.0));
        return arith::MulFOp::create(b, loc, x, s);
      }));

  //===--- unary with attributes --------------------------------------------===//
  add("LeakyRelu", [](Body &c) -> Value {
    if (!c.isF())
      return c.fail("LeakyRelu supports float inputs only");
    double alpha = getF32Attr(c.op, "alpha", 0.01);
    Value x = c.args[0];
    Value nonNeg = arith::CmpFOp::create(c.b, c.loc, FP::OGE, x, c.cst(0));
    Value scaled = arith::MulFOp::create(c.b, c.loc, x, c.cst(alpha));
    return arith::SelectOp::create(c.b, c.loc, nonNeg, x, scaled);
  });
  add("ThresholdedRelu", [](Body &c) -> Value {
    if (!c.isF())
      return c.fail("ThresholdedRelu supports float inputs only");
    double alpha = getF32Attr(c.op, "alpha", 1.0);
    Value x = c.args[0];
    Value above = arith::CmpFOp::create(c.b, c.loc, FP::OGT, x, c.cst(alpha));
    return arith::SelectOp::create(c.b, c.loc, above, x, c.cst(0));
  });
  add("HardSigmoid", [](Body &c) -> Value {
    if (!c.isF())
      return c.fail("HardSigmoid supports float inputs only");
    double alpha = getF32Attr(c.op, "alpha", 0.2);
    double beta = getF32Attr(c.op, "beta", 0.5);
    Value y = arith::MulFOp::create(c.b, c.loc, c.args[0], c.cst(alpha));
    y = arith::AddFOp::create(c.b, c.loc, y, c.cst(beta));
    y = arith::MinimumFOp::create(c.b, c.loc, y, c.cst(1));
    return arith::MaximumFOp::create(c.b, c.loc, y, c.cst(0));
  });
  add("Elu", [](Body &c) -> Value {
    if (!c.isF())
      return c.fail("Elu supports float inputs only");
    double alpha = getF32Attr(c.op, "alpha", 1.0);
    Value x = c.args[0];
    Value neg = inF32(c.b, c.loc, x, [&](Value v) -> Value {
      Value e = math::ExpOp::create(c.b, c.loc, v);
      Value em1 =
          arith::SubFOp::create(c.b, c.loc, e, fconst(c.b, c.loc, v, 1.0));
      return arith::MulFOp::create(c.b, c.loc, em1,
                                   fconst(c.b, c.loc, v, alpha));
    });
    Value isNeg = arith::CmpFOp::create(c.b, c.loc, FP::OLT, x, c.cst(0));
    return arith::SelectOp::create(c.b, c.loc, isNeg, neg, x);
  });
  add("Selu", [](Body &c) -> Value {
    if (!c.isF())
      return c.fail("Selu supports float inputs only");
    double alpha = getF32Attr(c.op, "alpha", 1.6732632);
    double gamma = getF32Attr(c.op, "gamma", 1.050701);
    Value x = c.args[0];
    Value neg = inF32(c.b, c.loc, x, [&](Value v) -> Value {
      Value e = math::ExpOp::create(c.b, c.loc, v);
      Value em1 =
          arith::SubFOp::create(c.b, c.loc, e, fconst(c.b, c.loc, v, 1.0));
      return arith::MulFOp::create(c.b, c.loc, em1,
                                   fconst(c.b, c.loc, v, alpha));
    });
    Value isPos = arith::CmpFOp::create(c.b, c.loc, FP::OGT, x, c.cst(0));
    Value y = arith::SelectOp::create(c.b, c.loc, isPos, x, neg);
    return arith::MulFOp::create(c.b, c.loc, y, c.cst(gamma));
  });
  add("Celu", [](Body &c) -> Value {
    if (!c.isF())
      return c.fail("Celu supports float inputs only");
    double alpha = getF32Attr(c.op, "alpha", 1.0);
    Value x = c.args[0];
    // max(0, x) + min(0, alpha * (exp(x / alpha) - 1))
    Value neg = inF32(c.b, c.loc, x, [&](Value v) -> Value {
      Value d =
          arith::DivFOp::create(c.b, c.loc, v, fconst(c.b, c.loc, v, alpha));
      Value e = math::ExpOp::create(c.b, c.loc, d);
      Value em1 =
          arith::SubFOp::create(c.b, c.loc, e, fconst(c.b, c.loc, v, 1.0));
      return arith::MulFOp::create(c.b, c.loc, em1,
                                   fconst(c.b, c.loc, v, alpha));
    });
    Value pos = arith::MaximumFOp::create(c.b, c.loc, x, c.cst(0));
    neg = arith::MinimumFOp::create(c.b, c.loc, neg, c.cst(0));
    return arith::AddFOp::create(c.b, c.loc, pos, neg);
  });
  add("Gelu", [](Body &c) -> Value {
    if (!c.isF())
      return c.fail("Gelu supports float inputs only");
    auto approx = c.op->getAttrOfType<StringAttr>("approximate");
    StringRef mode = approx ? approx.getValue() : "none";
    if (mode != "none" && mode != "tanh")
      return c.fail("Gelu approximate must be 'none' or 'tanh'");
    return inF32(c.b, c.loc, c.args[0], [&](Value x) -> Value {
      OpBuilder &b = c.b;
      Location loc = c.loc;
      Value inner;
      if (mode == "none") {
        // 0.5 * x * (1 + erf(x / sqrt(2)))
        Value s = arith::MulFOp::create(b, loc, x,
                                        fconst(b, loc, x, M_SQRT1_2));
        inner = math::ErfOp::create(b, loc, s);
      } else {
        // 0.5 * x * (1 + tanh(sqrt(2 / pi) * (x + 0.044715 x^3)))
        Value x3 = arith::MulFOp::create(b, loc, x, x);
        x3 = arith::MulFOp::create(b, loc, x3, x);
        Value t = arith::MulFOp::create(b, loc, x3,
                                        fconst(b, loc, x, 0.044715));
        t = arith::AddFOp::create(b, loc, x, t);
        t = arith::MulFOp::create(b, loc, t,
                                  fconst(b, loc, x, std::sqrt(2.0 / M_PI)));
        inner = math::TanhOp::create(b, loc, t);
      }
      Value onePlus =
          arith::AddFOp::create(b, loc, fconst(b, loc, x, 1.0), inner);
      Value half = arith::MulFOp::create(b, loc, x, fconst(b, loc, x, 0.5));
      return arith::MulFOp::create(b, loc, half, onePlus);
    });
  });
}

} // namespace kiln::onnx_to_linalg
