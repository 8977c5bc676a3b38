//===- Passes.td - kiln code generation passes --------------*- tablegen -*-===//
#ifndef KILN_CODEGEN_PASSES_TD
#define KILN_CODEGEN_PASSES_TD

include "mlir/Pass/PassBase.td"

def KilnCheckTargetSupportPass
    : Pass<"kiln-check-target-support", "mlir::ModuleOp"> {
  let summary = "Reject what the target cannot compile, naming the ONNX node";
  let description = [{
    On linalg-on-tensors, right after convert-onnx-to-linalg. Every op the
    target (codegen/Target.h, looked up by `device`) does not accept, an op
    of a dialect it has no lowering for or a value of an element type it
    cannot compute with, is an error naming the ONNX node the op came from:
    nothing reaches a later pass to fail there without a node, or to be
    compiled some other way. Changes nothing.
  }];
  let options = [
    Option<"device", "device", "std::string", /*default=*/"\"cpu\"",
           "the target's device name (cpu; vulkan, cuda, hip are planned)">
  ];
}

def KilnFuseElementwisePass
    : Pass<"kiln-fuse-elementwise", "mlir::func::FuncOp"> {
  let summary = "Fuse chains of elementwise linalg ops into one loop nest";
  let description = [{
    Like upstream `linalg-fuse-elementwise-ops`, but only into consumers whose
    loops are all parallel. Fusing an elementwise producer into a reduction
    (e.g. GELU into the next MatMul written as a generic) recomputes the
    producer once per reduction step and hides the matmul from the register
    blocking: on a BERT encoder that was 100x slower.
  }];
  let dependentDialects = ["mlir::linalg::LinalgDialect", "mlir::tensor::TensorDialect"];
}

def KilnPropagateTransposesPass
    : Pass<"kiln-propagate-transposes", "mlir::func::FuncOp"> {
  let summary = "Move layout transposes towards the outputs and cancel pairs";
  let description = [{
    On linalg ops over tensors, before elementwise fusion. The conv lowering
    computes NHWC between NCHW<->NHWC transposes; this pass runs elementwise
    generics, pads, NCHW poolings and reductions on the transposes' sources
    instead (transposing once after them) and folds transpose chains, so
    activations stay channels-last from the first convolution to the last
    and only the model's inputs and outputs are transposed.
  }];
  let dependentDialects = ["mlir::linalg::LinalgDialect", "mlir::tensor::TensorDialect"];
}

def KilnWinogradConvsPass
    : Pass<"kiln-winograd-convs", "mlir::func::FuncOp"> {
  let summary = "Compute 3x3 stride-1 convolutions with constant weights as "
                "Winograd F(2x2, 3x3)";
  let description = [{
    On tensors, after kiln-propagate-transposes and kiln-select-kernel-strategy
    and before elementwise fusion. An NHWC `linalg.conv_2d_nhwc_hwcf` whose
    #kiln.kernel_strategy says `winograd` (a constant 3x3 filter, stride and
    dilation 1, static f32 shapes and enough tiles and channels for the
    transforms to pay: the cost model's constants are in
    SelectKernelStrategy.cpp) becomes an input-transform `linalg.generic` (one result, position-major
    [i][j][n][ty][tx][c]), one `linalg.batch_matmul` of it viewed as
    [16][tiles][C] by the filter transformed at compile time, and an all-parallel output-transform
    `linalg.generic` over the conv's output (identity output map) that
    fuses with the elementwise ops after it. 2.25x fewer multiplies.
  }];
  let dependentDialects = ["mlir::linalg::LinalgDialect", "mlir::tensor::TensorDialect",
                           "mlir::arith::ArithDialect", "mlir::math::MathDialect"];
}

