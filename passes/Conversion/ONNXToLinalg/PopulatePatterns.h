//===- PopulatePatterns.h - onnx -> linalg pattern groups -------*- C++ -*-===//
//
// One file per op family; each adds its conversion patterns here. The pass in
// ONNXToLinalg.cpp collects them all.
//
//===----------------------------------------------------------------------===//
#ifndef KILN_PASSES_CONVERSION_ONNXTOLINALG_POPULATEPATTERNS_H
#define KILN_PASSES_CONVERSION_ONNXTOLINALG_POPULATEPATTERNS_H

#include "mlir/IR/PatternMatch.h"
#include "mlir/Transforms/DialectConversion.h"

namespace kiln::onnx_to_linalg {

using mlir::RewritePatternSet;
using mlir::TypeConverter;

/// Constant, Identity, Dropout (inference), Shape, Cast.
void populateConstantPatterns(TypeConverter &converter,
                              RewritePatternSet &patterns);
/// Unary and broadcasting binary elementwise math, Clip, Where, comparisons.
void populateElementwisePatterns(TypeConverter &converter,
                                 RewritePatternSet &patterns);
/// MatMul, Gemm.
void populateLinearPatterns(TypeConverter &converter,
                            RewritePatternSet &patterns);
/// MatMulInteger, ConvInteger in the form kiln-decompose keeps (8-bit
/// products into i32).
void populateQuantizationPatterns(TypeConverter &converter,
                                  RewritePatternSet &patterns);
/// Conv (through channels-last linalg convolutions).
void populateConvolutionPatterns(TypeConverter &converter,
                                 RewritePatternSet &patterns);
/// MaxPool, AveragePool, GlobalAveragePool, GlobalMaxPool.
void populatePoolingPatterns(TypeConverter &converter,
                             RewritePatternSet &patterns);
/// Conv and pooling over a symbolic batch: one image at
/// a time (SymbolicBatch.cpp).
void populateSymbolicBatchPatterns(TypeConverter &converter,
                                   RewritePatternSet &patterns);
/// BatchNormalization, LayerNormalization, Softmax.
void populateNormalizationPatterns(TypeConverter &converter,
                                   RewritePatternSet &patterns);
/// Reduce* ops.
void populateReductionPatterns(TypeConverter &converter,
                               RewritePatternSet &patterns);
/// Reshape, Flatten, Squeeze, Unsqueeze, Transpose, Concat, Split, Slice,
/// Gather, Expand.
void populateDataMovementPatterns(TypeConverter &converter,
                                  RewritePatternSet &patterns);
/// Ops whose output sizes the run's values decide (RunDims.cpp): Reshape
/// with a shape read at run time.
void populateRunDimsPatterns(TypeConverter &converter,
                             RewritePatternSet &patterns);
/// CumSum, CumProd, Trilu, Range.
void populateScanPatterns(TypeConverter &converter,
                          RewritePatternSet &patterns);
/// If, Loop, Scan (scf.if, scf.for, scf.while).
void populateControlFlowPatterns(TypeConverter &converter,
                                 RewritePatternSet &patterns);
/// GridSample (nearest, linear, cubic; zeros, border, reflection padding).
void populateGridSamplePatterns(TypeConverter &converter,
                                RewritePatternSet &patterns);
/// ScatterElements, ScatterND.
void populateScatterPatterns(TypeConverter &converter,
                             RewritePatternSet &patterns);
/// Resize (nearest, linear, cubic; every coordinate transformation mode).
void populateResizePatterns(TypeConverter &converter,
                            RewritePatternSet &patterns);
/// Einsum (the equations kiln-decompose leaves: one linalg.generic).
void populateEinsumPatterns(TypeConverter &converter,
                            RewritePatternSet &patterns);
/// TopK (static shapes, K a constant).
void populateTopKPatterns(TypeConverter &converter, RewritePatternSet &patterns);
/// NonMaxSuppression (static boxes and scores; the selected rows a run dim).
void populateNonMaxSuppressionPatterns(TypeConverter &converter,
                                       RewritePatternSet &patterns);
/// Compress (static input; the selected count a run dim).
void populateCompressPatterns(TypeConverter &converter,
                              RewritePatternSet &patterns);
/// NonZero (static input; the count of non-zero elements a run dim).
void populateNonZeroPatterns(TypeConverter &converter,
                             RewritePatternSet &patterns);
/// Unique (static input; the number of unique slices a run dim).
void populateUniquePatterns(TypeConverter &converter,
                            RewritePatternSet &patterns);
/// Range, ConstantOfShape, Expand, Tile, OneHot with sizes read at run time
/// (RunTimeSizes.cpp).
void populateRunTimeSizesPatterns(TypeConverter &converter,
                                  RewritePatternSet &patterns);

} // namespace kiln::onnx_to_linalg

#endif // KILN_PASSES_CONVERSION_ONNXTOLINALG_POPULATEPATTERNS_H
