//===- DeviceProgram.h - what a GPU target hands to packaging ---*- C++ -*-===//
//
// A GPU target compiles the whole graph into device modules and a static host
// plan: the dispatches in order, the buffers each binds, the weights to
// upload once and the transient arena's size. compiler/DevicePackaging.cpp
// turns it into the descriptor's executables, dispatch table and memory needs
// (runtime/include/kiln/model_abi.h). Plain data, no MLIR.
//
//===----------------------------------------------------------------------===//
#ifndef KILN_CODEGEN_DEVICEPROGRAM_H
#define KILN_CODEGEN_DEVICEPROGRAM_H

#include "runtime/include/kiln/model_abi.h"

#include <cstdint>
#include <string>
#include <vector>

namespace kiln {

/// Where a dispatch's buffer comes from.
enum class DeviceBufferKind : uint32_t {
  /// Argument `index` of the entry: graph inputs first, then graph outputs
  /// (packaging maps it to an INPUT or OUTPUT binding).
  Argument,
  /// The weights (DEVICE_CONSTANT memory, uploaded once).
  Constants,
  /// The transient arena (DEVICE_LOCAL memory, one per run).
  Transient,
  /// The run-time check status (a DEVICE_LOCAL need flagged
  /// KILN_MEMORY_RUN_STATUS): a kernel stores a failed check's number.
  RunStatus,
};

struct DeviceBinding {
  DeviceBufferKind kind = DeviceBufferKind::Argument;
  uint32_t index = 0;
  /// Bytes from the buffer's start (a multiple of DeviceProgram::alignment).
  uint64_t offset = 0;
  /// Bytes bound; 0 = to the buffer's end.
  uint64_t size = 0;
};

struct DeviceDispatch {
  uint32_t executable = 0;
  uint32_t kernel = 0;
  uint32_t workgroupCount[3] = {1, 1, 1};
  uint32_t workgroupSize[3] = {1, 1, 1};
  std::vector<DeviceBinding> bindings;
  /// Push-constant words.
  std::vector<uint32_t> constants;
  /// The ONNX node(s) the kernel computes, for messages ("" when unknown).
  std::string node;
};

struct DeviceExecutable {
  /// The kernel module's name (the file kept by --keep-intermediates:
  /// `<name>.spv`, `<name>.ptx`, `<name>.cubin`).
  std::string name;
  /// The environment it was built for ("vulkan1.1", "sm_80").
  std::string target;
  /// model_abi.h's kiln_executable_format.
  uint32_t format = KILN_EXECUTABLE_SPIRV;
  /// model_abi.h's executable flags (KILN_EXECUTABLE_ALTERNATIVE: another
  /// build of the executable before it, e.g. a cubin of the PTX).
  uint32_t flags = 0;
  /// SPIR-V: the module's words, little-endian.
  std::vector<uint32_t> words;
  /// Other formats: the module's bytes (PTX text without a terminating NUL,
  /// which packaging adds; a cubin ELF).
  std::vector<char> bytes;
  std::vector<std::string> kernelNames;
};

struct DeviceProgram {
  /// The device's name ("vulkan") and the file extension of its modules.
  std::string device;
  std::string moduleExtension;
  std::vector<DeviceExecutable> executables;
  std::vector<DeviceDispatch> dispatches;
  /// The weights blob (DEVICE_CONSTANT's initial data).
  std::vector<char> constants;
  /// Bytes of the transient arena.
  uint64_t transientSize = 0;
  /// Alignment of every binding offset and of both memories.
  uint64_t alignment = 256;
};

} // namespace kiln

#endif // KILN_CODEGEN_DEVICEPROGRAM_H
