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
// Run outputs (an output whose dims name a run symbol, model_abi.h's
// KILN_SYMBOL_RUN: sizes the run's values decide): the argument becomes
// `memref<1xT>` too, viewed with the sizes of the value copied into it (read
// with memref.dim at the copy), and those sizes are stored into the symbols'
// slots of the run symbols (the runtime reads them after the run). It is
// marked `kiln.run_output`; after the deallocation pipeline,
// kiln-allocate-run-outputs allocates the buffer in place of the view and
// makes the argument the slot holding its address.
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
#define GEN_PASS_DEF_KILNALLOCATERUNOUTPUTSPASS
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

  /// A run output (see the file comment): `arg` is written by one
  /// memref.copy of the value computed for it (buffer-results-to-out-params).
  LogicalResult bindRunOutput(func::FuncOp func, BlockArgument arg,
                              MemRefType type, ArrayRef<int64_t> abi,
                              Value symArg) {
    memref::CopyOp copy;
    for (Operation *user : arg.getUsers()) {
      auto c = dyn_cast<memref::CopyOp>(user);
      if (!c || c.getTarget() != arg || copy)
        return func.emitError("run output argument ")
               << arg.getArgNumber() - 1
               << " is not written by exactly one memref.copy";
      copy = c;
    }
    if (!copy)
      return func.emitError("run output argument ")
             << arg.getArgNumber() - 1 << " is never written";
    OpBuilder b(copy);
    Location loc = copy.getLoc();
    Value source = copy.getSource();
    SmallVector<OpFoldResult> sizes;
    for (auto [axis, d] : llvm::enumerate(abi)) {
      if (!type.isDynamicDim(axis)) {
        sizes.push_back(b.getIndexAttr(type.getDimSize(axis)));
        continue;
      }
      Value size = memref::DimOp::create(b, loc, source, axis);
      sizes.push_back(size);
      if (d < 0) {
        Value slot = arith::ConstantIndexOp::create(b, loc, -d - 1);
        Value v = arith::IndexCastOp::create(b, loc, b.getI64Type(), size);
        memref::StoreOp::create(b, loc, v, symArg, ValueRange{slot});
      }
    }
    SmallVector<OpFoldResult> strides = rowMajorStrides(b, loc, sizes);
    arg.setType(MemRefType::get({1}, type.getElementType(), nullptr,
                                type.getMemorySpace()));
    Value view = memref::ReinterpretCastOp::create(
        b, loc, type, arg, b.getIndexAttr(0), sizes, strides);
    copy.getTargetMutable().assign(view);
    func.setArgAttr(arg.getArgNumber(), "kiln.run_output",
                    UnitAttr::get(func.getContext()));
    return success();
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

    // Run symbols: kiln.symbols entries [name, min, max, 1].
    auto isRunSymbol = [&](int64_t id) {
      auto entry = dyn_cast<ArrayAttr>(symbols[id]);
      auto flag = entry && entry.size() > 3 ? dyn_cast<IntegerAttr>(entry[3])
                                            : IntegerAttr();
      return flag && flag.getInt() == 1;
    };
    size_t numInputs = inputDims.size();
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
      for (int64_t d : abi.asArrayRef())
        if (d < 0 && static_cast<size_t>(-d - 1) >= symbols.size())
          return func.emitError("entry argument ")
                 << i << " names symbol " << -d - 1 << " of "
                 << symbols.size();
      if (llvm::any_of(abi.asArrayRef(),
                       [&](int64_t d) { return d < 0 && isRunSymbol(-d - 1); })) {
        if (i < numInputs)
          return func.emitError("entry argument ")
                 << i << " is an input with a run symbol's dim";
        if (failed(bindRunOutput(func, arg, type, abi.asArrayRef(), symArg)))
          return failure();
        continue;
      }
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

namespace {

/// kiln-allocate-run-outputs (see Passes.td and the file comment).
struct AllocateRunOutputsPass
    : kiln::impl::KilnAllocateRunOutputsPassBase<AllocateRunOutputsPass> {
  void runOnOperation() override {
    for (auto func : getOperation().getOps<func::FuncOp>())
      if (!func.isExternal() && failed(allocate(func)))
        return signalPassFailure();
  }

  LogicalResult allocate(func::FuncOp func) {
    MLIRContext *ctx = func.getContext();
    Block &entry = func.getBody().front();
    bool changed = false;
    for (BlockArgument arg : entry.getArguments()) {
      if (!func.getArgAttr(arg.getArgNumber(), "kiln.run_output"))
        continue;
      func.removeArgAttr(arg.getArgNumber(), "kiln.run_output");
      memref::ReinterpretCastOp view;
      for (Operation *user : arg.getUsers()) {
        auto cast = dyn_cast<memref::ReinterpretCastOp>(user);
        if (!cast || view)
          return func.emitError("run output argument ")
                 << arg.getArgNumber()
                 << " is not used by exactly one memref.reinterpret_cast";
        view = cast;
      }
      if (!view || !view.getType().getLayout().isIdentity())
        return func.emitError("run output argument ")
               << arg.getArgNumber() << " has no identity-layout view";
      OpBuilder b(view);
      Location loc = view.getLoc();
      // No alignment: malloc's own pointer, which free() takes.
      Value buffer =
          memref::AllocOp::create(b, loc, view.getType(), view.getSizes());
      Value address =
          memref::ExtractAlignedPointerAsIndexOp::create(b, loc, buffer);
      Value word = arith::IndexCastOp::create(b, loc, b.getI64Type(), address);
      arg.setType(MemRefType::get({1}, b.getI64Type()));
      Value zero = arith::ConstantIndexOp::create(b, loc, 0);
      memref::StoreOp::create(b, loc, word, arg, ValueRange{zero});
      view.getResult().replaceAllUsesWith(buffer);
      view.erase();
      changed = true;
    }
    if (changed)
      func.setFunctionType(FunctionType::get(ctx, entry.getArgumentTypes(),
                                             func.getResultTypes()));
    return success();
  }
};

} // namespace
