//===- ModelImporter.cpp - ONNX ModelProto -> onnx dialect ----------------===//
//
// Reads the model file, checks the graph (opset, inputs, a topological order of the nodes),
// then builds one func.func @main_graph: graph inputs become arguments, initializers and
// Constant nodes onnx.Constant ops, every other node one op of the newest version of its
// ONNX op (rewritten by VersionAdapters when the model's opset is older), whose result types
// are inferred and which is folded as soon as it is built.
//
//===----------------------------------------------------------------------===//

#include "compiler/import/ModelImporter.h"

#include "compiler/import/ExternalData.h"
#include "compiler/import/Sequences.h"
#include "compiler/import/VersionAdapters.h"
#include "dialects/Kiln/KilnDialect.h"
#include "dialects/ONNX/ConstantValues.h"
#include "dialects/ONNX/ControlFlow.h"
#include "dialects/ONNX/DataTypes.h"
#include "dialects/ONNX/Diagnostics.h"
#include "dialects/ONNX/Limits.h"
#include "dialects/ONNX/ONNXOps.h"
#include "dialects/ONNX/OpBuilding.h"
#include "dialects/ONNX/OpSchemas.h"
#include "runtime/include/kiln/model_abi.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/AsmState.h"
#include "mlir/IR/Builders.h"
#include "mlir/IR/BuiltinAttributes.h"
#include "mlir/IR/BuiltinTypes.h"
#include "mlir/IR/DialectResourceBlobManager.h"
#include "mlir/IR/Verifier.h"
#include "llvm/ADT/DenseSet.h"
#include "llvm/ADT/STLExtras.h"
#include "llvm/ADT/ScopeExit.h"
#include "llvm/ADT/SmallString.h"
#include "llvm/ADT/StringExtras.h"
#include "llvm/ADT/StringSet.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/MathExtras.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/Path.h"

#include <onnx/onnx_pb.h>

#include <cerrno>
#include <cmath>
#include <climits>
#include <cstring>
#include <fcntl.h>
#include <queue>
#include <sys/stat.h>
#include <unistd.h>

using namespace mlir;
using namespace kiln::import;
using kiln::ImportOptions;
using kiln::onnx::getNewestKnownOpset;
using kiln::onnx::lookupOpSchema;

namespace {

/// The ops whose GRAPH attributes become regions.
bool isControlFlowOp(llvm::StringRef opType) {
  return opType == "If" || opType == "Loop" || opType == "Scan";
}

/// Blobs are aligned for vector loads of any width the code generators use.
constexpr size_t kBlobAlignment = 64;

//===----------------------------------------------------------------------===//
// Element types
//===----------------------------------------------------------------------===//

const char *dataTypeName(int32_t dataType) {
  switch (dataType) {
  case onnx::TensorProto::UNDEFINED: return "undefined";
  case onnx::TensorProto::FLOAT: return "float";
  case onnx::TensorProto::UINT8: return "uint8";
  case onnx::TensorProto::INT8: return "int8";
  case onnx::TensorProto::UINT16: return "uint16";
  case onnx::TensorProto::INT16: return "int16";
  case onnx::TensorProto::INT32: return "int32";
  case onnx::TensorProto::INT64: return "int64";
  case onnx::TensorProto::STRING: return "string";
  case onnx::TensorProto::BOOL: return "bool";
  case onnx::TensorProto::FLOAT16: return "float16";
  case onnx::TensorProto::DOUBLE: return "double";
  case onnx::TensorProto::UINT32: return "uint32";
  case onnx::TensorProto::UINT64: return "uint64";
  case onnx::TensorProto::COMPLEX64: return "complex64";
  case onnx::TensorProto::COMPLEX128: return "complex128";
  case onnx::TensorProto::BFLOAT16: return "bfloat16";
  // Newer than the protobuf classes of libonnx-dev 1.12: plain numbers there.
  case 17: return "float8e4m3fn";
  case 18: return "float8e4m3fnuz";
  case 19: return "float8e5m2";
  case 20: return "float8e5m2fnuz";
  case 21: return "uint4";
  case 22: return "int4";
  case 23: return "float4e2m1";
  case 24: return "float8e8m0";
  case 25: return "uint2";
  case 26: return "int2";
  default: return "unknown";
  }
}

/// The MLIR element type of an ONNX data type (docs/architecture.md), or null.
Type convertElementType(int32_t dataType, MLIRContext *ctx) {
  return kiln::onnx::getElementTypeOfOnnxDataType(ctx, dataType);
}

/// Bytes per element as kiln holds constants (bool and the packed int4 / uint4
/// / int2 / uint2 / float4e2m1 are one byte each).
uint64_t elementByteSize(Type type) {
  if (type.isInteger(1) || kiln::onnx::getPackedBits(type))
    return 1;
  return type.getIntOrFloatBitWidth() / 8;
}

/// The typed data field (the proto field per ONNX data type) of `tensor` and its
/// number of values; std::nullopt for types without one.
std::optional<std::pair<const char *, uint64_t>>
typedDataSize(const onnx::TensorProto &tensor) {
  switch (tensor.data_type()) {
  case onnx::TensorProto::FLOAT:
    return std::make_pair("float_data", uint64_t(tensor.float_data_size()));
  case onnx::TensorProto::DOUBLE:
    return std::make_pair("double_data", uint64_t(tensor.double_data_size()));
  case onnx::TensorProto::INT64:
    return std::make_pair("int64_data", uint64_t(tensor.int64_data_size()));
  case onnx::TensorProto::UINT32:
  case onnx::TensorProto::UINT64:
    return std::make_pair("uint64_data", uint64_t(tensor.uint64_data_size()));
  case onnx::TensorProto::INT32:
  case onnx::TensorProto::INT16:
  case onnx::TensorProto::UINT16:
  case onnx::TensorProto::FLOAT16:
  case onnx::TensorProto::BFLOAT16:
  case onnx::TensorProto::INT8:
  case onnx::TensorProto::UINT8:
  case onnx::TensorProto::BOOL:
  case KILN_DTYPE_FLOAT8E4M3FN: // the 8 bits of a float8, in int32_data
  case KILN_DTYPE_FLOAT8E4M3FNUZ:
  case KILN_DTYPE_FLOAT8E5M2:
  case KILN_DTYPE_FLOAT8E5M2FNUZ:
  case KILN_DTYPE_FLOAT8E8M0:
  // The packed types: one int32 per byte of packed elements (checked in bytes).
  case KILN_DTYPE_UINT4:
  case KILN_DTYPE_INT4:
  case KILN_DTYPE_FLOAT4E2M1:
  case KILN_DTYPE_UINT2:
  case KILN_DTYPE_INT2:
    return std::make_pair("int32_data", uint64_t(tensor.int32_data_size()));
  default:
    return std::nullopt;
  }
}

/// Error (started by `emit`) unless a tensor of `dims` and `elementType` is within
/// the elements and bytes per tensor of dialects/ONNX/Limits.h.
template <typename EmitFn>
LogicalResult checkTensorSize(llvm::ArrayRef<int64_t> dims, Type elementType,
                              EmitFn emit) {
  const kiln::CompileLimits &limits = kiln::getCompileLimits();
  // A symbolic dim counts as 1: its size is checked against its bound per run.
  llvm::SmallVector<int64_t> staticDims(dims);
  for (int64_t &d : staticDims)
    if (ShapedType::isDynamic(d))
      d = 1;
  dims = staticDims;
  std::optional<int64_t> extent = kiln::getCheckedExtent(dims);
  if (!extent || *extent > limits.maxTensorElements)
    return emit() << "its dimensions multiply to more than kiln's limit of "
                  << limits.maxTensorElements
                  << " elements per tensor (--max-tensor-elements)";
  int64_t elements = llvm::is_contained(dims, 0) ? 0 : *extent;
  std::optional<int64_t> bytes =
      kiln::checkedMul(elements, static_cast<int64_t>(elementByteSize(elementType)));
  if (!bytes || *bytes > limits.maxTensorBytes)
    return emit() << "it would take more than kiln's limit of "
                  << limits.maxTensorBytes << " bytes per tensor (--max-tensor-bytes)";
  return success();
}

std::string sanitizeResourceName(llvm::StringRef name) {
  std::string out;
  for (char c : name)
    out += (llvm::isAlnum(c) || c == '_' || c == '.') ? c : '_';
  if (out.empty() || llvm::isDigit(out[0]))
    out = "t_" + out;
  return out;
}

//===----------------------------------------------------------------------===//
// The importer
//===----------------------------------------------------------------------===//

class ModelImporter final : public SequenceContext {
public:
  ModelImporter(MLIRContext &context, llvm::StringRef modelPath,
                const ImportOptions &options)
      : context(context), modelPath(modelPath.str()), options(options),
        builder(&context), fileLoc(FileLineColLoc::get(&context, modelPath, 0, 0)),
        currentLoc(fileLoc) {}

  FailureOr<OwningOpRef<ModuleOp>> run();

  // AdapterContext.
  Type getValueType(llvm::StringRef name) override {
    if (name.empty())
      return {};
    Value v = values.lookup(name);
    return v ? v.getType() : Type();
  }
  std::string addConstant(DenseElementsAttr value, llvm::StringRef hint) override;
  std::string freshName(llvm::StringRef hint) override;
  InFlightDiagnostic emitNodeError() override {
    return emitNodeErrorAt(currentLoc, currentNodeName, currentOpType);
  }
  MLIRContext *getContext() override { return &context; }
  std::optional<SmallVector<int64_t>> getConstantInts(llvm::StringRef name) override {
    Value v = name.empty() ? Value() : values.lookup(name);
    if (!v)
      return std::nullopt;
    return kiln::onnx::getConstantIntegralValues(v);
  }

  // SequenceContext.
  Value lookupValue(llvm::StringRef name) override {
    return name.empty() ? Value() : values.lookup(name);
  }
  void bindValue(llvm::StringRef name, Value value) override { values[name] = value; }
  LogicalResult importNewestNode(const onnx::NodeProto &node) override;

private:
  LogicalResult readModel();
  LogicalResult checkOpset();
  LogicalResult createFunction();
  LogicalResult specializeInputs();
  FailureOr<SmallVector<int>> sortNodes(const onnx::GraphProto &graph);
  LogicalResult importNode(const onnx::NodeProto &node, int index);
  /// `outputItems` (If only): per node output, -1 for a tensor or the item count of a
  /// sequence whose items are that many consecutive results.
  FailureOr<SmallVector<Value>>
  importControlFlowNode(const onnx::NodeProto &node, SmallVector<Value> operands,
                        ArrayRef<NamedAttribute> attrs, int64_t numResults,
                        SmallVectorImpl<int64_t> &outputItems);
  /// Imports `graph` into `block` (its inputs become the block's arguments of
  /// `argTypes`), or with `block` null inline at the insertion point, its inputs bound to
  /// `inlineInputs`. Returns its outputs. With `outputItems`, a sequence output is
  /// returned as its items (and its count recorded there; -1 for a tensor output);
  /// without, it is an error.
  FailureOr<SmallVector<Value>> importSubgraph(const onnx::GraphProto &graph,
                                               llvm::StringRef attrName, TypeRange argTypes,
                                               Block *block,
                                               ArrayRef<Value> inlineInputs = {},
                                               SmallVectorImpl<int64_t> *outputItems = nullptr);
  /// The items of the sequence named `name` (one SequenceAt each; `what` names them).
  FailureOr<SmallVector<Value>> sequenceItems(llvm::StringRef name, llvm::StringRef what);
  /// SequenceMap: its body imported inline once per item (the count is known when
  /// compiling); each output a sequence of the body's results.
  LogicalResult importSequenceMap(const onnx::NodeProto &node);
  void collectNames(const onnx::GraphProto &graph);
  LogicalResult importConstantNode(const onnx::NodeProto &node);
  LogicalResult buildResults();

