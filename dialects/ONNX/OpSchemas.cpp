//===- OpSchemas.cpp - Version history and arity of onnx ops --------------===//

#include "dialects/ONNX/OpSchemas.h"

#include "llvm/ADT/STLExtras.h"
#include "llvm/ADT/StringMap.h"

#include <initializer_list>
#include <vector>

using namespace kiln::onnx;

std::optional<int64_t> OpSchemaInfo::versionAt(int64_t opset) const {
  std::optional<int64_t> found;
  for (int64_t v : versions)
    if (v <= opset)
      found = v;
  return found;
}

std::optional<int64_t> OpSchemaInfo::nextVersion(int64_t version) const {
  for (int64_t v : versions)
    if (v > version)
      return v;
  return std::nullopt;
}

static OpSchemaInfo makeEntry(const char *name, std::initializer_list<int64_t> versions,
                              int64_t minIn, int64_t maxIn, bool variadicIn,
                              int64_t minOut, int64_t maxOut, bool variadicOut,
                              llvm::StringRef requiredAttributes) {
  OpSchemaInfo info;
  info.name = name;
  info.versions.assign(versions.begin(), versions.end());
  llvm::sort(info.versions);
  info.minInputs = minIn;
  info.maxInputs = maxIn;
  info.variadicInputs = variadicIn;
  info.minOutputs = minOut;
  info.maxOutputs = maxOut;
  info.variadicOutputs = variadicOut;
  llvm::SmallVector<llvm::StringRef> required;
  requiredAttributes.split(required, ',', -1, /*KeepEmpty=*/false);
  info.requiredAttributes.assign(required.begin(), required.end());
  return info;
}

namespace {
struct SchemaTable {
  std::vector<OpSchemaInfo> entries;
  llvm::StringMap<size_t> index;
  int64_t newestOpset = 1;

  SchemaTable() {
    // The version list is a braced list, so the macro takes it through __VA_ARGS__.
#define KILN_ONNX_OP(NAME, ...) entries.push_back(makeEntry(NAME, __VA_ARGS__));
#include "dialects/ONNX/ONNXOpSchemas.inc"
    for (size_t i = 0; i < entries.size(); ++i) {
      index[entries[i].name] = i;
      if (!entries[i].versions.empty())
        newestOpset = std::max(newestOpset, entries[i].versions.back());
    }
  }
};
} // namespace

static const SchemaTable &getTable() {
  static const SchemaTable table;
  return table;
}

const OpSchemaInfo *kiln::onnx::lookupOpSchema(llvm::StringRef opType) {
  const SchemaTable &table = getTable();
  auto it = table.index.find(opType);
  if (it == table.index.end() || table.entries[it->second].versions.empty())
    return nullptr;
  return &table.entries[it->second];
}

int64_t kiln::onnx::getNewestKnownOpset() { return getTable().newestOpset; }
