//===- SubByte.cpp - int4, uint4, int2, uint2, float4e2m1, float8e8m0 -----===//

#include "passes/Conversion/ONNXToLinalg/SubByte.h"

#include "dialects/Kiln/ABIAttributes.h"
#include "dialects/ONNX/DataTypes.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"

using namespace mlir;

namespace kiln::onnx_to_linalg {

namespace {

/// Scalar arithmetic on integers of one type with less noise.
struct IOps {
  OpBuilder &b;
  Location loc;
  Type type;

  Value c(int64_t v) {
    return arith::ConstantOp::create(b, loc, b.getIntegerAttr(type, v));
  }
  Value shl(Value x, int64_t n) { return arith::ShLIOp::create(b, loc, x, c(n)); }
  Value shr(Value x, int64_t n) { return arith::ShRUIOp::create(b, loc, x, c(n)); }
  Value sar(Value x, int64_t n) { return arith::ShRSIOp::create(b, loc, x, c(n)); }
  Value band(Value x, int64_t m) { return arith::AndIOp::create(b, loc, x, c(m)); }
  Value bor(Value x, Value y) { return arith::OrIOp::create(b, loc, x, y); }
  Value add(Value x, Value y) { return arith::AddIOp::create(b, loc, x, y); }
  Value eq(Value x, int64_t v) {
    return arith::CmpIOp::create(b, loc, arith::CmpIPredicate::eq, x, c(v));
  }
  Value ne(Value x, int64_t v) {
    return arith::CmpIOp::create(b, loc, arith::CmpIPredicate::ne, x, c(v));
  }
  Value select(Value cond, Value x, Value y) {
    return arith::SelectOp::create(b, loc, cond, x, y);
  }
  Value ext(Value i1) { return arith::ExtUIOp::create(b, loc, type, i1); }
};

Value toF32(OpBuilder &b, Location loc, Value v, bool isUnsigned) {
  Type f32 = b.getF32Type();
  Type t = v.getType();
  if (t == f32)
    return v;
  if (auto f = dyn_cast<FloatType>(t))
    return f.getWidth() < 32 ? Value(arith::ExtFOp::create(b, loc, f32, v))
                             : Value(arith::TruncFOp::create(b, loc, f32, v));
  if (t.isInteger(1) || isUnsigned)
    return arith::UIToFPOp::create(b, loc, f32, v);
  return arith::SIToFPOp::create(b, loc, f32, v);
}

/// f32 -> float4e2m1 code (i32): round to nearest even among
/// {0, 0.5, 1, 1.5, 2, 3, 4, 6}, saturate, sign in bit 3.
Value encodeFloat4(OpBuilder &b, Location loc, Value f) {
  IOps o{b, loc, b.getI32Type()};
  Value bits = arith::BitcastOp::create(b, loc, b.getI32Type(), f);
  Value sign = o.shr(bits, 31);
  Value a = arith::BitcastOp::create(b, loc, b.getF32Type(), o.band(bits, 0x7FFFFFFF));
  // The code counts the boundaries |x| is past; a tie goes to the even code
  // (0.25 -> 0, 0.75 -> 1.0, 1.25 -> 1.0, 1.75 -> 2, 2.5 -> 2, 3.5 -> 4, 5 -> 4).
  struct Boundary {
    float at;
    bool inclusive; ///< the tie rounds up (the code above is even)
  };
  const Boundary boundaries[] = {{0.25f, false}, {0.75f, true}, {1.25f, false},
                                 {1.75f, true},  {2.5f, false}, {3.5f, true},
                                 {5.0f, false}};
  Value code = o.c(0);
  for (const Boundary &bd : boundaries) {
    Value at = arith::ConstantOp::create(b, loc, b.getF32FloatAttr(bd.at));
    // Ordered compares: NaN is past none of them.
    Value past = arith::CmpFOp::create(
        b, loc, bd.inclusive ? arith::CmpFPredicate::OGE : arith::CmpFPredicate::OGT,
        a, at);
    code = o.add(code, o.ext(past));
  }
  // NaN: a zero, with the sign bit flipped as ml_dtypes (ONNX's reference) does.
  Value isNan = arith::CmpFOp::create(b, loc, arith::CmpFPredicate::UNO, f, f);
  Value signOut = o.select(isNan, arith::XOrIOp::create(b, loc, sign, o.c(1)), sign);
  return o.bor(code, o.shl(signOut, 3));
}

/// f32 -> float8e8m0 byte (i32), as onnx.numpy_helper.to_float8e8m0 with the
/// spec's saturation of infinities.
Value encodeE8M0(OpBuilder &b, Location loc, Value f, bool saturate,
                 StringRef roundMode) {
  IOps o{b, loc, b.getI32Type()};
  Value bits = arith::BitcastOp::create(b, loc, b.getI32Type(), f);
  Value exponent = o.band(o.shr(bits, 23), 0xFF);
  Value fraction = o.band(bits, 0x7FFFFF);
  Value special = o.eq(exponent, 0xFF);
  // An f32 subnormal (exponent field 0) is fraction * 2^-149, below 2^-126:
  // it rounds to 2^-127 (code 0) or 2^-126 (code 1) by its value, as
  // onnxruntime does (the reference rounds 2^-127 itself up to 2^-126).
  using P = arith::CmpIPredicate;
  Value subnormal = o.eq(exponent, 0);
  Value roundUp;
  if (roundMode == "up") {
    roundUp = o.select(subnormal,
                       arith::CmpIOp::create(b, loc, P::ugt, fraction, o.c(0x400000)),
                       o.ne(fraction, 0));
  } else if (roundMode == "nearest") {
    // Ties away from zero (the reference's rule for normal numbers: the guard
    // bit rounds up, with any lower bit or a nonzero exponent field).
    Value g = o.ne(o.band(bits, 0x400000), 0);
    Value rest = arith::OrIOp::create(b, loc, o.ne(o.band(bits, 0x3FFFFF), 0),
                                      o.ne(exponent, 0));
    roundUp = o.select(subnormal,
                       arith::CmpIOp::create(b, loc, P::uge, fraction, o.c(0x600000)),
                       arith::AndIOp::create(b, loc, g, rest));
  }
  if (roundUp && saturate)
    roundUp = arith::AndIOp::create(b, loc, roundUp, o.ne(exponent, 0xFE));
  Value result = roundUp ? o.add(exponent, o.ext(roundUp)) : exponent;
  // NaN stays NaN; infinities saturate to 2^127 (or are NaN without).
  Value isInf = arith::AndIOp::create(b, loc, special, o.eq(fraction, 0));
  Value specialCode =
      saturate ? o.select(isInf, o.c(0xFE), o.c(0xFF)) : o.c(0xFF);
  return o.select(special, specialCode, result);
}

} // namespace

Value decodeStorageOnly(OpBuilder &b, Location loc, Value value, Type type) {
  if (isa<IntegerType>(type))
    return value; // already the value, extended
  IOps o{b, loc, b.getI32Type()};
  Value x = arith::ExtUIOp::create(b, loc, b.getI32Type(), value);
  Value bits;
  if (isa<Float4E2M1FNType>(type)) {
    Value mag = o.band(x, 7);
    Value e = o.shr(mag, 1), m = o.band(mag, 1);
    // 2^(e-1) * (1 + m/2) for e > 0; m * 0.5 for e == 0.
    Value normal = o.bor(o.shl(o.add(e, o.c(126)), 23), o.shl(m, 22));
    Value small = o.select(o.eq(m, 0), o.c(0), o.c(0x3F000000));
    bits = o.bor(o.select(o.eq(e, 0), small, normal), o.shl(o.shr(x, 3), 31));
  } else {
    assert(isa<Float8E8M0FNUType>(type) && "not a storage-only type");
    // 2^(x - 127): x == 0 is f32's subnormal 2^-127; 0xFF is NaN.
    Value normal = o.select(o.eq(x, 0), o.c(0x00400000), o.shl(x, 23));
    bits = o.select(o.eq(x, 0xFF), o.c(0x7FC00000), normal);
  }
  return arith::BitcastOp::create(b, loc, b.getF32Type(), bits);
}

Value encodeStorageOnly(OpBuilder &b, Location loc, Value value,
                        bool isUnsigned, Type type, bool saturate,
                        StringRef roundMode) {
  Type i8 = b.getI8Type();
  if (auto target = dyn_cast<IntegerType>(type)) {
    Value v = value;
    if (auto f = dyn_cast<FloatType>(v.getType())) {
      // Truncation toward zero, then the low bits. f64: in int64, what it
      // cannot hold (NaN, infinities, |x| >= 2^63) 0. Narrower floats: in
      // int32 (no f64 or i64 code, which many GPUs lack), |x| >= 2^31 taken
      // as 0: such an f32 is a multiple of 2^8, so its low 8 bits are 0 as
      // the int64 path's are.
      bool wide = f.getWidth() == 64;
      FloatType ft = wide ? b.getF64Type() : b.getF32Type();
      if (!wide && f != ft)
        v = f.getWidth() < 32 ? Value(arith::ExtFOp::create(b, loc, ft, v))
                              : Value(arith::TruncFOp::create(b, loc, ft, v));
      Value limit = arith::ConstantOp::create(
          b, loc, FloatAttr::get(ft, wide ? 0x1p63 : 0x1p31));
      Value absolute = math::AbsFOp::create(b, loc, v);
      Value inRange = arith::CmpFOp::create(b, loc, arith::CmpFPredicate::OLT,
                                            absolute, limit);
      Value zero = arith::ConstantOp::create(b, loc, FloatAttr::get(ft, 0.0));
      v = arith::SelectOp::create(b, loc, inRange, v, zero);
      v = arith::FPToSIOp::create(b, loc, wide ? b.getI64Type() : b.getI32Type(),
                                  v);
    }
    unsigned width = v.getType().getIntOrFloatBitWidth();
    if (width > 8)
      v = arith::TruncIOp::create(b, loc, i8, v);
    else if (width < 8)
      v = isUnsigned || width == 1 ? Value(arith::ExtUIOp::create(b, loc, i8, v))
                                   : Value(arith::ExtSIOp::create(b, loc, i8, v));
    // Keep the low `bits` bits, extended as the target's signedness says.
    IOps o{b, loc, i8};
    int64_t drop = 8 - target.getWidth();
    v = o.shl(v, drop);
    return target.isUnsigned() ? o.shr(v, drop) : o.sar(v, drop);
  }
  Value f = toF32(b, loc, value, isUnsigned);
  Value code = isa<Float4E2M1FNType>(type)
                   ? encodeFloat4(b, loc, f)
                   : encodeE8M0(b, loc, f, saturate, roundMode);
  return arith::TruncIOp::create(b, loc, i8, code);
}

//===----------------------------------------------------------------------===//
// The entry's boundary
//===----------------------------------------------------------------------===//

PackedBoundary findPackedBoundary(ModuleOp module) {
  PackedBoundary boundary;
  auto bitsOf = [](Type t) -> unsigned {
    auto tensor = dyn_cast<ShapedType>(t);
    return tensor ? onnx::getPackedBits(tensor.getElementType()) : 0;
  };
  auto isSigned = [](Type t) {
    auto tensor = dyn_cast<ShapedType>(t);
    return tensor && tensor.getElementType().isSignlessInteger();
  };
  for (auto func : module.getOps<func::FuncOp>()) {
    if (func.isExternal())
      continue;
    PackedBoundary::Function f;
    f.name = func.getSymName().str();
    bool any = false;
    for (Type t : func.getArgumentTypes()) {
      f.argBits.push_back(bitsOf(t));
      f.argSigned.push_back(isSigned(t));
      any |= f.argBits.back() != 0;
    }
    for (Type t : func.getResultTypes()) {
      f.resultBits.push_back(bitsOf(t));
      any |= f.resultBits.back() != 0;
    }
    if (any)
      boundary.functions.push_back(std::move(f));
  }
  return boundary;
}

namespace {

/// `value` (a static tensor) as a 1-D tensor, or back to `shape`.
Value flatten(OpBuilder &b, Location loc, Value value) {
  auto type = cast<RankedTensorType>(value.getType());
  auto flat = RankedTensorType::get({type.getNumElements()}, type.getElementType());
  if (type.getRank() == 1)
    return value;
  if (type.getRank() == 0)
    return tensor::ExpandShapeOp::create(b, loc, flat, value,
                                         ArrayRef<ReassociationIndices>{});
  ReassociationIndices all;
  for (int64_t d = 0; d < type.getRank(); ++d)
    all.push_back(d);
  return tensor::CollapseShapeOp::create(b, loc, value,
                                         ArrayRef<ReassociationIndices>{all});
}

Value unflatten(OpBuilder &b, Location loc, Value flat, RankedTensorType type) {
  if (type.getRank() == 1)
    return flat;
  if (type.getRank() == 0)
    return tensor::CollapseShapeOp::create(b, loc, type, flat,
                                           ArrayRef<ReassociationIndices>{});
  ReassociationIndices all;
  for (int64_t d = 0; d < type.getRank(); ++d)
    all.push_back(d);
  return tensor::ExpandShapeOp::create(b, loc, type, flat,
                                       ArrayRef<ReassociationIndices>{all});
}

/// A 1-D generic writing `size` i8s, each computed by `body` from its index.
Value generate(OpBuilder &b, Location loc, int64_t size,
               function_ref<Value(OpBuilder &, Location, Value)> body) {
  Type i8 = b.getI8Type();
  Value init = tensor::EmptyOp::create(b, loc, ArrayRef<int64_t>{size}, i8);
  AffineMap id = b.getMultiDimIdentityMap(1);
  auto generic = linalg::GenericOp::create(
      b, loc, init.getType(), ValueRange{}, ValueRange{init},
      ArrayRef<AffineMap>{id}, ArrayRef<utils::IteratorType>{utils::IteratorType::parallel},
      [&](OpBuilder &nb, Location nl, ValueRange) {
        Value index = linalg::IndexOp::create(nb, nl, 0);
        linalg::YieldOp::create(nb, nl, body(nb, nl, index));
      });
  markStorageOnlyConversion(generic);
  return generic.getResult(0);
}

Value indexConst(OpBuilder &b, Location loc, int64_t v) {
  return arith::ConstantIndexOp::create(b, loc, v);
}

/// The one-per-byte i8 elements of `type` (static) from `packed` bytes.
Value unpack(OpBuilder &b, Location loc, Value packed, RankedTensorType type,
             unsigned bits, bool isSigned) {
  int64_t per = 8 / bits;
  Value flat = generate(b, loc, type.getNumElements(),
                        [&](OpBuilder &nb, Location nl, Value i) {
    IOps o{nb, nl, nb.getI8Type()};
    Value byteIndex = arith::DivUIOp::create(nb, nl, i, indexConst(nb, nl, per));
    Value byte = tensor::ExtractOp::create(nb, nl, packed, ValueRange{byteIndex});
    Value slot = arith::RemUIOp::create(nb, nl, i, indexConst(nb, nl, per));
    Value shift = arith::MulIOp::create(nb, nl, slot, indexConst(nb, nl, bits));
    shift = arith::IndexCastUIOp::create(nb, nl, nb.getI8Type(), shift);
    Value code = arith::ShRUIOp::create(nb, nl, byte, shift);
    int64_t drop = 8 - bits;
    code = o.shl(code, drop);
    return isSigned ? o.sar(code, drop) : o.shr(code, drop);
  });
  return unflatten(b, loc, flat, type);
}

/// The packed bytes of `value` (static, one i8 element per byte).
Value pack(OpBuilder &b, Location loc, Value value, unsigned bits) {
  Value flat = flatten(b, loc, value);
  int64_t n = cast<RankedTensorType>(flat.getType()).getNumElements();
  int64_t per = 8 / bits;
  int64_t bytes = (n + per - 1) / per;
  return generate(b, loc, bytes, [&](OpBuilder &nb, Location nl, Value j) {
    IOps o{nb, nl, nb.getI8Type()};
    Value acc = o.c(0);
    for (int64_t k = 0; k < per; ++k) {
      // Element j * per + k; past the end (the last byte's padding) 0.
      Value i = arith::AddIOp::create(
          nb, nl, arith::MulIOp::create(nb, nl, j, indexConst(nb, nl, per)),
          indexConst(nb, nl, k));
      Value last = indexConst(nb, nl, n - 1);
      Value inside = arith::CmpIOp::create(nb, nl, arith::CmpIPredicate::ule, i, last);
      Value clamped = arith::MinUIOp::create(nb, nl, i, last);
      Value elem = tensor::ExtractOp::create(nb, nl, flat, ValueRange{clamped});
      elem = o.band(elem, (1 << bits) - 1);
      elem = o.select(inside, elem, o.c(0));
      acc = o.bor(acc, o.shl(elem, k * bits));
    }
    return acc;
  });
}

} // namespace

LogicalResult packEntryBoundary(ModuleOp module, const PackedBoundary &boundary) {
  for (const PackedBoundary::Function &f : boundary.functions) {
    auto func = module.lookupSymbol<func::FuncOp>(f.name);
    if (!func || func.getNumArguments() != f.argBits.size() ||
        func.getNumResults() != f.resultBits.size())
      return module.emitError("packed graph values: function @") << f.name
                                                                  << " changed";
    auto packedType = [&](Type t, unsigned bits, StringRef what,
                          unsigned index) -> FailureOr<RankedTensorType> {
      auto tensor = dyn_cast<RankedTensorType>(t);
      if (!tensor || !tensor.hasStaticShape()) {
        func.emitError("graph ") << what << " " << index
                                 << ": a packed type (int4, uint4, float4e2m1, "
                                    "int2, uint2) with symbolic dims is not "
                                    "supported";
        return failure();
      }
      int64_t per = 8 / bits;
      return RankedTensorType::get({(tensor.getNumElements() + per - 1) / per},
                                   IntegerType::get(t.getContext(), 8));
    };
    Block &entry = func.getBody().front();
    OpBuilder b = OpBuilder::atBlockBegin(&entry);
    SmallVector<Type> argTypes(func.getArgumentTypes());
    for (auto [i, bits] : llvm::enumerate(f.argBits)) {
      if (!bits)
        continue;
      BlockArgument arg = entry.getArgument(i);
      auto unpackedType = cast<RankedTensorType>(arg.getType());
      FailureOr<RankedTensorType> t = packedType(unpackedType, bits, "input", i);
      if (failed(t))
        return failure();
      SmallVector<OpOperand *> uses;
      for (OpOperand &use : arg.getUses())
        uses.push_back(&use);
      arg.setType(*t);
      argTypes[i] = *t;
      // Located at the first node reading it (diagnostics name that node).
      Location loc = uses.empty() ? arg.getLoc() : uses.front()->getOwner()->getLoc();
      Value unpacked = unpack(b, loc, arg, unpackedType, bits, f.argSigned[i]);
      for (OpOperand *use : uses)
        use->set(unpacked);
    }
    SmallVector<Type> resultTypes(func.getResultTypes());
    for (Block &block : func.getBody())
      if (auto ret = dyn_cast<func::ReturnOp>(block.getTerminator()))
        for (auto [i, bits] : llvm::enumerate(f.resultBits)) {
          if (!bits)
            continue;
          Value v = ret.getOperand(i);
          auto type = cast<RankedTensorType>(v.getType());
          FailureOr<RankedTensorType> t = packedType(type, bits, "output", i);
          if (failed(t))
            return failure();
          OpBuilder rb(ret);
          // Located at the node making it.
          Location loc = v.getDefiningOp() ? v.getDefiningOp()->getLoc() : ret.getLoc();
          ret.setOperand(i, pack(rb, loc, v, bits));
          resultTypes[i] = *t;
        }
    func.setFunctionType(FunctionType::get(func.getContext(), argTypes, resultTypes));
  }
  return success();
}

} // namespace kiln::onnx_to_linalg
