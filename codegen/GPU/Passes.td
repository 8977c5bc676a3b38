//===- Passes.td - GPU code generation passes ---------------*- tablegen -*-===//
#ifndef KILN_CODEGEN_GPU_PASSES_TD
#define KILN_CODEGEN_GPU_PASSES_TD

include "mlir/Pass/PassBase.td"

def KilnGPUEmulateNarrowFloatsPass
    : Pass<"kiln-gpu-emulate-narrow-floats", "mlir::ModuleOp"> {
  let summary = "Store bf16 as i16 and the float8 types as i8; compute bf16 "
                "in f32";
  let description = [{
    On linalg-on-tensors, first of the GPU pipeline (SPIR-V for Vulkan 1.1
    has no bf16 or 8-bit float types; NVVM and ROCDL lower no float8 and no
    bf16 math). Named linalg ops computing on these types are generalized
    (copy, fill, transpose and broadcast stay); bf16 math ops are extended
    to f32 (math-extend-to-supported-types) and bf16 arith ops emulated in
    f32 (arith-emulate-unsupported-floats); the bf16 <-> f32 conversions
    become integer ops (arith-expand's bf16 patterns), bf16 <-> f64 goes
    through f32 (rounded to odd first when narrowing: one rounding). Then
    every bf16 type becomes i16 and every f8E4M3FN / f8E4M3FNUZ / f8E5M2 /
    f8E5M2FNUZ type i8, in results, block arguments, function types and
    attributes (constants keep their bits, resource blobs are shared), and
    the bitcasts between a float and its integer vanish. The bytes of
    inputs, outputs and weights do not change. An arith or math op other
    than a constant, select or bitcast still on one of these types (float8
    arithmetic, which the support check refuses first) is an error naming
    the node.
  }];
  let dependentDialects = ["mlir::arith::ArithDialect",
                           "mlir::math::MathDialect",
                           "mlir::linalg::LinalgDialect",
                           "mlir::vector::VectorDialect"];
}

def KilnGPUPrepareLoopsPass
    : Pass<"kiln-gpu-prepare-loops", "mlir::ModuleOp"> {
  let summary = "Make every buffer op of the entry a linalg op whose "
                "parallel loops come first";
  let description = [{
    On buffers, after bufferization, for GPU targets. In each public
    function: the status out-parameter kiln-materialize-checks added (the
    last argument; a GPU target accepts no run-time checks, so it is always
    0) and what writes it are dropped; a buffer copied into an output
    argument as its last use is replaced by the argument (the output is
    computed in place); `memref.copy` becomes `linalg.copy`;
    named linalg ops are generalized and their loops interchanged so that
    every parallel loop is outside every reduction (convert-linalg-to-
    parallel-loops then yields one `scf.parallel` per op, reductions running
    serially inside each thread); an op without a parallel loop, or another
    top-level op that writes memory, is wrapped in a one-iteration
    `scf.parallel` (one thread). Nothing that computes stays on the host.
  }];
  let dependentDialects = ["mlir::linalg::LinalgDialect", "mlir::scf::SCFDialect",
                           "mlir::arith::ArithDialect"];
}

def KilnGPUSelectLoweringConfigPass
    : Pass<"kiln-gpu-select-lowering-config", "mlir::ModuleOp"> {
  let summary = "Choose the GPU kernel of each linalg op (strategy as data)";
  let description = [{
    After kiln-gpu-prepare-loops. Every linalg.generic at the top level of a
    function (or alone in a one-iteration `scf.parallel`: a reduction
    without parallel loops) gets `kiln.gpu_lowering`
    (codegen/GPU/Common/LoweringConfig.h):

    - `matmul_tiled`, tile_sizes [TM, TN, TK], workgroup_size [16, TY, 1]:
      an f32 contraction (batch dims; M, N and K each one or more dims,
      linearized: a matmul, a batch matmul, a convolution as an implicit
      GEMM, see TiledContraction in LoweringConfig.h) with M >= 4, N >= 16,
      K >= 4: TN = 64, TK = 16, TM = 32 when M <= 32 else 64, 256 threads
      (TY = 16) when the target allows them, else 128 (TY = 8); the two
      staged tiles must fit `max-workgroup-memory`;
    - `matmul_mma`, tile_sizes [TM, TN, TK], workgroup_size [128, 1, 1],
      warp_tile [WM, WN], mma_shape [16, 8, MK] (only with `mma-sync`, the
      cuda target on sm_80+): a contraction whose body is
      `out + ext(a) * ext(b)` with f16 operands and an f32 result (MK = 16,
      TK = 32), or with f32 operands under `tf32` (MK = 8, TK = 16); TN =
      64, TM = 32 (warps 1 x 4 of 32 x 16) when M <= 32, else 64 (2 x 2
      warps of 32 x 32); chosen before `matmul_tiled`;
    - `row_reduction`, workgroup_size [W, 1, 1]: a reduction with a 32-bit
      result and a combiner with a neutral element (add, mul, min, max, and,
      or, xor) over at least 32 elements per output, the reduced dims
      innermost in every input that reads along them (coalesced); W the power of two
      >= that count, at most 256 and `max-workgroup-invocations`;
    - `generic` for everything else (one thread per output element).

    The options are the target's limits; the defaults are the minimums
    Vulkan guarantees.
  }];
  let options = [
    Option<"maxWorkgroupInvocations", "max-workgroup-invocations", "int64_t",
           /*default=*/"128", "threads a workgroup may have">,
    Option<"maxWorkgroupMemory", "max-workgroup-memory", "int64_t",
           /*default=*/"16384", "bytes of workgroup memory a workgroup may use">,
    Option<"minWorkgroups", "min-workgroups", "int64_t", /*default=*/"0",
           "matmul_tiled: smaller tiles (down to 16x32) while the grid has "
           "fewer workgroups than this (0: 32/64 x 64 tiles)">,
    Option<"maxTileK", "max-tile-k", "int64_t", /*default=*/"16",
           "matmul_tiled: the longest K step (16, 32 or 64) that fits the "
           "workgroup memory">,
    Option<"mmaSync", "mma-sync", "bool", /*default=*/"false",
           "the target has NVIDIA's mma.sync (cuda, sm_80+): matmul_mma">,
    Option<"tf32", "tf32", "bool", /*default=*/"false",
           "with mma-sync, f32 contractions too, their operands rounded to "
           "tf32 (--precision tf32)">
  ];
  let dependentDialects = ["mlir::linalg::LinalgDialect"];
}

def KilnGPULowerConfiguredOpsPass
    : Pass<"kiln-gpu-lower-configured-ops", "mlir::func::FuncOp"> {
  let summary = "Emit the workgroup kernels kiln.gpu_lowering asks for";
  let description = [{
    Reads `kiln.gpu_lowering` (kiln-gpu-select-lowering-config) and replaces
    each `matmul_tiled` and `row_reduction` linalg.generic by a `gpu.launch`
    with workgroup memory attributions and `gpu.barrier`s (upstream gpu,
    scf, memref and arith ops only, so every GPU target lowers it):

    - matmul_tiled: workgroups (ceil(N / TN), ceil(M / TM), batch), M, N
      and K the linearized products of their dims; each
      stages TM x TK of A and TK x TN of B in workgroup memory per K step
      (indices clamped into range: out-of-range rows and columns only feed
      results that are not stored), then each thread evaluates the op's body
      for its (TM / TY) x (TN / 16) outputs, rows `ty + i * TY`, columns
      `tx + j * 16`, K in ascending order as the serial loop does; stores
      guarded by M and N;
    - matmul_mma (NVIDIA tensor cores; only the cuda target selects it):
      the same workgroups and staging as matmul_tiled in 128 threads, A as
      [TM][TK + pad] and B transposed as [TN][TK + pad] (pad: 16 bytes), K
      past the end staged as zeros, f32 operands rounded to tf32
      (`nvvm.convert.float.to.tf32`, rna) as staged; each warp computes its
      WM x WN part with `nvvm.mma.sync` (m16n8k16 f16 or m16n8k8 tf32, f32
      accumulators) on fragments loaded from the tiles (the PTX ISA's
      fragment layout, LowerConfiguredOps.cpp); stores guarded; fill
      folding and epilogue fusion as matmul_tiled;
    - row_reduction: min(rows, 65535) workgroups of W threads, looping over
      the rows; each thread folds the elements `tid, tid + W, ...` of its
      row into the combiner's neutral element, then a tree over workgroup
      memory (log2 W steps with barriers) and thread 0 combines the result
      with the init value and stores it.

    `generic` ops are left to convert-linalg-to-parallel-loops and
    kiln-gpu-map-loops. A configuration that does not fit its op is an error
    naming the ONNX node.
  }];
  let dependentDialects = ["mlir::gpu::GPUDialect", "mlir::scf::SCFDialect",
                           "mlir::arith::ArithDialect",
                           "mlir::memref::MemRefDialect",
                           "mlir::affine::AffineDialect",
                           "mlir::LLVM::LLVMDialect",
                           "mlir::NVVM::NVVMDialect"];
}

def KilnGPUMapLoopsPass : Pass<"kiln-gpu-map-loops", "mlir::func::FuncOp"> {
  let summary = "Map each top-level scf.parallel onto workgroups and threads";
  let description = [{
    Every top-level `scf.parallel` (static bounds, no reductions) becomes
    workgroups x threads over its iterations linearized row-major (the
    innermost dim is the fastest, so neighbouring threads touch neighbouring
    elements): `workgroup-size` threads on x, as many workgroups as needed on
    x (at most 65535; beyond that each thread loops), a guard for the last
    partial workgroup. The loops get the `mapping` attribute
    convert-parallel-loops-to-gpu reads. Nested `scf.parallel` loops become
    `scf.for` nests (they run inside one thread).
  }];
  let options = [
    Option<"workgroupSize", "workgroup-size", "int64_t", /*default=*/"64",
           "threads per workgroup">
  ];
  let dependentDialects = ["mlir::scf::SCFDialect", "mlir::arith::ArithDialect",
                           "mlir::gpu::GPUDialect"];
}

def KilnGPUPlanDispatchesPass
    : Pass<"kiln-gpu-plan-dispatches", "mlir::ModuleOp"> {
  let summary = "Check the host function and record each launch's buffers";
  let description = [{
    After gpu-kernel-outlining. The entry must hold nothing but
    `gpu.launch_func` ops with static sizes on memrefs that are views of an
    entry argument (graph inputs and outputs), of the transient arena
    (kiln-plan-memory's `kiln.scratch` argument) or of a constant
    `memref.global` (weights); anything else left on the host is an error
    naming the ONNX node. Each launch gets `kiln.bindings`: per kernel
    argument `[kind, index, byte offset]` with kind 0 = entry argument, 1 =
    the weights blob, 2 = the arena; its kernel is renamed after the ONNX
    node it computes. Each weight used gets
    `kiln.device_offset` (256-byte aligned); the module gets
    `kiln.device_constants_size`.
  }];
  let dependentDialects = ["mlir::gpu::GPUDialect"];
}

def KilnNVVMAlignWorkgroupMemoryPass
    : Pass<"kiln-nvvm-align-workgroup-memory", "mlir::gpu::GPUModuleOp"> {
  let summary = "Give every workgroup buffer of a kernel a 16-byte alignment";
  let description = [{
    Before convert-gpu-to-nvvm (cuda target). Each workgroup attribution of
    a `gpu.func` without an `llvm.align` of at least 16 gets
    `llvm.align = 16`, which convert-gpu-to-nvvm puts on the shared-memory
    global. Without it the global has no alignment: LLVM's optimizer assumes
    the preferred one of a large global (16 bytes) and merges adjacent f16
    loads into 32-bit ones (matmul_mma's fragments), while the NVPTX printer
    declares `.align 2` (the element's), so ptxas may place the buffer where
    those loads would be misaligned.
  }];
}

def KilnSPIRVSetEntryPointsPass
    : Pass<"kiln-spirv-set-entry-points", "mlir::ModuleOp"> {
  let summary = "Attach the Vulkan target environment and entry-point ABIs";
  let description = [{
    Before convert-gpu-to-spirv. Every `gpu.module` gets the
    `spirv.target_env` kiln compiles for (Vulkan 1.1, shader capabilities for
    8/16/64-bit integers and floats in storage buffers; spirv-update-vce
    keeps only those a module uses) and every kernel the
    `spirv.entry_point_abi` with the workgroup size its launches use.
  }];
  let dependentDialects = ["mlir::spirv::SPIRVDialect"];
}

def KilnSPIRVLegalizeRemFPass
    : Pass<"kiln-spirv-legalize-remf", "mlir::gpu::GPUModuleOp"> {
  let summary = "Give arith.remf C fmod's result for an infinite divisor";
  let description = [{
    SPIR-V's OpFRem is x - y * trunc(x / y) on many drivers (lavapipe
    included): NaN for a finite x and an infinite y, where fmod (and the
    ONNX Mod lowering built on it) gives x. Each `arith.remf` in a kernel
    module is followed by a select of x for that case; NaN and zero
    divisors give NaN either way.
  }];
  let dependentDialects = ["mlir::arith::ArithDialect", "mlir::math::MathDialect"];
}

def KilnSPIRVExpandF64MathPass
    : Pass<"kiln-spirv-expand-f64-math", "mlir::gpu::GPUModuleOp"> {
  let summary = "Compute f64 exp, log and powf with f64 arithmetic";
  let description = [{
    GLSL.std.450's Exp, Log and Pow take 16/32-bit floats only. Each scalar
    f64 `math.exp`, `math.log` and `math.powf` in a kernel module becomes f64
    arithmetic (no f32 round trip), with the exponent handled by i64 bit
    operations:
    - exp: x = k ln2 + r (Cody-Waite, |r| <= ln2/2), e^r by its degree-13
      Taylor polynomial, times 2^k built in two halves (so that subnormal
      results and 2^1024 > e^x > 2^1023 stay exact in the scaling);
      overflow to +inf past 709.78, 0 below -745.14;
    - log: fdlibm's e_log.c (x = 2^k m, m in [sqrt(2)/2, sqrt(2)),
      s = (m-1)/(m+1), the degree-14 odd series in s), subnormals scaled
      by 2^54 first; log(0) = -inf, log(x < 0) = NaN, log(inf) = inf;
    - powf: an integer exponent below 2^53 by binary powering (exact where
      the result is representable: integer powers of integers, as the
      Pow of integer tensors computes them), any other as exp(y log x)
      (NaN for x < 0); x = 1 or y = 0 give 1.
    Accuracy against numpy on lavapipe (test/e2e/test_vulkan_f64_math.py):
    exp and log within 1 ulp; pow exact for representable results of integer
    exponents (else within |y| ulp), within 1.6 (1 + |y log x|) ulp for
    others (docs/gpu.md).
  }];
  let dependentDialects = ["mlir::arith::ArithDialect", "mlir::math::MathDialect",
                           "mlir::scf::SCFDialect"];
}

def KilnSPIRVExactF64Pass : Pass<"kiln-spirv-exact-f64", "mlir::spirv::ModuleOp"> {
  let summary = "Decorate f64 arithmetic NoContraction";
  let description = [{
    Without the decoration a Vulkan driver may contract and reassociate
    floating-point arithmetic (Mesa's NIR merges `x - k*a - k*b` into
    `x - k*(a + b)`), which undoes the two-constant range reductions of
    kiln-spirv-expand-f64-math (lavapipe's f64 exp was 600 ulp off at
    x = 600). Every f64 OpFAdd, OpFSub, OpFMul, OpFDiv, OpFNegate and
    GLSL Fma gets `NoContraction`: each is computed as written (an fma
    still fused). f64 in a model is there for its precision; f32 and f16
    arithmetic stay free to contract.
  }];
}

def KilnSPIRVUnsignedIndexCastsPass
    : Pass<"kiln-spirv-unsigned-index-casts", "mlir::gpu::GPUModuleOp"> {
  let summary = "Zero-extend index values that are known to be non-negative";
  let description = [{
    Before convert-gpu-to-spirv. Each arith.index_cast and arith.extsi whose
    operand MLIR's integer range analysis proves non-negative becomes
    arith.index_castui / arith.extui (the same value), so SPIR-V gets
    OpUConvert rather than OpSConvert: Mesa 22.3's lavapipe miscompiles an
    OpSConvert to 64 bits of an OpUMod result that is then compared (Trilu on
    i64 gave wrong elements). Casts of values that may be negative are kept.
  }];
  let dependentDialects = ["mlir::arith::ArithDialect"];
}

def KilnSPIRVGuardZeroTripLoopsPass
    : Pass<"kiln-spirv-guard-zero-trip-loops", "mlir::gpu::GPUModuleOp"> {
  let summary = "Give scf.for loops that may run zero times their init values";
  let description = [{
    Right before convert-gpu-to-spirv. MLIR 22's scf.for lowering carries
    the loop's results in a Function variable that only the body's yield
    stores: a loop that runs zero times returns whatever the variable held
    (undefined, or the value of an earlier run of the same loop), not its
    init values. Each scf.for with results and a trip count not known to be
    at least one is wrapped in an scf.if on `lb < ub` (`ult` for an unsigned
    loop) whose else branch yields the init values.
  }];
  let dependentDialects = ["mlir::arith::ArithDialect", "mlir::scf::SCFDialect"];
}

def KilnSPIRVLowerWorkgroupMemoryPass
    : Pass<"kiln-spirv-lower-workgroup-memory", "mlir::gpu::GPUModuleOp"> {
  let summary = "Turn gpu.func workgroup attributions into Workgroup allocs";
  let description = [{
    convert-gpu-to-spirv does not convert workgroup memory attributions; it
    converts a static `memref.alloc` in the `Workgroup` storage class into a
    module-scope `spirv.GlobalVariable`. Each workgroup attribution of a
    kernel becomes such an alloc at the start of its body (used only by
    loads and stores).
  }];
  let dependentDialects = ["mlir::memref::MemRefDialect",
                           "mlir::spirv::SPIRVDialect"];
}

#endif // KILN_CODEGEN_GPU_PASSES_TD