  FailureOr<RankedTensorType> inputType(const onnx::ValueInfoProto &info,
                                        SmallVector<int64_t> &abiDims);
  FailureOr<ElementsAttr> convertTensor(const onnx::TensorProto &tensor,
                                        llvm::StringRef name, Location loc);
  FailureOr<NamedAttribute> convertAttribute(const onnx::AttributeProto &attr);
  Value createConstant(ElementsAttr value, Location loc);
  Value getNoValue();

  /// A symbolic input dim (docs/dynamic-shapes.md): its name, bounds (max -1:
  /// none) and where it first appears.
  struct SymbolInfo {
    std::string name;
    int64_t min, max;
    std::string input;
    int dim;
  };
  SmallVector<SymbolInfo> symbols;
  llvm::StringMap<unsigned> symbolIds;
  SmallVector<SmallVector<int64_t>> argDims;

  InFlightDiagnostic emitError() { return mlir::emitError(fileLoc); }
  InFlightDiagnostic emitNodeErrorAt(Location loc, llvm::StringRef name,
                                     llvm::StringRef opType) {
    InFlightDiagnostic diag = mlir::emitError(loc);
    diag << "node '" << name << "' (" << opType << ", opset " << opset << "): ";
    return diag;
  }
  Location nodeLoc(llvm::StringRef name) {
    return NameLoc::get(StringAttr::get(&context, name), fileLoc);
  }
  /// An unnamed node of a subgraph is named after the node holding the subgraph:
  /// `Loop_3/body/Add_0`.
  std::string nodeName(const onnx::NodeProto &node, int index) const {
    return node.name().empty() ? namePrefix + node.op_type() + "_" + std::to_string(index)
                               : node.name();
  }

  MLIRContext &context;
  /// Set while the nodes of a several-node adaptation (adaptToNewestNodes) are imported:
  /// they are already in the newest form of their ops.
  bool importingNewestForm = false;
  std::string modelPath;
  std::string modelDir; ///< canonical folder of the model file
  const ImportOptions &options;
  OpBuilder builder;
  Location fileLoc;

  onnx::ModelProto model;
  int64_t opset = 0;
  OwningOpRef<ModuleOp> module;
  func::FuncOp func;
  llvm::StringMap<Value> values; ///< ONNX value name -> SSA value
  /// Sequences and absent optionals by name (Sequences.h), scoped like `values`.
  SequenceScope sequenceScope;
  Value noValue;
  unsigned freshNameCounter = 0;
  /// Every value name the model mentions: names kiln invents avoid them all.
  llvm::StringSet<> modelNames;
  /// Bytes of the constants imported so far (--max-constant-bytes).
  uint64_t constantBytes = 0;
  /// How deeply the subgraph being imported nests (0: the main graph), and the prefix
  /// of its unnamed nodes' names.
  int64_t subgraphDepth = 0;
  std::string namePrefix;

  // The node being imported, for AdapterContext::emitNodeError.
  Location currentLoc;
  std::string currentNodeName, currentOpType;
};

} // namespace

//===----------------------------------------------------------------------===//
// Reading and checking the model
//===----------------------------------------------------------------------===//

LogicalResult ModelImporter::readModel() {
  // O_NONBLOCK: a FIFO must not block the open; only regular files are accepted.
  int fd = ::open(modelPath.c_str(), O_RDONLY | O_CLOEXEC | O_NONBLOCK);
  if (fd < 0)
    return emitError() << "cannot open model file '" << modelPath
                       << "': " << std::strerror(errno);
  struct stat st;
  if (::fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) {
    ::close(fd);
    return emitError() << "model file '" << modelPath << "' is not a regular file";
  }
  uint64_t size = static_cast<uint64_t>(st.st_size);
  if (size > static_cast<uint64_t>(INT_MAX)) {
    ::close(fd);
    return emitError() << "model file '" << modelPath << "' is " << size
                       << " bytes, over protobuf's 2 GB limit; store the weights as "
                          "external data";
  }
  llvm::ErrorOr<std::unique_ptr<llvm::MemoryBuffer>> buffer =
      llvm::MemoryBuffer::getOpenFile(fd, modelPath, size, /*RequiresNullTerminator=*/false);
  ::close(fd);
  if (!buffer)
    return emitError() << "cannot read model file '" << modelPath
                       << "': " << buffer.getError().message();
  if (!model.ParseFromArray((*buffer)->getBufferStart(), static_cast<int>(size)))
    return emitError() << "not a valid ONNX model: '" << modelPath
                       << "' does not parse as an ONNX ModelProto (truncated or not a "
                          "protobuf file)";
  // Random bytes can parse as a protobuf message by chance: require the parts every model
  // has.
  if (!model.has_graph() || model.opset_import_size() == 0)
    return emitError() << "not a valid ONNX model: '" << modelPath << "' has no "
                       << (model.has_graph() ? "opset_import" : "graph");

  llvm::SmallString<256> dir(llvm::sys::path::parent_path(modelPath));
  if (dir.empty())
    dir = ".";
  llvm::SmallString<256> canonical;
  if (std::error_code ec = llvm::sys::fs::real_path(dir, canonical))
    return emitError() << "cannot resolve the model's folder '" << dir
                       << "': " << ec.message();
  modelDir = std::string(canonical);
  return success();
}

LogicalResult ModelImporter::checkOpset() {
  bool found = false;
  for (const onnx::OperatorSetIdProto &entry : model.opset_import()) {
    if (entry.domain().empty() || entry.domain() == "ai.onnx") {
      if (found && entry.version() != opset)
        return emitError() << "model imports the default ONNX domain twice (opsets "
                           << opset << " and " << entry.version() << ")";
      opset = entry.version();
      found = true;
    }
  }
  if (!found)
    return emitError() << "model has no opset_import for the default ONNX domain";
  if (opset < 1)
    return emitError() << "model's default-domain opset " << opset << " is not valid";
  if (opset > getNewestKnownOpset())
    return emitError() << "model opset " << opset
                       << " is newer than the newest opset kiln knows ("
                       << getNewestKnownOpset() << ")";
  return success();
}

FailureOr<RankedTensorType> ModelImporter::inputType(const onnx::ValueInfoProto &info,
                                                     SmallVector<int64_t> &abiDims) {
  const std::string &name = info.name();
  if (!info.has_type() || !info.type().has_tensor_type())
    return emitError() << "input '" << name
                       << "' is not a tensor (sequence, map, optional and sparse inputs "
                          "are not supported)";
  const onnx::TypeProto::Tensor &tensorType = info.type().tensor_type();
  Type elementType = convertElementType(tensorType.elem_type(), &context);
  if (!elementType)
    return emitError() << "input '" << name << "' has unsupported element type "
                       << dataTypeName(tensorType.elem_type()) << " ("
                       << tensorType.elem_type() << ")";

  auto fixed = options.inputShapes.find(name);
  const llvm::SmallVector<kiln::DimSpec> *given =
      fixed == options.inputShapes.end() ? nullptr : &fixed->second;

  if (!tensorType.has_shape()) {
    if (!given)
      return emitError() << "input '" << name
                         << "' has an unknown rank; give its shape with --shape " << name
                         << "=... (sizes or bounds such as 1..8)";
  } else if (given && static_cast<int>(given->size()) != tensorType.shape().dim_size()) {
    return emitError() << "input '" << name << "' has rank "
                       << tensorType.shape().dim_size() << " but --shape " << name
                       << " gives " << given->size() << " dimensions";
  }

  // Each dim: the model's size, a --shape size, or a symbol (the model's
  // dim_param, or `<input>_dim<i>` for an unnamed one; one name is one symbol
  // across inputs), bounded by --shape when it gives a range.
  int rank = given ? static_cast<int>(given->size()) : tensorType.shape().dim_size();
  SmallVector<int64_t> dims;
  abiDims.clear();
  for (int i = 0; i < rank; ++i) {
    const onnx::TensorShapeProto::Dimension *dim =
        tensorType.has_shape() ? &tensorType.shape().dim(i) : nullptr;
    std::optional<kiln::DimSpec> spec;
    if (given)
      spec = (*given)[i];
    if (spec && (spec->min < 0 || (spec->isBounded() && spec->max < spec->min)))
      return emitError() << "--shape " << name << " dimension " << i << " ("
                         << spec->str() << ") is not a size or a range min..max with "
                         << "0 <= min <= max";
    if (dim && dim->has_dim_value()) {
      int64_t v = dim->dim_value();
      if (v < 0)
        return emitError() << "input '" << name << "' has a negative dimension " << v
                           << " at " << i;
      if (spec && (v < spec->min || (spec->isBounded() && v > spec->max))) {
        if (spec->isFixed())
          return emitError() << "input '" << name << "' dimension " << i << " is " << v
                             << " in the model but --shape " << name << " gives "
                             << spec->min;
        return emitError() << "input '" << name << "' dimension " << i << " is " << v
                           << " in the model, outside --shape " << name << "'s "
                           << spec->str();
      }
      dims.push_back(v);
      abiDims.push_back(v);
      continue;
    }
    if (spec && spec->isFixed()) {
      dims.push_back(spec->min);
      abiDims.push_back(spec->min);
      continue;
    }
    std::string symbol = dim && dim->has_dim_param() && !dim->dim_param().empty()
                             ? dim->dim_param()
                             : name + "_dim" + std::to_string(i);
    auto [it, inserted] = symbolIds.try_emplace(symbol, symbols.size());
    if (inserted)
      symbols.push_back({symbol, 1, -1, name, i});
    SymbolInfo &info = symbols[it->second];
    if (spec) {
      // A symbol shared by several inputs takes the tightest bounds.
      info.min = std::max(info.min, spec->min);
      if (spec->isBounded())
        info.max = info.max < 0 ? spec->max : std::min(info.max, spec->max);
      if (info.max >= 0 && info.max < info.min)
        return emitError() << "symbol '" << symbol << "' (input '" << name
                           << "' dimension " << i << ") has no size within the bounds "
                           << "--shape gives (" << info.min << ".." << info.max << ")";
    }
    dims.push_back(ShapedType::kDynamic);
    abiDims.push_back(-static_cast<int64_t>(it->second) - 1);
  }

  auto shapeText = [&]() {
    std::string text;
    for (auto [i, d] : llvm::enumerate(dims))
      text += (i ? "," : "") + (ShapedType::isDynamic(d) ? std::string("?")
                                                         : std::to_string(d));
    return text;
  };
  if (failed(checkTensorSize(dims, elementType, [&]() {
        InFlightDiagnostic diag = emitError();
        diag << "input '" << name << "' of shape " << shapeText() << ": ";
        return diag;
      })))
    return failure();
  return RankedTensorType::get(dims, elementType);
}

