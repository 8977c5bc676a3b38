//===- ONNXOps.cpp - Generated onnx op definitions ------------------------===//
//
// Compiled only through its shards ONNXOps.<N>.cpp (add_sharded_ops), each
// defining GET_OP_DEFS_<N> first: keep hand-written code out of this file, it
// would be compiled once per shard. Verifiers and folders live in Verifiers.cpp
// and Folders.cpp.
//
//===----------------------------------------------------------------------===//

#include "dialects/ONNX/ONNXOps.h"

#include "mlir/IR/Builders.h"
#include "mlir/IR/OpImplementation.h"

#include "dialects/ONNX/ONNXOps.cpp.inc"
