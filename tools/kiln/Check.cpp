//===- Check.cpp - `kiln check`: can kiln compile this model? -------------===//
//
// Reads the ONNX file for what the graph declares (opsets, inputs and their
// dynamic dims, weights and external data), then runs the compiler's own
// front end: the importer (with its shape inference and version adapters)
// and buildLoweringToTargetPipeline, which ends with the target's support
// check (kiln-check-target-support). No code is generated. Every diagnostic
// is filed under the ONNX node its location names, so the report is one line
// per node: what kiln accepts is exactly what `kiln compile` accepts, with no
// op table of its own.
//
//===----------------------------------------------------------------------===//

#include "tools/kiln/Commands.h"

#include "codegen/Target.h"
#include "compiler/Pipeline.h"
#include "compiler/import/ModelImporter.h"
#include "dialects/ONNX/Diagnostics.h"
#include "dialects/ONNX/Limits.h"
#include "runtime/include/kiln/model_abi.h"

#include "mlir/IR/MLIRContext.h"
#include "mlir/Pass/PassManager.h"

#include "llvm/ADT/MapVector.h"
#include "llvm/ADT/StringExtras.h"
#include "llvm/ADT/StringMap.h"
#include "llvm/Support/Format.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/raw_ostream.h"

#include <onnx/onnx_pb.h>

#include <chrono>
#include <climits>
#include <map>

using namespace llvm;

