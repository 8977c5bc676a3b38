//===- DeviceTargetBackend.cpp - what every GPU target shares -------------===//

#include "codegen/GPU/Common/DeviceTargetBackend.h"

#include "codegen/CPU/CPUTargetBackend.h"
#include "codegen/GPU/Common/HostPlan.h"
#include "dialects/Kiln/ABIAttributes.h"
#include "dialects/ONNX/DataTypes.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"

using namespace mlir;

namespace kiln {

namespace {

constexpr llvm::StringLiteral kLoweredDialects[] = {
    "builtin",       "func",   "arith",  "math", "linalg", "tensor",
    "bufferization", "affine", "memref", "scf",  "kiln"};

/// bf16 and the float8 types are stored as i16 / i8 and bf16 is computed in
/// f32 (kiln-gpu-emulate-narrow-floats).
bool isSupportedElementType(Type type) {
  if (auto integer = dyn_cast<IntegerType>(type))
    return integer.getWidth() <= 64;
  return type.isIndex() || type.isF16() || type.isF32() || type.isF64() ||
         type.isBF16() || onnx::isFloat8Type(type);
}

} // namespace

bool DeviceTargetBackend::isSupported(Operation *op,
                                      std::string &reason) const {
  if (!llvm::is_contained(kLoweredDialects,
                          op->getName().getDialectNamespace())) {
    reason = "operation '" + op->getName().getStringRef().str() + "'";
    return false;
  }
  // The graph's signature: the ops using its values name their nodes.
  if (isa<func::FuncOp>(op))
    return true;
  // int4 & co. (kiln.storage_only) are i8 by now: their conversions and the
  // packing at the graph's boundary are i8/i32 bit operations every GPU
  // target runs.
  if (computesOnFloat8(op)) {
    reason = "arithmetic on 8-bit floats ('" +
             op->getName().getStringRef().str() + "'): cast them to float first";
    return false;
  }
  return hasSupportedElementTypes(op, isSupportedElementType,
                                  /*checkOperands=*/true, reason);
}

LogicalResult DeviceTargetBackend::serializeExecutable(
    ModuleOp module, const SerializeOptions &options, StringRef path,
    std::string &error) const {
  OwningOpRef<ModuleOp> empty = ModuleOp::create(module.getLoc());
  return emitObjectFile(*empty, host, options.entrySymbol, path, error,
                        options.linkBitcode);
}

GPUPipelineOptions DeviceTargetBackend::getPipelineOptions() const {
  GPUPipelineOptions options;
  options.precision = precision;
  options.target = this;
  return options;
}

std::shared_ptr<DeviceProgram>
DeviceTargetBackend::beginExecutableInfo(ModuleOp module, StringRef device,
                                         StringRef extension,
                                         ExecutableInfo &info) const {
  info.format = ExecutableFormat::DeviceProgram;
  info.triple = host.triple;
  info.cpu = host.cpu;
  for (std::string &message : getCheckMessages(module))
    info.checkMessages.push_back(std::move(message));
  auto program = std::make_shared<DeviceProgram>();
  program->device = device.str();
  program->moduleExtension = extension.str();
  if (failed(buildDeviceProgram(module, *program)))
    return nullptr;
  return program;
}

} // namespace kiln