//===----------------------------------------------------------------------===//
// Tensors
//===----------------------------------------------------------------------===//

FailureOr<ElementsAttr> ModelImporter::convertTensor(const onnx::TensorProto &tensor,
                                                     llvm::StringRef name, Location loc) {
  auto fail = [&]() {
    InFlightDiagnostic diag = mlir::emitError(loc);
    diag << "tensor '" << name << "': ";
    return diag;
  };
  Type elementType = convertElementType(tensor.data_type(), &context);
  if (!elementType)
    return fail() << "unsupported element type " << dataTypeName(tensor.data_type())
                  << " (" << tensor.data_type() << ")";
  if (tensor.has_segment())
    return fail() << "segmented tensors are not supported";

  SmallVector<int64_t> dims;
  for (int64_t d : tensor.dims()) {
    if (d < 0)
      return fail() << "negative dimension " << d;
    dims.push_back(d);
  }
  if (failed(checkTensorSize(dims, elementType, fail)))
    return failure();
  uint64_t elements = 1;
  for (int64_t d : dims)
    elements *= static_cast<uint64_t>(d); // fits: checkTensorSize passed
  uint64_t elemBytes = elementByteSize(elementType);
  uint64_t byteSize = elements * elemBytes;
  auto type = RankedTensorType::get(dims, elementType);
  // int4, uint4, float4e2m1, int2, uint2: the file holds them packed (low bits
  // first, ceil(n * bits / 8) bytes, in raw_data and one byte per int32 of
  // int32_data); kiln holds one per byte (elementByteSize), signed ones
  // sign-extended (the i8 convert-onnx-to-linalg stores them as).
  unsigned packedBits = kiln::onnx::getPackedBits(elementType);
  uint64_t fileBytes =
      packedBits ? (elements * packedBits + 7) / 8 : byteSize;
  uint64_t fileElements = packedBits ? fileBytes : elements;

  auto sizeMismatch = [&](llvm::StringRef field, uint64_t have, llvm::StringRef unit) {
    return fail() << field << " has " << have << " " << unit << " but its shape "
                  << "and type need "
                  << (unit == "bytes" ? fileBytes : fileElements);
  };

  // Nothing sized by the declared shape is allocated before the data is known to
  // have that size (a tiny file may declare any shape) and the model's constants
  // stay within the limit.
  int32_t dt = tensor.data_type();
  bool external = tensor.data_location() == onnx::TensorProto::EXTERNAL;
  if (!external) {
    if (tensor.has_raw_data()) {
      if (tensor.raw_data().size() != fileBytes)
        return sizeMismatch("raw_data", tensor.raw_data().size(), "bytes");
    } else if (std::optional<std::pair<const char *, uint64_t>> field =
                   typedDataSize(tensor)) {
      if (field->second != fileElements)
        return sizeMismatch(field->first, field->second, "elements");
    }
  }
  uint64_t maxConstantBytes = kiln::getCompileLimits().maxConstantBytes;
  if (byteSize > maxConstantBytes - std::min(constantBytes, maxConstantBytes))
    return fail() << "the model's constants would take more than kiln's limit of "
                  << maxConstantBytes << " bytes (--max-constant-bytes)";
  constantBytes += byteSize;

  // The tensor's bytes (little-endian, bool as one byte each) in a 64-byte aligned blob.
  AsmResourceBlob blob = HeapAsmResourceBlob::allocate(byteSize, kBlobAlignment);
  MutableArrayRef<char> bytes = blob.getMutableData();

  if (packedBits) {
    // Read packed, then unpacked into `bytes` from the end (in place).
    MutableArrayRef<char> packed = bytes.take_front(fileBytes);
    if (external) {
      if (failed(readExternalData(tensor, modelDir, packed, fail)))
        return failure();
    } else if (tensor.has_raw_data()) {
      if (fileBytes)
        std::memcpy(packed.data(), tensor.raw_data().data(), fileBytes);
    } else if (typedDataSize(tensor)) {
      if (static_cast<uint64_t>(tensor.int32_data_size()) != fileBytes)
        return sizeMismatch("int32_data", tensor.int32_data_size(), "elements");
      for (uint64_t i = 0; i < fileBytes; ++i)
        packed[i] = static_cast<char>(tensor.int32_data(static_cast<int>(i)));
    }
    unsigned perByte = 8 / packedBits, mask = (1u << packedBits) - 1;
    bool isSigned = isa<IntegerType>(elementType) &&
                    !elementType.isUnsignedInteger();
    for (uint64_t i = elements; i-- > 0;) {
      unsigned code = (static_cast<uint8_t>(bytes[i / perByte]) >>
                       (i % perByte * packedBits)) & mask;
      if (isSigned && (code >> (packedBits - 1)))
        code |= ~mask; // sign-extended to the byte
      bytes[i] = static_cast<char>(code);
    }
  } else if (external) {
    if (failed(readExternalData(tensor, modelDir, bytes, fail)))
      return failure();
  } else if (tensor.has_raw_data()) {
    if (byteSize)
      std::memcpy(bytes.data(), tensor.raw_data().data(), byteSize);
  } else {
    // Typed fields (proto field per ONNX data type).
    auto copyTyped = [&](const auto &field, llvm::StringRef fieldName,
                         auto convert) -> LogicalResult {
      if (static_cast<uint64_t>(field.size()) != elements)
        return sizeMismatch(fieldName, field.size(), "elements");
      for (uint64_t i = 0; i < elements; ++i)
        convert(field.Get(static_cast<int>(i)), bytes.data() + i * elemBytes);
      return success();
    };
    auto store = [](auto value, char *dest) { std::memcpy(dest, &value, sizeof(value)); };
    LogicalResult result = success();
    switch (dt) {
    case onnx::TensorProto::FLOAT:
      result = copyTyped(tensor.float_data(), "float_data",
                         [&](float v, char *d) { store(v, d); });
      break;
    case onnx::TensorProto::DOUBLE:
      result = copyTyped(tensor.double_data(), "double_data",
                         [&](double v, char *d) { store(v, d); });
      break;
    case onnx::TensorProto::INT64:
      result = copyTyped(tensor.int64_data(), "int64_data",
                         [&](int64_t v, char *d) { store(v, d); });
      break;
    case onnx::TensorProto::UINT32:
      result = copyTyped(tensor.uint64_data(), "uint64_data",
                         [&](uint64_t v, char *d) { store(static_cast<uint32_t>(v), d); });
      break;
    case onnx::TensorProto::UINT64:
      result = copyTyped(tensor.uint64_data(), "uint64_data",
                         [&](uint64_t v, char *d) { store(v, d); });
      break;
    case onnx::TensorProto::INT32:
      result = copyTyped(tensor.int32_data(), "int32_data",
                         [&](int32_t v, char *d) { store(v, d); });
      break;
    case onnx::TensorProto::INT16:
    case onnx::TensorProto::UINT16:
    case onnx::TensorProto::FLOAT16:  // the 16 bits of the half, in int32_data
    case onnx::TensorProto::BFLOAT16:
      result = copyTyped(tensor.int32_data(), "int32_data",
                         [&](int32_t v, char *d) { store(static_cast<uint16_t>(v), d); });
      break;
    case onnx::TensorProto::INT8:
    case onnx::TensorProto::UINT8:
    case KILN_DTYPE_FLOAT8E4M3FN:
    case KILN_DTYPE_FLOAT8E4M3FNUZ:
    case KILN_DTYPE_FLOAT8E5M2:
    case KILN_DTYPE_FLOAT8E5M2FNUZ:
    case KILN_DTYPE_FLOAT8E8M0:
      result = copyTyped(tensor.int32_data(), "int32_data",
                         [&](int32_t v, char *d) { store(static_cast<uint8_t>(v), d); });
      break;
    case onnx::TensorProto::BOOL:
      result = copyTyped(tensor.int32_data(), "int32_data",
                         [&](int32_t v, char *d) { *d = v != 0; });
      break;
    default:
      return fail() << "no data field for element type " << dataTypeName(dt);
    }
    if (failed(result))
      return failure();
  }

  if (elementType.isInteger(1))
    for (char &c : bytes)
      c = c != 0;

  if (static_cast<int64_t>(elements) <= options.inlineConstantLimit) {
    if (elementType.isInteger(1)) {
      SmallVector<bool> bools(bytes.begin(), bytes.end());
      return cast<ElementsAttr>(DenseElementsAttr::get(type, bools));
    }
    bool splat = false;
    ArrayRef<char> raw(bytes.data(), bytes.size());
    if (!DenseElementsAttr::isValidRawBuffer(type, raw, splat))
      return fail() << "internal error: its data does not form a valid dense buffer";
    return cast<ElementsAttr>(DenseElementsAttr::getFromRawBuffer(type, raw));
  }
  return cast<ElementsAttr>(
      DenseResourceElementsAttr::get(type, sanitizeResourceName(name), std::move(blob)));
}

Value ModelImporter::createConstant(ElementsAttr value, Location loc) {
  OperationState state(loc, "onnx.Constant");
  state.addAttribute("value", value);
  state.addTypes(value.getType());
  return builder.create(state)->getResult(0);
}

std::string ModelImporter::freshName(llvm::StringRef hint) {
  // Not a name of the model's, wherever it appears: a value kiln adds must never
  // replace (or be replaced by) one of the model's.
  std::string name;
  do {
    name = hint.str() + "." + std::to_string(freshNameCounter++);
  } while (modelNames.contains(name) || values.count(name));
  modelNames.insert(name);
  return name;
}

std::string ModelImporter::addConstant(DenseElementsAttr value, llvm::StringRef hint) {
  std::string name = freshName(currentNodeName + "." + hint.str());
  values[name] = createConstant(cast<ElementsAttr>(value),
                                nodeLoc(currentNodeName + "." + hint.str()));
  return name;
}

Value ModelImporter::getNoValue() {
  if (!noValue) {
    OpBuilder::InsertionGuard guard(builder);
    builder.setInsertionPointToStart(&func.getBody().front());
    OperationState state(fileLoc, "onnx.NoValue");
    state.addTypes(builder.getNoneType());
    noValue = builder.create(state)->getResult(0);
  }
  return noValue;
}

//===----------------------------------------------------------------------===//
// Attributes
//===----------------------------------------------------------------------===//

