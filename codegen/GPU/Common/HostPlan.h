//===- HostPlan.h - the host plan of a GPU target ---------------*- C++ -*-===//
//
// kiln-gpu-plan-dispatches checks the entry after kernel outlining and
// records where each kernel argument's buffer starts (attributes read and
// written only through these helpers); buildDeviceProgram reads the checked
// module into codegen/DeviceProgram.h's plain plan: dispatches in order and
// the weights blob. The device modules themselves are the target's.
//
//===----------------------------------------------------------------------===//
#ifndef KILN_CODEGEN_GPU_COMMON_HOSTPLAN_H
#define KILN_CODEGEN_GPU_COMMON_HOSTPLAN_H

#include "codegen/DeviceProgram.h"

#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/IR/BuiltinOps.h"

#include <optional>

namespace kiln {

/// Alignment of every device buffer a binding starts at (Vulkan's largest
/// minStorageBufferOffsetAlignment).
constexpr int64_t kDeviceAlignment = 256;

inline int64_t alignDeviceOffset(int64_t bytes) {
  return (bytes + kDeviceAlignment - 1) / kDeviceAlignment * kDeviceAlignment;
}

/// Bytes of a buffer of `type` on the device (an i1 takes a byte).
int64_t getDeviceBufferBytes(mlir::MemRefType type);

/// Where a kernel argument's buffer starts.
struct DeviceBufferRef {
  DeviceBufferKind kind;
  uint32_t index;
  int64_t offset;
};

mlir::Attribute getBindingAttr(mlir::MLIRContext *context,
                               const DeviceBufferRef &ref);
void setLaunchBindings(mlir::gpu::LaunchFuncOp launch,
                       llvm::ArrayRef<mlir::Attribute> bindings);
/// The bindings kiln-gpu-plan-dispatches recorded, or nullopt.
std::optional<llvm::SmallVector<DeviceBufferRef>>
getLaunchBindings(mlir::gpu::LaunchFuncOp launch);

/// The entry argument attribute marking the run-time check status (bound to
/// the runtime's run-status memory need).
llvm::StringRef getRunStatusAttrName();

/// The offset of a weight in the weights blob.
std::optional<int64_t> getDeviceOffset(mlir::memref::GlobalOp global);
void setDeviceOffset(mlir::memref::GlobalOp global, int64_t offset);

std::optional<int64_t> getDeviceConstantsSize(mlir::ModuleOp module);
void setDeviceConstantsSize(mlir::ModuleOp module, int64_t bytes);

/// Fills `program`'s dispatches (executable i = the i-th gpu.module of
/// `module` in order, kernel = the kernel's ordinal in it), weights blob and
/// arena size from a module kiln-gpu-plan-dispatches checked. Executables
/// get their names and kernel names; their code is the target's.
mlir::LogicalResult buildDeviceProgram(mlir::ModuleOp module,
                                       DeviceProgram &program);

} // namespace kiln

#endif // KILN_CODEGEN_GPU_COMMON_HOSTPLAN_H
