//===- KilnDialect.td - kiln's own helper ops --------------*- tablegen -*-===//
//
// Ops kiln needs between the `onnx` dialect and upstream MLIR that no
// upstream dialect offers, e.g. run-time checks that must reach the runtime.
//
//===----------------------------------------------------------------------===//

#ifndef KILN_DIALECT_KILN_TD
#define KILN_DIALECT_KILN_TD

include "mlir/IR/AttrTypeBase.td"
include "mlir/IR/OpBase.td"
include "mlir/Interfaces/SideEffectInterfaces.td"

def Kiln_Dialect : Dialect {
  let name = "kiln";
  let cppNamespace = "::kiln";
  let summary = "kiln's helper ops (run-time checks) and attributes";
  let description = [{
    Besides its ops, the dialect owns the discardable attributes through
    which kiln's passes and the C ABI agree (declared below, verified in
    ABIAttributes.cpp, accessed through dialects/Kiln/ABIAttributes.h):
     - `kiln.parallel` (unit, on a one-dimensional `scf.parallel` over
       [0, n) with step 1 and no reductions): run the loop over the runtime's
       thread pool (kiln-outline-parallel-loops);
     - `kiln.scratch` (unit, on a function argument of type `memref<Nxi8>`):
       the scratch arena planned by kiln-plan-memory;
     - `kiln.scratch_size` (i64 >= 0, on the module): the arena's bytes;
     - `kiln.check_messages` (array of strings, on the module): the message
       of run-time check N at position N - 1 (kiln-materialize-checks);
     - `kiln.kernels` (array of [string, string] pairs, on the module): per
       parallel loop kiln-outline-parallel-loops outlined, its body
       function's symbol name and the ONNX nodes it computes (profiling);
     - `kiln.storage_only` (unit, on an op convert-onnx-to-linalg made):
       it converts int4/uint4/int2/uint2/float4e2m1/float8e8m0 elements
       (held as i8) or packs/unpacks them at the graph's boundary; targets
       that do not run them refuse it.
    The kernel strategy `#kiln.kernel_strategy<...>` (a dialect attribute,
    stored as `kiln.kernel_strategy` by kiln-select-kernel-strategy) is
    defined further below.
  }];
  let discardableAttrs = (ins
    "::mlir::UnitAttr":$parallel,
    "::mlir::UnitAttr":$scratch,
    "::mlir::IntegerAttr":$scratch_size,
    "::mlir::ArrayAttr":$check_messages,
    "::mlir::ArrayAttr":$kernels,
    "::mlir::UnitAttr":$storage_only
  );
  let hasOperationAttrVerify = 1;
  let hasRegionArgAttrVerify = 1;
  let hasRegionResultAttrVerify = 1;
  let useDefaultAttributePrinterParser = 1;
}

class Kiln_Op<string mnemonic, list<Trait> traits = []>
    : Op<Kiln_Dialect, mnemonic, traits>;

//===----------------------------------------------------------------------===//
// CheckOp
//===----------------------------------------------------------------------===//

def Kiln_CheckOp : Kiln_Op<"check", [MemoryEffects<[MemWrite]>]> {
  let summary = "a run-time check whose failure the entry function reports";
  let description = [{
    `kiln.check` states that `ok` (a scalar `i1` tensor) must be true at run
    time, e.g. that every data-dependent Gather index was in range. Lowerings
    that read memory at computed positions clamp the positions (so nothing
    reads out of bounds) and emit a check. The `kiln-materialize-checks` pass
    numbers the checks of the entry function, turns them into one extra `i32`
    status result (0 = all passed, N = check N failed first) and records the
    messages in the module attribute `kiln.check_messages`.

    Example:
    ```mlir
    kiln.check %in_range, "node 'Gather_3' (Gather): index out of range" : tensor<i1>
    ```
  }];
  let arguments = (ins 0DTensorOf<[I1]>:$ok, StrAttr:$message);
  let assemblyFormat = "$ok `,` $message attr-dict `:` type($ok)";
}

//===----------------------------------------------------------------------===//
// KernelStrategyAttr
//===----------------------------------------------------------------------===//

def Kiln_KernelStrategyAttr : AttrDef<Kiln_Dialect, "KernelStrategy"> {
  let mnemonic = "kernel_strategy";
  let summary = "how a CPU micro-kernel is blocked for the target";
  let description = [{
    Chosen by `kiln-select-kernel-strategy` for a matmul, batch matmul, NHWC
    convolution, depthwise convolution or NHWC pooling (discardable attribute
    `kiln.kernel_strategy`) and read by `kiln-emit-microkernels`, which makes
    no choice of its own:
     - `vector_width`: lanes of one vector register for the element type;
     - `registers`: vector registers of the target (16 for SSE / AVX2, 32
       for AVX-512 / NEON);
     - `rows` x `vectors`: the register block, output rows (matmul, conv:
       output pixels; depthwise, pooling: output columns) times vectors of
       output columns (channels); its `rows * vectors` accumulators, the
       `vectors` B (filter) vectors and one broadcast (input) register fit
       in `registers`;
     - `reduction_block`: reduction steps per pass over the accumulators (a
       matmul's K is blocked when it is longer; the other kernels do not
       block, and record their whole reduction);
     - `winograd` (convolutions on tensors, printed only when true): the
       conv is computed as Winograd F(2x2, 3x3) by kiln-winograd-convs
       (transforms around a batch matmul, which gets its own strategy).

    Example:
    ```mlir
    linalg.matmul {kiln.kernel_strategy = #kiln.kernel_strategy<
        vector_width = 8, registers = 16, rows = 6, vectors = 2,
        reduction_block = 64>} ins(...) outs(...)
    ```
  }];
  let parameters = (ins "int64_t":$vectorWidth, "int64_t":$registers,
                        "int64_t":$rows, "int64_t":$vectors,
                        "int64_t":$reductionBlock,
                        DefaultValuedParameter<"bool", "false">:$winograd);
  let assemblyFormat = [{
    `<` `vector_width` `=` $vectorWidth `,` `registers` `=` $registers `,`
    `rows` `=` $rows `,` `vectors` `=` $vectors `,`
    `reduction_block` `=` $reductionBlock
    (`,` `winograd` `=` $winograd^)? `>`
  }];
  let genVerifyDecl = 1;
  let extraClassDeclaration = [{
    /// The discardable attribute the strategy is recorded under.
    static constexpr ::llvm::StringLiteral kAttrName = "kiln.kernel_strategy";
  }];
}

#endif // KILN_DIALECT_KILN_TD