FailureOr<NamedAttribute>
ModelImporter::convertAttribute(const onnx::AttributeProto &attr) {
  auto fail = [&]() {
    InFlightDiagnostic diag = emitNodeError();
    diag << "attribute '" << attr.name() << "': ";
    return diag;
  };
  if (!attr.ref_attr_name().empty())
    return fail() << "references a function attribute ('" << attr.ref_attr_name()
                  << "'); functions are not supported";
  auto type = attr.type();
  if (type == onnx::AttributeProto::UNDEFINED) {
    // Old exporters leave the type out: take it from the field that is set.
    if (attr.has_f())
      type = onnx::AttributeProto::FLOAT;
    else if (attr.has_i())
      type = onnx::AttributeProto::INT;
    else if (attr.has_s())
      type = onnx::AttributeProto::STRING;
    else if (attr.has_t())
      type = onnx::AttributeProto::TENSOR;
    else if (attr.has_g())
      type = onnx::AttributeProto::GRAPH;
    else if (attr.floats_size())
      type = onnx::AttributeProto::FLOATS;
    else if (attr.ints_size())
      type = onnx::AttributeProto::INTS;
    else if (attr.strings_size())
      type = onnx::AttributeProto::STRINGS;
    else
      return fail() << "has no type and no value";
  }
  StringAttr name = builder.getStringAttr(attr.name());
  switch (type) {
  case onnx::AttributeProto::INT:
    return NamedAttribute(name, builder.getI64IntegerAttr(attr.i()));
  case onnx::AttributeProto::FLOAT:
    return NamedAttribute(name, builder.getF32FloatAttr(attr.f()));
  case onnx::AttributeProto::STRING:
    return NamedAttribute(name, builder.getStringAttr(attr.s()));
  case onnx::AttributeProto::INTS: {
    SmallVector<int64_t> v(attr.ints().begin(), attr.ints().end());
    return NamedAttribute(name, builder.getI64ArrayAttr(v));
  }
  case onnx::AttributeProto::FLOATS: {
    SmallVector<float> v(attr.floats().begin(), attr.floats().end());
    return NamedAttribute(name, builder.getF32ArrayAttr(v));
  }
  case onnx::AttributeProto::STRINGS: {
    SmallVector<Attribute> v;
    for (const std::string &s : attr.strings())
      v.push_back(builder.getStringAttr(s));
    return NamedAttribute(name, builder.getArrayAttr(v));
  }
  case onnx::AttributeProto::TENSOR: {
    FailureOr<ElementsAttr> value =
        convertTensor(attr.t(), currentNodeName + "." + attr.name(), currentLoc);
    if (failed(value))
      return failure();
    return NamedAttribute(name, *value);
  }
  case onnx::AttributeProto::GRAPH:
  case onnx::AttributeProto::GRAPHS:
    return fail() << "is a subgraph; kiln takes subgraphs only as the branches of If "
                     "and the bodies of Loop and Scan";
  default:
    return fail() << "has an unsupported attribute type ("
                  << onnx::AttributeProto::AttributeType_Name(type) << ")";
  }
}

//===----------------------------------------------------------------------===//
// Graph structure
//===----------------------------------------------------------------------===//

/// A topological order of the nodes (the given one when it already is one): Kahn's
/// algorithm taking the lowest-index ready node first. Reports undefined inputs, duplicate
/// definitions and cycles.
/// The names a graph's nodes and outputs use (its subgraphs' included) that the graph
/// does not define: a subgraph reads them from the graphs around it.
static void collectOuterNames(const onnx::GraphProto &graph, llvm::StringSet<> &used) {
  llvm::StringSet<> defined;
  for (const onnx::ValueInfoProto &input : graph.input())
    defined.insert(input.name());
  for (const onnx::TensorProto &init : graph.initializer())
    defined.insert(init.name());
  for (const onnx::NodeProto &node : graph.node())
    for (const std::string &out : node.output())
      defined.insert(out);
  auto use = [&](const std::string &name) {
    if (!name.empty() && !defined.contains(name))
      used.insert(name);
  };
  for (const onnx::NodeProto &node : graph.node()) {
    for (const std::string &in : node.input())
      use(in);
    llvm::StringSet<> inner;
    for (const onnx::AttributeProto &attr : node.attribute()) {
      if (attr.has_g())
        collectOuterNames(attr.g(), inner);
      for (const onnx::GraphProto &g : attr.graphs())
        collectOuterNames(g, inner);
    }
    for (const auto &entry : inner)
      use(entry.getKey().str());
  }
  for (const onnx::ValueInfoProto &output : graph.output())
    use(output.name());
}

/// The names a node's subgraphs read from the graphs around them.
static llvm::StringSet<> getImplicitInputs(const onnx::NodeProto &node) {
  llvm::StringSet<> used;
  for (const onnx::AttributeProto &attr : node.attribute()) {
    if (attr.has_g())
      collectOuterNames(attr.g(), used);
    for (const onnx::GraphProto &g : attr.graphs())
      collectOuterNames(g, used);
  }
  return used;
}

FailureOr<SmallVector<int>> ModelImporter::sortNodes(const onnx::GraphProto &graph) {
  int n = graph.node_size();
  // Names defined outside the nodes: graph inputs and initializers.
  llvm::StringSet<> external;
  for (const onnx::ValueInfoProto &input : graph.input())
    external.insert(input.name());
  for (const onnx::TensorProto &init : graph.initializer())
    external.insert(init.name());
  // A subgraph also reads the values of the graphs around it.
  llvm::StringSet<> outer;
  for (const auto &entry : values)
    outer.insert(entry.getKey());
  for (const auto &entry : sequenceScope.sequences)
    outer.insert(entry.getKey());
  for (const auto &entry : sequenceScope.absentOptionals)
    outer.insert(entry.getKey());

  llvm::StringMap<int> producer;
  for (int i = 0; i < n; ++i) {
    const onnx::NodeProto &node = graph.node(i);
    for (const std::string &out : node.output()) {
      if (out.empty())
        continue;
      if (external.contains(out))
        return emitNodeErrorAt(nodeLoc(nodeName(node, i)), nodeName(node, i),
                               node.op_type())
               << "output '" << out
               << "' has the same name as a graph input or initializer";
      auto [it, inserted] = producer.try_emplace(out, i);
      if (!inserted) {
        const onnx::NodeProto &other = graph.node(it->second);
        return emitNodeErrorAt(nodeLoc(nodeName(node, i)), nodeName(node, i),
                               node.op_type())
               << "output '" << out << "' is also produced by node '"
               << nodeName(other, it->second) << "' (" << other.op_type()
               << "); value names must be unique";
      }
    }
  }

  SmallVector<int> pending(n, 0);
  SmallVector<SmallVector<int>> users(n);
  for (int i = 0; i < n; ++i) {
    const onnx::NodeProto &node = graph.node(i);
    llvm::DenseSet<int> deps;
    SmallVector<std::string> inputs(node.input().begin(), node.input().end());
    size_t explicitInputs = inputs.size();
    for (const auto &entry : getImplicitInputs(node))
      inputs.push_back(entry.getKey().str());
    for (auto [k, in] : llvm::enumerate(inputs)) {
      if (in.empty() || external.contains(in))
        continue;
      auto it = producer.find(in);
      if (it == producer.end() && outer.contains(in))
        continue;
      if (it == producer.end())
        return emitNodeErrorAt(nodeLoc(nodeName(node, i)), nodeName(node, i),
                               node.op_type())
               << "input '" << in << "'"
               << (k >= explicitInputs ? " (read by a subgraph)" : "")
               << " is not defined";
      if (deps.insert(it->second).second) {
        ++pending[i];
        users[it->second].push_back(i);
      }
    }
  }

  std::priority_queue<int, std::vector<int>, std::greater<int>> ready;
  for (int i = 0; i < n; ++i)
    if (pending[i] == 0)
      ready.push(i);
  SmallVector<int> order;
  while (!ready.empty()) {
    int i = ready.top();
    ready.pop();
    order.push_back(i);
    for (int user : users[i])
      if (--pending[user] == 0)
        ready.push(user);
  }
  if (static_cast<int>(order.size()) != n) {
    // Every node left waits on another one left: walk back from one until a node repeats;
    // that node lies on a cycle.
    int start = 0;
    while (pending[start] == 0)
      ++start;
    SmallVector<int> seenAt(n, -1);
    int cur = start, step = 0;
    while (seenAt[cur] < 0) {
      seenAt[cur] = step++;
      int next = -1;
      SmallVector<std::string> inputs(graph.node(cur).input().begin(),
                                      graph.node(cur).input().end());
      for (const auto &entry : getImplicitInputs(graph.node(cur)))
        inputs.push_back(entry.getKey().str());
      for (const std::string &in : inputs) {
        auto it = producer.find(in);
        if (!in.empty() && it != producer.end() && pending[it->second] > 0) {
          next = it->second;
          break;
        }
      }
      if (next < 0)
        break;
      cur = next;
    }
    const onnx::NodeProto &node = graph.node(cur);
    return emitNodeErrorAt(nodeLoc(nodeName(node, cur)), nodeName(node, cur),
                           node.op_type())
           << "the graph has a cycle through this node";
  }
  return order;
}

