//===- OpBuilding.cpp - Create an onnx op, infer its types, fold ----------===//

#include "dialects/ONNX/OpBuilding.h"

#include "dialects/ONNX/ONNXDialect.h"
#include "dialects/ONNX/OpSchemas.h"

#include "mlir/IR/BuiltinTypes.h"
#include "mlir/IR/Verifier.h"
#include "llvm/ADT/STLExtras.h"

using namespace mlir;

namespace kiln::onnx {

FailureOr<SmallVector<Value>>
buildONNXOp(OpBuilder &builder, OperationState &state,
            function_ref<InFlightDiagnostic(Operation *)> emitError,
            function_ref<bool(unsigned)> isUsed,
            function_ref<LogicalResult(Operation *)> checkInferred) {
  SmallVector<NamedAttribute> attrs(state.attributes.begin(), state.attributes.end());
  Operation *op = builder.create(state);
  return completeONNXOp(builder, op, attrs, emitError, isUsed, checkInferred);
}

FailureOr<SmallVector<Value>>
completeONNXOp(OpBuilder &builder, Operation *op, ArrayRef<NamedAttribute> attrs,
               function_ref<InFlightDiagnostic(Operation *)> emitError,
               function_ref<bool(unsigned)> isUsed,
               function_ref<LogicalResult(Operation *)> checkInferred) {
  StringRef opType = op->getName().stripDialect();
  auto fail = [&]() {
    op->erase();
    return failure();
  };

  // Every attribute must have landed as one of the op's inherent attributes with the type
  // the dialect expects (a mistyped one would silently be dropped from the properties).
  std::optional<RegisteredOperationName> info = op->getRegisteredInfo();
  if (!info) {
    emitError(op) << "operator '" << opType << "' is not registered in the onnx dialect";
    return fail();
  }
  for (const NamedAttribute &attr : attrs) {
    std::optional<Attribute> stored = op->getInherentAttr(attr.getName());
    if (!llvm::is_contained(info->getAttributeNames(), attr.getName()) || !stored) {
      InFlightDiagnostic diag = emitError(op);
      diag << "attribute '" << attr.getName().getValue() << "' is not an attribute of "
           << opType;
      if (const OpSchemaInfo *schema = lookupOpSchema(opType))
        diag << " (opset " << schema->newestVersion() << ")";
      return fail();
    }
    if (*stored != attr.getValue()) {
      emitError(op) << "attribute '" << attr.getName().getValue()
                    << "' has the wrong type (" << attr.getValue() << ")";
      return fail();
    }
  }

  // A required attribute that is absent would be dereferenced by the op's
  // accessors (shape inference runs before the verifier could say so).
  if (const OpSchemaInfo *schema = lookupOpSchema(opType)) {
    for (StringRef name : schema->requiredAttributes) {
      std::optional<Attribute> stored = op->getInherentAttr(name);
      if (!stored || !*stored) {
        emitError(op) << "required attribute '" << name << "' is missing";
        return fail();
      }
    }
  }

  auto shapeInference = dyn_cast<ShapeInferenceOpInterface>(op);
  if (!shapeInference) {
    emitError(op) << "operator '" << opType
                  << "' is not supported by kiln yet (no shape inference)";
    return fail();
  }
  if (failed(shapeInference.inferShapes()))
    return fail();
  if (checkInferred && failed(checkInferred(op)))
    return fail();
  // An absent optional output has `none` type (docs/architecture.md), whatever shape
  // inference made of it.
  for (unsigned i = 0, e = op->getNumResults(); i < e; ++i)
    if (!isUsed(i))
      op->getResult(i).setType(builder.getNoneType());
  if (failed(mlir::verify(op)))
    return fail();

  // Fold as it is built: constant inputs (Shape -> Gather -> Concat -> Reshape chains)
  // become constants right away.
  SmallVector<Value> results(op->getResults());
  SmallVector<Value> folded;
  if (succeeded(builder.tryFold(op, folded)) && !folded.empty()) {
    bool typesKept = folded.size() == results.size();
    for (auto [a, b] : llvm::zip(folded, results))
      typesKept &= a.getType() == b.getType();
    if (typesKept) {
      results.assign(folded.begin(), folded.end());
      op->erase();
    }
  }
  return results;
}

} // namespace kiln::onnx
