//===- ImportTest.cpp - Unit tests of importOnnxModel ---------------------===//
//
// Every model is built here with the ONNX protobuf classes and written to a fresh folder.
// Shape inference for the ops the tests use (Add, Relu, Identity, Clip, Softmax, Unsqueeze)
// comes from test-only external models below, so these tests exercise the importer alone.
//
//===----------------------------------------------------------------------===//

#include "compiler/import/ModelImporter.h"
#include "dialects/ONNX/Limits.h"
#include "test/unit/import/ModelBuilder.h"
#include "dialects/ONNX/ConstantValues.h"
#include "dialects/ONNX/ONNXOps.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
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
#include <onnx/onnx_pb.h>

#include <fstream>
#include <unistd.h>

using namespace mlir;
using ::testing::HasSubstr;
using namespace importtest;

namespace {

//===----------------------------------------------------------------------===//
// Test-only shape inference
//===----------------------------------------------------------------------===//

/// Result 0 gets the type of operand 0.
struct SameAsInput {
  static LogicalResult infer(Operation *op) {
    op->getResult(0).setType(op->getOperand(0).getType());
    return success();
  }
};

/// Numpy broadcasting of two static shapes.
struct Broadcast {
  static LogicalResult infer(Operation *op) {
    auto a = dyn_cast<RankedTensorType>(op->getOperand(0).getType());
    auto b = dyn_cast<RankedTensorType>(op->getOperand(1).getType());
    if (!a || !b)
      return op->emitError("test shape inference: ranked inputs needed");
    int64_t rank = std::max(a.getRank(), b.getRank());
    SmallVector<int64_t> dims(rank, 1);
    for (int64_t i = 0; i < rank; ++i) {
      int64_t da = i < rank - a.getRank() ? 1 : a.getDimSize(i - (rank - a.getRank()));
      int64_t db = i < rank - b.getRank() ? 1 : b.getDimSize(i - (rank - b.getRank()));
      if (da != db && da != 1 && db != 1)
        return op->emitError("test shape inference: shapes do not broadcast");
      dims[i] = da == 1 ? db : da;
    }
    op->getResult(0).setType(RankedTensorType::get(dims, a.getElementType()));
    return success();
  }
};

/// Unsqueeze with constant axes.
struct UnsqueezeRule {
  static LogicalResult infer(Operation *op) {
    auto in = dyn_cast<RankedTensorType>(op->getOperand(0).getType());
    std::optional<SmallVector<int64_t>> axes =
        kiln::onnx::getConstantIntValues(op->getOperand(1));
    if (!in || !axes)
      return op->emitError("test shape inference: constant axes needed");
    int64_t rank = in.getRank() + static_cast<int64_t>(axes->size());
    SmallVector<int64_t> dims;
    int64_t next = 0;
    for (int64_t i = 0; i < rank; ++i) {
      bool inserted = llvm::any_of(*axes, [&](int64_t a) { return (a < 0 ? a + rank : a) == i; });
      dims.push_back(inserted ? 1 : in.getDimSize(next++));
    }
    op->getResult(0).setType(RankedTensorType::get(dims, in.getElementType()));
    return success();
  }
};

template <typename Rule, typename OpT>
struct TestModel
    : kiln::onnx::ShapeInferenceOpInterface::ExternalModel<TestModel<Rule, OpT>, OpT> {
  LogicalResult inferShapes(Operation *op) const { return Rule::infer(op); }
};

void registerTestShapeInference(DialectRegistry &registry) {
  registry.addExtension(+[](MLIRContext *ctx, kiln::onnx::ONNXDialect *) {
    using namespace kiln::onnx;
    AddOp::attachInterface<TestModel<Broadcast, AddOp>>(*ctx);
    ReluOp::attachInterface<TestModel<SameAsInput, ReluOp>>(*ctx);
    IdentityOp::attachInterface<TestModel<SameAsInput, IdentityOp>>(*ctx);
    ClipOp::attachInterface<TestModel<SameAsInput, ClipOp>>(*ctx);
    SoftmaxOp::attachInterface<TestModel<SameAsInput, SoftmaxOp>>(*ctx);
    UnsqueezeOp::attachInterface<TestModel<UnsqueezeRule, UnsqueezeOp>>(*ctx);
  });
}

/// x[2,3] + w[3] -> Relu -> y.
ModelBuilder addReluModel() {
  ModelBuilder m;
  m.input("x", {2, 3});
  m.floatInit("w", {3}, {1, 2, 3});
  m.node("Add", {"x", "w"}, {"a"}, "add");
  m.node("Relu", {"a"}, {"y"}, "relu");
  m.output("y");
  return m;
}

//===----------------------------------------------------------------------===//
// Fixture
//===----------------------------------------------------------------------===//

class ImportTest : public ::testing::Test {
protected:
  void SetUp() override {
    llvm::SmallString<128> prefix;
    llvm::sys::path::system_temp_directory(/*erasedOnReboot=*/true, prefix);
    llvm::sys::path::append(prefix, "kiln-import-test");
    ASSERT_FALSE(llvm::sys::fs::createUniqueDirectory(prefix, dir));
    DialectRegistry registry;
    registerTestShapeInference(registry);
    context.appendDialectRegistry(registry);
  }
  void TearDown() override { llvm::sys::fs::remove_directories(dir); }