LogicalResult ModelImporter::createFunction() {
  const onnx::GraphProto &graph = model.graph();
  if (graph.sparse_initializer_size())
    return emitError() << "sparse initializers are not supported (first: '"
                       << graph.sparse_initializer(0).values().name() << "')";

  llvm::StringSet<> initializerNames;
  for (const onnx::TensorProto &init : graph.initializer())
    if (!initializerNames.insert(init.name()).second)
      return emitError() << "initializer '" << init.name() << "' is defined twice";

  // Sequence and optional inputs (docs/runtime-api.md, "Sequences and optionals at the
  // boundary"): an optional is compiled present (its tensor or sequence) unless
  // --absent names it; a sequence of N items (--sequence NAME=N) is N tensor
  // arguments NAME[0] .. NAME[N-1], each typed by the sequence's element type (or
  // --shape NAME[i]=...).
  auto isAbsent = [&](StringRef name) {
    return llvm::is_contained(options.absentInputs, name.str());
  };
  // The input's type once a present optional is unwrapped.
  auto presentType = [](const onnx::ValueInfoProto &input) -> const onnx::TypeProto * {
    if (!input.has_type())
      return nullptr;
    const onnx::TypeProto *type = &input.type();
    if (type->has_optional_type() && type->optional_type().has_elem_type())
      type = &type->optional_type().elem_type();
    return type;
  };
  auto itemName = [](StringRef name, int64_t i) {
    return (name + "[" + Twine(i) + "]").str();
  };

  // An unknown --shape name is reported first: it is likely why an input
  // still looks dynamic.
  SmallVector<std::string> graphInputs, sequenceInputs, optionalInputs;
  for (const onnx::ValueInfoProto &input : graph.input()) {
    if (initializerNames.contains(input.name()))
      continue;
    graphInputs.push_back(input.name());
    if (input.has_type() && input.type().has_optional_type())
      optionalInputs.push_back(input.name());
    const onnx::TypeProto *type = presentType(input);
    if (type && type->has_sequence_type() && !isAbsent(input.name())) {
      sequenceInputs.push_back(input.name());
      auto n = options.sequenceLengths.find(input.name());
      for (int64_t i = 0; n != options.sequenceLengths.end() && i < n->second; ++i)
        graphInputs.push_back(itemName(input.name(), i));
    }
  }
  auto listNames = [](InFlightDiagnostic &diag, ArrayRef<std::string> names) {
    if (names.empty())
      diag << " none";
    for (const std::string &name : names)
      diag << " '" << name << "'";
  };
  for (const auto &entry : options.inputShapes)
    if (!llvm::is_contained(graphInputs, entry.getKey().str())) {
      InFlightDiagnostic diag = emitError();
      diag << "--shape names '" << entry.getKey() << "', which is not an input of the "
           << "model (inputs:";
      listNames(diag, graphInputs);
      return diag << ")";
    }
  for (const auto &entry : options.sequenceLengths)
    if (!llvm::is_contained(sequenceInputs, entry.getKey().str())) {
      InFlightDiagnostic diag = emitError();
      diag << "--sequence names '" << entry.getKey()
           << "', which is not a sequence input of the model (sequence inputs:";
      listNames(diag, sequenceInputs);
      return diag << ")";
    }
  for (const std::string &name : options.absentInputs)
    if (!llvm::is_contained(optionalInputs, name)) {
      InFlightDiagnostic diag = emitError();
      diag << "--absent names '" << name
           << "', which is not an optional input of the model (optional inputs:";
      listNames(diag, optionalInputs);
      return diag << ")";
    }

  // Arguments: graph inputs that are not initializers, in order.
  SmallVector<Type> argTypes;
  SmallVector<std::string> argNames;
  llvm::StringSet<> inputNames;
  // Sequence inputs: name -> their items' argument numbers.
  SmallVector<std::pair<std::string, SmallVector<unsigned>>> sequenceArgs;
  for (const onnx::ValueInfoProto &input : graph.input()) {
    if (input.name().empty())
      return emitError() << "a graph input has an empty name";
    if (!inputNames.insert(input.name()).second)
      return emitError() << "graph input '" << input.name() << "' is listed twice";
    if (initializerNames.contains(input.name()))
      continue;
    if (isAbsent(input.name())) {
      sequenceScope.absentOptionals.insert(input.name());
      continue;
    }
    const onnx::TypeProto *type = presentType(input);
    if (type && type->has_sequence_type()) {
      const onnx::TypeProto::Sequence &seq = type->sequence_type();
      if (!seq.has_elem_type() || !seq.elem_type().has_tensor_type())
        return emitError() << "input '" << input.name()
                           << "' is a sequence of non-tensors (kiln takes sequences of "
                              "tensors only)";
      auto n = options.sequenceLengths.find(input.name());
      if (n == options.sequenceLengths.end())
        return emitError() << "input '" << input.name()
                           << "' is a sequence: give its number of items with --sequence "
                           << input.name() << "=N (the items are then the inputs '"
                           << input.name() << "[0]' ...; docs/runtime-api.md)";
      SmallVector<unsigned> items;
      for (int64_t i = 0; i < n->second; ++i) {
        onnx::ValueInfoProto item;
        item.set_name(itemName(input.name(), i));
        *item.mutable_type() = seq.elem_type();
        // Items may differ in size: a dim the element type names is one symbol per
        // item, never shared between items or with other inputs.
        onnx::TensorShapeProto *shape = item.mutable_type()->mutable_tensor_type()->has_shape()
                                            ? item.mutable_type()->mutable_tensor_type()->mutable_shape()
                                            : nullptr;
        for (int d = 0; shape && d < shape->dim_size(); ++d)
          if (shape->dim(d).has_dim_param())
            shape->mutable_dim(d)->clear_dim_param();
        if (inputNames.contains(item.name()))
          return emitError() << "input '" << item.name() << "' of sequence '" << input.name()
                             << "' has the name of another graph input";
        SmallVector<int64_t> abiDims;
        FailureOr<RankedTensorType> itemType = inputType(item, abiDims);
        if (failed(itemType))
          return failure();
        items.push_back(argTypes.size());
        argTypes.push_back(*itemType);
        argNames.push_back(item.name());
        argDims.push_back(abiDims);
      }
      sequenceArgs.push_back({input.name(), std::move(items)});
      continue;
    }
    onnx::ValueInfoProto present = input;
    if (type && type != &input.type())
      *present.mutable_type() = *type;
    SmallVector<int64_t> abiDims;
    FailureOr<RankedTensorType> argType = inputType(present, abiDims);
    if (failed(argType))
      return failure();
    argTypes.push_back(*argType);
    argNames.push_back(input.name());
    argDims.push_back(abiDims);
  }
  builder.setInsertionPointToEnd(module->getBody());
  func = func::FuncOp::create(builder, fileLoc, "main_graph",
                              builder.getFunctionType(argTypes, {}));
  Block *entry = func.addEntryBlock();
  for (auto [i, name] : llvm::enumerate(argNames)) {
    func.setArgAttr(i, "onnx.name", builder.getStringAttr(name));
    values[name] = entry->getArgument(i);
  }
  for (const auto &[name, items] : sequenceArgs) {
    SequenceValue seq;
    for (unsigned arg : items)
      seq.push_back({entry->getArgument(arg), /*stacked=*/false});
    sequenceScope.sequences[name] = std::move(seq);
  }
  // Symbolic dims (docs/dynamic-shapes.md): the function's symbol table
  // `kiln.symbols` ([name, min, max], max -1 = unbounded) and each symbolic
  // argument's `kiln.dims` (a size, or -(symbol id) - 1 as in model_abi.h).
  if (!symbols.empty()) {
    SmallVector<Attribute> table;
    for (const SymbolInfo &sym : symbols)
      table.push_back(builder.getArrayAttr({builder.getStringAttr(sym.name),
                                            builder.getI64IntegerAttr(sym.min),
                                            builder.getI64IntegerAttr(sym.max)}));
    func->setAttr("kiln.symbols", builder.getArrayAttr(table));
    for (auto [i, dims] : llvm::enumerate(argDims))
      if (llvm::any_of(dims, [](int64_t d) { return d < 0; }))
        func.setArgAttr(i, "kiln.dims", builder.getDenseI64ArrayAttr(dims));
  }
  builder.setInsertionPointToEnd(entry);

  if (failed(specializeInputs()))
    return failure();

  for (const onnx::TensorProto &init : graph.initializer()) {
    if (init.name().empty())
      return emitError() << "an initializer has an empty name";
    Location loc = nodeLoc(init.name());
    FailureOr<ElementsAttr> value = convertTensor(init, init.name(), loc);
    if (failed(value))
      return failure();
    values[init.name()] = createConstant(*value, loc);
  }
  return success();
}

// Each specialized input is replaced by its value for the nodes that read it, and a guard
// compares the run-time argument with that value: Equal -> Cast(int32) -> ReduceMin ->
// Cast(bool) -> kiln.check, so another value fails the run with a status, never a wrong
// answer. The guard's nodes go through importNode like any other.
LogicalResult ModelImporter::specializeInputs() {
  for (const auto &entry : options.specializedInputs) {
    std::string name = entry.getKey().str();
    Value arg = values.lookup(name);
    if (!arg || !isa<BlockArgument>(arg)) {
      InFlightDiagnostic diag = emitError();
      diag << "--specialize names '" << name << "', which is not an input of the model";
      return diag;
    }
    auto buffer = llvm::MemoryBuffer::getFile(entry.getValue(), /*IsText=*/false);
    if (!buffer)
      return emitError() << "--specialize " << name << ": cannot read '"
                         << entry.getValue() << "': " << buffer.getError().message();
    onnx::TensorProto tensor;
    if ((*buffer)->getBufferSize() > static_cast<size_t>(INT32_MAX) ||
        !tensor.ParseFromArray((*buffer)->getBufferStart(),
                               static_cast<int>((*buffer)->getBufferSize())))
      return emitError() << "--specialize " << name << ": '" << entry.getValue()
                         << "' is not a serialized onnx.TensorProto";
    Location loc = nodeLoc("specialized input " + name);
    FailureOr<ElementsAttr> value = convertTensor(tensor, name, loc);
    if (failed(value))
      return failure();
    if (value->getType() != arg.getType())
      return emitError() << "--specialize " << name << ": the value is "
                         << value->getType() << " but the input is " << arg.getType();
    std::string prefix = "kiln.specialize." + name + ".";
    std::string argKey = freshName(prefix + "argument");
    std::string valueKey = freshName(prefix + "value");
    values[argKey] = arg;
    values[valueKey] = createConstant(*value, loc);
    values[name] = values[valueKey];

    auto node = [&](StringRef opType, ArrayRef<std::string> inputs, StringRef output,
                    std::optional<std::pair<StringRef, int64_t>> attr = std::nullopt) {
      onnx::NodeProto n;
      n.set_op_type(opType.str());
      n.set_name("specialize guard of " + name + " (" + opType.str() + ")");
      for (const std::string &in : inputs)
        n.add_input(in);
      n.add_output(output.str());
      if (attr) {
        onnx::AttributeProto *a = n.add_attribute();
        a->set_name(attr->first.str());
        a->set_type(onnx::AttributeProto::INT);
        a->set_i(attr->second);
      }
      return n;
    };
    std::string equal = freshName(prefix + "equal"),
                equalI32 = freshName(prefix + "equal_i32"),
                all = freshName(prefix + "all"), ok = freshName(prefix + "ok");
    SmallVector<onnx::NodeProto> guard = {
        node("Equal", {argKey, valueKey}, equal),
        node("Cast", {equal}, equalI32,
             std::make_pair(StringRef("to"), int64_t(onnx::TensorProto::INT32))),
        node("ReduceMin", {equalI32}, all,
             std::make_pair(StringRef("keepdims"), int64_t(0))),
        node("Cast", {all}, ok,
             std::make_pair(StringRef("to"), int64_t(onnx::TensorProto::BOOL))),
    };
    for (const onnx::NodeProto &n : guard)
      if (failed(importNode(n, -1)))
        return failure();
    OpBuilder::InsertionGuard insertion(builder);
    kiln::CheckOp::create(builder, loc, values.lookup(ok),
                          builder.getStringAttr("input '" + name +
                                                "' differs from the value the model was "
                                                "compiled for (--specialize)"));
  }
  return success();
}

//===----------------------------------------------------------------------===//
// Nodes
//===----------------------------------------------------------------------===//

