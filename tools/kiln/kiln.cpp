//===- kiln.cpp - the kiln command line -----------------------------------===//
//
//   kiln compile model.onnx -o model.so [--target T] [--cpu C] [--emit K]
//                [--shape name=d0,d1,...]... [--name PREFIX]
//   kiln run model.so [kiln-run options]     (delegates to kiln-run)
//   kiln check model.onnx                    (what is supported; Check.cpp)
//   kiln verify model.onnx                   (kiln vs onnxruntime; Verify.cpp)
//   kiln inspect model.so                    (prints the model's descriptor)
//   kiln bench model.so [kiln-run options]   (latency percentiles, throughput)
//
// Every error is a message and exit code 1; nothing here may crash on input.
//
//===----------------------------------------------------------------------===//

#include "compiler/Options.h"
#include "compiler/Pipeline.h"
#include "compiler/Quantize.h"
#include "tools/kiln/Commands.h"
#include "tools/kiln/Progress.h"

#include "mlir/IR/Diagnostics.h"
#include "mlir/IR/MLIRContext.h"

#include "llvm/ADT/ScopeExit.h"
#include "llvm/ADT/StringExtras.h"
#include "llvm/Support/ErrorHandling.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/InitLLVM.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/Program.h"
#include "llvm/Support/raw_ostream.h"
#include "llvm/TargetParser/Triple.h"

#include <new>
#include <optional>
#include <unistd.h>
#include <string>
#include <vector>

using namespace llvm;
using kiln::tool::parseShape;
using kiln::tool::printDiagnostic;

