//===- BindSymbolicDims.cpp - symbolic entry buffers from the symbols -----===//
//
// A model with symbolic dims (docs/dynamic-shapes.md) keeps bare pointers at
// its entry: MLIR's bare-pointer calling convention cannot pass a memref with
// `?` dims, and the runtime already knows every dim from the symbols. So the
// entry function (marked `kiln.symbols` by the importer, with
// `kiln.input_dims` / `kiln.output_dims` from the driver) gets one more
// argument in front, `memref<Nxi64>` holding the value of every symbol, and
// each argument of a type with `?` dims becomes `memref<1xT>` (one pointer)
// that the body reinterprets with its run-time sizes:
//
//   func @m(%x: memref<?x4xf32>, %y: memref<?x4xf32>, %status: memref<i32>)
//   // becomes
//   func @m(%sym: memref<1xi64>, %x0: memref<1xf32>, %y0: memref<1xf32>, ...)
//     %b = index_cast(memref.load %sym[0])
//     %x = memref.reinterpret_cast %x0 to offset: [0], sizes: [%b, 4],
//                                          strides: [4, 1]
//
//
// In the same functions, a memref.expand_shape of a contiguous buffer whose
// reassociation group holds several `?` dims ([?, 32] -> [?, ?, 32], a
// symbolic batch and sequence split back after a product) becomes a
// reinterpret_cast with row-major strides: MLIR 22's expand-strided-metadata
// crashes on such an expand_shape.
//
//===----------------------------------------------------------------------===//

#include "codegen/Passes.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/IR/Builders.h"
#include "mlir/IR/BuiltinOps.h"

namespace kiln {
#define GEN_PASS_DEF_KILNBINDSYMBOLICDIMSPASS
#include "codegen/Passes.h.inc"
} // namespace kiln

using namespace mlir;