LogicalResult ModelImporter::importConstantNode(const onnx::NodeProto &node) {
  if (node.input_size() != 0)
    return emitNodeError() << "Constant takes no inputs";
  if (node.output_size() != 1 || node.output(0).empty())
    return emitNodeError() << "Constant must have exactly one output";
  if (node.attribute_size() != 1)
    return emitNodeError() << "Constant needs exactly one of the attributes value, "
                              "value_float(s), value_int(s), value_string(s), sparse_value";
  const onnx::AttributeProto &attr = node.attribute(0);
  const std::string &attrName = attr.name();
  ElementsAttr value;
  auto f32 = Float32Type::get(&context);
  auto i64 = IntegerType::get(&context, 64);
  if (attrName == "value") {
    if (!attr.has_t())
      return emitNodeError() << "attribute 'value' holds no tensor";
    FailureOr<ElementsAttr> converted =
        convertTensor(attr.t(), node.output(0), currentLoc);
    if (failed(converted))
      return failure();
    value = *converted;
  } else if (attrName == "value_float") {
    value = DenseElementsAttr::get(RankedTensorType::get({}, f32), attr.f());
  } else if (attrName == "value_floats") {
    SmallVector<float> v(attr.floats().begin(), attr.floats().end());
    value = DenseElementsAttr::get(
        RankedTensorType::get({static_cast<int64_t>(v.size())}, f32), ArrayRef<float>(v));
  } else if (attrName == "value_int") {
    value = DenseElementsAttr::get(RankedTensorType::get({}, i64), attr.i());
  } else if (attrName == "value_ints") {
    SmallVector<int64_t> v(attr.ints().begin(), attr.ints().end());
    value = DenseElementsAttr::get(
        RankedTensorType::get({static_cast<int64_t>(v.size())}, i64), ArrayRef<int64_t>(v));
  } else if (attrName == "value_string" || attrName == "value_strings") {
    return emitNodeError() << "unsupported element type string (attribute '" << attrName
                           << "')";
  } else if (attrName == "sparse_value") {
    return emitNodeError() << "sparse constants are not supported";
  } else {
    return emitNodeError() << "Constant has an unknown attribute '" << attrName << "'";
  }
  values[node.output(0)] = createConstant(value, currentLoc);
  return success();
}

LogicalResult ModelImporter::importNewestNode(const onnx::NodeProto &node) {
  std::string name = currentNodeName, opType = currentOpType;
  Location loc = currentLoc;
  onnx::NodeProto copy = node;
  if (copy.name().empty())
    copy.set_name(currentNodeName);
  bool saved = importingNewestForm;
  importingNewestForm = true;
  LogicalResult result = importNode(copy, -1);
  importingNewestForm = saved;
  currentNodeName = name;
  currentOpType = opType;
  currentLoc = loc;
  return result;
}

LogicalResult ModelImporter::importNode(const onnx::NodeProto &original, int index) {
  currentNodeName = nodeName(original, index);
  currentOpType = original.op_type();
  currentLoc = nodeLoc(currentNodeName);

  if (!original.domain().empty() && original.domain() != "ai.onnx")
    return emitNodeError() << "domain '" << original.domain()
                           << "' is not supported (only the default ONNX domain is)";
  if (original.op_type().empty())
    return emitNodeError() << "node has no op_type";
  if (original.op_type() == "Constant")
    return importConstantNode(original);
  // Sequences and optionals are followed at compile time (Sequences.h).
  if (original.op_type() == "SequenceMap")
    return importSequenceMap(original);
  if (isSequenceOrOptionalOp(original.op_type()) ||
      (original.op_type() == "Identity" && original.input_size() == 1 &&
       (sequenceScope.sequences.count(original.input(0)) ||
        sequenceScope.absentOptionals.contains(original.input(0)))))
    return importSequenceNode(original, sequenceScope, *this);
  if (original.op_type() == "Loop" && !importingNewestForm) {
    bool handled = false;
    onnx::NodeProto rewritten;
    SmallVector<LoopSequenceResult> finals;
    if (failed(rewriteSequenceLoop(original, sequenceScope, *this, handled, rewritten,
                                   finals)))
      return failure();
    if (handled) {
      if (failed(importNode(rewritten, index)))
        return failure();
      for (LoopSequenceResult &r : finals) {
        Value scan = values.lookup(r.scanOutput);
        auto type = scan ? dyn_cast<RankedTensorType>(scan.getType()) : nullptr;
        if (!type || type.isDynamicDim(0))
          return emitNodeError() << "the items appended to loop-carried sequence"
                                 << (r.finalName.empty() ? "" : " '" + r.finalName + "'")
                                 << " stack to " << (type ? type : scan.getType())
                                 << ": their number must be known at compile time";
        if (r.finalName.empty())
          continue;
        SequenceValue seq = std::move(r.initial);
        seq.push_back({scan, /*stacked=*/true});
        sequenceScope.sequences[r.finalName] = std::move(seq);
      }
      return success();
    }
  }

  // A node an adapter built in the newest form inside a subgraph it made.
  bool markedNewest = llvm::any_of(original.attribute(), [](const onnx::AttributeProto &a) {
    return a.name() == kNewestFormMarker;
  });
  if (markedNewest && !importingNewestForm) {
    onnx::NodeProto copy = original;
    for (int i = copy.attribute_size() - 1; i >= 0; --i)
      if (copy.attribute(i).name() == kNewestFormMarker)
        copy.mutable_attribute()->DeleteSubrange(i, 1);
    importingNewestForm = true;
    LogicalResult result = importNode(copy, index);
    importingNewestForm = false;
    return result;
  }

  // Old forms that take several ops of the newest form.
  if (!importingNewestForm) {
    bool handled = false;
    SmallVector<onnx::NodeProto> replacement;
    if (failed(adaptToNewestNodes(original, opset, *this, handled, replacement)))
      return failure();
    if (handled) {
      importingNewestForm = true;
      for (const onnx::NodeProto &n : replacement)
        if (failed(importNode(n, -1))) {
          importingNewestForm = false;
          return failure();
        }
      importingNewestForm = false;
      return success();
    }
  }

  // Rewrite a copy of the node into the newest form of its op.
  onnx::NodeProto node = original;
  bool newestForm = importingNewestForm;
  if (!newestForm && failed(adaptRemovedOp(node, opset, *this, newestForm)))
    return failure();
  const OpSchemaInfo *schema = lookupOpSchema(node.op_type());
  if (!schema)
    return emitNodeError() << "unsupported operator '" << node.op_type() << "'";
  if (!newestForm) {
    std::optional<int64_t> version = schema->versionAt(opset);
    if (!version)
      return emitNodeError() << "operator '" << node.op_type()
                             << "' does not exist at opset " << opset
                             << " (it was introduced at opset " << schema->versions.front()
                             << ")";
    if (*version != schema->newestVersion() &&
        failed(adaptToNewestVersion(node, *schema, *version, *this)))
      return failure();
  }

  // Operands: "" and missing trailing optional inputs are the shared onnx.NoValue.
  int numInputs = node.input_size();
  if (!schema->variadicInputs && numInputs > schema->maxInputs)
    return emitNodeError() << "has " << numInputs << " inputs but " << node.op_type()
                           << " takes at most " << schema->maxInputs;
  if (numInputs < schema->minInputs)
    return emitNodeError() << "has " << numInputs << " inputs but " << node.op_type()
                           << " needs at least " << schema->minInputs;
  SmallVector<Value> operands;
  for (const std::string &in : node.input()) {
    if (in.empty()) {
      operands.push_back(getNoValue());
      continue;
    }
    Value v = values.lookup(in);
    if (!v && sequenceScope.sequences.count(in))
      return emitNodeError() << "input '" << in << "' is a sequence: kiln follows "
                             << "sequences through the sequence ops only (a Loop may "
                             << "append to one)";
    if (!v && sequenceScope.absentOptionals.contains(in))
      return emitNodeError() << "input '" << in << "' is an empty optional";
    if (!v)
      return emitNodeError() << "input '" << in << "' is not defined";
    operands.push_back(v);
  }
  if (!schema->variadicInputs)
    while (static_cast<int64_t>(operands.size()) < schema->maxInputs)
      operands.push_back(getNoValue());

  // Results: every output slot of the schema; absent ones stay unused.
  int numOutputs = node.output_size();
  if (!schema->variadicOutputs && numOutputs > schema->maxOutputs)
    return emitNodeError() << "has " << numOutputs << " outputs but " << node.op_type()
                           << " has at most " << schema->maxOutputs;
  int64_t numResults = schema->variadicOutputs
                           ? std::max<int64_t>(numOutputs, schema->minOutputs)
                           : schema->maxOutputs;

  bool regionOp = isControlFlowOp(node.op_type());
  SmallVector<NamedAttribute> attrs;
  llvm::StringSet<> attrNames;
  for (const onnx::AttributeProto &attr : node.attribute()) {
    if (!attrNames.insert(attr.name()).second)
      return emitNodeError() << "attribute '" << attr.name() << "' is given twice";
    // Subgraphs become regions (importControlFlowNode).
    if (regionOp && attr.has_g())
      continue;
    FailureOr<NamedAttribute> converted = convertAttribute(attr);
    if (failed(converted))
      return failure();
    attrs.push_back(*converted);
  }

  if (regionOp) {
    SmallVector<int64_t> outputItems;
    FailureOr<SmallVector<Value>> results =
        importControlFlowNode(node, operands, attrs, numResults, outputItems);
    if (failed(results))
      return failure();
    if (outputItems.empty()) {
      for (int i = 0; i < numOutputs; ++i)
        if (!node.output(i).empty())
          values[node.output(i)] = (*results)[i];
      return success();
    }
    // An If's outputs: a sequence output is its items, consecutive results.
    size_t next = 0;
    for (auto [i, items] : llvm::enumerate(outputItems)) {
      bool bound = static_cast<int>(i) < numOutputs && !node.output(i).empty();
      if (items < 0) {
        if (bound)
          values[node.output(i)] = (*results)[next];
        ++next;
        continue;
      }
      SequenceValue seq;
      for (int64_t k = 0; k < items; ++k)
        seq.push_back({(*results)[next++], /*stacked=*/false});
      if (bound)
        sequenceScope.sequences[node.output(i)] = std::move(seq);
    }
    return success();
  }

  OperationState state(currentLoc, "onnx." + node.op_type());
  state.addOperands(operands);
  state.addTypes(SmallVector<Type>(numResults, builder.getNoneType()));
  state.addAttributes(attrs);
  auto isUsed = [&](unsigned i) {
    return static_cast<int>(i) < numOutputs && !node.output(i).empty();
  };
  FailureOr<SmallVector<Value>> results = kiln::onnx::buildONNXOp(
      builder, state, [&](Operation *) { return emitNodeError(); }, isUsed,
      [&](Operation *op) -> LogicalResult {
        for (int i = 0; i < numOutputs; ++i)
          if (!node.output(i).empty() && isa<NoneType>(op->getResult(i).getType()))
            return emitNodeError() << "shape inference gave output '" << node.output(i)
                                   << "' no type";
        return success();
      });
  if (failed(results))
    return failure();

  for (int i = 0; i < numOutputs; ++i)
    if (!node.output(i).empty())
      values[node.output(i)] = (*results)[i];
  return success();
}

//===----------------------------------------------------------------------===//
// Subgraphs: If, Loop, Scan
//===----------------------------------------------------------------------===//

