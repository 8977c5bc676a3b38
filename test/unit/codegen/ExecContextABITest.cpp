//===- ExecContextABITest.cpp - the exec context header's LLVM type -------===//
//
// Generated code loads `parallel_for` from the header of the
// `kiln_exec_context` the runtime passes; the LLVM type it uses must lay the
// header out as the C compiler does, on every target kiln compiles for.
//
//===----------------------------------------------------------------------===//

#include "codegen/CPU/ExecContextABI.h"

#include "kiln/parallel.h"

#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/IR/MLIRContext.h"
#include "mlir/Target/LLVMIR/TypeToLLVM.h"

#include "llvm/IR/DataLayout.h"
#include "llvm/IR/DerivedTypes.h"
#include "llvm/IR/LLVMContext.h"
#include "llvm/MC/TargetRegistry.h"
#include "llvm/Support/TargetSelect.h"
#include "llvm/Target/TargetMachine.h"
#include "llvm/TargetParser/Triple.h"

#include <gtest/gtest.h>

#include <cstddef>
#include <memory>
#include <type_traits>

namespace {

using kiln::ExecContextHeaderField;

// The C side of what the LLVM types below describe.
static_assert(std::is_same_v<decltype(kiln_exec_context_header::parallel_for),
                             void (*)(kiln_exec_context *, int64_t,
                                      kiln_parallel_body_fn, void *)>);
static_assert(
    std::is_same_v<kiln_parallel_body_fn, void (*)(void *, int64_t, int64_t)>);

/// The data layout LLVM uses for `triple` (what ObjectEmitter.cpp gets).
llvm::DataLayout dataLayoutFor(llvm::StringRef tripleName) {
  llvm::InitializeAllTargetInfos();
  llvm::InitializeAllTargets();
  llvm::InitializeAllTargetMCs();
  llvm::Triple triple(llvm::Triple::normalize(tripleName));
  std::string error;
  const llvm::Target *target =
      llvm::TargetRegistry::lookupTarget(triple, error);
  EXPECT_NE(target, nullptr) << error;
  if (!target)
    return llvm::DataLayout();
  std::unique_ptr<llvm::TargetMachine> machine(target->createTargetMachine(
      triple, "generic", "", llvm::TargetOptions(), llvm::Reloc::PIC_));
  EXPECT_NE(machine, nullptr);
  return machine ? machine->createDataLayout() : llvm::DataLayout();
}

class ExecContextABITest : public ::testing::TestWithParam<const char *> {
protected:
  ExecContextABITest() { context.loadDialect<mlir::LLVM::LLVMDialect>(); }

  llvm::Type *translate(mlir::Type type) {
    mlir::LLVM::TypeToLLVMIRTranslator translator(llvmContext);
    return translator.translateType(type);
  }

  mlir::MLIRContext context;
  llvm::LLVMContext llvmContext;
};

TEST_P(ExecContextABITest, HeaderLayoutMatchesTheCStruct) {
  llvm::DataLayout layout = dataLayoutFor(GetParam());
  auto *header = llvm::cast<llvm::StructType>(
      translate(kiln::getExecContextHeaderType(&context)));
  ASSERT_EQ(header->getNumElements(), 3u);
  const llvm::StructLayout *fields = layout.getStructLayout(header);
  auto offsetOf = [&](ExecContextHeaderField field) {
    return fields->getElementOffset(static_cast<unsigned>(field));
  };
  auto sizeOf = [&](ExecContextHeaderField field) {
    return layout.getTypeAllocSize(
        header->getElementType(static_cast<unsigned>(field)));
  };
  EXPECT_EQ(offsetOf(ExecContextHeaderField::Version),
            offsetof(kiln_exec_context_header, version));
  EXPECT_EQ(offsetOf(ExecContextHeaderField::NumThreads),
            offsetof(kiln_exec_context_header, num_threads));
  EXPECT_EQ(offsetOf(ExecContextHeaderField::ParallelFor),
            offsetof(kiln_exec_context_header, parallel_for));
  EXPECT_EQ(sizeOf(ExecContextHeaderField::Version),
            sizeof(kiln_exec_context_header::version));
  EXPECT_EQ(sizeOf(ExecContextHeaderField::NumThreads),
            sizeof(kiln_exec_context_header::num_threads));
  EXPECT_EQ(sizeOf(ExecContextHeaderField::ParallelFor),
            sizeof(kiln_exec_context_header::parallel_for));
  EXPECT_EQ(layout.getTypeAllocSize(header), sizeof(kiln_exec_context_header));
  EXPECT_EQ(layout.getABITypeAlign(header).value(),
            alignof(kiln_exec_context_header));
}

TEST_P(ExecContextABITest, CallbackTypesMatchTheCSignatures) {
  llvm::DataLayout layout = dataLayoutFor(GetParam());
  auto sizes = [&](llvm::FunctionType *type) {
    std::vector<uint64_t> result;
    for (llvm::Type *param : type->params())
      result.push_back(layout.getTypeAllocSize(param));
    return result;
  };

  auto *parallelFor = llvm::cast<llvm::FunctionType>(
      translate(kiln::getParallelForType(&context)));
  EXPECT_TRUE(parallelFor->getReturnType()->isVoidTy());
  ASSERT_EQ(parallelFor->getNumParams(), 4u);
  EXPECT_TRUE(parallelFor->getParamType(0)->isPointerTy());
  EXPECT_TRUE(parallelFor->getParamType(1)->isIntegerTy(64));
  EXPECT_TRUE(parallelFor->getParamType(2)->isPointerTy());
  EXPECT_TRUE(parallelFor->getParamType(3)->isPointerTy());
  EXPECT_EQ(
      sizes(parallelFor),
      (std::vector<uint64_t>{sizeof(kiln_exec_context *), sizeof(int64_t),
                             sizeof(kiln_parallel_body_fn), sizeof(void *)}));

  mlir::FunctionType body = kiln::getParallelBodyType(&context);
  ASSERT_EQ(body.getNumInputs(), 3u);
  EXPECT_EQ(body.getNumResults(), 0u);
  EXPECT_TRUE(llvm::isa<mlir::LLVM::LLVMPointerType>(body.getInput(0)));
  EXPECT_TRUE(body.getInput(1).isInteger(64));
  EXPECT_TRUE(body.getInput(2).isInteger(64));
}

// The hosts and cross targets kiln compiles for (LP64 all): Linux, Android,
// macOS / iOS.
INSTANTIATE_TEST_SUITE_P(Targets, ExecContextABITest,
                         ::testing::Values("x86_64-unknown-linux-gnu",
                                           "aarch64-unknown-linux-gnu",
                                           "aarch64-linux-android24",
                                           "arm64-apple-ios17.0"),
                         [](const auto &info) {
                           std::string name = info.param;
                           for (char &c : name)
                             if (!isalnum(static_cast<unsigned char>(c)))
                               c = '_';
                           return name;
                         });

} // namespace
