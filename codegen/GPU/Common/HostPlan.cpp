//===- HostPlan.cpp - the host plan of a GPU target -----------------------===//

#include "codegen/GPU/Common/HostPlan.h"

#include "dialects/Kiln/ABIAttributes.h"
#include "dialects/ONNX/Diagnostics.h"

#include "mlir/IR/BuiltinAttributes.h"
#include "mlir/IR/DialectResourceBlobManager.h"
#include "llvm/Support/MathExtras.h"

using namespace mlir;

namespace kiln {

namespace {
constexpr llvm::StringLiteral kBindingsAttr = "kiln.bindings";
constexpr llvm::StringLiteral kDeviceOffsetAttr = "kiln.device_offset";
constexpr llvm::StringLiteral kConstantsSizeAttr = "kiln.device_constants_size";

int64_t elementBytes(Type type) {
  return type.isInteger(1) ? 1 : (type.getIntOrFloatBitWidth() + 7) / 8;
}

/// Appends the bytes of `value` (of `type`) to `out`, as the device reads
/// them: little-endian, an i1 as one byte.
LogicalResult appendBytes(Attribute value, MemRefType type,
                          std::vector<char> &out) {
  int64_t bytes = getDeviceBufferBytes(type);
  size_t start = out.size();
  if (auto dense = dyn_cast<DenseElementsAttr>(value)) {
    if (dense.getElementType().isInteger(1)) {
      for (bool bit : dense.getValues<bool>())
        out.push_back(bit ? 1 : 0);
    } else if (dense.isSplat()) {
      ArrayRef<char> raw = dense.getRawData();
      int64_t element = elementBytes(dense.getElementType());
      for (int64_t i = 0; i < type.getNumElements(); ++i)
        out.insert(out.end(), raw.begin(), raw.begin() + element);
    } else {
      ArrayRef<char> raw = dense.getRawData();
      out.insert(out.end(), raw.begin(), raw.end());
    }
  } else if (auto resource = dyn_cast<DenseResourceElementsAttr>(value)) {
    AsmResourceBlob *blob = resource.getRawHandle().getBlob();
    if (!blob || resource.getElementType().isInteger(1))
      return failure();
    ArrayRef<char> raw = blob->getData();
    out.insert(out.end(), raw.begin(), raw.end());
  } else {
    return failure();
  }
  return success(static_cast<int64_t>(out.size() - start) == bytes);
}
} // namespace

StringRef getRunStatusAttrName() { return "kiln.run_status"; }

int64_t getDeviceBufferBytes(MemRefType type) {
  return type.getNumElements() * elementBytes(type.getElementType());
}

Attribute getBindingAttr(MLIRContext *context, const DeviceBufferRef &ref) {
  return DenseI64ArrayAttr::get(
      context, {static_cast<int64_t>(ref.kind), ref.index, ref.offset});
}

void setLaunchBindings(gpu::LaunchFuncOp launch, ArrayRef<Attribute> bindings) {
  launch->setAttr(kBindingsAttr, ArrayAttr::get(launch.getContext(), bindings));
}

std::optional<SmallVector<DeviceBufferRef>>
getLaunchBindings(gpu::LaunchFuncOp launch) {
  auto array = launch->getAttrOfType<ArrayAttr>(kBindingsAttr);
  if (!array)
    return std::nullopt;
  SmallVector<DeviceBufferRef> refs;
  for (Attribute attr : array) {
    auto values = dyn_cast<DenseI64ArrayAttr>(attr);
    if (!values || values.size() != 3 || values[0] < 0 || values[0] > 3)
      return std::nullopt;
    refs.push_back({static_cast<DeviceBufferKind>(values[0]),
                    static_cast<uint32_t>(values[1]), values[2]});
  }
  return refs;
}

std::optional<int64_t> getDeviceOffset(memref::GlobalOp global) {
  if (auto attr = global->getAttrOfType<IntegerAttr>(kDeviceOffsetAttr))
    return attr.getInt();
  return std::nullopt;
}

void setDeviceOffset(memref::GlobalOp global, int64_t offset) {
  global->setAttr(
      kDeviceOffsetAttr,
      IntegerAttr::get(IntegerType::get(global.getContext(), 64), offset));
}

std::optional<int64_t> getDeviceConstantsSize(ModuleOp module) {
  if (auto attr = module->getAttrOfType<IntegerAttr>(kConstantsSizeAttr))
    return attr.getInt();
  return std::nullopt;
}

void setDeviceConstantsSize(ModuleOp module, int64_t bytes) {
  module->setAttr(
      kConstantsSizeAttr,
      IntegerAttr::get(IntegerType::get(module.getContext(), 64), bytes));
}

LogicalResult buildDeviceProgram(ModuleOp module, DeviceProgram &program) {
  program.alignment = kDeviceAlignment;
  program.transientSize =
      static_cast<uint64_t>(getScratchSize(module).value_or(0));
  // Weights, at the offsets kiln-gpu-plan-dispatches gave them.
  program.constants.assign(getDeviceConstantsSize(module).value_or(0), 0);
  for (auto global : module.getOps<memref::GlobalOp>()) {
    std::optional<int64_t> offset = getDeviceOffset(global);
    if (!offset)
      continue;
    std::vector<char> bytes;
    if (failed(appendBytes(global.getInitialValueAttr(), global.getType(),
                           bytes)) ||
        *offset + static_cast<int64_t>(bytes.size()) >
            static_cast<int64_t>(program.constants.size()))
      return global.emitError("cannot read the weight's bytes for the device");
    llvm::copy(bytes, program.constants.begin() + *offset);
  }

  llvm::StringMap<uint32_t> executables;
  for (auto gpuModule : module.getOps<gpu::GPUModuleOp>()) {
    executables[gpuModule.getName()] = program.executables.size();
    DeviceExecutable &executable = program.executables.emplace_back();
    executable.name = gpuModule.getName().str();
    // gpu.func kernels, or the llvm.func a target converted them to.
    for (Operation &op : gpuModule.getBody()->getOperations())
      if (gpu::GPUDialect::isKernel(&op))
        executable.kernelNames.push_back(SymbolTable::getSymbolName(&op).str());
  }
  WalkResult walk = module.walk([&](gpu::LaunchFuncOp launch) {
    std::optional<SmallVector<DeviceBufferRef>> refs =
        getLaunchBindings(launch);
    auto found = executables.find(launch.getKernelModuleName());
    if (!refs || found == executables.end()) {
      launch.emitError("a kernel launch without a planned module or bindings");
      return WalkResult::interrupt();
    }
    DeviceDispatch &dispatch = program.dispatches.emplace_back();
    dispatch.executable = found->second;
    const DeviceExecutable &executable = program.executables[found->second];
    auto kernel = llvm::find(executable.kernelNames,
                             launch.getKernelName().getValue().str());
    dispatch.kernel = kernel - executable.kernelNames.begin();
    gpu::KernelDim3 grid = launch.getGridSizeOperandValues();
    gpu::KernelDim3 block = launch.getBlockSizeOperandValues();
    Value counts[] = {grid.x, grid.y, grid.z};
    Value sizes[] = {block.x, block.y, block.z};
    for (int i = 0; i < 3; ++i) {
      dispatch.workgroupCount[i] = *getConstantIntValue(counts[i]);
      dispatch.workgroupSize[i] = *getConstantIntValue(sizes[i]);
    }
    for (auto [i, ref] : llvm::enumerate(*refs)) {
      // A weight binds its own bytes, not the blob to its end: devices cap a
      // binding's range (lavapipe and many mobile GPUs: 128 MiB), which a
      // large model's blob passes. 8-bit and i1 buffers keep the rest of the
      // blob (SPIR-V may read them as 32-bit words).
      uint64_t size = 0;
      if (ref.kind == DeviceBufferKind::Constants &&
          i < launch.getNumKernelOperands())
        if (auto type = dyn_cast<MemRefType>(
                launch.getKernelOperands()[i].getType()))
          if (type.getLayout().isIdentity() &&
              type.getElementType().isIntOrFloat() &&
              type.getElementType().getIntOrFloatBitWidth() >= 16)
            size = llvm::alignTo(getDeviceBufferBytes(type), 4);
      dispatch.bindings.push_back(
          {ref.kind, ref.index, static_cast<uint64_t>(ref.offset), size});
    }
    if (std::optional<std::string> node = onnx::getNodeName(launch))
      dispatch.node = *node;
    return WalkResult::advance();
  });
  return failure(walk.wasInterrupted());
}

} // namespace kiln
