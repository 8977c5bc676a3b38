//===- KilnDialect.cpp - kiln's helper dialect ----------------------------===//
#include "dialects/Kiln/KilnDialect.h"

#include "mlir/IR/Builders.h"
#include "mlir/IR/OpImplementation.h"

using namespace mlir;

#include "dialects/Kiln/KilnDialect.cpp.inc"

void kiln::KilnDialect::initialize() {
  addOperations<
#define GET_OP_LIST
#include "dialects/Kiln/KilnOps.cpp.inc"
      >();
}

#define GET_OP_CLASSES
#include "dialects/Kiln/KilnOps.cpp.inc"