  std::string path(llvm::StringRef name) {
    llvm::SmallString<256> p(dir);
    llvm::sys::path::append(p, name);
    return std::string(p);
  }
  std::string writeBytes(llvm::StringRef name, llvm::StringRef bytes) {
    std::string p = path(name);
    std::ofstream out(p, std::ios::binary);
    out.write(bytes.data(), bytes.size());
    return p;
  }
  std::string write(const ModelBuilder &m, llvm::StringRef name = "model.onnx") {
    std::string bytes;
    EXPECT_TRUE(m.model.SerializeToString(&bytes));
    return writeBytes(name, bytes);
  }

  /// Imports; on success returns the printed module, on failure "" (errors in `errors`).
  std::string import(const std::string &modelPath, const kiln::ImportOptions &options = {}) {
    errors.clear();
    ScopedDiagnosticHandler handler(&context, [&](Diagnostic &diag) {
      errors += diag.str() + "\n";
      return success();
    });
    FailureOr<OwningOpRef<ModuleOp>> module =
        kiln::importOnnxModel(context, modelPath, options);
    if (failed(module)) {
      EXPECT_FALSE(errors.empty()) << "import failed without a diagnostic";
      return "";
    }
    std::string text;
    llvm::raw_string_ostream os(text);
    (*module)->print(os);
    return text;
  }
  std::string importModel(const ModelBuilder &m, const kiln::ImportOptions &options = {}) {
    return import(write(m), options);
  }
  /// Imports a model that must fail; returns the diagnostics.
  std::string importError(const ModelBuilder &m, const kiln::ImportOptions &options = {}) {
    std::string ir = importModel(m, options);
    EXPECT_EQ(ir, "") << "import unexpectedly succeeded";
    return errors;
  }

