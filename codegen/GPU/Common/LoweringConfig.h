//===- LoweringConfig.h - the GPU kernel chosen for a linalg op -*- C++ -*-===//
//
// Strategy as data: kiln-gpu-select-lowering-config writes, on every
// top-level linalg.generic of the entry, the attribute `kiln.gpu_lowering`,
// a dictionary
//
//   {kind = "matmul_tiled", tile_sizes = [TM, TN, TK],
//    workgroup_size = [16, TY, 1]}
//   {kind = "matmul_mma", tile_sizes = [TM, TN, TK],
//    workgroup_size = [32 * warps, 1, 1], warp_tile = [WM, WN],
//    mma_shape = [16, 8, MK]}
//   {kind = "row_reduction", workgroup_size = [W, 1, 1]}
//   {kind = "generic"}
//
// and kiln-gpu-lower-configured-ops only reads it: the emitters decide
// nothing. "generic" ops are left to the generic mapping (one thread per
// output element, kiln-gpu-map-loops).
//
//===----------------------------------------------------------------------===//
#ifndef KILN_CODEGEN_GPU_COMMON_LOWERINGCONFIG_H
#define KILN_CODEGEN_GPU_COMMON_LOWERINGCONFIG_H

#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/IR/Operation.h"
#include "llvm/ADT/SmallVector.h"

#include <optional>

namespace kiln {

enum class GPUKernelKind {
  /// One thread per element of the parallel iteration space
  /// (kiln-gpu-map-loops), reductions serial in each thread.
  Generic,
  /// A contraction (batch dims, one M, one N, one K dim): a TM x TN output
  /// tile per workgroup, K staged in TK steps through workgroup memory,
  /// each thread computing a (TM / TY) x (TN / 16) micro-tile.
  MatmulTiled,
  /// A contraction on NVIDIA tensor cores (cuda target, sm_80+): a TM x TN
  /// output tile per workgroup staged through workgroup memory like
  /// MatmulTiled, each warp computing a WM x WN part of it with
  /// `mma.sync.m16n8k16` (f16 operands, f32 accumulation) or `m16n8k8`
  /// tf32 (f32 operands rounded to tf32: --precision tf32).
  MatmulMma,
  /// A reduction whose rows (the parallel dims) each go to one workgroup of
  /// W threads: strided partial results, then a tree in workgroup memory.
  RowReduction,
};

struct GPULoweringConfig {
  GPUKernelKind kind = GPUKernelKind::Generic;
  /// MatmulTiled: [TM, TN, TK].
  llvm::SmallVector<int64_t, 3> tileSizes;
  /// Threads per workgroup on x, y, z (empty for Generic).
  llvm::SmallVector<int64_t, 3> workgroupSize;
  /// MatmulMma: [WM, WN], the part of the tile one warp computes.
  llvm::SmallVector<int64_t, 2> warpTile;
  /// MatmulMma: [16, 8, MK], the mma.sync instruction's shape (MK = 16:
  /// f16 operands; MK = 8: tf32).
  llvm::SmallVector<int64_t, 3> mmaShape;
};

/// The attribute's name.
inline constexpr llvm::StringLiteral kGPULoweringAttrName = "kiln.gpu_lowering";

/// The configuration on `op`, if it has a well-formed one.
std::optional<GPULoweringConfig> getGPULoweringConfig(mlir::Operation *op);
void setGPULoweringConfig(mlir::Operation *op, const GPULoweringConfig &config);

llvm::StringRef stringifyGPUKernelKind(GPUKernelKind kind);

/// The loops of a contraction the tiled matmul kernel computes: a
/// linalg.generic with inputs A, B and init C (32-bit float memrefs, static
/// sizes, no linalg.index), C's map a projected permutation, A's and B's any
/// affine maps without mod/div. Its parallel loops are batch dims (read by A
/// and B), M dims (read by A, not B; or by neither) and N dims (read by B,
/// not A); its reduction loops are K. M, N and K are each linearized
/// row-major over their dims: a matmul has one of each; an NHWC convolution
/// is an implicit GEMM with M = (n, oh, ow), N = f, K = (kh, kw, c). The body
/// can be anything: it is evaluated per K step in the serial loop's order.
/// matchTiledContraction also asks for f32 or f16 operands (the staged tiles
/// hold their type; the body does any widening) and an f32 result.
struct TiledContraction {
  llvm::SmallVector<unsigned> batch, m, n, k;
};
std::optional<TiledContraction> matchTiledContraction(mlir::linalg::GenericOp op);

/// What a tensor-core product multiplies.
enum class MmaOperands {
  /// f16 x f16, accumulated in f32: `mma.sync.m16n8k16 .f32.f16.f16.f32`.
  F16,
  /// f32 x f32 rounded to tf32 (cvt.rna.tf32.f32), accumulated in f32:
  /// `mma.sync.m16n8k8 .f32.tf32.tf32.f32`.
  TF32,
};

/// The loops of a contraction the tensor-core kernel computes, and what it
/// multiplies: the loops as matchTiledContraction finds them (any element
/// types), A and B memrefs of f16 (or f32 when `allowTF32`), C of f32, and
/// the body exactly `yield out + ext(a) * ext(b)` (the adds either way
/// round, ext an arith.extf to f32 for f16 operands, nothing for f32): the
/// sum is accumulated in f32 in another order than the serial loop's.
std::optional<std::pair<TiledContraction, MmaOperands>>
matchMmaContraction(mlir::linalg::GenericOp op, bool allowTF32);

/// The combiner of a reduction the row-reduction kernel computes: one init
/// operand of a 32-bit type, reductions over any dims, projected-permutation
/// maps, no linalg.index, a body `yield comb(f(inputs), out)` whose `out`
/// has no other use and whose `comb` has a neutral element (add, mul, min,
/// max, and, or, xor: reassociated across threads). Null if none.
mlir::Operation *matchRowReduction(mlir::linalg::GenericOp op);

/// The linalg.generic that `op`, a one-iteration scf.parallel holding only
/// it, runs in one thread (kiln-gpu-prepare-loops wraps an op without
/// parallel loops so); else null.
mlir::linalg::GenericOp getSingleThreadGeneric(mlir::Operation &op);

} // namespace kiln

#endif // KILN_CODEGEN_GPU_COMMON_LOWERINGCONFIG_H