namespace {

constexpr const char *kUsage =
    "usage:\n"
    "  kiln compile MODEL.onnx -o OUTPUT [options]\n"
    "      --target TRIPLE      target triple (default: the host), e.g.\n"
    "                           aarch64-linux-gnu, aarch64-linux-android24, "
    "arm64-apple-ios\n"
    "      --device NAME        the device to compile for: cpu (default),\n"
    "                           vulkan (SPIR-V), cuda[:sm_XX] (PTX, and a cubin\n"
    "                           when ptxas is found; default sm_80) or\n"
    "                           hip[:gfxNNN] (HSA code objects; default gfx90a);\n"
    "                           repeat it for one artifact holding\n"
    "                           several (--device cpu --device vulkan), the\n"
    "                           device chosen when it is opened\n"
    "      --cuda-path DIR      the CUDA toolkit (libdevice, ptxas; default\n"
    "                           /usr/local/cuda)\n"
    "      --rocm-path DIR      the folder holding ROCm's amdgcn/bitcode (math\n"
    "                           functions; default $ROCM_PATH, /opt/rocm or\n"
    "                           Debian's rocm-device-libs)\n"
    "      --cpu NAME           native (default for the host; generic for "
    "another --target),\n"
    "                           x86-64-v3 (AVX2), x86-64-v4 (AVX-512), an LLVM "
    "CPU name\n"
    "                           or an AArch64 architecture "
    "(armv8.2-a+dotprod+fp16)\n"
    "      --cpu A,B,...        one variant per CPU in one artifact, the best "
    "the running\n"
    "                           CPU supports picked at open (KILN_CPU=NAME "
    "forces one);\n"
    "                           --cpu portable: x86-64-v2,x86-64-v3,x86-64-v4 "
    "or\n"
    "                           armv8-a,armv8.2-a+dotprod+fp16,armv8.6-a+i8mm\n"
    "      --emit KIND          so (default), obj, static-lib, mlir, llvm; onnx\n"
    "                           (with --quantize: the QDQ model it made)\n"
    "      --shape NAME=D0,D1   fix or bound the dims of an input: a size, or\n"
    "                           MIN..MAX / MIN.. for a dim left symbolic (one\n"
    "                           compile runs every size in the bounds; dims the\n"
    "                           model leaves dynamic are symbolic by default;\n"
    "                           docs/dynamic-shapes.md) (repeatable)\n"
    "      --specialize NAME=FILE.pb  compile for one value of input NAME (a\n"
    "                           serialized onnx.TensorProto); a run given another\n"
    "                           value fails with an error (repeatable)\n"
    "      --sequence NAME=N    sequence input NAME has N items: the model's\n"
    "                           inputs NAME[0]..NAME[N-1] (--shape NAME[i]=...\n"
    "                           for items of unknown rank; docs/runtime-api.md)\n"
    "      --absent NAME        compile optional input NAME absent (an optional\n"
    "                           input is present by default) (repeatable)\n"
    "      --name PREFIX        symbol prefix (default: the output's stem)\n"
    "      --precision P        fp32 (default), bf16 or fp16: an f32 model's\n"
    "                           MatMul/Gemm/Conv weights stored in P and\n"
    "                           computed on P operands with f32 accumulation;\n"
    "                           inputs, outputs and other ops stay f32\n"
    "                           (docs/precision.md); tf32 (cuda only): f32\n"
    "                           products on tensor cores, operands rounded\n"
    "                           to tf32 (docs/gpu.md)\n"
    "      --quantize int8      quantize an f32 model (Conv, MatMul, Gemm: s8\n"
    "                           weights per channel, u8 activations) after\n"
    "                           calibrating on --calibration DIR (one folder\n"
    "                           of INPUT.npy per input set, or NAME.npy sets\n"
    "                           for a one-input model) or --calibration-random\n"
    "                           N (seeded random sets: a smoke run);\n"
    "                           docs/precision.md\n"
    "      --keep-float A,B     with --quantize: nodes left in float (besides\n"
    "                           an op whose output is a model output)\n"
    "      --keep-intermediates keep the object and descriptor source in "
    "OUTPUT.kiln/\n"
    "      --progress, --verbose  a line per stage on stderr (stage, time, "
    "what it made);\n"
    "                           default: on a terminal, once a compile takes "
    "2 s\n"
    "      --quiet              no stage lines\n"
    "      --time-report        print each phase's time and peak memory "
    "to stderr\n"
    "      --max-tensor-elements N, --max-tensor-bytes N, --max-unrolled-steps N,\n"
    "      --max-table-elements N, --max-constant-bytes N, --max-subgraph-depth N\n"
    "                           what a model may make kiln build (defaults and\n"
    "                           meaning: docs/reliability.md)\n"
    "  kiln run MODEL.so [--input NAME=FILE.npy]... [--output-dir DIR] "
    "[--threads N] [--repeat N] [--seed S]\n"
    "           [--device auto|cpu|vulkan[:SEL]|cuda[:SEL]|LIST]  where it runs "
    "(default\n"
    "                           auto: cuda, vulkan, then cpu, the first the "
    "artifact\n"
    "                           holds and this machine has; KILN_DEVICE)\n"
    "  kiln check MODEL.onnx [--device NAME] [--shape NAME=D0,D1]... [--quiet]\n"
    "                           what kiln supports, node by node, without "
    "compiling;\n"
    "                           exit code 0 when the model compiles\n"
    "  kiln verify MODEL.onnx [--input NAME=FILE.npy]... [compile options]\n"
    "                           compile, run kiln and onnxruntime on the same "
    "inputs,\n"
    "                           compare; on a mismatch find the first node that "
    "differs\n"
    "  kiln inspect MODEL.so [--sizes]\n"
    "                           the descriptor; --sizes: code, weights and "
    "scratch bytes,\n"
    "                           per section and per kernel\n"
    "  kiln bench MODEL.so [--warmup N] [--duration S | --count N] "
    "[--concurrency N] [--threads N]\n"
    "                           p50/p90/p99 latency and throughput (kiln-run "
    "--bench)\n";

/// Limits are at most 2^62, so sums of two sizes within them never wrap.
constexpr int64_t kMaxLimit = int64_t(1) << 62;

/// The field of `limits` a --max-* flag (`--max-x N` or `--max-x=N`) sets.
std::optional<int64_t *> limitFlag(StringRef arg, kiln::CompileLimits &limits) {
  StringRef flag = arg.take_front(arg.find('='));
  if (flag == "--max-tensor-elements")
    return &limits.maxTensorElements;
  if (flag == "--max-tensor-bytes")
    return &limits.maxTensorBytes;
  if (flag == "--max-unrolled-steps")
    return &limits.maxUnrolledSteps;
  if (flag == "--max-table-elements")
    return &limits.maxTableElements;
  if (flag == "--max-constant-bytes")
    return &limits.maxConstantBytes;
  if (flag == "--max-subgraph-depth")
    return &limits.maxSubgraphDepth;
  return std::nullopt;
}

int usageError(const Twine &message) {
  errs() << "kiln: error: " << message << "\n" << kUsage;
  return 1;
}

int runCompile(ArrayRef<StringRef> args) {
  kiln::CompileOptions options;
  std::string precision = "fp32";
  std::string quantizeMode, randomSets;
  bool emitOnnx = false;
  kiln::QuantizeOptions quantize;
  auto progressMode = kiln::tool::ProgressReporter::Mode::Auto;
  for (size_t i = 0; i < args.size(); ++i) {
    StringRef arg = args[i];
    auto value = [&](StringRef flag, std::string &out) {
      if (arg.consume_front(flag)) {
        if (arg.consume_front("=")) {
          out = arg.str();
          return true;
        }
        if (arg.empty() && i + 1 < args.size()) {
          out = args[++i].str();
          return true;
        }
        out = "\x01"; // marks a missing value
        return true;
      }
      return false;
    };
    std::string v;
    if (value("-o", v) || value("--output", v)) {
      options.outputPath = v;
    } else if (value("--target", v)) {
      options.triple = v;
    } else if (value("--cpu", v)) {
      options.cpu = v;
    } else if (value("--device", v)) {
      // Repeatable: one artifact holding every device given.
      if (v != "\x01")
        options.devices.push_back(v);
    } else if (value("--cuda-path", v)) {
      options.cudaPath = v;
    } else if (value("--rocm-path", v)) {
      options.rocmPath = v;
    } else if (value("--name", v)) {
      options.name = v;
    } else if (value("--precision", v)) {
      precision = v;
    } else if (value("--emit", v)) {
      if (v == "so")
        options.emit = kiln::EmitKind::SharedLibrary;
      else if (v == "obj")
        options.emit = kiln::EmitKind::Object;
      else if (v == "static-lib")
        options.emit = kiln::EmitKind::StaticLibrary;
      else if (v == "mlir")
        options.emit = kiln::EmitKind::MLIR;
      else if (v == "llvm")
        options.emit = kiln::EmitKind::LLVMIR;
      else if (v == "onnx")
        emitOnnx = true;
      else
        return usageError("unknown --emit kind '" + v + "'");
    } else if (value("--quantize", v)) {
      quantizeMode = v;
    } else if (value("--calibration-random", v)) { // before its prefix
      randomSets = v;
    } else if (value("--calibration", v)) {
      quantize.calibrationDir = v;
    } else if (value("--keep-float", v)) {
      for (StringRef name : llvm::split(StringRef(v), ','))
        if (!name.empty())
          quantize.keepFloat.push_back(name.str());
    } else if (value("--shape", v)) {
      std::string error;
      if (v != "\x01" && !parseShape(v, options, error))
        return usageError(error);
    } else if (value("--specialize", v)) {
      if (v != "\x01") {
        auto [name, file] = StringRef(v).split('=');
        if (name.empty() || file.empty())
          return usageError("--specialize expects NAME=FILE.pb (got '" + v + "')");
        options.specializedInputs[name] = file.str();
      }
    } else if (value("--sequence", v)) {
      if (v != "\x01") {
        auto [name, count] = StringRef(v).split('=');
        int64_t n;
        if (name.empty() || count.getAsInteger(10, n) || n < 0 || n > (1 << 20))
          return usageError("--sequence expects NAME=N with N items, 0 <= N <= 2^20 (got '" +
                            v + "')");
        options.sequenceLengths[name] = n;
      }
    } else if (value("--absent", v)) {
      if (v != "\x01") {
        if (v.empty())
          return usageError("--absent expects the name of an optional input");
        options.absentInputs.push_back(v);
      }
    } else if (std::optional<int64_t *> limit = limitFlag(arg, options.limits)) {
      std::string flag = arg.take_front(arg.find('=')).str(), text;
      if (!value(flag, text) || text == "\x01")
        return usageError("option '" + flag + "' needs a value");
      int64_t n;
      if (StringRef(text).getAsInteger(10, n) || n <= 0 || n > kMaxLimit)
        return usageError("option '" + flag +
                          "' needs an integer in [1, 2^62], got '" + text + "'");
      **limit = n;
    } else if (arg == "--progress" || arg == "--verbose" || arg == "-v") {
      progressMode = kiln::tool::ProgressReporter::Mode::Always;
    } else if (arg == "--quiet" || arg == "-q") {
      progressMode = kiln::tool::ProgressReporter::Mode::Never;
    } else if (arg == "--keep-intermediates") {
      options.keepIntermediates = true;
    } else if (arg == "--time-report") {
      options.timeReport = true;
    } else if (arg.starts_with("-")) {
      return usageError("unknown option '" + arg + "'");
    } else if (options.modelPath.empty()) {
      options.modelPath = arg.str();
    } else {
      return usageError("more than one model given ('" + options.modelPath +
                        "', '" + arg + "')");
    }
    if (v == "\x01")
      return usageError("option '" + args[i] + "' needs a value");
  }
  if (options.modelPath.empty())
    return usageError("no model given");
  std::string error;
  if (!kiln::tool::checkDevices(options, error))
    return usageError(error);
  if (options.outputPath.empty())
    return usageError("no output given (-o)");
  // Apple objects record the OS version they were built for (LC_BUILD_VERSION);
  // without one in the triple LLVM writes none and Xcode's linker guesses.
  if (!options.triple.empty()) {
    Triple triple(Triple::normalize(options.triple));
    if (triple.isOSDarwin() && triple.getOSMajorVersion() == 0) {
      const char *version = triple.isMacOSX() ? "11.0" : "13.0";
      triple.setOSName((triple.getOSName() + version).str());
      options.triple = triple.str();
    }
  }
  if (precision != "fp32" && precision != "bf16" && precision != "fp16" &&
      precision != "tf32")
    return usageError("--precision " + precision +
                      " is not supported (fp32, bf16, fp16 or tf32)");
  // tf32 is a way of computing the cuda target's f32 products (tensor
  // cores), not a format other devices have.
  if (precision == "tf32") {
    std::vector<std::string> devices = options.devices;
    if (devices.empty())
      devices.push_back(options.device);
    for (const std::string &device : devices)
      if (StringRef(device).split(':').first != "cuda")
        return usageError("--precision tf32 is for the cuda device only "
                          "(tensor cores), not --device " + device);
  }
  bool quantizing = !quantizeMode.empty();
  if (quantizing && quantizeMode != "int8")
    return usageError("--quantize " + quantizeMode + " is not supported (int8)");
  if (!randomSets.empty()) {
    unsigned n;
    if (StringRef(randomSets).getAsInteger(10, n) || n == 0 || n > 100000)
      return usageError("--calibration-random needs a count in [1, 100000], got '" +
                        randomSets + "'");
    quantize.randomSets = n;
  }
  if (quantizing && quantize.calibrationDir.empty() == !quantize.randomSets)
    return usageError("--quantize int8 needs --calibration DIR or "
                      "--calibration-random N (one of them)");
  if (quantizing && precision != "fp32")
    return usageError("--quantize int8 and --precision " + precision +
                      " do not combine (one narrows to 8-bit integers, the "
                      "other to 16-bit floats)");
  if (!quantizing && (!quantize.calibrationDir.empty() || quantize.randomSets ||
                      !quantize.keepFloat.empty() || emitOnnx))
    return usageError("--calibration, --calibration-random, --keep-float and "
                      "--emit onnx go with --quantize int8");
  options.precision = precision;

  kiln::tool::ProgressReporter reporter(progressMode);
  if (reporter.enabled())
    options.progress = [&](StringRef stage, StringRef detail) {
      reporter.stage(stage, detail);
    };
  mlir::DialectRegistry registry;
  kiln::registerCompilerDialects(registry);
  mlir::MLIRContext context(registry);
  context.disableMultithreading();
  mlir::ScopedDiagnosticHandler handler(&context, [](mlir::Diagnostic &diag) {
    printDiagnostic(diag);
    return mlir::success();
  });
  if (!quantizing)
    return mlir::failed(kiln::compileModel(context, options)) ? 1 : 0;

  // Quantize into a work folder (kept beside the output with
  // --keep-intermediates), then compile the QDQ model it wrote.
  SmallString<256> workDir;
  if (options.keepIntermediates) {
    workDir = options.outputPath + ".quantize";
    sys::fs::create_directories(workDir);
  } else if (std::error_code ec =
                 sys::fs::createUniqueDirectory("kiln-quantize", workDir)) {
    errs() << "kiln: error: cannot create a temporary folder: " << ec.message()
           << "\n";
    return 1;
  }
  auto cleanup = llvm::make_scope_exit([&] {
    if (!options.keepIntermediates)
      sys::fs::remove_directories(workDir);
  });
  std::string self = sys::fs::getMainExecutable(nullptr, (void *)&usageError);
  SmallString<256> runner(sys::path::parent_path(self));
  sys::path::append(runner, "kiln-run");
  quantize.runner = std::string(runner);
  if (progressMode == kiln::tool::ProgressReporter::Mode::Always)
    quantize.note = [](StringRef line) { errs() << "quantize: " << line << "\n"; };
  mlir::FailureOr<std::string> quantized =
      kiln::quantizeModel(context, options, quantize, workDir);
  if (mlir::failed(quantized))
    return 1;
  if (emitOnnx) {
    if (std::error_code ec = sys::fs::copy_file(*quantized, options.outputPath)) {
      errs() << "kiln: error: cannot write '" << options.outputPath
             << "': " << ec.message() << "\n";
      return 1;
    }
    return 0;
  }
  kiln::CompileOptions quantizedOptions = options;
  quantizedOptions.modelPath = *quantized;
  return mlir::failed(kiln::compileModel(context, quantizedOptions)) ? 1 : 0;
}

/// `kiln run`, `kiln inspect` and `kiln bench` are the runtime-only runner's job: running a
/// model must cost what it costs a user's program, not load LLVM.
int delegateToRunner(const char *argv0, StringRef subcommand,
                     ArrayRef<StringRef> args) {
  std::string self = sys::fs::getMainExecutable(argv0, (void *)&usageError);
  SmallString<256> runner(sys::path::parent_path(self));
  sys::path::append(runner, "kiln-run");
  if (!sys::fs::can_execute(runner)) {
    errs() << "kiln: error: cannot find the runner '" << runner << "'\n";
    return 1;
  }
  std::vector<StringRef> runnerArgs = {runner};
  if (subcommand == "inspect") {
    // ready_ns is a clock reading for tools that time the process (bench/),
    // meaningless to a person reading `kiln inspect`.
    runnerArgs.push_back("--inspect");
    runnerArgs.push_back("--no-ready-ns");
  }
  else if (subcommand == "bench")
    runnerArgs.push_back("--bench");
  runnerArgs.insert(runnerArgs.end(), args.begin(), args.end());
  std::string error;
  int rc = sys::ExecuteAndWait(runner, runnerArgs, std::nullopt, {}, 0, 0,
                               &error);
  if (rc < 0) {
    errs() << "kiln: error: the runner failed: " << error << "\n";
    return 1;
  }
  return rc;
}

} // namespace