def KilnDropRedundantFillsPass
    : Pass<"kiln-drop-redundant-fills", "mlir::func::FuncOp"> {
  let summary = "Drop a fill whose view still holds the filled value";
  let description = [{
    On buffers, after memory planning. A `linalg.fill` is dropped when an
    earlier fill in the same block wrote the same value to the same view and
    no op since may have written memory of that view: writes to other
    memory, to arena bytes outside it, or to static subviews of the same
    buffer disjoint from it do not count; an unknown effect does.
    MobileNetV2's padded buffers had their border strips refilled before
    every block of a resolution.
  }];
}

def KilnInlineDeallocHelpersPass
    : Pass<"kiln-inline-dealloc-helpers", "mlir::ModuleOp"> {
  let summary = "Inline the deallocation helper functions of "
                "bufferization-lower-deallocations";
  let description = [{
    Right after the deallocation pipeline. A `bufferization.dealloc` of
    several buffers whose ownership is decided at run time (a buffer yielded
    by one branch of an `scf.if` nested in a loop) is lowered to a call of a
    private helper function taking `memref<?xindex>` / `memref<?xi1>`
    arguments, which the bare-pointer calling convention of the CPU target
    cannot lower. Every call of such a helper (a private function named
    `dealloc_helper*` with one block) is replaced by a copy of its body and
    the helper erased.
  }];
}

def KilnDecomposePadsPass
    : Pass<"kiln-decompose-pads", "mlir::func::FuncOp"> {
  let summary = "Fill only the border of padded tensors and write their "
                "interior in place";
  let description = [{
    Before bufferization. A constant `tensor.pad` with static shapes becomes
    a `tensor.empty` of the padded shape whose border strips are filled
    (extract_slice / linalg.fill / insert_slice per padded side) and whose
    interior receives the source by `tensor.insert_slice`. When the source is
    produced in the same block by a linalg op whose init is a `tensor.empty`
    it does not read, that op writes into an `extract_slice` of the interior
    instead, created before it (and before a kernel it directly follows), so
    the insert_slice bufferizes in place: no fill of the whole buffer, no copy.
  }];
  let dependentDialects = ["mlir::linalg::LinalgDialect", "mlir::tensor::TensorDialect",
                           "mlir::arith::ArithDialect"];
}

