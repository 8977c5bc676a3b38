//===- ParallelCodegen.cpp - LLVM code generation on several threads ------===//
//
// Instruction selection and object emission dominate what is left of a
// compile once the weights bypass LLVM IR. After O3 (so the optimized code
// is exactly the single-threaded one) the module is split into parts
// (llvm::SplitModule), each part is handed over as bitcode to a thread with
// its own LLVMContext and TargetMachine, and the part objects are joined by a
// relocatable link (ld.lld -r) into the one object the rest of kiln expects.
// SplitModule turns local symbols into hidden ones so the parts can reach
// each other; `llvm-objcopy --localize-hidden` makes them local again, so the
// object exports exactly what the single-threaded one does. ELF only (lld
// has no relocatable Mach-O link).
//
//===----------------------------------------------------------------------===//

#include "codegen/CPU/CPUPipeline.h"

#include "llvm/ADT/ScopeExit.h"
#include "llvm/Bitcode/BitcodeReader.h"
#include "llvm/Bitcode/BitcodeWriter.h"
#include "llvm/IR/LLVMContext.h"
#include "llvm/IR/LegacyPassManager.h"
#include "llvm/IR/Module.h"
#include "llvm/MC/TargetRegistry.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/Program.h"
#include "llvm/Support/Threading.h"
#include "llvm/Support/raw_ostream.h"
#include "llvm/Target/TargetMachine.h"
#include "llvm/TargetParser/Triple.h"
#include "llvm/Transforms/Utils/SplitModule.h"

#include <atomic>
#include <cstdlib>
#include <mutex>
#include <thread>

using namespace mlir;

namespace kiln {

std::string findLLVMTool(StringRef name) {
  llvm::SmallString<256> path(KILN_LLVM_TOOLS_DIR);
  llvm::sys::path::append(path, name);
  if (llvm::sys::fs::can_execute(path))
    return std::string(path);
  if (llvm::ErrorOr<std::string> found = llvm::sys::findProgramByName(name))
    return *found;
  return "";
}

namespace {

bool runTool(ArrayRef<std::string> args, std::string &error) {
  SmallVector<StringRef> argRefs(args.begin(), args.end());
  std::string execError;
  int rc = llvm::sys::ExecuteAndWait(args[0], argRefs, std::nullopt, {}, 0, 0,
                                     &execError);
  if (rc == 0)
    return true;
  error = "'" + llvm::join(argRefs, " ") + "' failed" +
          (execError.empty() ? "" : ": " + execError);
  return false;
}

} // namespace

unsigned getCodegenThreads() {
  // Opt-in: on a 2-core machine shared with other work it measured slower
  // (the parts' bitcode, the relocatable link and objcopy cost ~0.9 s of
  // CPU on ResNet-50 and no core was free); docs/pipeline.md.
  const char *env = std::getenv("KILN_CODEGEN_THREADS");
  if (!env)
    return 1;
  unsigned n = 0;
  if (StringRef(env) == "auto")
    return std::min(llvm::hardware_concurrency().compute_thread_count(), 8u);
  if (!StringRef(env).getAsInteger(10, n) && n > 0)
    return std::min(n, 64u);
  return 1;
}

FailureOr<bool> emitObjectInParallel(llvm::Module &module,
                                     const CPUTarget &target, unsigned threads,
                                     StringRef path, std::string &error) {
  if (threads < 2 || !llvm::Triple(target.triple).isOSBinFormatELF())
    return false;
  std::string lld = findLLVMTool("ld.lld");
  std::string objcopy = findLLVMTool("llvm-objcopy");
  if (lld.empty() || objcopy.empty())
    return false;

  // The weights' symbols (externalizeLargeConstants: dso_local declarations,
  // defined by module assembly) go with the first part; the others reach
  // them as hidden globals, made local again below.
  std::string moduleAsm = module.getModuleInlineAsm();
  for (llvm::GlobalVariable &global : module.globals())
    if (global.isDeclaration() && global.isDSOLocal()) {
      global.setVisibility(llvm::GlobalValue::HiddenVisibility);
      moduleAsm += "\t.globl\t" + global.getName().str() + "\n\t.hidden\t" +
                   global.getName().str() + "\n";
    }
  module.setModuleInlineAsm("");

  // More parts than threads: SplitModule balances by hashing names, so small
  // parts pulled from a queue even the threads' load out.
  std::vector<llvm::SmallVector<char, 0>> bitcode;
  llvm::SplitModule(
      module, threads * 4, [&](std::unique_ptr<llvm::Module> part) {
        if (bitcode.empty())
          part->setModuleInlineAsm(moduleAsm);
        llvm::SmallVector<char, 0> &buffer = bitcode.emplace_back();
        llvm::raw_svector_ostream os(buffer);
        llvm::WriteBitcodeToFile(*part, os);
      });

  std::vector<std::string> partPaths(bitcode.size());
  std::vector<std::string> errors(bitcode.size());
  for (size_t i = 0; i < bitcode.size(); ++i)
    partPaths[i] = (path + ".part" + Twine(i) + ".o").str();
  llvm::scope_exit removeParts([&] {
    for (const std::string &part : partPaths)
      llvm::sys::fs::remove(part);
  });
  std::atomic<size_t> next{0};
  auto worker = [&] {
    for (size_t i; (i = next++) < bitcode.size();) {
      llvm::LLVMContext context;
      std::string llvmErrors;
      captureLLVMErrors(context, llvmErrors);
      llvm::Expected<std::unique_ptr<llvm::Module>> part =
          llvm::parseBitcodeFile(
              llvm::MemoryBufferRef(
                  StringRef(bitcode[i].data(), bitcode[i].size()), "part"),
              context);
      if (!part) {
        errors[i] = llvm::toString(part.takeError());
        continue;
      }
      std::unique_ptr<llvm::TargetMachine> machine =
          createCPUTargetMachine(target, errors[i]);
      if (!machine)
        continue;
      std::error_code ec;
      llvm::raw_fd_ostream out(partPaths[i], ec, llvm::sys::fs::OF_None);
      if (ec) {
        errors[i] = "cannot write '" + partPaths[i] + "': " + ec.message();
        continue;
      }
      llvm::legacy::PassManager codegen;
      if (machine->addPassesToEmitFile(codegen, out, nullptr,
                                       llvm::CodeGenFileType::ObjectFile)) {
        errors[i] = "the target cannot emit object files";
        continue;
      }
      codegen.run(**part);
      if (!llvmErrors.empty())
        errors[i] = "LLVM code generation failed: " + llvmErrors;
    }
  };
  std::vector<std::thread> pool;
  for (unsigned t = 1; t < threads; ++t)
    pool.emplace_back(worker);
  worker();
  for (std::thread &thread : pool)
    thread.join();
  for (const std::string &partError : errors)
    if (!partError.empty()) {
      error = partError;
      return failure();
    }

  std::vector<std::string> link = {lld, "-r", "-o", path.str()};
  link.insert(link.end(), partPaths.begin(), partPaths.end());
  if (!runTool(link, error) ||
      !runTool({objcopy, "--localize-hidden", path.str()}, error))
    return failure();
  return true;
}

} // namespace kiln
