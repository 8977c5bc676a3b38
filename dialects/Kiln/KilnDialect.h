//===- KilnDialect.h - kiln's helper dialect --------------------*- C++ -*-===//
#ifndef KILN_DIALECTS_KILN_KILNDIALECT_H
#define KILN_DIALECTS_KILN_KILNDIALECT_H

#include "mlir/Bytecode/BytecodeOpInterface.h"
#include "mlir/IR/Attributes.h"
#include "mlir/IR/BuiltinTypes.h"
#include "mlir/IR/Dialect.h"
#include "mlir/IR/OpDefinition.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"

#include "dialects/Kiln/KilnDialect.h.inc"

#define GET_ATTRDEF_CLASSES
#include "dialects/Kiln/KilnAttrs.h.inc"

#define GET_OP_CLASSES
#include "dialects/Kiln/KilnOps.h.inc"

#endif // KILN_DIALECTS_KILN_KILNDIALECT_H