namespace kiln::tool {
namespace {

constexpr const char *kCheckUsage =
    "usage: kiln check MODEL.onnx [--device NAME] [--shape NAME=D0,D1]... "
    "[--quiet] [--verbose]\n";

/// Bytes per element of an ONNX TensorProto.DataType (0: unknown, e.g.
/// strings), from the one dtype table.
int64_t elementBytes(int32_t dataType) {
  switch (dataType) {
#define KILN_X(NAME, ID, STR, BYTES, CLASS, CTYPE)                             \
  case ID:                                                                     \
    return BYTES;
    KILN_DTYPE_TABLE(KILN_X)
#undef KILN_X
  default:
    return 0;
  }
}

const char *dtypeName(int32_t dataType) {
  switch (dataType) {
#define KILN_X(NAME, ID, STR, BYTES, CLASS, CTYPE)                             \
  case ID:                                                                     \
    return STR;
    KILN_DTYPE_TABLE(KILN_X)
#undef KILN_X
  default:
    return "unsupported type";
  }
}

/// Bytes of a tensor's data as stored (dims x element size).
int64_t tensorBytes(const ::onnx::TensorProto &tensor) {
  int64_t elements = 1;
  for (int64_t dim : tensor.dims()) {
    if (dim < 0 || (dim > 0 && elements > INT64_MAX / dim))
      return 0;
    elements *= dim;
  }
  int64_t bytes = elementBytes(tensor.data_type());
  if (bytes == 0 || (elements > 0 && elements > INT64_MAX / bytes))
    return 0;
  return elements * bytes;
}

std::string formatBytes(int64_t bytes) {
  std::string text;
  raw_string_ostream os(text);
  if (bytes >= (int64_t(1) << 20))
    os << format("%.1f MiB", double(bytes) / double(1 << 20));
  else if (bytes >= 1024)
    os << format("%.1f KiB", double(bytes) / 1024.0);
  else
    os << bytes << " B";
  return text;
}

/// `name type [d0,d1,...]` with dynamic dims by their parameter ("batch") or
/// `?`.
std::string describeValue(const ::onnx::ValueInfoProto &value,
                          SmallVectorImpl<std::string> &dynamicDims) {
  std::string text;
  raw_string_ostream os(text);
  os << value.name();
  if (!value.type().has_tensor_type()) {
    os << " (not a tensor)";
    return text;
  }
  const ::onnx::TypeProto::Tensor &tensor = value.type().tensor_type();
  os << " " << dtypeName(tensor.elem_type());
  if (!tensor.has_shape()) {
    os << " [unknown rank]";
    dynamicDims.push_back(value.name() + " (rank)");
    return text;
  }
  os << " [";
  for (int i = 0; i < tensor.shape().dim_size(); ++i) {
    const ::onnx::TensorShapeProto::Dimension &dim = tensor.shape().dim(i);
    if (i)
      os << ",";
    if (dim.has_dim_value()) {
      os << dim.dim_value();
      continue;
    }
    std::string param = dim.has_dim_param() && !dim.dim_param().empty()
                            ? dim.dim_param()
                            : std::string("?");
    os << param;
    dynamicDims.push_back(value.name() + "[" + std::to_string(i) +
                          "] = " + param);
  }
  os << "]";
  return text;
}

/// The messages of onnx.proto whose tensors' data `stripTensorData` drops.
enum class Message { Model, Graph, Node, Attribute, Tensor, Other };

/// The message a length-delimited field `field` of `parent` holds.
Message childMessage(Message parent, uint64_t field) {
  switch (parent) {
  case Message::Model:
    return field == 7 ? Message::Graph : Message::Other; // graph
  case Message::Graph:
    return field == 1   ? Message::Node   // node
           : field == 5 ? Message::Tensor // initializer
                        : Message::Other;
  case Message::Node:
    return field == 5 ? Message::Attribute : Message::Other; // attribute
  case Message::Attribute:
    return field == 5 || field == 10 ? Message::Tensor
                                     : Message::Other; // t, tensors
  default:
    return Message::Other;
  }
}

bool readVarint(const uint8_t *&p, const uint8_t *end, uint64_t &value) {
  value = 0;
  for (unsigned shift = 0; shift < 64 && p < end; shift += 7) {
    uint8_t byte = *p++;
    value |= uint64_t(byte & 0x7f) << shift;
    if (!(byte & 0x80))
      return true;
  }
  return false;
}

void writeVarint(std::string &out, uint64_t value) {
  do {
    uint8_t byte = value & 0x7f;
    value >>= 7;
    out.push_back(char(value ? byte | 0x80 : byte));
  } while (value);
}

/// Copies the serialized `message` of kind `kind` without the element data
/// of the main graph's tensors (initializers, Constant values): what the
/// report needs is their names, types and dims, and parsing 400 MB of
/// weights would be most of `kiln check`'s time (the importer reads them
/// anyway). False when the bytes are not a well-formed protobuf.
bool stripTensorData(StringRef message, Message kind, std::string &out) {
  const uint8_t *p = reinterpret_cast<const uint8_t *>(message.data());
  const uint8_t *end = p + message.size();
  while (p < end) {
    const uint8_t *start = p;
    uint64_t tag, length;
    if (!readVarint(p, end, tag))
      return false;
    uint64_t field = tag >> 3;
    switch (tag & 7) {
    case 0:
      if (!readVarint(p, end, length))
        return false;
      break;
    case 1:
    case 5: {
      size_t size = (tag & 7) == 1 ? 8 : 4;
      if (size_t(end - p) < size)
        return false;
      p += size;
      break;
    }
    case 2: {
      if (!readVarint(p, end, length) || length > uint64_t(end - p))
        return false;
      StringRef payload(reinterpret_cast<const char *>(p), length);
      p += length;
      // TensorProto: float_data 4, int32_data 5, int64_data 7, raw_data 9,
      // double_data 10, uint64_data 11.
      if (kind == Message::Tensor && (field == 4 || field == 5 || field == 7 ||
                                      field == 9 || field == 10 || field == 11))
        continue;
      Message child = childMessage(kind, field);
      if (child == Message::Other)
        break;
      std::string inner;
      if (!stripTensorData(payload, child, inner))
        return false;
      writeVarint(out, tag);
      writeVarint(out, inner.size());
      out += inner;
      continue;
    }
    default: // groups: not in onnx.proto
      return false;
    }
    out.append(reinterpret_cast<const char *>(start), p - start);
  }
  return true;
}

struct NodeReport {
  std::string opType;
  std::string domain;
  std::vector<std::string> problems;
};

} // namespace

int runCheck(ArrayRef<StringRef> args) {
  auto start = std::chrono::steady_clock::now();
  CompileOptions options;
  bool quiet = false, verbose = false;
  // --verbose: the time of each stage, on stderr.
  auto lap = [&, last = start](StringRef stage) mutable {
    auto now = std::chrono::steady_clock::now();
    if (verbose)
      errs() << "kiln check: " << stage << " "
             << format("%.3f s",
                       std::chrono::duration<double>(now - last).count())
             << "\n";
    last = now;
  };
  for (size_t i = 0; i < args.size(); ++i) {
    StringRef arg = args[i];
    auto value = [&](StringRef flag, std::string &out) -> int {
      if (!arg.consume_front(flag))
        return 0;
      if (arg.consume_front("=")) {
        out = arg.str();
        return 1;
      }
      if (arg.empty() && i + 1 < args.size()) {
        out = args[++i].str();
        return 1;
      }
      return arg.empty() ? -1 : 0;
    };
    std::string v;
    int got;
    if ((got = value("--device", v))) {
      if (got < 0) {
        errs() << "kiln: error: --device needs a value\n" << kCheckUsage;
        return 1;
      }
      options.device = v;
    } else if ((got = value("--shape", v))) {
      std::string error;
      if (got < 0 || !parseShape(v, options, error)) {
        errs() << "kiln: error: "
               << (got < 0 ? std::string("--shape needs a value") : error)
               << "\n"
               << kCheckUsage;
        return 1;
      }
    } else if (arg == "--quiet" || arg == "-q") {
      quiet = true;
    } else if (arg == "--verbose" || arg == "-v") {
      verbose = true;
    } else if (arg.starts_with("-")) {
      errs() << "kiln: error: unknown option '" << arg << "'\n" << kCheckUsage;
      return 1;
    } else if (options.modelPath.empty()) {
      options.modelPath = arg.str();
    } else {
      errs() << "kiln: error: more than one model given\n" << kCheckUsage;
      return 1;
    }
  }
  if (options.modelPath.empty()) {
    errs() << "kiln: error: no model given\n" << kCheckUsage;
    return 1;
  }

  // What the file declares, read without the tensors' data; the importer
  // reads the whole file below.
  ErrorOr<std::unique_ptr<MemoryBuffer>> buffer =
      MemoryBuffer::getFile(options.modelPath, /*IsText=*/false,
                            /*RequiresNullTerminator=*/false);
  if (!buffer) {
    errs() << "kiln: error: cannot read '" << options.modelPath
           << "': " << buffer.getError().message() << "\n";
    return 1;
  }
  ::onnx::ModelProto model;
  std::string stripped;
  if (!stripTensorData((*buffer)->getBuffer(), Message::Model, stripped))
    stripped.clear(); // not protobuf: the parse below says so
  if (stripped.size() > size_t(INT_MAX) ||
      !model.ParseFromArray(stripped.data(), int(stripped.size())) ||
      !model.has_graph()) {
    errs() << "kiln: error: '" << options.modelPath
           << "' is not an ONNX model (does not parse as a ModelProto)\n";
    return 1;
  }
  buffer->reset();
  lap("read the model");
  const ::onnx::GraphProto &graph = model.graph();

  raw_ostream &os = outs();
  os << "model: " << options.modelPath << "\n";
  os << "  ir_version " << model.ir_version();
  if (!model.producer_name().empty())
    os << ", producer " << model.producer_name() << " "
       << model.producer_version();
  os << "\n  opsets:";
  for (const ::onnx::OperatorSetIdProto &opset : model.opset_import())
    os << " " << (opset.domain().empty() ? "ai.onnx" : opset.domain()) << " "
       << opset.version();
  os << "\n";

  StringMap<bool> initializerNames;
  int64_t weightBytes = 0, externalBytes = 0;
  int64_t numExternal = 0;
  StringMap<bool> externalFiles;
  for (const ::onnx::TensorProto &init : graph.initializer()) {
    initializerNames[init.name()] = true;
    int64_t bytes = tensorBytes(init);
    weightBytes += bytes;
    if (init.data_location() == ::onnx::TensorProto::EXTERNAL) {
      ++numExternal;
      externalBytes += bytes;
      for (const ::onnx::StringStringEntryProto &entry : init.external_data())
        if (entry.key() == "location")
          externalFiles[entry.value()] = true;
    }
  }
  int64_t constantBytes = 0;
  for (const ::onnx::NodeProto &node : graph.node())
    if (node.op_type() == "Constant" && node.domain().empty())
      for (const ::onnx::AttributeProto &attr : node.attribute())
        if (attr.has_t())
          constantBytes += tensorBytes(attr.t());

  SmallVector<std::string> dynamicDims;
  os << "inputs:\n";
  for (const ::onnx::ValueInfoProto &input : graph.input())
    if (!initializerNames.count(input.name())) {
      std::string text = describeValue(input, dynamicDims);
      auto fixed = options.inputShapes.find(input.name());
      os << "  " << text;
      if (fixed != options.inputShapes.end()) {
        os << "  (--shape ";
        interleave(fixed->second, os, ",");
        os << ")";
      }
      os << "\n";
    }
  SmallVector<std::string> outputDynamicDims;
  os << "outputs:\n";
  for (const ::onnx::ValueInfoProto &output : graph.output())
    os << "  " << describeValue(output, outputDynamicDims) << "\n";
  os << "dynamic dims: ";
  if (dynamicDims.empty())
    os << "none";
  interleave(dynamicDims, os, ", ");
  os << "\n";
  os << "weights: " << formatBytes(weightBytes + constantBytes) << " ("
     << graph.initializer_size() << " initializers, "
     << formatBytes(constantBytes) << " in Constant nodes)\n";
  os << "external data: ";
  if (numExternal == 0) {
    os << "none\n";
  } else {
    os << numExternal << " tensors, " << formatBytes(externalBytes) << " in";
    for (const auto &file : externalFiles)
      os << " " << file.getKey();
    os << "\n";
  }

  // The nodes, named as the importer names them (name, else OpType_index).
  MapVector<std::string, NodeReport, std::map<std::string, unsigned>> nodes;
  for (int i = 0; i < graph.node_size(); ++i) {
    const ::onnx::NodeProto &node = graph.node(i);
    std::string name = node.name().empty()
                           ? node.op_type() + "_" + std::to_string(i)
                           : node.name();
    NodeReport &report = nodes[name];
    report.opType = node.op_type();
    report.domain = node.domain();
  }
  int64_t numNodes = graph.node_size();
  model.Clear();

  // The compiler's front end; every diagnostic is filed by node.
  std::vector<std::string> modelProblems;
  mlir::DialectRegistry registry;
  registerCompilerDialects(registry);
  mlir::MLIRContext context(registry);
  context.disableMultithreading();
  mlir::ScopedDiagnosticHandler handler(&context, [&](mlir::Diagnostic &diag) {
    if (diag.getSeverity() != mlir::DiagnosticSeverity::Error)
      return mlir::success();
    std::string message = diag.str();
    for (mlir::Diagnostic &note : diag.getNotes())
      if (!StringRef(note.str()).starts_with("see current operation"))
        message += "; " + note.str();
    std::optional<std::string> node =
        kiln::onnx::getNodeName(diag.getLocation());
    if (node) {
      NodeReport &report = nodes[*node];
      if (report.opType.empty())
        report.opType = "?"; // a node of a subgraph
      // emitNodeError's prefix repeats what the report line says.
      StringRef text(message);
      if (text.consume_front("node '" + *node + "'")) {
        if (text.starts_with(" (")) {
          size_t close = text.find("): ");
          if (close != StringRef::npos)
            text = text.drop_front(close + 1);
        }
        text.consume_front(":");
        text = text.ltrim();
      }
      report.problems.push_back(text.str());
    } else {
      modelProblems.push_back(message);
    }
    return mlir::success();
  });

  setCompileLimits(options.limits);
  ImportOptions importOptions;
  for (const auto &entry : options.inputShapes)
    importOptions.inputShapes[entry.getKey()] = entry.getValue();
  bool checked = false;
  std::string error;
  std::unique_ptr<TargetBackend> target = createTargetBackend(
      options.device, TargetOptions{options.triple, options.cpu}, error);
  if (!target) {
    modelProblems.push_back(error);
  } else {
    mlir::FailureOr<mlir::OwningOpRef<mlir::ModuleOp>> imported =
        importOnnxModel(context, options.modelPath, importOptions);
    lap("import");
    if (succeeded(imported)) {
      mlir::PassManager pm(&context);
      buildLoweringToTargetPipeline(pm, *target);
      checked = succeeded(pm.run(imported->get()));
      lap("lower and check support");
    }
  }

  // Per node.
  int64_t unsupported = 0;
  for (const auto &[name, report] : nodes)
    if (!report.problems.empty())
      ++unsupported;
  os << "nodes: " << numNodes << " (device " << options.device << ")\n";
  for (const auto &[name, report] : nodes) {
    std::string opType = report.domain.empty() || report.domain == "ai.onnx"
                             ? report.opType
                             : report.domain + "." + report.opType;
    // After a failed stage not every node was looked at (the importer stops
    // at its first error): those are "unchecked", not "ok".
    if (report.problems.empty()) {
      if (quiet)
        continue;
      os << "  " << (checked ? "ok         " : "unchecked  ") << name << " ("
         << opType << ")\n";
      continue;
    }
    os << "  UNSUPPORTED " << name << " (" << opType << "): ";
    interleave(report.problems, os, "; ");
    os << "\n";
  }
  for (const std::string &problem : modelProblems)
    os << "error: " << problem << "\n";

  double seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start)
          .count();
  if (checked) {
    os << "result: supported: kiln can compile this model for "
       << options.device << " (" << format("%.2f", seconds) << " s)\n";
    return 0;
  }
  os << "result: NOT supported for " << options.device << ": ";
  if (unsupported) {
    os << unsupported << " unsupported node" << (unsupported > 1 ? "s" : "")
       << ":";
    for (const auto &[name, report] : nodes)
      if (!report.problems.empty())
        os << " " << name;
  } else {
    os << "the model could not be checked (errors above)";
  }
  if (!checked && unsupported && !modelProblems.empty())
    os << " (and model-level errors)";
  os << " (" << format("%.2f", seconds) << " s)\n";
  return 1;
}

} // namespace kiln::tool
