//===- OneToOneTest.cpp - The importer builds one op per node -------------===//
//
// Ops that kiln-decompose expands later (LSTM, Attention, the quantized ops, the losses)
// are imported as themselves, with result types from the dialect's shape inference.
//
//===----------------------------------------------------------------------===//

#include "compiler/import/ModelImporter.h"
#include "dialects/ONNX/ShapeInference/ShapeInference.h"
#include "test/unit/import/ModelBuilder.h"

#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/Diagnostics.h"
#include "mlir/IR/DialectRegistry.h"
#include "mlir/IR/MLIRContext.h"
#include "llvm/ADT/SmallString.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/raw_ostream.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <fstream>

using namespace mlir;
using namespace importtest;
using ::testing::HasSubstr;
using ::testing::Not;

namespace {

class OneToOneTest : public ::testing::Test {
protected:
  void SetUp() override {
    llvm::SmallString<128> prefix;
    llvm::sys::path::system_temp_directory(/*erasedOnReboot=*/true, prefix);
    llvm::sys::path::append(prefix, "kiln-one-to-one-test");
    ASSERT_FALSE(llvm::sys::fs::createUniqueDirectory(prefix, dir));
    DialectRegistry registry;
    kiln::onnx::registerShapeInferenceModels(registry);
    context.appendDialectRegistry(registry);
  }
  void TearDown() override { llvm::sys::fs::remove_directories(dir); }

  /// Imports `m`; the printed module, or "" with the diagnostics in `errors`.
  std::string importModel(const ModelBuilder &m) {
    llvm::SmallString<256> path(dir);
    llvm::sys::path::append(path, "model.onnx");
    std::string bytes;
    EXPECT_TRUE(m.model.SerializeToString(&bytes));
    std::ofstream(std::string(path), std::ios::binary) << bytes;
    errors.clear();
    ScopedDiagnosticHandler handler(&context, [&](Diagnostic &diag) {
      errors += diag.str() + "\n";
      return success();
    });
    FailureOr<OwningOpRef<ModuleOp>> module =
        kiln::importOnnxModel(context, std::string(path), {});
    if (failed(module))
      return "";
    std::string text;
    llvm::raw_string_ostream os(text);
    (*module)->print(os);
    return text;
  }