/// Imports `graph` at the end of `block` (given `argTypes`, its arguments are added to the
/// block) and returns the values of its outputs. Its names are visible only while it is
/// imported; it reads those of the enclosing graphs.
FailureOr<SmallVector<Value>>
ModelImporter::importSubgraph(const onnx::GraphProto &graph, llvm::StringRef attrName,
                              TypeRange argTypes, Block *block,
                              ArrayRef<Value> inlineInputs,
                              SmallVectorImpl<int64_t> *outputItems) {
  // The node holding the subgraph: its nodes' imports change the current node.
  std::string parentName = currentNodeName, parentOpType = currentOpType;
  Location parentLoc = currentLoc;
  auto fail = [&]() {
    InFlightDiagnostic diag = emitNodeErrorAt(parentLoc, parentName, parentOpType);
    diag << "subgraph '" << attrName << "': ";
    return diag;
  };
  int64_t maxDepth = kiln::getCompileLimits().maxSubgraphDepth;
  if (subgraphDepth >= maxDepth)
    return fail() << "subgraphs nest deeper than kiln's limit of " << maxDepth
                  << " (--max-subgraph-depth)";
  if (graph.input_size() != static_cast<int>(argTypes.size()))
    return fail() << "has " << graph.input_size() << " inputs but " << parentOpType
                  << " passes " << argTypes.size();
  if (graph.sparse_initializer_size())
    return fail() << "sparse initializers are not supported";

  // The subgraph's names live in a scope of their own on top of the enclosing graphs'.
  llvm::StringMap<Value> enclosing = values;
  SequenceScope enclosingSequences = sequenceScope;
  std::string enclosingPrefix = namePrefix;
  // The subgraph's own nodes are in the model's opset, whatever form its holder had.
  bool enclosingNewestForm = importingNewestForm;
  importingNewestForm = false;
  namePrefix = parentName + "/" + attrName.str() + "/";
  ++subgraphDepth;
  auto restore = llvm::make_scope_exit([&]() {
    values = std::move(enclosing);
    sequenceScope = std::move(enclosingSequences);
    importingNewestForm = enclosingNewestForm;
    namePrefix = enclosingPrefix;
    --subgraphDepth;
    currentNodeName = parentName;
    currentOpType = parentOpType;
    currentLoc = parentLoc;
  });

  OpBuilder::InsertionGuard guard(builder);
  if (block)
    builder.setInsertionPointToEnd(block);
  for (auto [i, input] : llvm::enumerate(graph.input())) {
    if (input.name().empty())
      return fail() << "input " << i << " has no name";
    Type type = argTypes[i];
    if (input.has_type() && input.type().has_tensor_type() &&
        input.type().tensor_type().elem_type() != 0) {
      Type declared = convertElementType(input.type().tensor_type().elem_type(), &context);
      auto tensor = dyn_cast<RankedTensorType>(type);
      if (tensor && declared != tensor.getElementType())
        return fail() << "input '" << input.name() << "' is declared as "
                      << dataTypeName(input.type().tensor_type().elem_type()) << " but "
                      << parentOpType << " passes " << type;
    }
    values[input.name()] = block ? Value(block->addArgument(type, parentLoc)) : inlineInputs[i];
  }
  for (const onnx::TensorProto &init : graph.initializer()) {
    Location loc = nodeLoc(namePrefix + init.name());
    FailureOr<ElementsAttr> value = convertTensor(init, init.name(), loc);
    if (failed(value))
      return failure();
    values[init.name()] = createConstant(*value, loc);
  }
  FailureOr<SmallVector<int>> order = sortNodes(graph);
  if (failed(order))
    return failure();
  for (int index : *order)
    if (failed(importNode(graph.node(index), index)))
      return failure();
  SmallVector<Value> outputs;
  if (outputItems)
    outputItems->clear();
  for (const onnx::ValueInfoProto &output : graph.output()) {
    Value v = values.lookup(output.name());
    if (!v && outputItems && sequenceScope.sequences.count(output.name())) {
      FailureOr<SmallVector<Value>> items = sequenceItems(
          output.name(), parentName + "/" + attrName.str() + "/" + output.name());
      if (failed(items))
        return failure();
      outputItems->push_back(items->size());
      outputs.append(items->begin(), items->end());
      continue;
    }
    if (outputItems)
      outputItems->push_back(-1);
    if (!v && (sequenceScope.sequences.count(output.name()) ||
               sequenceScope.absentOptionals.contains(output.name())))
      return fail() << "output '" << output.name() << "' is a sequence or optional, "
                    << "which kiln follows only inside one graph (not as an "
                    << parentOpType << " output)";
    if (!v)
      return fail() << "output '" << output.name()
                    << "' is not produced by any node, input or initializer";
    if (!isa<RankedTensorType>(v.getType()))
      return fail() << "output '" << output.name() << "' is not a tensor";
    outputs.push_back(v);
  }
  return outputs;
}

FailureOr<SmallVector<Value>>
ModelImporter::importControlFlowNode(const onnx::NodeProto &node,
                                     SmallVector<Value> operands,
                                     ArrayRef<NamedAttribute> attrs, int64_t numResults,
                                     SmallVectorImpl<int64_t> &outputItems) {
  outputItems.clear();
  StringRef opType = node.op_type();
  auto graphAttr = [&](StringRef name) -> const onnx::GraphProto * {
    for (const onnx::AttributeProto &attr : node.attribute())
      if (attr.name() == name && attr.has_g())
        return &attr.g();
    emitNodeError() << "required subgraph attribute '" << name << "' is missing";
    return nullptr;
  };
  auto scalar = [&](Type element) { return RankedTensorType::get({}, element); };
  // Each region: its subgraph and the types of its block arguments.
  SmallVector<std::tuple<StringRef, const onnx::GraphProto *, SmallVector<Type>>> regions;

  if (opType == "If") {
    const onnx::GraphProto *thenGraph = graphAttr("then_branch");
    const onnx::GraphProto *elseGraph = graphAttr("else_branch");
    if (!thenGraph || !elseGraph)
      return failure();
    // A constant condition: only the branch taken is imported, in place of the If.
    std::optional<SmallVector<int64_t>> cond =
        kiln::onnx::getConstantIntValues(operands[0]);
    if (cond && cond->size() == 1) {
      bool taken = (*cond)[0] != 0;
      StringRef name = taken ? "then_branch" : "else_branch";
      FailureOr<SmallVector<Value>> results =
          importSubgraph(taken ? *thenGraph : *elseGraph, name, {},
                         builder.getInsertionBlock(), {}, &outputItems);
      if (failed(results))
        return failure();
      if (static_cast<int64_t>(outputItems.size()) != numResults)
        return emitNodeError() << name << " has " << outputItems.size()
                               << " outputs but the If has " << numResults;
      return results;
    }
    regions.push_back({"then_branch", thenGraph, {}});
    regions.push_back({"else_branch", elseGraph, {}});
  } else if (opType == "Loop") {
    const onnx::GraphProto *body = graphAttr("body");
    if (!body)
      return failure();
    while (operands.size() < 2)
      operands.push_back(getNoValue());
    SmallVector<Type> argTypes = {scalar(builder.getI64Type()), scalar(builder.getI1Type())};
    for (Value v : llvm::drop_begin(operands, 2)) {
      if (!isa<RankedTensorType>(v.getType()))
        return emitNodeError() << "a loop-carried value is absent or not a tensor";
      argTypes.push_back(v.getType());
    }
    regions.push_back({"body", body, argTypes});
  } else {
    const onnx::GraphProto *body = graphAttr("body");
    if (!body)
      return failure();
    int64_t numScanInputs = -1;
    std::optional<SmallVector<int64_t>> axes;
    for (const NamedAttribute &attr : attrs) {
      if (attr.getName() == "num_scan_inputs")
        if (auto i = dyn_cast<IntegerAttr>(attr.getValue()))
          numScanInputs = i.getInt();
      if (attr.getName() == "scan_input_axes")
        if (auto a = dyn_cast<ArrayAttr>(attr.getValue())) {
          axes.emplace();
          for (Attribute e : a)
            axes->push_back(cast<IntegerAttr>(e).getInt());
        }
    }
    int64_t total = static_cast<int64_t>(operands.size());
    if (numScanInputs < 1 || numScanInputs > total)
      return emitNodeError() << "num_scan_inputs is " << numScanInputs
                             << " but must be in [1, " << total << "]";
    int64_t states = total - numScanInputs;
    if (axes && static_cast<int64_t>(axes->size()) != numScanInputs)
      return emitNodeError() << "scan_input_axes has " << axes->size()
                             << " entries but there are " << numScanInputs
                             << " scan inputs";
    SmallVector<Type> argTypes;
    for (auto [i, v] : llvm::enumerate(operands)) {
      auto type = dyn_cast<RankedTensorType>(v.getType());
      if (!type)
        return emitNodeError() << "input " << i << " is absent or not a tensor";
      if (static_cast<int64_t>(i) < states) {
        argTypes.push_back(type);
        continue;
      }
      // The body sees one slice: the scanned axis removed.
      int64_t axis = axes ? (*axes)[i - states] : 0, rank = type.getRank();
      if (axis < -rank || axis >= rank)
        return emitNodeError() << "scan_input_axes entry " << axis
                               << " is out of range for scan input " << i - states
                               << " of rank " << rank;
      SmallVector<int64_t> shape(type.getShape());
      shape.erase(shape.begin() + (axis < 0 ? axis + rank : axis));
      argTypes.push_back(type.clone(shape));
    }
    regions.push_back({"body", body, argTypes});
  }

  // The op is created first and its regions filled in place: the ops of a region are
  // verified as they are built, which needs their enclosing values in reach.
  OperationState state(currentLoc, "onnx." + node.op_type());
  state.addOperands(operands);
  state.addTypes(SmallVector<Type>(numResults, builder.getNoneType()));
  state.addAttributes(attrs);
  for (size_t i = 0; i < regions.size(); ++i)
    state.addRegion();
  Operation *op = builder.create(state);
  bool isIf = opType == "If";
  SmallVector<int64_t> firstItems;
  for (auto [region, entry] : llvm::zip(op->getRegions(), regions)) {
    auto &[name, graph, argTypes] = entry;
    Block *block = new Block();
    region.push_back(block);
    // An If's branches may yield sequences (their items), of one structure.
    SmallVector<int64_t> items;
    FailureOr<SmallVector<Value>> outputs =
        importSubgraph(*graph, name, argTypes, block, {}, isIf ? &items : nullptr);
    if (succeeded(outputs) && isIf && !firstItems.empty() && items != firstItems) {
      for (auto [i, pair] : llvm::enumerate(llvm::zip(firstItems, items))) {
        auto [a, b] = pair;
        if (a == b)
          continue;
        auto what = [](int64_t n) {
          return n < 0 ? std::string("a tensor")
                       : "a sequence of " + std::to_string(n) + " items";
        };
        emitNodeError() << "output " << i << " is " << what(a) << " in then_branch but "
                        << what(b) << " in else_branch (kiln follows sequences at compile "
                        << "time: both branches must make the same number of items)";
        break;
      }
      outputs = failure();
    }
    if (failed(outputs)) {
      op->erase();
      return failure();
    }
    if (isIf && firstItems.empty())
      firstItems = items;
    OpBuilder::InsertionGuard guard(builder);
    builder.setInsertionPointToEnd(block);
    kiln::onnx::YieldOp::create(builder, currentLoc, *outputs);
  }
  int numOutputs = node.output_size();
  if (isIf && llvm::any_of(firstItems, [](int64_t n) { return n >= 0; })) {
    // Sequence outputs: the If yields their items, one result each.
    int64_t total = 0;
    for (int64_t n : firstItems)
      total += n < 0 ? 1 : n;
    OperationState flat(currentLoc, op->getName());
    flat.addOperands(op->getOperands());
    flat.addTypes(SmallVector<Type>(total, builder.getNoneType()));
    flat.addAttributes(attrs);
    for (unsigned i = 0; i < op->getNumRegions(); ++i)
      flat.addRegion();
    Operation *flatOp = builder.create(flat);
    for (auto [from, to] : llvm::zip(op->getRegions(), flatOp->getRegions()))
      to.takeBody(from);
    op->erase();
    op = flatOp;
    outputItems.assign(firstItems.begin(), firstItems.end());
    return kiln::onnx::completeONNXOp(builder, op, attrs,
                                      [&](Operation *) { return emitNodeError(); },
                                      [](unsigned) { return true; });
  }
  auto isUsed = [&](unsigned i) {
    return static_cast<int>(i) < numOutputs && !node.output(i).empty();
  };
  return kiln::onnx::completeONNXOp(builder, op, attrs,
                                    [&](Operation *) { return emitNodeError(); }, isUsed);
}

