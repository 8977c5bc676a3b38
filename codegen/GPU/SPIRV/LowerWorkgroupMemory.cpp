//===- LowerWorkgroupMemory.cpp - attributions as Workgroup allocs --------===//
//
// The shared kernels (kiln-gpu-lower-configured-ops) declare workgroup
// memory as gpu.func workgroup attributions, which convert-gpu-to-nvvm
// lowers but convert-gpu-to-spirv does not; it lowers a static memref.alloc
// in the Workgroup storage class to a module-scope variable instead.
//
//===----------------------------------------------------------------------===//

#include "codegen/GPU/Passes.h"

#include "mlir/Dialect/SPIRV/IR/SPIRVAttributes.h"

namespace kiln {
#define GEN_PASS_DEF_KILNSPIRVLOWERWORKGROUPMEMORYPASS
#include "codegen/GPU/Passes.h.inc"
} // namespace kiln

using namespace mlir;

namespace {

struct LowerWorkgroupMemoryPass
    : kiln::impl::KilnSPIRVLowerWorkgroupMemoryPassBase<
          LowerWorkgroupMemoryPass> {
  void runOnOperation() override {
    auto space = spirv::StorageClassAttr::get(&getContext(),
                                              spirv::StorageClass::Workgroup);
    for (auto func : getOperation().getOps<gpu::GPUFuncOp>()) {
      unsigned count = func.getNumWorkgroupAttributions();
      if (!count)
        continue;
      if (func.getNumPrivateAttributions()) {
        func.emitError("private memory attributions are not supported");
        return signalPassFailure();
      }
      Block &entry = func.getBody().front();
      OpBuilder b = OpBuilder::atBlockBegin(&entry);
      for (BlockArgument arg : func.getWorkgroupAttributions()) {
        auto type = cast<MemRefType>(arg.getType());
        for (Operation *user : arg.getUsers())
          if (!isa<memref::LoadOp, memref::StoreOp>(user)) {
            user->emitError("workgroup memory used other than by loads and "
                            "stores");
            return signalPassFailure();
          }
        auto alloc = memref::AllocOp::create(
            b, arg.getLoc(),
            MemRefType::get(type.getShape(), type.getElementType(),
                            type.getLayout(), space));
        arg.replaceAllUsesWith(alloc.getResult());
      }
      unsigned first = func.getFirstWorkgroupAttributionIndex();
      entry.eraseArguments(first, count);
      func->setAttr(gpu::GPUFuncOp::getNumWorkgroupAttributionsAttrName(),
                    b.getI64IntegerAttr(0));
    }
  }
};

} // namespace