def KilnNarrowPrecisionPass
    : Pass<"kiln-narrow-precision", "mlir::ModuleOp"> {
  let summary = "Compute f32 matmuls and convolutions on bf16 / f16 operands "
                "(--precision)";
  let description = [{
    On tensors, after kiln-propagate-transposes and before
    kiln-select-kernel-strategy (the CPU target runs it for `kiln compile
    --precision bf16|fp16`). Every f32 `linalg.matmul`, `linalg.batch_matmul`
    (plain maps) and `linalg.conv_2d_nhwc_hwcf` whose B is a constant gets
    that constant converted to `precision` at compile time (rounded to
    nearest even; half the weight bytes) and its A converted by an
    elementwise `arith.truncf` generic before it. The op keeps its f32
    accumulator and result: reductions (softmax, LayerNorm, means) and every
    other op stay f32, and so do the model's inputs and outputs. Products
    without a constant B (attention's Q x K^T) are left in f32.

    With `activations` (the GPU targets, `--precision fp16`) the products
    whose B is computed (batch matmuls and matmuls: attention) get both
    operands converted, and depthwise convolutions with a constant filter
    their filter and input, so every product is an f16 x f16 contraction
    with an f32 accumulator; f32 constants of 1024 elements or more read only
    by `tensor.extract` (Gather's embedding tables) are stored narrow, each
    read widened back to f32. With `refuse-on=DEVICE` (bf16 on a GPU target)
    the pass narrows nothing and reports the first product it would narrow,
    naming its node.
  }];
  let dependentDialects = ["mlir::linalg::LinalgDialect",
                           "mlir::tensor::TensorDialect",
                           "mlir::arith::ArithDialect"];
  let options = [
    Option<"precision", "precision", "std::string", /*default=*/"\"bf16\"",
           "the operands' type: bf16 or fp16">,
    Option<"activations", "activations", "bool", /*default=*/"false",
           "also narrow the products whose B is no constant (both operands "
           "converted: attention's Q x K^T and P x V) and the depthwise "
           "convolutions (linalg.depthwise_conv_2d_nhwc_hwc, constant "
           "filter): the GPU targets' scope">,
    Option<"refuseOn", "refuse-on", "std::string", /*default=*/"\"\"",
           "a device that cannot compute `precision`: instead of narrowing, "
           "the first product it would narrow is an error naming its node">
  ];
}

def KilnSelectKernelStrategyPass
    : Pass<"kiln-select-kernel-strategy", "mlir::ModuleOp"> {
  let summary = "Choose each micro-kernel's register blocking for the target";
  let description = [{
    Records `kiln.kernel_strategy = #kiln.kernel_strategy<...>` on every
    `linalg.matmul` / `linalg.batch_matmul` (plain maps),
    `linalg.conv_2d_nhwc_hwcf`, `linalg.depthwise_conv_2d_nhwc_hwc` and
    `linalg.pooling_nhwc_max` / `_sum` with static shapes and f32 operands,
    on tensors or buffers (the pipeline runs it on tensors before
    kiln-winograd-convs, and on buffers right before kiln-emit-microkernels,
    which reads it): the target's vector width and
    register count (the options) and the register block, rows x vectors of
    output with rows * vectors accumulators + vectors B vectors + one
    broadcast in the register file: 6x2 with 16 registers (SSE xmm, AVX2
    ymm), 6x4 with 32 (AVX-512 zmm, NEON q); matrix-vector products (1 or 2
    rows) take as many vectors as fit; depthwise / pooling 4x2 (16) or 8x2
    (32) output columns x channel vectors. A matmul's K over 1024 is blocked
    by 512 (reduction_block); the other kernels record their whole
    reduction. On tensors, a conv with a constant 3x3 filter, stride and
    dilation 1, at least 16 2x2 output tiles and C * F >= 14 (C + F) is
    marked `winograd = true`.
  }];
  let dependentDialects = ["kiln::KilnDialect"];
  let options = [
    Option<"vectorWidth", "vector-width", "int64_t", /*default=*/"16",
           "f32 lanes of one vector register (4 SSE / NEON, 8 AVX2, 16 AVX-512)">,
    Option<"vectorRegisters", "vector-registers", "int64_t", /*default=*/"32",
           "vector registers of the target (16 SSE / AVX2, 32 AVX-512 / NEON)">,
    Option<"int8Dot", "int8-dot", "std::string", /*default=*/"\"\"",
           "the target's 8-bit product instruction: vpdpbusd (x86 VNNI), "
           "pmaddwd (x86 without VNNI), sdot (AArch64 dotprod), or empty "
           "(one byte per step); i8 matmuls / convs whose contiguous "
           "reduction dim divides by its group (4, 2, 4) are marked "
           "kiln.int8_dot = \"<instruction>\"">,
    Option<"bf16Dot", "bf16-dot", "std::string", /*default=*/"\"\"",
           "the target's bf16 pair product instruction: vdpbf16ps (x86 "
           "AVX512-BF16, vector width 8 or 16) or empty (bf16 converted to "
           "f32, f32 FMA); matmuls of bf16 operands into f32 with an even "
           "K and a constant B are marked kiln.bf16_dot = \"vdpbf16ps\"">
  ];
}

def KilnFlipInt8ActivationsPass
    : Pass<"kiln-flip-int8-activations", "mlir::ModuleOp"> {
  let summary = "Feed u8 activations to x86's 8-bit products without the "
                "sign flip convert-onnx-to-linalg put before them";
  let description = [{
    On tensors (x86 targets, before fusion): where a `linalg.matmul` /
    `linalg.conv_2d_nhwc_hwcf` on i8 operands reads its activations
    (operand 0) from a sign flip (an elementwise `linalg.generic` yielding
    `x ^ 0x80`: u8 activations moved to the signed range), through
    single-use `linalg.transpose`, `tensor.collapse_shape` /
    `expand_shape` and constant `tensor.pad` only, the flip is removed
    (each pad's value flipped) and the product marked
    `kiln.int8_flipped_lhs`: operand 0 holds the signed operand with each
    sign bit flipped (the unsigned bytes vpdpbusd / vpmaddubsw multiply);
    the product computed is the same (Kernels/Int8.cpp reads such bytes,
    kiln-emit-microkernels flips them back for an op it does not emit).
  }];
}

def KilnEmitMicrokernelsPass
    : Pass<"kiln-emit-microkernels", "mlir::ModuleOp"> {
  let summary = "Lower matmul and NHWC convolutions on buffers to "
                "register-blocked micro-kernel loop nests";
  let description = [{
    Works on linalg ops over buffers (after bufferization) that carry a
    `#kiln.kernel_strategy` (kiln-select-kernel-strategy; an op without one
    keeps the generic lowering, as does an element type other than f32).
    `linalg.matmul`, `linalg.batch_matmul`, `linalg.conv_2d_nhwc_hwcf` and
    `linalg.depthwise_conv_2d_nhwc_hwc` (and `linalg.pooling_nhwc_max` /
    `_sum`, as the depthwise kernel with max / add for the FMA) become loop
    nests around the strategy's register block (rows x vectors of output,
    e.g. 6x2 ymm on AVX2, 6x4 zmm on AVX-512) whose accumulators are
    `scf.for` iter_args across the reduction loops; the inner loop is B
    vector loads, A broadcasts and `vector.fma`.
    Constant B (matmul weights, HWCF filters) is packed at compile time into
    panels `[N/NR][reduction...][NR]` (a new `memref.global`). Edges: fewer
    rows, masked loads/stores for the last vector. A `linalg.fill` of the
    output just before the op (or shared with earlier ops, see
    docs/pipeline.md) becomes the accumulators' initial value; an
    elementwise generic right after it that reads its output is applied
    before the stores (epilogue). The outermost loop is an `scf.parallel`
    marked `kiln.parallel`.
  }];
  let dependentDialects = ["mlir::scf::SCFDialect", "mlir::vector::VectorDialect",
                           "mlir::memref::MemRefDialect", "mlir::arith::ArithDialect",
                           "mlir::LLVM::LLVMDialect"];
}

def KilnOutlineParallelLoopsPass
    : Pass<"kiln-outline-parallel-loops", "mlir::ModuleOp"> {
  let summary = "Run kiln.parallel loops through the runtime's thread pool";
  let description = [{
    Appends a `!llvm.ptr` argument (the runtime's `kiln_exec_context *`) to
    every public function. Each `scf.parallel` marked `kiln.parallel` there
    becomes a private function `(closure, begin, end)` looping over its
    chunk, called through the `parallel_for` pointer of the context's header
    (`runtime/include/kiln/parallel.h`) with a stack closure holding the
    memref descriptors and scalars the loop uses; a null context calls the
    body once for the whole range. Runs on buffers, after deallocation.
  }];
  let dependentDialects = ["mlir::LLVM::LLVMDialect", "mlir::scf::SCFDialect",
                           "mlir::func::FuncDialect", "mlir::arith::ArithDialect",
                           "::kiln::KilnDialect"];
}

def KilnMergeKernelsPass : Pass<"kiln-merge-kernels", "mlir::ModuleOp"> {
  let summary = "One body for outlined kernels that differ only in the "
                "globals they read";
  let description = [{
    After kiln-outline-parallel-loops. Kernel bodies (the module's
    `kiln.kernels`) equal op for op (types, attributes, operands, regions;
    locations aside) except for the names of the `memref.get_global`s they
    read become thunks calling one private noinline function
    `<first>_merged(closure, begin, end, globals...)` that takes the globals
    differing between them as memref arguments. The kernels keep their
    symbols, call sites and closures; LLVM optimizes and compiles the shared
    body once (a transformer's layers, a ResNet stage's blocks).
  }];
  let dependentDialects = ["mlir::func::FuncDialect", "mlir::memref::MemRefDialect"];
}

def KilnMergeSerialLoopsPass
    : Pass<"kiln-merge-serial-loops", "mlir::ModuleOp"> {
  let summary = "One function for the serial loops (kiln.serial_loop) that "
                "differ only in integer constants";
  let description = [{
    At the end of the CPU pipeline, on the LLVM dialect. The loops too small
    for the thread pool that kiln-outline-serial-code{loops=true} moved into
    functions of their own (`llvm.func` marked `kiln.serial_loop`, called
    directly) are compared op for op (types, attributes, operands, blocks;
    locations aside), except that an integer `llvm.mlir.constant` may have
    another value (a trip count, a stride, an offset into a concatenation
    buffer) when all its users take a run-time value (no alloca size,
    vector element index or intrinsic operand other than a memcpy / memmove
    / memset length or value). Equal functions become one: the first takes
    the constants differing between them as trailing arguments (at most
    16; a class needing more is left alone), every call passes its own,
    the others are erased. DenseNet's dense layers copy, pad and transform
    the same shapes into concatenation buffers of growing width.
    With `kernels`, the kernel bodies of the module's `kiln.kernels` too:
    they stay (the thread pool calls them through a pointer) as thunks
    passing their constants to the shared body.
  }];
  let options = [
    Option<"mergeKernels", "kernels", "bool", /*default=*/"false",
           "merge the kernel bodies of kiln.kernels too (as thunks)">
  ];
  let dependentDialects = ["mlir::LLVM::LLVMDialect"];
}

def KilnOutlineSerialCodePass
    : Pass<"kiln-outline-serial-code", "mlir::ModuleOp"> {
  let summary = "Cut functions of more than max-ops ops into noinline "
                "functions of about max-ops ops";
  let description = [{
    Loop nests too small for the thread pool stay in the entry, which then
    grows with the graph; SCFToControlFlow and LLVM (ScalarEvolution, the
    dominator tree, instruction selection) are quadratic in the loops of one
    function. Each function of more than `max-ops` ops has its top-level
    ops cut, in order, into runs of about `max-ops` ops; a run holding a
    loop becomes a private `noinline` function taking one `!llvm.ptr` to a
    stack closure of the values it uses (memref descriptors, integers,
    floats, pointers), called where the run was. Ops whose results are used
    after their run stay (a pure one of values from before the run does not
    cut it); constants and globals are cloned. Before SCFToControlFlow.
  }];
  let options = [
    Option<"maxOps", "max-ops", "int64_t", /*default=*/"4000",
           "a function of more ops than this is cut into runs of this size">,
    Option<"loops", "loops", "bool", /*default=*/"false",
           "first move each top-level scf.for of a public function into a "
           "function of its own marked kiln.serial_loop (for "
           "kiln-merge-serial-loops)">
  ];
  let dependentDialects = ["mlir::LLVM::LLVMDialect", "mlir::func::FuncDialect",
                           "mlir::arith::ArithDialect"];
}

def KilnParallelizeLoopsPass
    : Pass<"kiln-parallelize-loops", "mlir::ModuleOp"> {
  let summary = "Run linalg ops left on buffers over the thread pool, "
                "innermost loop contiguous";
  let description = [{
    After kiln-emit-microkernels, before kiln-outline-parallel-loops. Each
    linalg op on statically shaped buffers (elementwise generics, reductions,
    pooling, copies, fills) first gets the loop order whose innermost loop
    walks the output's last (contiguous) dimension, unless the innermost loop
    is a reduction along an input's last dimension (a softmax / layernorm
    row). An op with at least 32K loop iterations is then tiled by 1 along its
    leading parallel loops (those indexing every output directly) until there
    are 64 iterations, or into blocks of its innermost loop when nothing else
    can be split: an `scf.parallel` over [0, N) marked `kiln.parallel` around
    the op on subviews. Smaller ops stay sequential.
  }];
  let dependentDialects = ["mlir::scf::SCFDialect", "mlir::memref::MemRefDialect",
                           "mlir::arith::ArithDialect", "mlir::affine::AffineDialect",
                           "mlir::linalg::LinalgDialect", "::kiln::KilnDialect"];
}

def KilnApproximateMathPass
    : Pass<"kiln-approximate-math", "mlir::ModuleOp"> {
  let summary = "Replace exp/erf/tanh/log libm calls by polynomial "
                "approximations";
  let description = [{
    math.exp, expm1, erf, tanh, log, log1p and log2 on f32 (f16 / bf16 via
    f32) become MLIR's polynomial approximations: arith and math.fma code that
    LLVM vectorizes, where a libm call (expf, erff) keeps a loop scalar.
  }];
  let dependentDialects = ["mlir::arith::ArithDialect", "mlir::math::MathDialect",
                           "mlir::vector::VectorDialect"];
  let options = [
    Option<"expandFma", "expand-fma", "bool", /*default=*/"false",
           "also rewrite math.fma as mulf + addf (targets without FMA)">,
    Option<"exactFmaOnly", "exact-fma-only", "bool", /*default=*/"false",
           "only turn exact f64 multiply-adds into f32 math.fma (run on "
           "linalg bodies before the kernels' epilogues, which compute on "
           "lanes of at most 32 bits)">,
    Option<"fastSigmoid", "fast-sigmoid", "bool", /*default=*/"true",
           "rewrite f32 1 / (1 + exp(y)) as kiln's sigmoid, whose round-to-"
           "integer shifter needs IEEE-exact f32 adds (off for SPIR-V: "
           "drivers may reassociate (t + s) - s into t)">
  ];
}

def KilnPlanMemoryPass : Pass<"kiln-plan-memory", "mlir::ModuleOp"> {
  let summary = "Place intermediate buffers in one scratch arena planned at "
                "compile time";
  let description = [{
    On buffers, before deallocation. Every statically shaped `memref.alloc` at
    the top level of a public function becomes a `memref.view` into a new last
    argument `memref<Sxi8>` (attribute `kiln.scratch`). A buffer lives from
    the first to the last top-level op using it or a view of it; buffers whose
    lives do not overlap share bytes (first fit, largest first, `alignment`-byte
    aligned, 64 by default). S is recorded as the module attribute `kiln.scratch_size`; the
    runtime allocates the arena once per opened model. Buffers that may escape
    (returned, yielded, passed to calls) keep their allocation.
  }];
  let dependentDialects = ["mlir::memref::MemRefDialect", "mlir::arith::ArithDialect",
                           "::kiln::KilnDialect"];
  let options = [
    Option<"alignment", "alignment", "int64_t", /*default=*/"64",
           "alignment of every buffer's offset and size (GPU targets: 256)">
  ];
}

def KilnLowerStridedCopiesPass
    : Pass<"kiln-lower-strided-copies", "mlir::func::FuncOp"> {
  let summary = "Lower memref.copy between strided buffers to block memcpys or linalg.copy";
  let description = [{
    `memref.copy` between identity-layout buffers becomes a `memcpy`; any
    other layout would lower to a call into MLIR's C runner library, which a
    compiled model must not depend on. A copy of static shape and strides
    whose innermost dimensions are contiguous in both buffers (at least 32
    bytes) becomes `scf.for` loops over the outer dimensions around a
    `memref.copy` of one contiguous block (a constant-size `memcpy`); the
    others become `linalg.copy`, lowered to loops like the rest of linalg.
  }];
  let dependentDialects = ["mlir::linalg::LinalgDialect",
                           "mlir::arith::ArithDialect",
                           "mlir::memref::MemRefDialect",
                           "mlir::scf::SCFDialect"];
}

def KilnLowerReductionsPass
    : Pass<"kiln-lower-reductions", "mlir::func::FuncOp"> {
  let summary = "Lower innermost reductions on buffers with register accumulators";
  let description = [{
    A `linalg.generic` on buffers whose reduction loops all follow its parallel
    loops (softmax / layernorm rows, ReduceSum) becomes `scf.for` loops whose
    accumulators are iter_args: each output element is loaded before its
    reduction and stored after it, not on every step. A store in the loop,
    which LLVM cannot remove when input and output may alias, keeps the loop
    scalar.
  }];
  let dependentDialects = ["mlir::scf::SCFDialect", "mlir::memref::MemRefDialect",
                           "mlir::affine::AffineDialect", "mlir::LLVM::LLVMDialect"];
}

def KilnMaterializeChecksPass
    : Pass<"kiln-materialize-checks", "mlir::ModuleOp"> {
  let summary = "Turn kiln.check ops into the entry function's status result";
  let description = [{
    Numbers the `kiln.check` ops of each function 1..N in program order, folds
    them into one `tensor<i32>` (0 when every check holds, else the number of
    the first failing one) appended as the function's last result, and stores
    the messages as the module's `kiln.check_messages` string array.
  }];
  let dependentDialects = ["mlir::arith::ArithDialect", "mlir::tensor::TensorDialect",
                           "::kiln::KilnDialect"];
}

def KilnReplaceEmptyEntryBuffersPass
    : Pass<"kiln-replace-empty-entry-buffers", "mlir::ModuleOp"> {
  let summary = "Give zero-element memref arguments a placeholder type";
  let description = [{
    The bare-pointer calling convention cannot lower a function argument of a
    memref type with a zero-sized dimension (e.g. `memref<3x0x5xf32>`: its
    canonical strides are undefined). Such a buffer is never accessed, so each
    becomes a `memref<1xT>` argument (one pointer in the ABI, as before), the
    body uses a local zero-sized `memref.alloca` instead, and calls to the
    function pass a placeholder buffer.
  }];
  let dependentDialects = ["mlir::memref::MemRefDialect"];
}

def KilnBindSymbolicDimsPass
    : Pass<"kiln-bind-symbolic-dims", "mlir::ModuleOp"> {
  let summary = "Pass symbolic entry buffers as bare pointers sized by the symbols";
  let description = [{
    For the entry of a model with symbolic dims (`kiln.symbols`,
    `kiln.input_dims`, `kiln.output_dims` on the function; after
    bufferization, so its arguments are the inputs, the outputs and the
    status slot): inserts a first argument `memref<Nxi64>` with the value of
    every symbol (what the runtime bound and the shape function completed),
    and turns each argument with `?` dims into a `memref<1xT>` (one pointer in
    the bare-pointer ABI) that the body `memref.reinterpret_cast`s to its
    run-time sizes and row-major strides, read from the symbols. In the same
    function, a `memref.expand_shape` of a contiguous buffer that splits one `?`
    dim into several becomes a `memref.reinterpret_cast` (MLIR 22's
    `expand-strided-metadata` crashes on it). A function without `kiln.symbols`
    is left as it is.
  }];
  let dependentDialects = ["mlir::memref::MemRefDialect",
                           "mlir::arith::ArithDialect"];
}

def KilnAllocateRunOutputsPass
    : Pass<"kiln-allocate-run-outputs", "mlir::ModuleOp"> {
  let summary = "Run outputs: a buffer the entry allocates, its pointer in the slot";
  let description = [{
    The second half of run outputs (model_abi.h: an output whose dims name a
    run symbol, `KILN_SYMBOL_RUN`). `kiln-bind-symbolic-dims` made such an
    output argument (`kiln.run_output`) a `memref<1xT>` viewed with the sizes
    of the value copied into it, and stored those sizes into the symbols' slots.
    After the deallocation pipeline (which must not free it), this pass
    allocates that buffer (`memref.alloc` without alignment: the C library's
    malloc, which the runtime frees with free()) in place of the view, and
    turns the argument into the slot (`memref<1xi64>`, one pointer) where the
    buffer's address is stored.
  }];
  let dependentDialects = ["mlir::memref::MemRefDialect",
                           "mlir::arith::ArithDialect"];
}

#endif // KILN_CODEGEN_PASSES_TD