  llvm::SmallString<128> dir;
  MLIRContext context;
  std::string errors;
};

//===----------------------------------------------------------------------===//
// Valid models
//===----------------------------------------------------------------------===//

TEST_F(ImportTest, SmallGraph) {
  std::string ir = importModel(addReluModel());
  ASSERT_NE(ir, "") << errors;
  EXPECT_THAT(ir, HasSubstr("onnx.opset = 17 : i64"));
  EXPECT_THAT(ir, HasSubstr("onnx.producer = \"kiln-test 1.0\""));
  EXPECT_THAT(ir, HasSubstr("func.func @main_graph(%arg0: tensor<2x3xf32> {onnx.name = "
                            "\"x\"}) -> (tensor<2x3xf32> {onnx.name = \"y\"})"));
  EXPECT_THAT(ir, HasSubstr("onnx.Constant"));
  EXPECT_THAT(ir, HasSubstr("dense<[1.000000e+00, 2.000000e+00, 3.000000e+00]> : "
                            "tensor<3xf32>"));
  EXPECT_THAT(ir, HasSubstr("onnx.Add %arg0, %0 : (tensor<2x3xf32>, tensor<3xf32>) -> "
                            "tensor<2x3xf32>"));
  EXPECT_THAT(ir, HasSubstr("onnx.Relu %1 : (tensor<2x3xf32>) -> tensor<2x3xf32>"));
  EXPECT_THAT(ir, HasSubstr("return %2 : tensor<2x3xf32>"));
}

TEST_F(ImportTest, NodesOutOfOrderAreSorted) {
  ModelBuilder m;
  m.input("x", {2, 3});
  m.node("Relu", {"a"}, {"y"}, "relu");
  m.node("Relu", {"x"}, {"a"}, "first");
  m.output("y");
  std::string ir = importModel(m);
  ASSERT_NE(ir, "") << errors;
  EXPECT_THAT(ir, HasSubstr("return %1"));
}

TEST_F(ImportTest, LargeConstantIsResource) {
  ModelBuilder m;
  m.input("x", {2000});
  std::vector<float> data(2000, 0.5f);
  onnx::TensorProto *w = m.floatInit("weights/w:0", {2000}, {});
  w->set_raw_data(std::string(reinterpret_cast<const char *>(data.data()), 8000));
  m.node("Add", {"x", "weights/w:0"}, {"y"}, "add");
  m.output("y");
  std::string ir = importModel(m);
  ASSERT_NE(ir, "") << errors;
  EXPECT_THAT(ir, HasSubstr("dense_resource<weights_w_0> : tensor<2000xf32>"));
  EXPECT_THAT(ir, HasSubstr("dialect_resources"));
}

TEST_F(ImportTest, ConstantNodeForms) {
  ModelBuilder m;
  m.input("x", {2});
  onnx::NodeProto *c = m.node("Constant", {}, {"c"}, "c");
  auto *a = c->add_attribute();
  a->set_name("value_ints");
  a->set_type(onnx::AttributeProto::INTS);
  a->add_ints(4);
  a->add_ints(5);
  onnx::NodeProto *f = m.node("Constant", {}, {"f"}, "f");
  addFloat(f, "value_float", 2.5f);
  f->mutable_attribute(0)->set_name("value_float");
  m.node("Add", {"x", "f"}, {"y"}, "add");
  m.output("y");
  m.output("c");
  std::string ir = importModel(m);
  ASSERT_NE(ir, "") << errors;
  EXPECT_THAT(ir, HasSubstr("dense<[4, 5]> : tensor<2xi64>"));
  EXPECT_THAT(ir, HasSubstr("dense<2.500000e+00> : tensor<f32>"));
}

TEST_F(ImportTest, DynamicDimBecomesSymbol) {
  // A dim_param stays symbolic: `?` in the type, the symbol in kiln.dims and
  // the function's kiln.symbols (docs/dynamic-shapes.md).
  ModelBuilder m;
  m.input("x", {"batch", 3});
  m.node("Relu", {"x"}, {"y"}, "relu");
  m.output("y");
  std::string ir = importModel(m);
  ASSERT_NE(ir, "") << errors;
  EXPECT_THAT(ir, HasSubstr("%arg0: tensor<?x3xf32> {kiln.dims = array<i64: -1, 3>"));
  EXPECT_THAT(ir, HasSubstr("kiln.symbols = [[\"batch\", 1, -1]]"));
}

TEST_F(ImportTest, SymbolBoundsAndSharedSymbol) {
  // The same dim_param in two inputs is one symbol; --shape bounds it (the
  // tightest bounds win) or fixes it.
  ModelBuilder m;
  m.input("x", {"batch", 3});
  m.input("z", {"batch", 3});
  m.node("Add", {"x", "z"}, {"y"}, "add");
  m.output("y");
  kiln::ImportOptions options;
  options.inputShapes["x"] = {kiln::DimSpec::range(1, 8), 3};
  options.inputShapes["z"] = {kiln::DimSpec::range(2, 16), 3};
  std::string ir = importModel(m, options);
  ASSERT_NE(ir, "") << errors;
  EXPECT_THAT(ir, HasSubstr("kiln.symbols = [[\"batch\", 2, 8]]"));
  EXPECT_THAT(ir, HasSubstr("%arg1: tensor<?x3xf32> {kiln.dims = array<i64: -1, 3>"));
  options.inputShapes["z"] = {kiln::DimSpec::range(9, 16), 3};
  EXPECT_THAT(importError(m, options),
              HasSubstr("symbol 'batch' (input 'z' dimension 0) has no size within the "
                        "bounds --shape gives (9..8)"));
  options.inputShapes["x"] = {kiln::DimSpec::range(1, 8), kiln::DimSpec::range(4, 5)};
  EXPECT_THAT(importError(m, options),
              HasSubstr("input 'x' dimension 1 is 3 in the model, outside --shape x's 4..5"));
}

TEST_F(ImportTest, DynamicDimWithShape) {
  ModelBuilder m;
  m.input("x", {"batch", 3});
  m.node("Relu", {"x"}, {"y"}, "relu");
  m.output("y");
  kiln::ImportOptions options;
  options.inputShapes["x"] = {4, 3};
  std::string ir = importModel(m, options);
  ASSERT_NE(ir, "") << errors;
  EXPECT_THAT(ir, HasSubstr("%arg0: tensor<4x3xf32>"));
  EXPECT_THAT(ir, HasSubstr("-> (tensor<4x3xf32> {onnx.name = \"y\"})"));
}

TEST_F(ImportTest, ShapeRankMismatchAndConflict) {
  ModelBuilder m;
  m.input("x", {"batch", 3});
  m.node("Relu", {"x"}, {"y"}, "relu");
  m.output("y");
  kiln::ImportOptions options;
  options.inputShapes["x"] = {4, 3, 1};
  EXPECT_THAT(importError(m, options),
              HasSubstr("input 'x' has rank 2 but --shape x gives 3 dimensions"));
  options.inputShapes["x"] = {4, 5};
  EXPECT_THAT(importError(m, options),
              HasSubstr("input 'x' dimension 1 is 3 in the model but --shape x gives 5"));
}

TEST_F(ImportTest, ShapeForUnknownInput) {
  ModelBuilder m = addReluModel();
  kiln::ImportOptions options;
  options.inputShapes["nope"] = {1};
  EXPECT_THAT(importError(m, options),
              HasSubstr("--shape names 'nope', which is not an input of the model "
                        "(inputs: 'x')"));
}

//===----------------------------------------------------------------------===//
// Files that are not models
//===----------------------------------------------------------------------===//

TEST_F(ImportTest, MissingFile) {
  EXPECT_EQ(import(path("does-not-exist.onnx")), "");
  EXPECT_THAT(errors, HasSubstr("cannot open model file"));
}

TEST_F(ImportTest, TruncatedProtobuf) {
  std::string bytes;
  ASSERT_TRUE(addReluModel().model.SerializeToString(&bytes));
  EXPECT_EQ(import(writeBytes("t.onnx", bytes.substr(0, bytes.size() / 2))), "");
  EXPECT_THAT(errors, HasSubstr("not a valid ONNX model"));
}

TEST_F(ImportTest, GarbageBytes) {
  std::string garbage;
  for (int i = 0; i < 4096; ++i)
    garbage += static_cast<char>((i * 7919 + 13) % 251);
  EXPECT_EQ(import(writeBytes("g.onnx", garbage)), "");
  EXPECT_THAT(errors, HasSubstr("not a valid ONNX model"));
  EXPECT_EQ(import(writeBytes("text.onnx", "this is not an onnx model\n")), "");
  EXPECT_THAT(errors, HasSubstr("not a valid ONNX model"));
  EXPECT_EQ(import(writeBytes("empty.onnx", "")), "");
  EXPECT_THAT(errors, HasSubstr("not a valid ONNX model"));
}

//===----------------------------------------------------------------------===//
// Graph errors
//===----------------------------------------------------------------------===//

TEST_F(ImportTest, UnknownOp) {
  ModelBuilder m;
  m.input("x", {2});
  m.node("FooBar", {"x"}, {"y"}, "foo");
  m.output("y");
  EXPECT_THAT(importError(m),
              HasSubstr("node 'foo' (FooBar, opset 17): unsupported operator 'FooBar'"));
}

TEST_F(ImportTest, UnnamedNodeGetsIndexName) {
  ModelBuilder m;
  m.input("x", {2});
  m.node("Relu", {"x"}, {"a"});
  m.node("FooBar", {"a"}, {"y"});
  m.output("y");
  EXPECT_THAT(importError(m), HasSubstr("node 'FooBar_1' (FooBar, opset 17)"));
}

TEST_F(ImportTest, OpWithoutShapeInference) {
  ModelBuilder m;
  m.input("x", {2});
  m.node("Tanh", {"x"}, {"y"}, "tanh");
  m.output("y");
  EXPECT_THAT(importError(m),
              HasSubstr("node 'tanh' (Tanh, opset 17): operator 'Tanh' is not supported by "
                        "kiln yet (no shape inference)"));
}

TEST_F(ImportTest, GraphCycle) {
  ModelBuilder m;
  m.input("x", {2});
  m.node("Add", {"x", "b"}, {"a"}, "n1");
  m.node("Relu", {"a"}, {"b"}, "n2");
  m.node("Relu", {"x"}, {"y"}, "n3");
  m.output("y");
  std::string e = importError(m);
  EXPECT_THAT(e, HasSubstr("the graph has a cycle through this node"));
  EXPECT_TRUE(e.find("node 'n1'") != std::string::npos ||
              e.find("node 'n2'") != std::string::npos)
      << e;
}

TEST_F(ImportTest, UndefinedInput) {
  ModelBuilder m;
  m.input("x", {2});
  m.node("Add", {"x", "foo"}, {"y"}, "X");
  m.output("y");
  EXPECT_THAT(importError(m),
              HasSubstr("node 'X' (Add, opset 17): input 'foo' is not defined"));
}

TEST_F(ImportTest, DuplicateOutputName) {
  ModelBuilder m;
  m.input("x", {2});
  m.node("Relu", {"x"}, {"y"}, "r1");
  m.node("Relu", {"x"}, {"y"}, "r2");
  m.output("y");
  EXPECT_THAT(importError(m), HasSubstr("node 'r2' (Relu, opset 17): output 'y' is also "
                                        "produced by node 'r1' (Relu)"));
}

TEST_F(ImportTest, UndefinedGraphOutput) {
  ModelBuilder m = addReluModel();
  m.output("nothing");
  EXPECT_THAT(importError(m), HasSubstr("graph output 'nothing' is not produced"));
}

TEST_F(ImportTest, NonDefaultDomain) {
  ModelBuilder m;
  m.input("x", {2});
  m.node("FusedGelu", {"x"}, {"y"}, "gelu")->set_domain("com.microsoft");
  m.output("y");
  EXPECT_THAT(importError(m), HasSubstr("node 'gelu' (FusedGelu, opset 17): domain "
                                        "'com.microsoft' is not supported"));
}

TEST_F(ImportTest, NoDefaultOpset) {
  ModelBuilder m = addReluModel();
  m.model.mutable_opset_import(0)->set_domain("com.example");
  EXPECT_THAT(importError(m), HasSubstr("no opset_import for the default ONNX domain"));
}

TEST_F(ImportTest, UnknownAttribute) {
  ModelBuilder m;
  m.input("x", {2});
  addInt(m.node("Relu", {"x"}, {"y"}, "relu"), "alpha", 1);
  m.output("y");
  EXPECT_THAT(importError(m), HasSubstr("node 'relu' (Relu, opset 17): attribute 'alpha' "
                                        "is not an attribute of Relu"));
}

TEST_F(ImportTest, MistypedAttribute) {
  ModelBuilder m;
  m.input("x", {2});
  addInt(m.node("LeakyRelu", {"x"}, {"y"}, "lrelu"), "alpha", 1);
  m.output("y");
  EXPECT_THAT(importError(m), HasSubstr("node 'lrelu' (LeakyRelu, opset 17): attribute "
                                        "'alpha' has the wrong type (1 : i64)"));
}

TEST_F(ImportTest, UnsupportedElementType) {
  ModelBuilder m;
  m.input("x", {2}, onnx::TensorProto::STRING);
  m.node("Identity", {"x"}, {"y"}, "id");
  m.output("y");
  EXPECT_THAT(importError(m),
              HasSubstr("input 'x' has unsupported element type string"));
}

//===----------------------------------------------------------------------===//
// Shapes and tensor data
//===----------------------------------------------------------------------===//

TEST_F(ImportTest, NegativeDim) {
  ModelBuilder m;
  m.input("x", {2, -3});
  m.node("Relu", {"x"}, {"y"}, "relu");
  m.output("y");
  EXPECT_THAT(importError(m), HasSubstr("input 'x' has a negative dimension -3 at 1"));
}

TEST_F(ImportTest, NegativeInitializerDim) {
  ModelBuilder m = addReluModel();
  m.graph().mutable_initializer(0)->set_dims(0, -1);
  EXPECT_THAT(importError(m), HasSubstr("tensor 'w': negative dimension -1"));
}

TEST_F(ImportTest, OverflowingDims) {
  ModelBuilder m;
  m.input("x", {int64_t(1) << 40, int64_t(1) << 40});
  m.node("Relu", {"x"}, {"y"}, "relu");
  m.output("y");
  EXPECT_THAT(importError(m),
              HasSubstr("input 'x' of shape 1099511627776,1099511627776: its dimensions "
                        "multiply to more than kiln's limit of 17179869184 elements per "
                        "tensor (--max-tensor-elements)"));

  ModelBuilder m2 = addReluModel();
  onnx::TensorProto *w = m2.graph().mutable_initializer(0);
  w->clear_dims();
  w->add_dims(int64_t(1) << 62);
  w->add_dims(int64_t(1) << 62);
  EXPECT_THAT(importError(m2), HasSubstr("tensor 'w': its dimensions multiply to more "
                                         "than kiln's limit"));
}

// A tiny file may declare any shape: the data's size is checked before anything that
// large is allocated (32 GiB here, within the per-tensor limits).
TEST_F(ImportTest, DataSizeCheckedBeforeAllocating) {
  ModelBuilder m = addReluModel();
  onnx::TensorProto *w = m.graph().mutable_initializer(0);
  w->clear_dims();
  w->add_dims(int64_t(1) << 33);
  w->clear_float_data();
  w->set_raw_data(std::string(8, '\0'));
  EXPECT_THAT(importError(m), HasSubstr("tensor 'w': raw_data has 8 bytes but its shape "
                                        "and type need 34359738368"));
  w->clear_raw_data();
  w->add_float_data(1);
  EXPECT_THAT(importError(m), HasSubstr("tensor 'w': float_data has 1 elements but its "
                                        "shape and type need 8589934592"));
}

TEST_F(ImportTest, ConstantBytesLimit) {
  kiln::CompileLimits limits;
  limits.maxConstantBytes = 8;
  kiln::setCompileLimits(limits);
  std::string error = importError(addReluModel()); // w: 3 floats, 12 bytes
  kiln::setCompileLimits(kiln::CompileLimits());
  EXPECT_THAT(error, HasSubstr("tensor 'w': the model's constants would take more than "
                               "kiln's limit of 8 bytes (--max-constant-bytes)"));
}

TEST_F(ImportTest, GraphOutputListedTwice) {
  ModelBuilder m;
  m.input("x", {2});
  m.node("Relu", {"x"}, {"y"}, "relu");
  m.output("y");
  m.output("y");
  EXPECT_THAT(importError(m), HasSubstr("graph output 'y' is listed twice; outputs need "
                                        "distinct names"));
}

TEST_F(ImportTest, RawDataShorterThanDims) {
  ModelBuilder m = addReluModel();
  onnx::TensorProto *w = m.graph().mutable_initializer(0);
  w->clear_float_data();
  w->set_raw_data(std::string(8, '\0'));
  EXPECT_THAT(importError(m),
              HasSubstr("tensor 'w': raw_data has 8 bytes but its shape and type need 12"));
}

TEST_F(ImportTest, TypedDataLongerThanDims) {
  ModelBuilder m = addReluModel();
  m.graph().mutable_initializer(0)->add_float_data(4);
  EXPECT_THAT(importError(m),
              HasSubstr("tensor 'w': float_data has 4 elements but its shape and type "
                        "need 3"));
}

TEST_F(ImportTest, TypedFieldPacking) {
  ModelBuilder m;
  auto init = [&](const char *name, int type, std::vector<int32_t> data) {
    onnx::TensorProto *t = m.graph().add_initializer();
    t->set_name(name);
    t->set_data_type(type);
    t->add_dims(static_cast<int64_t>(data.size()));
    for (int32_t v : data)
      t->add_int32_data(v);
    m.output(name);
  };
  init("h", onnx::TensorProto::FLOAT16, {0x3C00, 0x4000});
  init("b", onnx::TensorProto::BOOL, {1, 0, 1});
  init("u", onnx::TensorProto::UINT8, {200, 7});
  std::string ir = importModel(m);
  ASSERT_NE(ir, "") << errors;
  EXPECT_THAT(ir, HasSubstr("dense<[1.000000e+00, 2.000000e+00]> : tensor<2xf16>"));
  EXPECT_THAT(ir, HasSubstr("dense<[true, false, true]> : tensor<3xi1>"));
  EXPECT_THAT(ir, HasSubstr("dense<[200, 7]> : tensor<2xui8>"));
}

//===----------------------------------------------------------------------===//
// External data
//===----------------------------------------------------------------------===//

class ExternalDataTest : public ImportTest {
protected:
  /// x[4] + w[4] with w stored externally at `location`.
  ModelBuilder model(const std::string &location, const char *offset = nullptr,
                     const char *length = nullptr) {
    ModelBuilder m;
    m.input("x", {4});
    onnx::TensorProto *w = m.floatInit("w", {4}, {});
    w->set_data_location(onnx::TensorProto::EXTERNAL);
    auto add = [&](const char *k, const std::string &v) {
      auto *e = w->add_external_data();
      e->set_key(k);
      e->set_value(v);
    };
    add("location", location);
    if (offset)
      add("offset", offset);
    if (length)
      add("length", length);
    m.node("Add", {"x", "w"}, {"y"}, "add");
    m.output("y");
    return m;
  }
  std::string weights() {
    float data[6] = {1, 2, 3, 4, 5, 6};
    return std::string(reinterpret_cast<const char *>(data), sizeof(data));
  }
};

TEST_F(ExternalDataTest, Valid) {
  writeBytes("w.bin", weights());
  std::string ir = importModel(model("w.bin", "8", "16"));
  ASSERT_NE(ir, "") << errors;
  EXPECT_THAT(ir, HasSubstr("dense<[3.000000e+00, 4.000000e+00, 5.000000e+00, "
                            "6.000000e+00]> : tensor<4xf32>"));
}

TEST_F(ExternalDataTest, DotDot) {
  EXPECT_THAT(importError(model("../w.bin")),
              HasSubstr("tensor 'w': external data path '../w.bin' has a '..' component"));
  EXPECT_THAT(importError(model("sub/../../w.bin")), HasSubstr("has a '..' component"));
}

TEST_F(ExternalDataTest, AbsolutePath) {
  std::string abs = writeBytes("w.bin", weights());
  EXPECT_THAT(importError(model(abs)),
              HasSubstr("tensor 'w': external data path '" + abs + "' is absolute"));
}

TEST_F(ExternalDataTest, EmptyPath) {
  EXPECT_THAT(importError(model("")), HasSubstr("external data has no (or an empty) "
                                                "'location'"));
}

TEST_F(ExternalDataTest, SymlinkOutOfFolder) {
  llvm::SmallString<128> outside;
  ASSERT_FALSE(llvm::sys::fs::createTemporaryFile("kiln-outside", "bin", outside));
  {
    std::ofstream out(std::string(outside), std::ios::binary);
    out << weights();
  }
  ASSERT_EQ(::symlink(outside.c_str(), path("link.bin").c_str()), 0);
  std::string e = importError(model("link.bin"));
  // Opened with O_NOFOLLOW: the symlink is refused, wherever it leads.
  EXPECT_THAT(e, HasSubstr("tensor 'w': external data path 'link.bin' goes through the "
                           "symlink 'link.bin'"));
  EXPECT_THAT(e, HasSubstr("outside the model's folder"));
  llvm::sys::fs::remove(outside);
}

TEST_F(ExternalDataTest, ShorterThanDeclared) {
  writeBytes("w.bin", weights().substr(0, 8));
  EXPECT_THAT(importError(model("w.bin")),
              HasSubstr("tensor 'w': external data in 'w.bin' is too short: 16 bytes needed "
                        "at offset 0 but the file has 8 bytes"));
}

TEST_F(ExternalDataTest, OffsetBeyondFile) {
  writeBytes("w.bin", weights());
  EXPECT_THAT(importError(model("w.bin", "100")),
              HasSubstr("tensor 'w': external data offset 100 is beyond the end of 'w.bin' "
                        "(24 bytes)"));
}

TEST_F(ExternalDataTest, LengthMismatch) {
  writeBytes("w.bin", weights());
  EXPECT_THAT(importError(model("w.bin", "0", "12")),
              HasSubstr("has length 12 bytes but the tensor's shape and type need 16"));
}

TEST_F(ExternalDataTest, MissingFile) {
  EXPECT_THAT(importError(model("nope.bin")),
              HasSubstr("tensor 'w': cannot open external data file 'nope.bin'"));
}

//===----------------------------------------------------------------------===//
// Version adapters
//===----------------------------------------------------------------------===//

TEST_F(ImportTest, ClipOpset6Adapter) {
  ModelBuilder m(6);
  m.input("x", {2, 3});
  onnx::NodeProto *clip = m.node("Clip", {"x"}, {"y"}, "clip");
  addFloat(clip, "min", 0.0f);
  addFloat(clip, "max", 6.0f);
  m.output("y");
  std::string ir = importModel(m);
  ASSERT_NE(ir, "") << errors;
  EXPECT_THAT(ir, HasSubstr("dense<0.000000e+00> : tensor<f32>"));
  EXPECT_THAT(ir, HasSubstr("dense<6.000000e+00> : tensor<f32>"));
  EXPECT_THAT(ir, HasSubstr("onnx.Clip %arg0, %0, %1 : (tensor<2x3xf32>, tensor<f32>, "
                            "tensor<f32>) -> tensor<2x3xf32>"));
  EXPECT_EQ(ir.find("min ="), std::string::npos) << ir;
}

TEST_F(ImportTest, ClipOpset6OnlyMax) {
  ModelBuilder m(6);
  m.input("x", {2});
  addFloat(m.node("Clip", {"x"}, {"y"}, "clip"), "max", 6.0f);
  m.output("y");
  std::string ir = importModel(m);
  ASSERT_NE(ir, "") << errors;
  EXPECT_THAT(ir, HasSubstr("onnx.NoValue"));
  EXPECT_THAT(ir, HasSubstr("(tensor<2xf32>, none, tensor<f32>) -> tensor<2xf32>"));
}

TEST_F(ImportTest, UnsqueezeOpset11Adapter) {
  ModelBuilder m(11);
  m.input("x", {2, 3});
  addInts(m.node("Unsqueeze", {"x"}, {"y"}, "unsq"), "axes", {0, -1});
  m.output("y");
  std::string ir = importModel(m);
  ASSERT_NE(ir, "") << errors;
  EXPECT_THAT(ir, HasSubstr("dense<[0, -1]> : tensor<2xi64>"));
  EXPECT_THAT(ir, HasSubstr("onnx.Unsqueeze %arg0, %0 : (tensor<2x3xf32>, tensor<2xi64>) "
                            "-> tensor<1x2x3x1xf32>"));
}

TEST_F(ImportTest, SoftmaxOpset11LastAxis) {
  ModelBuilder m(11);
  m.input("x", {2, 3, 4});
  addInt(m.node("Softmax", {"x"}, {"y"}, "sm"), "axis", 2);
  m.output("y");
  std::string ir = importModel(m);
  ASSERT_NE(ir, "") << errors;
  EXPECT_THAT(ir, HasSubstr("axis = 2 : i64"));
}

TEST_F(ImportTest, SoftmaxOpset11OtherAxis) {
  ModelBuilder m(11);
  m.input("x", {2, 3, 4});
  m.node("Softmax", {"x"}, {"y"}, "sm");
  m.output("y");
  EXPECT_THAT(importError(m),
              HasSubstr("node 'sm' (Softmax, opset 11): opset-11 Softmax semantics on "
                        "rank>2 with axis != -1 not supported yet"));
}

TEST_F(ImportTest, UnsupportedOldForm) {
  ModelBuilder m(5);
  m.input("x", {2});
  m.floatInit("t", {1}, {2});
  m.node("Tile", {"x", "t", "t"}, {"y"}, "tile");
  m.output("y");
  EXPECT_THAT(importError(m), HasSubstr("node 'tile' (Tile, opset 5): opset-1 form of Tile "
                                        "is not supported; re-export at opset >= 6"));
}

TEST_F(ImportTest, TypeOnlyStepIsAccepted) {
  // Relu at opset 6 (versions 6 -> 13 -> 14 only widened types).
  ModelBuilder m(6);
  m.input("x", {2});
  m.node("Relu", {"x"}, {"y"}, "relu");
  m.output("y");
  std::string ir = importModel(m);
  ASSERT_NE(ir, "") << errors;
  EXPECT_THAT(ir, HasSubstr("onnx.opset = 6 : i64"));
}

} // namespace
