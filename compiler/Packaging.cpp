//===- Packaging.cpp - object code -> .so / .o / .a + header --------------===//

#include "compiler/Packaging.h"

#include "runtime/include/kiln/model_abi.h"
#include "runtime/src/artifact.h"

#include "llvm/ADT/StringExtras.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/Program.h"
#include "llvm/Support/raw_ostream.h"
#include "llvm/TargetParser/Host.h"
#include "llvm/TargetParser/Triple.h"

#include <cstdlib>

using namespace llvm;

namespace kiln {

/// A C string literal for `text`.
std::string cString(StringRef text) {
  std::string out = "\"";
  for (unsigned char c : text) {
    if (c == '"' || c == '\\')
      out += '\\', out += c;
    else if (c >= 0x20 && c < 0x7f)
      out += c;
    else // Always three octal digits: a following digit cannot extend it.
      out += {'\\', char('0' + (c >> 6)), char('0' + ((c >> 3) & 7)),
              char('0' + (c & 7))};
  }
  return out + "\"";
}

static std::string shapeList(ArrayRef<int64_t> shape) {
  std::string out;
  for (int64_t dim : shape)
    out += (out.empty() ? "" : ", ") +
           (KILN_DIM_IS_SYMBOL(dim)
                ? "KILN_DIM_SYMBOL(" + std::to_string(KILN_DIM_SYMBOL_ID(dim)) + ")"
                : std::to_string(dim));
  return out;
}

/// "batch x 784" for a comment.
static std::string shapeText(ArrayRef<int64_t> shape,
                             ArrayRef<SymbolInfo> symbols) {
  std::string out;
  for (int64_t dim : shape) {
    out += out.empty() ? "" : " x ";
    if (!KILN_DIM_IS_SYMBOL(dim))
      out += std::to_string(dim);
    else if (KILN_DIM_SYMBOL_ID(dim) < symbols.size())
      out += symbols[KILN_DIM_SYMBOL_ID(dim)].name;
    else
      out += "?";
  }
  return out.empty() ? "scalar" : out;
}

void writeTensorTable(raw_ostream &os, StringRef table,
                      ArrayRef<TensorInfo> tensors) {
  for (auto [index, tensor] : llvm::enumerate(tensors))
    if (!tensor.shape.empty())
      os << "static const int64_t " << table << "_shape" << index << "[] = {"
         << shapeList(tensor.shape) << "};\n";
  os << "static const kiln_tensor_desc " << table << "[] = {\n";
  for (auto [index, tensor] : llvm::enumerate(tensors)) {
    os << "  {" << cString(tensor.name) << ", " << tensor.dtype << ", "
       << tensor.shape.size() << ", ";
    if (tensor.shape.empty())
      os << "0";
    else
      os << table << "_shape" << index;
    os << "},\n";
  }
  if (tensors.empty())
    os << "  {0, 0, 0, 0},\n";
  os << "};\n";
}

void writeTensorAndCheckTables(raw_ostream &os, const ModelInfo &model) {
  writeTensorTable(os, "kiln_inputs", model.inputs);
  writeTensorTable(os, "kiln_outputs", model.outputs);
  os << "static const char *const kiln_checks[] = {\n";
  for (const std::string &message : model.checkMessages)
    os << "  " << cString(message) << ",\n";
  if (model.checkMessages.empty())
    os << "  0,\n";
  os << "};\n\n";
}

/// A C comment's text: no `*/` inside.
std::string commentText(StringRef text) {
  std::string out;
  for (size_t i = 0; i < text.size(); ++i) {
    char c = text[i];
    if (c == '*' && i + 1 < text.size() && text[i + 1] == '/')
      out += "* ";
    else if (c == '\n' || c == '\r')
      out += ' ';
    else
      out += c;
  }
  return out;
}

/// The tool named `name` from the LLVM installation kiln was built against,
/// unless the environment variable `envOverride` names another.
std::string findTool(StringRef name, const char *envOverride) {
  if (const char *path = std::getenv(envOverride))
    return path;
  SmallString<256> path(KILN_LLVM_TOOLS_DIR);
  sys::path::append(path, name);
  if (sys::fs::can_execute(path))
    return std::string(path);
  if (ErrorOr<std::string> found = sys::findProgramByName(name))
    return *found;
  return name.str();
}

bool runTool(ArrayRef<std::string> args, StringRef workDir,
             std::string &error) {
  SmallVector<StringRef> argRefs(args.begin(), args.end());
  SmallString<256> logPath(workDir);
  sys::path::append(logPath, "tool-output.txt");
  // A fresh log per tool: the file is not truncated when reopened, and an
  // error must not end with the tail of an earlier tool's warnings.
  sys::fs::remove(logPath);
  std::optional<StringRef> redirects[] = {std::nullopt, StringRef(logPath),
                                          StringRef(logPath)};
  std::string execError;
  int rc = sys::ExecuteAndWait(args[0], argRefs, std::nullopt, redirects, 0, 0,
                               &execError);
  if (rc == 0)
    return true;
  std::string log;
  if (auto buffer = MemoryBuffer::getFile(logPath))
    log = (*buffer)->getBuffer().str();
  error = "'" + join(argRefs, " ") + "' failed" +
          (execError.empty() ? "" : ": " + execError) +
          (log.empty() ? "" : ":\n" + log);
  return false;
}

bool writeFile(StringRef path, StringRef contents, std::string &error) {
  std::error_code ec;
  raw_fd_ostream os(path, ec);
  if (ec) {
    error = "cannot write '" + path.str() + "': " + ec.message();
    return false;
  }
  os << contents;
  return true;
}

std::string sanitizeSymbolPrefix(StringRef name) {
  std::string out;
  for (char c : name)
    out += isAlnum(c) ? c : '_';
  // `kiln` and `kiln_*` (any case: the header's macros are upper case) are
  // the runtime's and the descriptor's own names: `-o kiln.so` would define
  // `kiln_descriptor` twice.
  std::string lower = StringRef(out).lower();
  bool reserved = lower == "kiln" || StringRef(lower).starts_with("kiln_");
  if (out.empty() || isDigit(out[0]) || reserved)
    out = "m_" + out;
  return out;
}

bool checkModelNames(const ModelInfo &model, std::string &error) {
  // The runtime binds tensors by C string: a name with a NUL could never be
  // bound, and two that differ only after it would look alike.
  auto check = [&](StringRef kind, ArrayRef<TensorInfo> tensors) {
    for (const TensorInfo &tensor : tensors)
      if (StringRef(tensor.name).contains('\0')) {
        error = (kind + " name '" + StringRef(tensor.name).split('\0').first +
                 "\\0...' contains a NUL byte; the runtime matches names as "
                 "C strings, so it could never be bound")
                    .str();
        return false;
      }
    return true;
  };
  return check("input", model.inputs) && check("output", model.outputs);
}

bool appendArtifactChecksum(StringRef path, std::string &error) {
  ErrorOr<std::unique_ptr<MemoryBuffer>> buffer =
      MemoryBuffer::getFile(path, /*IsText=*/false,
                            /*RequiresNullTerminator=*/false);
  if (!buffer) {
    error = "cannot read '" + path.str() + "': " + buffer.getError().message();
    return false;
  }
  StringRef data = (*buffer)->getBuffer();
  uint64_t hash = kiln_artifact_hash(data.data(), data.size());
  unsigned char trailer[KILN_ARTIFACT_TRAILER_SIZE];
  kiln_artifact_store_le64(trailer, data.size());
  kiln_artifact_store_le64(trailer + 8, hash);
  memcpy(trailer + 16, KILN_ARTIFACT_MAGIC, 8);
  buffer->reset();
  std::error_code ec;
  raw_fd_ostream os(path, ec, sys::fs::OF_Append);
  if (!ec) {
    os.write(reinterpret_cast<const char *>(trailer), sizeof(trailer));
    os.close();
    ec = os.error();
  }
  if (ec) {
    error = "cannot write '" + path.str() + "': " + ec.message();
    return false;
  }
  return true;
}

std::string entrySymbolName(const ModelInfo &model) {
  return model.prefix + (model.batchLoop ? "_image_main" : "_main");
}

namespace {
/// entryParameters, with or without the symbols (a batch loop's image entry
/// takes none).
std::string entryParameterList(const ModelInfo &model, bool named,
                               bool symbols) {
  std::string out;
  if (symbols)
    out += std::string("int64_t *") + (named ? "symbols" : "") + ", ";
  for (size_t i = 0; i < model.inputs.size(); ++i)
    out += "const void *" + (named ? "input" + std::to_string(i) : "") + ", ";
  for (size_t i = 0; i < model.outputs.size(); ++i)
    out += "void *" + (named ? "output" + std::to_string(i) : "") + ", ";
  return out + "int32_t *" + (named ? "status" : "");
}
} // namespace

/// The parameter list of `<prefix>_main`, shared by the descriptor source and
/// the header so the two always agree.
std::string entryParameters(const ModelInfo &model, bool named) {
  // A model with symbols takes every symbol's value first
  // (kiln-bind-symbolic-dims).
  return entryParameterList(model, named, !model.symbols.empty());
}

namespace {

/// C type of one element, for the header (16-bit floats as their bits).
const char *elementCType(int32_t dtype) {
  switch (dtype) {
#define KILN_X(NAME, ID, STR, BYTES, CLASS, CTYPE)                             \
  case ID:                                                                     \
    return #CTYPE;
    KILN_DTYPE_TABLE(KILN_X)
#undef KILN_X
  }
  return "uint8_t";
}

const char *dtypeEnumName(int32_t dtype) {
  switch (dtype) {
#define KILN_X(NAME, ID, STR, BYTES, CLASS, CTYPE)                             \
  case ID:                                                                     \
    return "KILN_DTYPE_" #NAME;
    KILN_DTYPE_TABLE(KILN_X)
#undef KILN_X
  }
  return "KILN_DTYPE_UNDEFINED";
}

size_t elementSize(int32_t dtype) {
  switch (dtype) {
#define KILN_X(NAME, ID, STR, BYTES, CLASS, CTYPE)                             \
  case ID:                                                                     \
    return BYTES;
    KILN_DTYPE_TABLE(KILN_X)
#undef KILN_X
  }
  return 0;
}

bool isApple(StringRef triple) {
  llvm::Triple t(triple);
  return t.isOSBinFormatMachO();
}

} // namespace

/// The folder holding `kiln/model_abi.h`: beside an installed kiln
/// (`<prefix>/bin/kiln` -> `<prefix>/include`), else the source tree's.
std::string runtimeIncludeDir() {
  std::string self = sys::fs::getMainExecutable(nullptr, nullptr);
  if (!self.empty()) {
    SmallString<256> dir(sys::path::parent_path(sys::path::parent_path(self)));
    sys::path::append(dir, "include");
    SmallString<256> header(dir);
    sys::path::append(header, "kiln", "model_abi.h");
    if (sys::fs::exists(header))
      return std::string(dir);
  }
  return KILN_RUNTIME_INCLUDE_DIR;
}

namespace {
/// A batch loop's argument for `tensor` at image `i`: `base` plus i images'
/// bytes when dim 0 is the batch (symbol 0), else `base` itself.
std::string batchLoopArgument(const TensorInfo &tensor, const std::string &base,
                              bool input) {
  if (tensor.shape.empty() || tensor.shape[0] != KILN_DIM_SYMBOL(0))
    return base;
  uint64_t bytes = elementSize(tensor.dtype);
  for (int64_t d : ArrayRef(tensor.shape).drop_front())
    bytes *= static_cast<uint64_t>(d);
  return std::string("(") + (input ? "const char *" : "char *") + ")" + base +
         " + i * " + std::to_string(bytes) + "ull";
}
} // namespace

std::string generateDescriptorSource(const ModelInfo &model,
                                     bool forSharedLibrary) {
  std::string source;
  raw_string_ostream os(source);
  const std::string &p = model.prefix;
  os << "/* Generated by kiln: the descriptor of model '" << p
     << "'. Do not edit. */\n"
     << "#include <stdint.h>\n#include \"kiln/model_abi.h\"\n\n";
  // The entry takes bare pointers: inputs, outputs, then the status slot.
  // `<p>_main_ctx` is `<p>_main` plus the scratch arena its intermediates
  // live in (scratch_size bytes, kiln-plan-memory) and the run's context,
  // through which generated parallel loops reach the thread pool
  // (kiln/parallel.h).
  std::string entry = entrySymbolName(model);
  os << "extern void " << entry << "_ctx("
     << entryParameterList(model, false,
                           !model.symbols.empty() && !model.batchLoop)
     << ", void *, kiln_exec_context *);\n\n";
  writeTensorAndCheckTables(os, model);
  bool symbolic = !model.symbols.empty();
  if (symbolic) {
    // Symbols, and the shape function: every symbol is bound from the inputs
    // (the runtime checks them), so it fills in the outputs' dims and the
    // scratch arena's size: the static part planned at compile time, plus
    // the buffers sized from the symbols (kiln-plan-memory), for which the
    // runtime grows the arena before the run.
    os << "static const kiln_dim_symbol kiln_symbols[] = {\n";
    for (const SymbolInfo &sym : model.symbols)
      os << "  {" << cString(sym.name) << ", " << sym.min << "ll, " << sym.max
         << "ll, " << (sym.run ? "KILN_SYMBOL_RUN" : "0") << ", 0},\n";
    os << "};\n\n"
       << "static kiln_model_status kiln_shape(int64_t *symbols, int64_t "
          "*const *output_dims,\n"
       << "                                    uint64_t *memory_sizes, "
          "uint64_t *binding_offsets) {\n"
       << "  (void)symbols; (void)output_dims; (void)binding_offsets;\n";
    for (auto [j, tensor] : llvm::enumerate(model.outputs))
      for (auto [k, dim] : llvm::enumerate(tensor.shape))
        os << "  output_dims[" << j << "][" << k << "] = "
           << (KILN_DIM_IS_SYMBOL(dim)
                   ? "symbols[" + std::to_string(KILN_DIM_SYMBOL_ID(dim)) + "]"
                   : std::to_string(dim) + "ll")
           << ";\n";
    os << "  memory_sizes[0] = " << model.scratchSize << "ull";
    if (!model.dynamicScratchSize.empty())
      os << " + (uint64_t)" << model.dynamicScratchSize;
    os << ";\n"
       << "  return 0;\n}\n\n";
  }
  // The adapter is linked into the model's own LLVM module; the call must not
  // be inlined, or the object would hold the graph's code twice.
  os << "static kiln_model_status kiln_run("
     << (symbolic ? "int64_t *symbols, " : "")
     << "void *const *inputs, "
        "void *const *outputs,\n"
        "                                void *scratch, kiln_exec_context "
        "*context) {\n"
        "  int32_t status = 0;\n";
  if (model.batchLoop) {
    // One image at a time: the image entry on each image's slice of the
    // batched tensors (the others whole), the same arena for every image.
    os << "  for (int64_t i = 0; i < symbols[0] && status == 0; ++i) {\n"
       << "    [[clang::noinline]] " << entry << "_ctx(";
    for (size_t i = 0; i < model.inputs.size(); ++i)
      os << batchLoopArgument(model.inputs[i],
                              "inputs[" + std::to_string(i) + "]", true)
         << ", ";
    for (size_t i = 0; i < model.outputs.size(); ++i)
      os << batchLoopArgument(model.outputs[i],
                              "outputs[" + std::to_string(i) + "]", false)
         << ", ";
    os << "&status, scratch, context);\n  }\n  return status;\n}\n\n";
    // `<p>_main` of the header: the plain image entry once per image.
    os << "extern void " << entry << "("
       << entryParameterList(model, false, false) << ");\n"
       << "void " << p << "_main(" << entryParameters(model, true) << ") {\n"
       << "  *status = 0;\n"
       << "  for (int64_t i = 0; i < symbols[0] && *status == 0; ++i)\n"
       << "    " << entry << "(";
    for (size_t i = 0; i < model.inputs.size(); ++i)
      os << batchLoopArgument(model.inputs[i], "input" + std::to_string(i),
                              true)
         << ", ";
    for (size_t i = 0; i < model.outputs.size(); ++i)
      os << batchLoopArgument(model.outputs[i], "output" + std::to_string(i),
                              false)
         << ", ";
    os << "status);\n}\n\n";
  } else {
    os << "  [[clang::noinline]] " << entry << "_ctx("
       << (symbolic ? "symbols, " : "");
    for (size_t i = 0; i < model.inputs.size(); ++i)
      os << "inputs[" << i << "], ";
    for (size_t i = 0; i < model.outputs.size(); ++i)
      os << "outputs[" << i << "], ";
    os << "&status, scratch, context);\n  return status;\n}\n\n";
  }
  // The kernels (outlined parallel loops): their body pointers (the
  // `<p>_main_kernels` table the code generator emits) and the ONNX nodes
  // they compute, for profiles.
  size_t numKernels = model.kernelNames.size();
  if (numKernels) {
    os << "extern void *const " << entry << "_kernels[" << numKernels << "];\n"
       << "static const char *const kiln_kernel_names[] = {\n";
    for (const std::string &name : model.kernelNames)
      os << "  " << cString(name) << ",\n";
    os << "};\n\n";
  }
  // One host executable (the adapter above) and one host-scratch memory
  // need; no symbols, no shape function, no device code (model_abi.h).
  os << "static const kiln_executable_desc kiln_executables[] = {\n"
     << "  {KILN_EXECUTABLE_HOST, 0, " << cString(model.triple)
     << (symbolic ? ", 0, kiln_run, " : ", kiln_run, 0, ");
  if (numKernels)
    os << entry << "_kernels, sizeof(void *) * " << numKernels << "ull, "
       << numKernels << ", kiln_kernel_names";
  else
    os << "0, 0, 0, 0";
  os << "},\n};\n\n"
     << "static const kiln_memory_need kiln_memory[] = {\n"
     << "  {KILN_MEMORY_HOST_SCRATCH, 0, " << model.scratchSize << "ull, "
     << model.scratchAlignment << ", 0},\n};\n\n";
  os << "static const kiln_model_desc kiln_descriptor = {\n"
     << "  .abi_version = KILN_MODEL_ABI_VERSION,\n"
     << "  .name = " << cString(model.name.empty() ? p : model.name) << ",\n"
     << "  .producer = " << cString(model.producer) << ",\n"
     << "  .target_triple = " << cString(model.triple) << ",\n"
     << "  .cpu = " << cString(model.cpu) << ",\n"
     << "  .cpu_features = " << cString(model.runtimeFeatures) << ",\n"
     << "  .num_inputs = " << model.inputs.size()
     << ", .num_outputs = " << model.outputs.size() << ",\n"
     << "  .inputs = kiln_inputs, .outputs = kiln_outputs,\n"
     << (symbolic ? "  .num_symbols = " + std::to_string(model.symbols.size()) +
                        ", .symbols = kiln_symbols, .shape_fn = kiln_shape,\n"
                  : "")
     << "  .num_executables = 1, .executables = kiln_executables,\n"
     << "  .entry_executable = 0,\n"
     << "  .num_memory_needs = 1, .memory_needs = kiln_memory,\n"
     << "  .num_check_messages = " << model.checkMessages.size()
     << ", .check_messages = kiln_checks,\n};\n\n";
  os << "__attribute__((visibility(\"default\")))\n"
     << "const kiln_model_desc *" << p
     << "_descriptor(void) { return &kiln_descriptor; }\n";
  if (forSharedLibrary)
    os << "\n__attribute__((visibility(\"default\")))\n"
       << "const kiln_model_desc *kiln_model_descriptor(void) { return "
          "&kiln_descriptor; }\n";
  return source;
}

std::string generateModelHeader(const ModelInfo &model) {
  std::string header;
  raw_string_ostream os(header);
  const std::string &p = model.prefix;
  std::string P = StringRef(p).upper();
  // Not KILN_MODEL_<P>_H: `--name abi` would be model_abi.h's own guard.
  std::string guard = "KILN_GENERATED_" + P + "_H";
  os << "/* Generated by kiln for model '" << p << "' (target " << model.triple
     << ", cpu " << model.cpu << "). Do not edit.\n"
     << " *\n"
     << " * Run it through the kiln runtime (kiln/runtime.h):\n"
     << " *   kiln_model *m;\n"
     << " *   kiln_status s = kiln_model_open_descriptor(" << p
     << "_descriptor(), NULL, &m);\n"
     << " * then kiln_model_run() with tensors named " << P
     << "_INPUT<i>_NAME / " << P << "_OUTPUT<j>_NAME.\n"
     << " * Every symbol of this model starts with '" << p
     << "_', so other models link beside it. */\n"
     << "#ifndef " << guard << "\n#define " << guard << "\n\n"
     << "#include <stdint.h>\n\n"
     << "#include \"kiln/model_abi.h\"\n\n#ifdef __cplusplus\nextern \"C\" "
        "{\n#endif\n\n"
     << "/* The model's descriptor; pass it to kiln_model_open_descriptor(). "
        "Static data, never freed. */\n"
     << "const kiln_model_desc *" << p << "_descriptor(void);\n\n";
  // A device model has no host entry: only the descriptor.
  if (!model.device)
    os << "/* The compiled graph itself: every input, then every output, as "
          "dense row-major\n"
       << " * buffers of the sizes below (any alignment; outputs must not "
          "overlap inputs).\n"
       << " * *status becomes 0, or N when run-time check N failed (its "
          "message is\n"
       << " * " << p << "_descriptor()->check_messages[N - 1]). Calling it "
          "directly skips the\n"
       << " * runtime's checks and its thread pool; kiln_model_run() is the "
          "supported route. */\n"
       << "void " << p << "_main(" << entryParameters(model, true)
       << ");\n\n";
  os << "#define " << P << "_TARGET " << cString(model.triple) << "\n"
     << "#define " << P << "_NUM_INPUTS " << model.inputs.size() << "\n"
     << "#define " << P << "_NUM_OUTPUTS " << model.outputs.size() << "\n";
  if (!model.symbols.empty()) {
    // Symbolic dims: a dim of a _SHAPE below is KILN_DIM_SYMBOL(i) for
    // symbol i; kiln_model_run binds them from the input tensors' shapes.
    os << "#define " << P << "_NUM_SYMBOLS " << model.symbols.size() << "\n";
    for (auto [i, sym] : llvm::enumerate(model.symbols)) {
      std::string macro = P + "_SYMBOL" + std::to_string(i);
      os << "#define " << macro << "_NAME " << cString(sym.name) << "\n"
         << "#define " << macro << "_MIN " << sym.min << "\n"
         << "#define " << macro << "_MAX " << sym.max
         << (sym.max < 0 ? " /* KILN_DIM_UNBOUNDED */" : "") << "\n";
      // A run symbol: decided by the run's values; an output whose dims name
      // it is allocated by <p>_main (its output argument is a `void **`
      // slot, model_abi.h's kiln_dynamic_entry_fn).
      if (sym.run)
        os << "#define " << macro << "_RUN 1 /* KILN_SYMBOL_RUN */\n";
    }
  }
  auto describe = [&](StringRef kind, ArrayRef<TensorInfo> tensors) {
    for (auto [index, tensor] : llvm::enumerate(tensors)) {
      int64_t elements = 1;
      bool symbolic = false;
      for (int64_t dim : tensor.shape) {
        symbolic |= KILN_DIM_IS_SYMBOL(dim);
        elements *= KILN_DIM_IS_SYMBOL(dim) ? 1 : dim;
      }
      std::string macro = P + "_" + kind.upper() + std::to_string(index);
      os << "\n/* " << kind << " " << index << ": '"
         << commentText(tensor.name) << "' ["
         << commentText(shapeText(tensor.shape, model.symbols)) << "] */\n"
         << "#define " << macro << "_NAME " << cString(tensor.name) << "\n"
         << "#define " << macro << "_DTYPE " << tensor.dtype << " /* "
         << dtypeEnumName(tensor.dtype) << " */\n"
         << "#define " << macro << "_CTYPE " << elementCType(tensor.dtype)
         << "\n"
         << "#define " << macro << "_RANK " << tensor.shape.size() << "\n"
         << "#define " << macro << "_SHAPE {" << shapeList(tensor.shape)
         << "}\n";
      // Sizes only for static tensors: a symbolic one's depend on the run.
      if (!symbolic)
        os << "#define " << macro << "_ELEMENTS " << elements << "\n"
           << "#define " << macro << "_BYTES "
           << elements * static_cast<int64_t>(elementSize(tensor.dtype))
           << "\n";
    }
  };
  describe("input", model.inputs);
  describe("output", model.outputs);
  os << model.extraHeaderDeclarations;
  os << "\n#ifdef __cplusplus\n}\n#endif\n\n#endif /* " << guard << " */\n";
  return header;
}

std::string headerPathFor(StringRef outputPath) {
  SmallString<256> headerPath(outputPath);
  sys::path::replace_extension(headerPath, ".h");
  return std::string(headerPath);
}

bool compileDescriptor(const ModelInfo &model, PackageKind kind,
                       StringRef workDir, std::string &bitcodePath,
                       std::string &error, WeightPool *sharedWeights) {
  if (!checkModelNames(model, error))
    return false;
  SmallString<256> source(workDir), bitcode(workDir);
  sys::path::append(source, model.prefix + "_descriptor.c");
  sys::path::append(bitcode, model.prefix + "_descriptor.bc");
  std::string text;
  if (model.device) {
    if (!generateDeviceDescriptorSource(
            model, kind == PackageKind::SharedLibrary, workDir, text, error,
            sharedWeights))
      return false;
  } else {
    text = generateDescriptorSource(model, kind == PackageKind::SharedLibrary);
  }
  if (!writeFile(source, text, error))
    return false;
  // Freestanding: the descriptor needs only <stdint.h>, which clang brings,
  // so no SDK or sysroot of the target is needed (Android, iOS).
  std::string clang = findTool("clang", "KILN_CLANG");
  if (!runTool({clang, "--target=" + model.triple, "-O2", "-ffreestanding",
                "-fPIC", "-fvisibility=hidden", "-fno-stack-protector",
                "-I", runtimeIncludeDir(),
                "-emit-llvm", "-c", std::string(source), "-o",
                std::string(bitcode)},
               workDir, error))
    return false;
  bitcodePath = std::string(bitcode);
  return true;
}

bool packageModel(const ModelInfo &model, PackageKind kind,
                  StringRef modelObject, StringRef workDir,
                  StringRef outputPath, std::string &error) {
  if (kind == PackageKind::SharedLibrary) {
    if (isApple(model.triple)) {
      error = "--emit so is not supported for " + model.triple +
              ": use --emit obj or --emit static-lib and link the model "
              "into the app with Xcode";
      return false;
    }
    std::string clang = findTool("clang", "KILN_CLANG");
    // Only the descriptor functions are exported; everything else is local.
    SmallString<256> versionScript(workDir);
    sys::path::append(versionScript, "exports.map");
    std::string script = "{\n  global:\n    kiln_model_descriptor;\n    " +
                         model.prefix + "_descriptor;\n";
    for (const std::string &symbol : model.extraExports)
      script += "    " + symbol + ";\n";
    script += "  local: *;\n};\n";
    if (!writeFile(versionScript, script, error))
      return false;
    if (runTool({clang, "--target=" + model.triple, "-shared", "-fuse-ld=lld",
                 "-Wl,--version-script=" + std::string(versionScript),
                 "-Wl,-z,noexecstack", "-o", outputPath.str(),
                 // libm only where the code calls it (sinf, powf, ...): one
                 // library fewer for the loader to look up at open.
                 modelObject.str(), "-Wl,--as-needed", "-lm"},
                workDir, error))
      return appendArtifactChecksum(outputPath, error);
    llvm::Triple triple(model.triple);
    if (triple.getArch() != llvm::Triple(sys::getDefaultTargetTriple())
                                .getArch() ||
        triple.isAndroid())
      error += "\nlinking a shared library for " + model.triple +
               " needs that target's C library (for aarch64 Linux, Debian's "
               "libc6-dev-arm64-cross and libgcc-12-dev-arm64-cross); "
               "--emit obj and --emit static-lib need none";
    return false;
  }

  if (!writeFile(headerPathFor(outputPath), generateModelHeader(model),
                 error))
    return false;
  if (kind == PackageKind::Object) {
    sys::fs::remove(outputPath);
    if (std::error_code ec = sys::fs::copy_file(modelObject, outputPath)) {
      error = "cannot write '" + outputPath.str() + "': " + ec.message();
      return false;
    }
    return true;
  }
  sys::fs::remove(outputPath);
  std::string ar = findTool("llvm-ar", "KILN_AR");
  return runTool({ar,
                  std::string("--format=") +
                      (isApple(model.triple) ? "darwin" : "gnu"),
                  "rcs", outputPath.str(), modelObject.str()},
                 workDir, error);
}

} // namespace kiln
