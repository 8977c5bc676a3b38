//===- ExternalWeights.cpp - large constants bypass LLVM IR ---------------===//
//
// Translating a global with 100 MB of weights to LLVM IR copies the bytes
// into the LLVMContext, and the AsmPrinter then writes them element by
// element: seconds and several copies of the weights in memory. Instead each
// large constant global becomes a dso_local declaration, its bytes go
// to one file, and module-level assembly places them in the object with
// `.incbin`: the integrated assembler copies them once, in one piece. The
// symbols are local to the object and reached PC-relative (no GOT, no
// dynamic relocations, nothing exported), so every --emit kind gets one
// self-contained object. The bytes are keyed by content (WeightPool): two
// constants with the same bytes are stored once. The CPU variants of one
// artifact (--cpu portable) share one pool: each variant's module declares
// the pool's symbols (hidden), and one object of the artifact defines them,
// so weights packed alike for two variants are in the artifact once.
//
//===----------------------------------------------------------------------===//

#include "codegen/CPU/CPUPipeline.h"
#include "codegen/WeightPool.h"

#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/IR/BuiltinAttributes.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/DialectResourceBlobManager.h"

#include "llvm/ADT/DenseMap.h"
#include "llvm/ADT/SetVector.h"
#include "llvm/ADT/SmallPtrSet.h"
#include "llvm/ADT/StringMap.h"
#include "llvm/ADT/StringSet.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/MathExtras.h"
#include "llvm/Support/SwapByteOrder.h"
#include "llvm/Support/raw_ostream.h"
#include "llvm/TargetParser/Triple.h"

#include <algorithm>
#include <map>
#include <optional>

using namespace mlir;

