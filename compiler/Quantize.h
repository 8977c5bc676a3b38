//===- Quantize.h - `kiln compile --quantize int8` ---------------*- C++ -*-===//
//
// Post-training static quantization of an f32 ONNX model, the way
// onnxruntime.quantization.quantize_static writes it (QDQ format), so that
// kiln's integer kernels (kiln-fold-qdq, docs/pipeline.md "Quantized models")
// run it: calibrate activation ranges by running the f32 model compiled by
// kiln on the calibration inputs, then rewrite the graph with
// QuantizeLinear/DequantizeLinear pairs. docs/precision.md.
//
//===----------------------------------------------------------------------===//
#ifndef KILN_COMPILER_QUANTIZE_H
#define KILN_COMPILER_QUANTIZE_H

#include "compiler/Options.h"

#include "mlir/IR/MLIRContext.h"
#include "mlir/Support/LLVM.h"

#include <functional>
#include <string>
#include <vector>

namespace kiln {

struct QuantizeOptions {
  /// Calibration inputs: one sub-folder per input set holding INPUT.npy for
  /// every model input, or (a model with one input) one .npy per set.
  std::string calibrationDir;
  /// Instead of a folder: this many seeded random input sets (kiln-run's
  /// standard normal floats), a smoke run; 0 = use calibrationDir.
  unsigned randomSets = 0;
  /// Node names kept in float besides the default ones (an op whose output
  /// is a model output: the last classifier).
  std::vector<std::string> keepFloat;
  /// kiln-run, which runs the calibration model.
  std::string runner;
  /// Told what was quantized and what stayed float (one line each); may be
  /// null.
  std::function<void(llvm::StringRef)> note;
};

/// Calibrates and quantizes the f32 model `options.modelPath`: Conv (one
/// group), MatMul and Gemm with constant f32 weights get s8 weights per output
/// channel (symmetric), an int32 bias, and u8 per-tensor activations (min-max
/// ranges over the calibration runs) on their input and output (after a Relu
/// that follows). Writes the QDQ model into `workDir` and returns its path.
/// The calibration model (the f32 model with every calibrated tensor as an
/// output) is compiled for the host with `options` (shapes, limits) and run by
/// `quantize.runner`. Errors are emitted on `context` (naming the file, input,
/// node or tensor at fault).
mlir::FailureOr<std::string> quantizeModel(mlir::MLIRContext &context,
                                           const CompileOptions &options,
                                           const QuantizeOptions &quantize,
                                           llvm::StringRef workDir);

} // namespace kiln

#endif // KILN_COMPILER_QUANTIZE_H