namespace kiln::tool {

bool checkDevices(CompileOptions &options, std::string &error) {
  if (options.devices.empty())
    return true;
  // One build per device: the runtime picks a variant by device name.
  for (size_t i = 0; i < options.devices.size(); ++i) {
    StringRef kind = StringRef(options.devices[i]).split(':').first;
    for (size_t j = 0; j < i; ++j)
      if (StringRef(options.devices[j]).split(':').first == kind) {
        error = "--device names " + kind.str() + " twice ('" +
                options.devices[j] + "', '" + options.devices[i] +
                "'): an artifact holds one build per device";
        return false;
      }
  }
  options.device = options.devices.front();
  if (options.devices.size() == 1)
    options.devices.clear();
  return true;
}

bool parseShape(StringRef spec, CompileOptions &options,
                std::string &error) {
  auto [name, dims] = spec.rsplit('=');
  if (name.empty() || dims.empty() || !spec.contains('=')) {
    error = "--shape expects NAME=D0,D1,... with each D a size or bounds "
            "MIN..MAX / MIN.. (got '" +
            spec.str() + "')";
    return false;
  }
  SmallVector<DimSpec> shape;
  SmallVector<StringRef> parts;
  dims.split(parts, ',');
  for (StringRef part : parts) {
    part = part.trim();
    auto bad = [&]() {
      error = "--shape " + name.str() + ": '" + part.str() +
              "' is not a non-negative size or bounds MIN..MAX / MIN..";
      return false;
    };
    int64_t lo, hi = -1;
    if (part.contains("..")) {
      auto [min, max] = part.split("..");
      if (min.trim().getAsInteger(10, lo) || lo < 0 ||
          (!max.trim().empty() && (max.trim().getAsInteger(10, hi) || hi < lo)))
        return bad();
      shape.push_back(DimSpec::range(lo, hi));
      continue;
    }
    if (part.getAsInteger(10, lo) || lo < 0)
      return bad();
    shape.push_back(DimSpec(lo));
  }
  options.inputShapes[name] = shape;
  return true;
}

/// Prints diagnostics as `kiln: error: <message>` plus attached notes.
void printDiagnostic(mlir::Diagnostic &diag) {
  const char *severity = "error";
  if (diag.getSeverity() == mlir::DiagnosticSeverity::Warning)
    severity = "warning";
  else if (diag.getSeverity() == mlir::DiagnosticSeverity::Note)
    severity = "note";
  else if (diag.getSeverity() == mlir::DiagnosticSeverity::Remark)
    severity = "remark";
  errs() << "kiln: " << severity << ": " << diag.str() << "\n";
  for (mlir::Diagnostic &note : diag.getNotes())
    errs() << "kiln: note: " << note.str() << "\n";
}

} // namespace kiln::tool