namespace {

struct BindSymbolicDimsPass
    : kiln::impl::KilnBindSymbolicDimsPassBase<BindSymbolicDimsPass> {
  void runOnOperation() override {
    ModuleOp module = getOperation();
    for (auto func : llvm::make_early_inc_range(module.getOps<func::FuncOp>()))
      if (!func.isExternal() && func->hasAttr("kiln.symbols"))
        if (failed(bind(func)))
          return signalPassFailure();
  }

  /// Row-major strides of `sizes` (static where every later size is).
  static SmallVector<OpFoldResult>
  rowMajorStrides(OpBuilder &b, Location loc, ArrayRef<OpFoldResult> sizes) {
    SmallVector<OpFoldResult> strides(sizes.size());
    int64_t staticStride = 1;
    Value dynStride;
    for (int64_t axis = sizes.size() - 1; axis >= 0; --axis) {
      strides[axis] = dynStride ? OpFoldResult(dynStride)
                                : OpFoldResult(b.getIndexAttr(staticStride));
      OpFoldResult size = sizes[axis];
      if (auto v = dyn_cast<Value>(size)) {
        Value current =
            dynStride ? dynStride
                      : arith::ConstantIndexOp::create(b, loc, staticStride)
                            .getResult();
        dynStride = arith::MulIOp::create(b, loc, current, v);
      } else {
        int64_t s = cast<IntegerAttr>(cast<Attribute>(size)).getInt();
        if (dynStride)
          dynStride = arith::MulIOp::create(
              b, loc, dynStride, arith::ConstantIndexOp::create(b, loc, s));
        else
          staticStride *= s;
      }
    }
    return strides;
  }

  /// expand_shape of a contiguous buffer with a group of several `?` dims
  /// -> reinterpret_cast (see the file comment).
  void rewriteDynamicExpands(func::FuncOp func) {
    SmallVector<memref::ExpandShapeOp> expands;
    func.walk([&](memref::ExpandShapeOp op) {
      MemRefType source = op.getSrcType(), result = op.getResultType();
      if (!source.getLayout().isIdentity() || !result.getLayout().isIdentity())
        return;
      for (const ReassociationIndices &group : op.getReassociationIndices())
        if (llvm::count_if(
                group, [&](int64_t d) { return result.isDynamicDim(d); }) > 1) {
          expands.push_back(op);
          return;
        }
    });
    for (memref::ExpandShapeOp op : expands) {
      OpBuilder b(op);
      SmallVector<OpFoldResult> sizes = op.getMixedOutputShape();
      SmallVector<OpFoldResult> strides =
          rowMajorStrides(b, op.getLoc(), sizes);
      Value view = memref::ReinterpretCastOp::create(
          b, op.getLoc(), op.getResultType(), op.getSrc(), b.getIndexAttr(0),
          sizes, strides);
      op.replaceAllUsesWith(view);
      op.erase();
    }
  }

  LogicalResult bind(func::FuncOp func) {
    MLIRContext *ctx = func.getContext();
    auto symbols = func->getAttrOfType<ArrayAttr>("kiln.symbols");
    auto inputDims = func->getAttrOfType<ArrayAttr>("kiln.input_dims");
    auto outputDims = func->getAttrOfType<ArrayAttr>("kiln.output_dims");
    if (!symbols || !inputDims || !outputDims)
      return func.emitError("a function with kiln.symbols needs "
                            "kiln.input_dims and kiln.output_dims");
    // After bufferization: inputs, outputs, then the status slot.
    SmallVector<Attribute> dims(inputDims.begin(), inputDims.end());
    dims.append(outputDims.begin(), outputDims.end());
    if (func.getNumArguments() < dims.size())
      return func.emitError("entry has fewer arguments than inputs and "
                            "outputs");

    auto symType = MemRefType::get({static_cast<int64_t>(symbols.size())},
                                   IntegerType::get(ctx, 64));
    if (failed(func.insertArgument(0, symType, {}, func.getLoc())))
      return failure();
    Block &entry = func.getBody().front();
    Value symArg = entry.getArgument(0);
    OpBuilder b(&entry, entry.begin());
    Location loc = func.getLoc();
    DenseMap<int64_t, Value> loaded;
    auto symbolValue = [&](int64_t id) -> Value {
      auto it = loaded.find(id);
      if (it != loaded.end())
        return it->second;
      Value index = arith::ConstantIndexOp::create(b, loc, id);
      Value v = memref::LoadOp::create(b, loc, symArg, ValueRange{index});
      Value size = arith::IndexCastOp::create(b, loc, b.getIndexType(), v);
      loaded[id] = size;
      return size;
    };

    for (auto [i, attr] : llvm::enumerate(dims)) {
      BlockArgument arg = entry.getArgument(i + 1);
      auto type = dyn_cast<MemRefType>(arg.getType());
      if (!type || type.hasStaticShape())
        continue;
      auto abi = dyn_cast<DenseI64ArrayAttr>(attr);
      if (!abi || static_cast<int64_t>(abi.size()) != type.getRank() ||
          !type.getLayout().isIdentity())
        return func.emitError("entry argument ")
               << i << " of type " << type
               << " has no matching kiln dims (or a non-identity layout)";
      SmallVector<OpFoldResult> sizes;
      for (auto [axis, d] : llvm::enumerate(abi.asArrayRef())) {
        if (d >= 0) {
          if (type.getDimSize(axis) != d)
            return func.emitError("entry argument ")
                   << i << " dim " << axis << " is " << type.getDimSize(axis)
                   << " but kiln dims say " << d;
          sizes.push_back(b.getIndexAttr(d));
        } else {
          if (static_cast<size_t>(-d - 1) >= symbols.size())
            return func.emitError("entry argument ")
                   << i << " names symbol " << -d - 1 << " of "
                   << symbols.size();
          sizes.push_back(symbolValue(-d - 1));
        }
      }
      SmallVector<OpFoldResult> strides = rowMajorStrides(b, loc, sizes);
      auto placeholder = MemRefType::get({1}, type.getElementType(), nullptr,
                                         type.getMemorySpace());
      arg.setType(placeholder);
      Value view = memref::ReinterpretCastOp::create(
          b, loc, type, arg, b.getIndexAttr(0), sizes, strides);
      arg.replaceAllUsesExcept(view, view.getDefiningOp());
    }
    func.setFunctionType(FunctionType::get(ctx, entry.getArgumentTypes(),
                                           func.getResultTypes()));
    rewriteDynamicExpands(func);
    return success();
  }
};

} // namespace