FailureOr<SmallVector<Value>> ModelImporter::sequenceItems(llvm::StringRef name,
                                                           llvm::StringRef what) {
  // Each item taken with a SequenceAt at a constant position (a stacked segment's item
  // is a Gather along its axis 0).
  int64_t length = 0;
  for (const SequenceSegment &segment : sequenceScope.sequences.lookup(name))
    length += segment.stacked
                  ? cast<RankedTensorType>(segment.value.getType()).getDimSize(0)
                  : 1;
  std::string nodeName = currentNodeName, opType = currentOpType;
  Location loc = currentLoc;
  SmallVector<Value> items;
  for (int64_t i = 0; i < length; ++i) {
    onnx::NodeProto at;
    at.set_op_type("SequenceAt");
    at.set_name(what.str());
    at.add_input(name.str());
    at.add_input(addConstant(
        DenseElementsAttr::get(RankedTensorType::get({}, builder.getI64Type()), i),
        "position"));
    at.add_output(freshName(name.str() + ".item"));
    LogicalResult ok = importNewestNode(at);
    currentNodeName = nodeName;
    currentOpType = opType;
    currentLoc = loc;
    if (failed(ok))
      return failure();
    items.push_back(values.lookup(at.output(0)));
  }
  return items;
}

LogicalResult ModelImporter::importSequenceMap(const onnx::NodeProto &node) {
  const onnx::GraphProto *body = nullptr;
  for (const onnx::AttributeProto &attr : node.attribute())
    if (attr.name() == "body" && attr.has_g())
      body = &attr.g();
  if (!body)
    return emitNodeError() << "required subgraph attribute 'body' is missing";
  if (node.input_size() < 1 || !sequenceScope.sequences.count(node.input(0)))
    return emitNodeError() << "input 0 ('" << (node.input_size() ? node.input(0) : "")
                           << "') is not a sequence";
  if (body->input_size() != node.input_size() || body->output_size() != node.output_size())
    return emitNodeError() << "subgraph 'body' has " << body->input_size() << " inputs and "
                           << body->output_size() << " outputs, but the node has "
                           << node.input_size() << " and " << node.output_size();
  // Per input: its items (a sequence) or the tensor every iteration reads.
  SmallVector<SmallVector<Value>> items;
  SmallVector<Value> tensors;
  size_t length = 0;
  for (auto [i, in] : llvm::enumerate(node.input())) {
    if (sequenceScope.sequences.count(in)) {
      FailureOr<SmallVector<Value>> got = sequenceItems(in, currentNodeName);
      if (failed(got))
        return failure();
      if (i && got->size() != length)
        return emitNodeError() << "sequence '" << in << "' has " << got->size()
                               << " items, but '" << node.input(0) << "' has " << length;
      length = got->size();
      items.push_back(std::move(*got));
      tensors.push_back(Value());
      continue;
    }
    Value v = values.lookup(in);
    if (!v)
      return emitNodeError() << "input '" << in << "' is not a tensor or sequence";
    items.emplace_back();
    tensors.push_back(v);
  }
  // The body once per item, inline (the items may differ in shape).
  SmallVector<SequenceValue> results(node.output_size());
  for (size_t k = 0; k < length; ++k) {
    SmallVector<Value> inputs;
    SmallVector<Type> types;
    for (auto [i, t] : llvm::enumerate(tensors)) {
      inputs.push_back(t ? t : items[i][k]);
      types.push_back(inputs.back().getType());
    }
    FailureOr<SmallVector<Value>> outs =
        importSubgraph(*body, ("body[" + Twine(k) + "]").str(), types, nullptr, inputs);
    if (failed(outs))
      return failure();
    for (auto [j, v] : llvm::enumerate(*outs))
      results[j].push_back({v, /*stacked=*/false});
  }
  for (auto [j, out] : llvm::enumerate(node.output()))
    if (!out.empty())
      sequenceScope.sequences[out] = std::move(results[j]);
  return success();
}

LogicalResult ModelImporter::buildResults() {
  const onnx::GraphProto &graph = model.graph();
  SmallVector<Value> returned;
  SmallVector<std::string> returnedNames;
  llvm::StringSet<> outputNames;
  for (const onnx::ValueInfoProto &output : graph.output()) {
    // The runtime binds outputs by name: two with one name could never both be read.
    if (!outputNames.insert(output.name()).second)
      return emitError() << "graph output '" << output.name()
                         << "' is listed twice; outputs need distinct names";
    Value v = values.lookup(output.name());
    if (!v && sequenceScope.absentOptionals.contains(output.name()))
      return emitError() << "graph output '" << output.name()
                         << "' is an empty optional (an optional output must hold its "
                            "value: docs/runtime-api.md)";
    auto seq = sequenceScope.sequences.find(output.name());
    if (!v && seq != sequenceScope.sequences.end()) {
      // A sequence output is its items, the outputs NAME[0] .. NAME[N-1] (docs/runtime-api.md).
      FailureOr<SmallVector<Value>> got =
          sequenceItems(output.name(), "output '" + output.name() + "'");
      if (failed(got))
        return failure();
      SmallVector<Value> items = std::move(*got);
      if (items.empty())
        return emitError() << "graph output '" << output.name()
                           << "' is an empty sequence (a sequence output is its items, "
                              "so it needs at least one)";
      for (auto [i, item] : llvm::enumerate(items)) {
        std::string name = (output.name() + "[" + Twine(i) + "]").str();
        if (!outputNames.insert(name).second)
          return emitError() << "graph output '" << name << "' (an item of sequence '"
                             << output.name() << "') has the name of another output";
        returned.push_back(item);
        returnedNames.push_back(name);
      }
      continue;
    }
    if (!v)
      return emitError() << "graph output '" << output.name()
                         << "' is not produced by any node, input or initializer";
    auto type = dyn_cast<RankedTensorType>(v.getType());
    if (!type)
      return emitError() << "graph output '" << output.name() << "' is not a tensor";
    if (output.has_type() && output.type().has_tensor_type()) {
      const onnx::TypeProto::Tensor &declared = output.type().tensor_type();
      Type declaredElement = convertElementType(declared.elem_type(), &context);
      if (declared.elem_type() != 0 && declaredElement != type.getElementType())
        return emitError() << "graph output '" << output.name() << "' is declared as "
                           << dataTypeName(declared.elem_type()) << " but computes "
                           << type.getElementType();
      if (declared.has_shape()) {
        bool mismatch = declared.shape().dim_size() != type.getRank();
        for (int i = 0; !mismatch && i < declared.shape().dim_size(); ++i)
          mismatch = declared.shape().dim(i).has_dim_value() &&
                     !type.isDynamicDim(i) && // decided by the run
                     declared.shape().dim(i).dim_value() != type.getDimSize(i);
        if (mismatch)
          mlir::emitWarning(fileLoc)
              << "graph output '" << output.name() << "' is declared with another shape "
              << "than the computed " << type;
      }
    }
    returned.push_back(v);
    returnedNames.push_back(output.name());
  }
  func::ReturnOp::create(builder, fileLoc, returned);
  SmallVector<Type> resultTypes;
  for (Value v : returned)
    resultTypes.push_back(v.getType());
  func.setFunctionType(
      builder.getFunctionType(func.getFunctionType().getInputs(), resultTypes));
  for (auto [i, name] : llvm::enumerate(returnedNames))
    func.setResultAttr(i, "onnx.name", builder.getStringAttr(name));
  return success();
}

void ModelImporter::collectNames(const onnx::GraphProto &graph) {
  for (const onnx::ValueInfoProto &v : graph.input())
    modelNames.insert(v.name());
  for (const onnx::ValueInfoProto &v : graph.output())
    modelNames.insert(v.name());
  for (const onnx::ValueInfoProto &v : graph.value_info())
    modelNames.insert(v.name());
  for (const onnx::TensorProto &t : graph.initializer())
    modelNames.insert(t.name());
  for (const onnx::NodeProto &node : graph.node()) {
    for (const std::string &name : node.input())
      modelNames.insert(name);
    for (const std::string &name : node.output())
      modelNames.insert(name);
    for (const onnx::AttributeProto &attr : node.attribute()) {
      if (attr.has_g())
        collectNames(attr.g());
      for (const onnx::GraphProto &g : attr.graphs())
        collectNames(g);
    }
  }
}

FailureOr<OwningOpRef<ModuleOp>> ModelImporter::run() {
  context.loadDialect<kiln::onnx::ONNXDialect, kiln::KilnDialect, func::FuncDialect>();
  if (failed(readModel()) || failed(checkOpset()))
    return failure();

  module = ModuleOp::create(fileLoc);
  (*module)->setAttr("onnx.opset", builder.getI64IntegerAttr(opset));
  std::string producer = model.producer_name();
  if (!model.producer_version().empty())
    producer += (producer.empty() ? "" : " ") + model.producer_version();
  (*module)->setAttr("onnx.producer", builder.getStringAttr(producer));

  collectNames(model.graph());
  if (failed(createFunction()))
    return failure();
  FailureOr<SmallVector<int>> order = sortNodes(model.graph());
  if (failed(order))
    return failure();
  for (int index : *order)
    if (failed(importNode(model.graph().node(index), index)))
      return failure();
  if (failed(buildResults()))
    return failure();
  if (failed(mlir::verify(*module)))
    return failure();
  return std::move(module);
}

FailureOr<OwningOpRef<ModuleOp>>
kiln::importOnnxModel(MLIRContext &context, llvm::StringRef modelPath,
                      const ImportOptions &options) {
  ModelImporter importer(context, modelPath, options);
  return importer.run();
}