  llvm::SmallString<128> dir;
  MLIRContext context;
  std::string errors;
};

TEST_F(OneToOneTest, LSTM) {
  ModelBuilder m(22);
  m.input("x", {2, 1, 3});
  m.input("w", {1, 8, 3});
  m.input("r", {1, 8, 2});
  addInt(m.node("LSTM", {"x", "w", "r"}, {"y", "y_h"}, "lstm"), "hidden_size", 2);
  m.output("y");
  m.output("y_h");
  std::string ir = importModel(m);
  ASSERT_NE(ir, "") << errors;
  EXPECT_THAT(ir, HasSubstr("onnx.LSTM"));
  EXPECT_THAT(ir, HasSubstr("-> (tensor<2x1x1x2xf32>, tensor<1x1x2xf32>, none)"));
  EXPECT_THAT(ir, Not(HasSubstr("onnx.MatMul")));
}

TEST_F(OneToOneTest, QuantizeDequantizePattern) {
  ModelBuilder m(21);
  m.input("x", {4});
  m.input("s", {});
  m.input("z", {}, onnx::TensorProto::INT8);
  m.node("QuantizeLinear", {"x", "s", "z"}, {"q"}, "q");
  m.node("DequantizeLinear", {"q", "s", "z"}, {"y"}, "dq");
  m.output("y");
  std::string ir = importModel(m);
  ASSERT_NE(ir, "") << errors;
  EXPECT_THAT(ir, HasSubstr("onnx.QuantizeLinear %arg0, %arg1, %arg2 : (tensor<4xf32>, "
                            "tensor<f32>, tensor<i8>) -> tensor<4xi8>"));
  EXPECT_THAT(ir, HasSubstr("onnx.DequantizeLinear %0, %arg1, %arg2 : (tensor<4xi8>, "
                            "tensor<f32>, tensor<i8>) -> tensor<4xf32>"));
}

// A K of 768 is not rejected at import (kiln-decompose accumulates in int32).
TEST_F(OneToOneTest, MatMulIntegerLargeK) {
  ModelBuilder m(21);
  m.input("a", {1, 768}, onnx::TensorProto::UINT8);
  m.input("b", {768, 4}, onnx::TensorProto::UINT8);
  m.node("MatMulInteger", {"a", "b"}, {"y"}, "mm");
  m.output("y");
  std::string ir = importModel(m);
  ASSERT_NE(ir, "") << errors;
  EXPECT_THAT(ir, HasSubstr("onnx.MatMulInteger"));
  EXPECT_THAT(ir, HasSubstr("-> tensor<1x4xi32>"));
}

TEST_F(OneToOneTest, QLinearMatMul) {
  ModelBuilder m(21);
  m.input("a", {2, 3}, onnx::TensorProto::UINT8);
  m.input("as", {});
  m.input("az", {}, onnx::TensorProto::UINT8);
  m.input("b", {3, 4}, onnx::TensorProto::UINT8);
  m.input("bs", {});
  m.input("bz", {}, onnx::TensorProto::UINT8);
  m.input("ys", {});
  m.input("yz", {}, onnx::TensorProto::UINT8);
  m.node("QLinearMatMul", {"a", "as", "az", "b", "bs", "bz", "ys", "yz"}, {"y"}, "qmm");
  m.output("y");
  std::string ir = importModel(m);
  ASSERT_NE(ir, "") << errors;
  EXPECT_THAT(ir, HasSubstr("onnx.QLinearMatMul"));
  EXPECT_THAT(ir, HasSubstr("-> tensor<2x4xui8>"));
}

TEST_F(OneToOneTest, Attention) {
  ModelBuilder m(23);
  m.input("q", {1, 3, 8});
  m.input("k", {1, 5, 8});
  m.input("v", {1, 5, 8});
  onnx::NodeProto *n = m.node("Attention", {"q", "k", "v"}, {"y"}, "attn");
  addInt(n, "q_num_heads", 2);
  addInt(n, "kv_num_heads", 2);
  m.output("y");
  std::string ir = importModel(m);
  ASSERT_NE(ir, "") << errors;
  EXPECT_THAT(ir, HasSubstr("onnx.Attention"));
  EXPECT_THAT(ir, HasSubstr("-> (tensor<1x3x8xf32>, none, none, none)"));
  EXPECT_THAT(ir, Not(HasSubstr("onnx.Softmax")));
}

TEST_F(OneToOneTest, SoftmaxCrossEntropyLoss) {
  ModelBuilder m(13);
  m.input("x", {3, 5});
  m.input("t", {3}, onnx::TensorProto::INT64);
  addString(m.node("SoftmaxCrossEntropyLoss", {"x", "t"}, {"loss", "log_prob"}, "sce"),
            "reduction", "none");
  m.output("loss");
  m.output("log_prob");
  std::string ir = importModel(m);
  ASSERT_NE(ir, "") << errors;
  EXPECT_THAT(ir, HasSubstr("onnx.SoftmaxCrossEntropyLoss"));
  EXPECT_THAT(ir, HasSubstr("-> (tensor<3xf32>, tensor<3x5xf32>)"));
}

// The dialect's Hardmax is the opset-13 op: an older one whose coercion to 2-D means the
// same is adapted, else it takes three ops of the newest form.
TEST_F(OneToOneTest, LegacyHardmax) {
  ModelBuilder m(11);
  m.input("x", {2, 3, 4});
  m.input("z", {2, 3, 1});
  m.node("Hardmax", {"x"}, {"y"}, "hm");
  m.node("Hardmax", {"z"}, {"w"}, "hm_same");
  m.output("y");
  m.output("w");
  std::string ir = importModel(m);
  ASSERT_NE(ir, "") << errors;
  EXPECT_THAT(ir, HasSubstr("%1 = onnx.Flatten %arg0 : (tensor<2x3x4xf32>) -> "
                            "tensor<2x12xf32>"));
  EXPECT_THAT(ir, HasSubstr("%2 = onnx.Hardmax %1 {axis = 1 : i64} : (tensor<2x12xf32>) -> "
                            "tensor<2x12xf32>"));
  EXPECT_THAT(ir, HasSubstr("onnx.Reshape %2, %0 : (tensor<2x12xf32>, tensor<3xi64>) -> "
                            "tensor<2x3x4xf32>"));
  EXPECT_THAT(ir, HasSubstr("onnx.Hardmax %arg1 {axis = 1 : i64} : (tensor<2x3x1xf32>) -> "
                            "tensor<2x3x1xf32>"));
}

// Values the importer adds (an old Hardmax's Flatten and Hardmax) get names no value of
// the model has: a graph input named like one is still what its readers read.
TEST_F(OneToOneTest, InventedNamesNeverReplaceModelValues) {
  ModelBuilder m(11);
  m.input("x", {2, 3, 4});
  m.input("y/kiln.flatten", {2, 12});
  m.input("y/kiln.flatten.0", {2, 12});
  m.node("Hardmax", {"x"}, {"y"}, "hm");
  m.node("Neg", {"y/kiln.flatten"}, {"z"}, "neg");
  m.node("Neg", {"y/kiln.flatten.0"}, {"z0"}, "neg0");
  m.output("y");
  m.output("z");
  m.output("z0");
  std::string ir = importModel(m);
  ASSERT_NE(ir, "") << errors;
  EXPECT_THAT(ir, HasSubstr("onnx.Neg %arg1 : (tensor<2x12xf32>)"));
  EXPECT_THAT(ir, HasSubstr("onnx.Neg %arg2 : (tensor<2x12xf32>)"));
}

// GroupNormalization-18 scales per group: the same as 21's per channel only with one
// group per channel.
TEST_F(OneToOneTest, LegacyGroupNormalization) {
  ModelBuilder m(18);
  m.input("x", {1, 4, 2, 2});
  m.input("s", {4});
  m.input("b", {4});
  addInt(m.node("GroupNormalization", {"x", "s", "b"}, {"y"}, "gn"), "num_groups", 4);
  m.output("y");
  std::string ir = importModel(m);
  ASSERT_NE(ir, "") << errors;
  EXPECT_THAT(ir, HasSubstr("onnx.GroupNormalization %arg0, %arg1, %arg2 {num_groups = 4 : "
                            "i64}"));

  ModelBuilder grouped(18);
  grouped.input("x", {1, 4, 2, 2});
  grouped.input("s", {2});
  grouped.input("b", {2});
  addInt(grouped.node("GroupNormalization", {"x", "s", "b"}, {"y"}, "gn"), "num_groups", 2);
  grouped.output("y");
  EXPECT_EQ(importModel(grouped), "");
  EXPECT_THAT(errors, HasSubstr("node 'gn' (GroupNormalization, opset 18): opset-18 "
                                "GroupNormalization (scale and bias per group) is supported "
                                "only with one group per channel"));
}

// RNN-1 had `output_sequence`; the node's outputs say the same.
TEST_F(OneToOneTest, LegacyRNN) {
  ModelBuilder m(6);
  m.input("x", {2, 1, 3});
  m.input("w", {1, 4, 3});
  m.input("r", {1, 4, 4});
  onnx::NodeProto *n = m.node("RNN", {"x", "w", "r"}, {"y"}, "rnn");
  addInt(n, "hidden_size", 4);
  addInt(n, "output_sequence", 1);
  m.output("y");
  std::string ir = importModel(m);
  ASSERT_NE(ir, "") << errors;
  EXPECT_THAT(ir, HasSubstr("onnx.RNN"));
  EXPECT_THAT(ir, Not(HasSubstr("output_sequence")));
  EXPECT_THAT(ir, HasSubstr("-> (tensor<2x1x1x4xf32>, none)"));
}

} // namespace
