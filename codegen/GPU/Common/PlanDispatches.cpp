//===- PlanDispatches.cpp - the host plan of a GPU target, checked --------===//
//
// After kernel outlining the entry must be a static plan: launches of kernels
// on buffers that the runtime provides (graph inputs and outputs, the weights
// uploaded once, the transient arena). This pass checks that and records,
// per launch, where each kernel argument's buffer starts: the kernel's memref
// type (its static offset and strides) addresses elements from there. What
// else is left on the host is an error naming the ONNX node: never a silent
// host fallback.
//
//===----------------------------------------------------------------------===//

#include "codegen/GPU/Common/HostPlan.h"
#include "codegen/GPU/Passes.h"
#include "dialects/Kiln/ABIAttributes.h"
#include "dialects/ONNX/Diagnostics.h"

#include "mlir/Interfaces/SideEffectInterfaces.h"
#include "mlir/Interfaces/ViewLikeInterface.h"

namespace kiln {
#define GEN_PASS_DEF_KILNGPUPLANDISPATCHESPASS
#include "codegen/GPU/Passes.h.inc"
} // namespace kiln

using namespace mlir;

namespace {

struct PlanDispatchesPass
    : kiln::impl::KilnGPUPlanDispatchesPassBase<PlanDispatchesPass> {
  void runOnOperation() override {
    ModuleOp module = getOperation();
    SymbolTable symbols(module);
    int64_t constantsSize = 0;
    bool failed = false;
    for (auto func : module.getOps<func::FuncOp>()) {
      if (func.isExternal() || !func.isPublic())
        continue;
      for (Operation &op : func.getBody().front()) {
        if (auto launch = dyn_cast<gpu::LaunchFuncOp>(op)) {
          failed |=
              mlir::failed(planLaunch(func, launch, symbols, constantsSize));
          continue;
        }
        if (isa<ViewLikeOpInterface, memref::GetGlobalOp, func::ReturnOp>(op) ||
            isMemoryEffectFree(&op))
          continue;
        kiln::onnx::emitNodeError(&op)
            << "'" << op.getName()
            << "' would run on the host: the GPU target runs every op as a "
               "kernel and cannot compile this one";
        failed = true;
      }
    }
    // A buffer allocated inside a kernel (a value a Loop or Scan body carries
    // or makes, which the memory plan leaves to its own allocation) has no
    // storage the kernel could use: an error naming the node, not a failure
    // to legalize later.
    module.walk([&](gpu::GPUFuncOp kernel) {
      kernel.walk([&](Operation *op) {
        if (!isa<memref::AllocOp, memref::AllocaOp>(op))
          return;
        kiln::onnx::emitNodeError(op)
            << "needs a buffer of its own inside a GPU kernel (a value a Loop "
               "or Scan body carries or makes): not supported on the GPU yet";
        failed = true;
      });
    });
    if (failed)
      return signalPassFailure();
    kiln::setDeviceConstantsSize(module, constantsSize);
  }

  LogicalResult planLaunch(func::FuncOp func, gpu::LaunchFuncOp launch,
                           SymbolTable &symbols, int64_t &constantsSize) {
    for (Value size : {launch.getGridSizeX(), launch.getGridSizeY(),
                       launch.getGridSizeZ(), launch.getBlockSizeX(),
                       launch.getBlockSizeY(), launch.getBlockSizeZ()})
      if (!getConstantIntValue(size))
        return kiln::onnx::emitNodeError(launch)
               << "a kernel launch without static workgroup counts";
    if (launch.getDynamicSharedMemorySize() || launch.getAsyncToken() ||
        !launch.getAsyncDependencies().empty())
      return kiln::onnx::emitNodeError(launch)
             << "an asynchronous launch or one with dynamic shared memory";
    SmallVector<Attribute> bindings;
    for (Value operand : launch.getKernelOperands()) {
      auto type = dyn_cast<MemRefType>(operand.getType());
      if (!type)
        return kiln::onnx::emitNodeError(launch)
               << "a value computed on the host (" << operand.getType()
               << ") is passed to the kernel";
      int64_t offset;
      SmallVector<int64_t> strides;
      if (failed(type.getStridesAndOffset(strides, offset)) ||
          ShapedType::isDynamic(offset) ||
          llvm::any_of(strides, ShapedType::isDynamic) ||
          !type.hasStaticShape())
        return kiln::onnx::emitNodeError(launch)
               << "a kernel buffer without a static layout: " << type;
      FailureOr<kiln::DeviceBufferRef> ref =
          traceBuffer(func, operand, symbols, constantsSize);
      if (failed(ref))
        return kiln::onnx::emitNodeError(launch)
               << "a kernel buffer that is not a view of a graph input or "
                  "output, a weight or the transient arena";
      bindings.push_back(kiln::getBindingAttr(&getContext(), *ref));
    }
    kiln::setLaunchBindings(launch, bindings);
    nameKernel(launch, symbols);
    return success();
  }

  /// Names the kernel after its ONNX node (letters, digits and '_'), which
  /// `kiln inspect` and the runtime's messages show; each outlined kernel
  /// has one launch.
  void nameKernel(gpu::LaunchFuncOp launch, SymbolTable &symbols) {
    std::optional<std::string> node = kiln::onnx::getNodeName(launch);
    auto gpuModule =
        symbols.lookup<gpu::GPUModuleOp>(launch.getKernelModuleName());
    if (!node || node->empty() || !gpuModule)
      return;
    auto kernel =
        gpuModule.lookupSymbol<gpu::GPUFuncOp>(launch.getKernelName());
    if (!kernel)
      return;
    std::string name;
    for (char c : *node)
      name += llvm::isAlnum(c) ? c : '_';
    if (llvm::isDigit(name[0]))
      name = "_" + name;
    SymbolTable::setSymbolName(kernel, name);
    launch.setKernelAttr(SymbolRefAttr::get(
        gpuModule.getNameAttr(),
        {FlatSymbolRefAttr::get(launch.getContext(), name)}));
  }

  FailureOr<kiln::DeviceBufferRef> traceBuffer(func::FuncOp func, Value value,
                                               SymbolTable &symbols,
                                               int64_t &constantsSize) {
    int64_t shift = 0;
    while (true) {
      if (auto arg = dyn_cast<BlockArgument>(value)) {
        if (arg.getOwner()->getParentOp() != func)
          return failure();
        if (kiln::isScratchArgument(func, arg.getArgNumber())) {
          // kiln-plan-memory aligned every buffer for the GPU target.
          if (shift % kiln::kDeviceAlignment)
            return failure();
          return kiln::DeviceBufferRef{kiln::DeviceBufferKind::Transient, 0,
                                       shift};
        }
        if (shift)
          return failure();
        if (func.getArgAttr(arg.getArgNumber(), kiln::getRunStatusAttrName()))
          return kiln::DeviceBufferRef{kiln::DeviceBufferKind::RunStatus, 0, 0};
        return kiln::DeviceBufferRef{kiln::DeviceBufferKind::Argument,
                                     arg.getArgNumber(), 0};
      }
      Operation *def = value.getDefiningOp();
      if (auto view = dyn_cast<memref::ViewOp>(def)) {
        std::optional<int64_t> bytes = getConstantIntValue(view.getByteShift());
        if (!bytes || !view.getSizes().empty())
          return failure();
        shift += *bytes;
        value = view.getSource();
        continue;
      }
      if (isa<memref::SubViewOp, memref::ExpandShapeOp, memref::CollapseShapeOp,
              memref::CastOp, memref::ReinterpretCastOp>(def)) {
        // These keep the base the type's offset counts from.
        value = def->getOperand(0);
        continue;
      }
      if (auto get = dyn_cast<memref::GetGlobalOp>(def)) {
        auto global = symbols.lookup<memref::GlobalOp>(get.getName());
        if (!global || !global.getConstant() || !global.getInitialValue() ||
            !global.getType().hasStaticShape() || shift)
          return failure();
        std::optional<int64_t> offset = kiln::getDeviceOffset(global);
        if (!offset) {
          offset = constantsSize;
          kiln::setDeviceOffset(global, *offset);
          constantsSize = kiln::alignDeviceOffset(
              constantsSize + kiln::getDeviceBufferBytes(global.getType()));
        }
        return kiln::DeviceBufferRef{kiln::DeviceBufferKind::Constants, 0,
                                     *offset};
      }
      return failure();
    }
  }
};

} // namespace
