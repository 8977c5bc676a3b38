//===- KilnDialect.cpp - kiln's helper dialect ----------------------------===//
#include "dialects/Kiln/KilnDialect.h"

#include "mlir/IR/Builders.h"
#include "mlir/IR/DialectImplementation.h"
#include "mlir/IR/OpImplementation.h"

#include "llvm/ADT/TypeSwitch.h"

using namespace mlir;

#include "dialects/Kiln/KilnDialect.cpp.inc"

#define GET_ATTRDEF_CLASSES
#include "dialects/Kiln/KilnAttrs.cpp.inc"

void kiln::KilnDialect::initialize() {
  addOperations<
#define GET_OP_LIST
#include "dialects/Kiln/KilnOps.cpp.inc"
      >();
  addAttributes<
#define GET_ATTRDEF_LIST
#include "dialects/Kiln/KilnAttrs.cpp.inc"
      >();
}

//===----------------------------------------------------------------------===//
// KernelStrategyAttr
//===----------------------------------------------------------------------===//

LogicalResult kiln::KernelStrategyAttr::verify(
    function_ref<InFlightDiagnostic()> emitError, int64_t vectorWidth,
    int64_t registers, int64_t rows, int64_t vectors, int64_t reductionBlock,
    bool winograd) {
  if (vectorWidth < 1 || !llvm::isPowerOf2_64(vectorWidth))
    return emitError() << "vector_width must be a power of two, got "
                       << vectorWidth;
  if (rows < 1 || vectors < 1 || reductionBlock < 1)
    return emitError() << "rows, vectors and reduction_block must be "
                          "positive, got "
                       << rows << ", " << vectors << ", " << reductionBlock;
  // The accumulators, the B vectors and one broadcast live in registers: a
  // block that does not fit spills in its innermost loop.
  if (rows * vectors + vectors + 1 > registers)
    return emitError() << "a " << rows << "x" << vectors
                       << " register block needs " << rows * vectors + vectors + 1
                       << " vector registers, the target has " << registers;
  return success();
}

#define GET_OP_CLASSES
#include "dialects/Kiln/KilnOps.cpp.inc"