/// The last line of defense when memory runs out anyway (a model within the
/// limits that still needs more than the process may use): an error and exit
/// code 1, not an abort.
[[noreturn]] void outOfMemory() {
  static const char message[] =
      "kiln: error: out of memory while compiling (the model needs more memory "
      "than this process may use; lower the --max-* limits to find the node, "
      "docs/reliability.md)\n";
  // Nothing that allocates: write(2) and _exit.
  (void)!::write(2, message, sizeof(message) - 1);
  ::_exit(1);
}

int main(int argc, char **argv) {
  InitLLVM init(argc, argv);
  std::set_new_handler(outOfMemory);
  llvm::install_bad_alloc_error_handler(
      [](void *, const char *, bool) { outOfMemory(); });
  if (argc < 2)
    return usageError("no command given");
  StringRef command = argv[1];
  std::vector<StringRef> args(argv + 2, argv + argc);
  if (command == "compile")
    return runCompile(args);
  if (command == "check")
    return kiln::tool::runCheck(args);
  if (command == "verify")
    return kiln::tool::runVerify(argv[0], args);
  if (command == "run" || command == "inspect" || command == "bench")
    return delegateToRunner(argv[0], command, args);
  if (command == "-h" || command == "--help" || command == "help") {
    outs() << kUsage;
    return 0;
  }
  return usageError("unknown command '" + command + "'");
}