namespace kiln {

namespace {

/// Below this many bytes a constant stays in the IR, where LLVM may fold
/// loads from it (lookup tables, shapes, small biases).
constexpr size_t kMinExternalBytes = 4096;
/// Alignment of each external constant: a cache line, as memref.global asks.
constexpr uint64_t kExternalAlignment = 64;

/// The bytes of `attr` exactly as LLVM would lay them out, or nullopt for a
/// value kept in the IR (a splat, packed i1, an element type without a plain
/// byte layout).
std::optional<ArrayRef<char>> rawConstantBytes(Attribute attr) {
  auto elements = dyn_cast_or_null<ElementsAttr>(attr);
  if (!elements)
    return std::nullopt;
  Type elementType = elements.getElementType();
  if (!elementType.isIntOrFloat() || elementType.getIntOrFloatBitWidth() % 8)
    return std::nullopt;
  size_t expected = static_cast<size_t>(elements.getNumElements()) *
                    (elementType.getIntOrFloatBitWidth() / 8);
  ArrayRef<char> data;
  if (auto resource = dyn_cast<DenseResourceElementsAttr>(attr)) {
    AsmResourceBlob *blob = resource.getRawHandle().getBlob();
    if (!blob)
      return std::nullopt;
    data = blob->getData();
  } else if (auto dense = dyn_cast<DenseElementsAttr>(attr)) {
    if (dense.isSplat())
      return std::nullopt;
    data = dense.getRawData();
  } else {
    return std::nullopt;
  }
  if (data.size() != expected)
    return std::nullopt;
  return data;
}

/// Frees the blobs in `candidates` that no constant left in `module` refers
/// to: the weights then stop counting in the compiler's memory while LLVM
/// generates code.
void releaseUnusedBlobs(
    ModuleOp module,
    llvm::SmallPtrSetImpl<DialectResourceBlobManager::BlobEntry *> &candidates) {
  auto keep = [&](Attribute attr) {
    if (auto resource = dyn_cast_or_null<DenseResourceElementsAttr>(attr))
      candidates.erase(resource.getRawHandle().getResource());
  };
  module.walk([&](Operation *op) {
    if (auto global = dyn_cast<LLVM::GlobalOp>(op))
      keep(global.getValueAttr());
    else if (auto constant = dyn_cast<LLVM::ConstantOp>(op))
      keep(constant.getValue());
    else if (!isa<LLVM::LLVMDialect>(op->getDialect()) && !isa<ModuleOp>(op))
      candidates.clear(); // an op this does not know might hold one
    for (NamedAttribute attr : op->getDiscardableAttrs())
      keep(attr.getValue());
  });
  for (DialectResourceBlobManager::BlobEntry *entry : candidates)
    entry->setBlob(AsmResourceBlob());
}

/// The names (NameLoc) in `loc`, in order, into `names`.
void collectNames(Location loc, llvm::SetVector<StringRef> &names) {
  loc->walk([&](Location inner) {
    if (auto name = dyn_cast<NameLoc>(inner))
      names.insert(name.getName().getValue());
    return WalkResult::advance();
  });
}

/// Who reads each constant global, for `kiln inspect --sizes`: the names in
/// the locations of the ops its address flows into. The address is followed
/// through the ops that carry it on (GEPs, memref descriptors built and taken
/// apart with insert/extractvalue, casts, selects) up to the ops that use it
/// (loads, stores, calls, arithmetic on a descriptor's sizes), whose
/// locations name the ONNX nodes they were lowered from. The first names are
/// those of the constant itself (an initializer's name, the lowering of its
/// get_global); the nodes that read it follow.
llvm::StringMap<llvm::SetVector<StringRef>> findReaders(ModuleOp module) {
  llvm::StringMap<llvm::SetVector<StringRef>> readers;
  module.walk([&](LLVM::AddressOfOp address) {
    llvm::SetVector<StringRef> &names = readers[address.getGlobalName()];
    collectNames(address.getLoc(), names);
    SmallVector<Value> work = {address.getResult()};
    llvm::SmallPtrSet<Operation *, 16> seen;
    // Bounded: a descriptor passed around a large function is followed to
    // its first few hundred uses, which is where its readers are.
    constexpr size_t kMaxOps = 512;
    while (!work.empty() && seen.size() < kMaxOps) {
      Value value = work.pop_back_val();
      for (Operation *user : value.getUsers()) {
        if (!seen.insert(user).second)
          continue;
        collectNames(user->getLoc(), names);
        if (isa<LLVM::GEPOp, LLVM::InsertValueOp, LLVM::ExtractValueOp,
                LLVM::BitcastOp, LLVM::AddrSpaceCastOp, LLVM::SelectOp,
                LLVM::PtrToIntOp, LLVM::IntToPtrOp>(user))
          work.append(user->result_begin(), user->result_end());
      }
    }
  });
  return readers;
}

} // namespace

FailureOr<size_t> externalizeLargeConstants(ModuleOp module,
                                            const CPUTarget &target,
                                            StringRef symbolPrefix,
                                            StringRef dataPath,
                                            bool releaseConstants,
                                            std::string &error,
                                            WeightPool *sharedPool,
                                            WeightReadersFn describeReaders) {
  llvm::Triple triple(target.triple);
  // The bytes are the host's (little-endian) layout, and the directives
  // are ELF's; other targets keep their constants in the IR.
  if (!triple.isOSBinFormatELF() || !triple.isLittleEndian() ||
      !llvm::sys::IsLittleEndianHost)
    return size_t(0);

  // Without a shared pool the module's own: its data file included by the
  // module's assembly, its symbols local to the object.
  std::optional<WeightPool> ownPool;
  if (!sharedPool)
    ownPool.emplace(symbolPrefix.str(), dataPath.str());
  WeightPool &pool = sharedPool ? *sharedPool : *ownPool;
  // Old global name -> the pool's symbol; the pool's symbols declared here.
  llvm::StringMap<std::string> renamed;
  llvm::StringSet<> declared;
  // Globals nothing takes the address of (an unpacked weight replaced by its
  // packed copy) are dropped here, as LLVM would drop them, not emitted; so
  // is a second global of bytes the pool already holds.
  llvm::StringSet<> used;
  module.walk([&](LLVM::AddressOfOp op) { used.insert(op.getGlobalName()); });
  SmallVector<LLVM::GlobalOp> erased;
  // The readers of every constant, external or not, keyed by the symbol it
  // ends up with (two globals of the same bytes share one): the
  // `.kiln.weights` table below.
  llvm::StringMap<llvm::SetVector<StringRef>> readers = findReaders(module);
  std::map<std::string, llvm::SetVector<StringRef>> symbolReaders;
  auto addToTable = [&](StringRef symbol, StringRef global) {
    auto &names = symbolReaders[symbol.str()];
    auto it = readers.find(global);
    if (it != readers.end())
      names.insert(it->second.begin(), it->second.end());
  };
  // The import's copies of the bytes now in the file, freed at the end.
  llvm::SmallPtrSet<DialectResourceBlobManager::BlobEntry *, 32> released;
  size_t moved = 0;
  for (auto global : module.getOps<LLVM::GlobalOp>()) {
    if (!global.getConstant() || global.getThreadLocal_() ||
        global.getSection() || global.getComdat() ||
        global.getAddrSpace() != 0 ||
        global.getLinkage() != LLVM::Linkage::Internal &&
            global.getLinkage() != LLVM::Linkage::Private)
      continue;
    std::optional<ArrayRef<char>> bytes =
        rawConstantBytes(global.getValueAttr());
    if (!bytes || bytes->size() < kMinExternalBytes) {
      if (used.contains(global.getSymName()))
        addToTable(global.getSymName(), global.getSymName());
      continue;
    }
    if (auto resource = dyn_cast<DenseResourceElementsAttr>(global.getValueAttr()))
      released.insert(resource.getRawHandle().getResource());
    if (!used.contains(global.getSymName())) {
      erased.push_back(global);
      continue;
    }
    uint64_t alignment = std::max<uint64_t>(
        kExternalAlignment, global.getAlignment().value_or(1));
    std::optional<std::string> name = pool.add(*bytes, alignment, error);
    if (!name)
      return failure();
    moved += bytes->size();
    renamed[global.getSymName()] = *name;
    addToTable(*name, global.getSymName());
    if (!declared.insert(*name).second) {
      erased.push_back(global);
      continue;
    }
    // What is left is a declaration of a symbol of the same object (module
    // assembly) or, with a shared pool, of the same link (hidden); either
    // way dso_local: PC-relative, no GOT.
    global.setValueAttr(nullptr);
    global.setSymName(*name);
    global.setLinkage(LLVM::Linkage::External);
    global.setVisibility_(sharedPool ? LLVM::Visibility::Hidden
                                     : LLVM::Visibility::Default);
    global.setDsoLocal(true);
    global.setAlignment(alignment);
  }
  for (LLVM::GlobalOp global : erased)
    global.erase();
  if (releaseConstants)
    releaseUnusedBlobs(module, released);
  // The readers' table: a section the loader never maps (no SHF_ALLOC), one
  // line per constant symbol, "<symbol>\t<readers>" (docs/tools.md).
  std::string table;
  for (auto &[symbol, names] : symbolReaders) {
    std::string line;
    for (auto [i, name] : llvm::enumerate(names)) {
      if (i == 16) {
        line += " +" + std::to_string(names.size() - 16) + " more";
        break;
      }
      line += (i ? ", " : "") + name.str();
    }
    if (describeReaders)
      line = describeReaders(line);
    // Neither may hold a tab or a newline (a name from the model may).
    for (char &c : line)
      if (c == '\t' || c == '\n')
        c = ' ';
    table += symbol + "\t" + line + "\n";
  }
  if (!table.empty()) {
    std::string tableAsm = "\t.pushsection\t.kiln.weights,\"\",%progbits\n"
                           "\t.ascii\t" + asmString(table) +
                           "\n\t.popsection\n";
    SmallVector<Attribute> lines;
    StringRef asmAttrName = LLVM::LLVMDialect::getModuleLevelAsmAttrName();
    if (auto existing = module->getAttrOfType<ArrayAttr>(asmAttrName))
      lines.append(existing.begin(), existing.end());
    lines.push_back(StringAttr::get(module.getContext(), tableAsm));
    module->setAttr(asmAttrName, ArrayAttr::get(module.getContext(), lines));
  }
  if (renamed.empty())
    return size_t(0);
  module.walk([&](LLVM::AddressOfOp op) {
    auto it = renamed.find(op.getGlobalName());
    if (it != renamed.end())
      op.setGlobalName(it->second);
  });
  if (sharedPool)
    return moved;
  if (!pool.finish(error))
    return failure();
  SmallVector<Attribute> lines;
  StringRef asmAttrName = LLVM::LLVMDialect::getModuleLevelAsmAttrName();
  if (auto existing = module->getAttrOfType<ArrayAttr>(asmAttrName))
    lines.append(existing.begin(), existing.end());
  lines.push_back(StringAttr::get(module.getContext(),
                                  pool.definitions(/*hiddenGlobal=*/false)));
  module->setAttr(asmAttrName, ArrayAttr::get(module.getContext(), lines));
  return moved;
}

} // namespace kiln
