// Run outputs (docs/dynamic-shapes.md, "Run dims"; model_abi.h's
// KILN_SYMBOL_RUN) through kiln_model_run against a hand-written descriptor
// (fake_run_dims_model.c): the entry allocates the output and writes its
// dims into the run symbol; the runtime hands the buffer over (data = NULL),
// copies it into a caller's buffer, refuses a caller's buffer that is too
// small (naming the output and both sizes), and frees it when a check fails.
#include "kiln/runtime.h"
#include "fake_run_dims_model.h"
#include "test_util.h"

#include <gtest/gtest.h>

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

using kiln_test::statusString;

namespace {

struct ModelCloser {
  void operator()(kiln_model *m) const { kiln_model_close(m); }
};
using ModelPtr = std::unique_ptr<kiln_model, ModelCloser>;

ModelPtr openRunDims() {
  kiln_model *model = nullptr;
  EXPECT_EQ(statusString(kiln_model_open_descriptor(fake_run_dims_descriptor(),
                                                    nullptr, &model)),
            "OK");
  return ModelPtr(model);
}

struct RunResult {
  std::string status;
  kiln_tensor y{}, z{};
};

/// Runs with x = [0.5, 1.5, ...] of `batch` elements and n; y and z into
/// the caller's buffers `yBuffer` / `zBuffer` (nullptr: data = NULL).
RunResult runModel(kiln_model *model, int64_t batch, int64_t n,
        std::vector<float> *yBuffer = nullptr,
        std::vector<float> *zBuffer = nullptr) {
  std::vector<float> x((size_t)batch);
  for (size_t i = 0; i < x.size(); ++i)
    x[i] = (float)i + 0.5f;
  const int64_t xShape[] = {batch}, nShape[] = {1};
  kiln_tensor in[2] = {{"x", KILN_DTYPE_FLOAT32, 1, xShape, x.data(), 0},
                       {"n", KILN_DTYPE_INT64, 1, nShape, &n, 0}};
  RunResult r;
  r.y = {"y", KILN_DTYPE_UNDEFINED, 0, nullptr,
         yBuffer ? yBuffer->data() : nullptr,
         yBuffer ? yBuffer->size() * sizeof(float) : 0};
  r.z = {"z", KILN_DTYPE_UNDEFINED, 0, nullptr,
         zBuffer ? zBuffer->data() : nullptr,
         zBuffer ? zBuffer->size() * sizeof(float) : 0};
  kiln_tensor out[2] = {r.y, r.z};
  r.status = statusString(kiln_model_run(model, in, 2, out, 2));
  r.y = out[0];
  r.z = out[1];
  return r;
}

/// "" when y holds 2 x[i] for its k elements and has shape [k].
std::string checkY(const kiln_tensor &y, int64_t k) {
  if (y.rank != 1 || !y.shape || y.shape[0] != k)
    return "wrong shape";
  if (y.byte_size != (size_t)k * sizeof(float))
    return "byte_size " + std::to_string(y.byte_size);
  const float *v = (const float *)y.data;
  for (int64_t i = 0; i < k; ++i)
    if (v[i] != 2.0f * ((float)i + 0.5f))
      return "y[" + std::to_string(i) + "] is " + std::to_string(v[i]);
  return "";
}

TEST(RunDims, DescriptorDescribesTheRunSymbol) {
  ModelPtr model = openRunDims();
  ASSERT_TRUE(model);
  ASSERT_EQ(kiln_model_num_symbols(model.get()), 2u);
  const char *name = nullptr;
  int64_t min = -2, max = -2;
  ASSERT_EQ(statusString(
                kiln_model_symbol_info(model.get(), 1, &name, &min, &max)),
            "OK");
  EXPECT_STREQ(name, "y.dim0");
  EXPECT_EQ(min, 0);
  EXPECT_EQ(max, KILN_DIM_UNBOUNDED);
}

TEST(RunDims, HandsTheEntrysBufferOver) {
  ModelPtr model = openRunDims();
  ASSERT_TRUE(model);
  for (int misalign = 0; misalign < 2; ++misalign) {
    fake_run_dims_misalign = misalign;
    // n below, at and above the batch, and 0 (an empty output).
    for (auto [batch, n, k] : std::vector<std::tuple<int64_t, int64_t, int64_t>>{
             {5, 3, 3}, {5, 5, 5}, {4, 9, 4}, {6, 0, 0}, {130, 77, 77}}) {
      RunResult r = runModel(model.get(), batch, n);
      ASSERT_EQ(r.status, "OK") << batch << " " << n;
      EXPECT_EQ(checkY(r.y, k), "") << batch << " " << n;
      ASSERT_NE(r.y.data, nullptr);
      EXPECT_EQ((uintptr_t)r.y.data % 64, 0u) << "misalign " << misalign;
      ASSERT_EQ(r.z.rank, 1);
      EXPECT_EQ(r.z.shape[0], batch);
      EXPECT_EQ(((float *)r.z.data)[batch - 1], (float)batch - 0.5f + 1.0f);
      kiln_tensor_free_data(&r.y);
      kiln_tensor_free_data(&r.z);
    }
  }
  fake_run_dims_misalign = 0;
}

TEST(RunDims, CopiesIntoTheCallersBuffer) {
  ModelPtr model = openRunDims();
  ASSERT_TRUE(model);
  std::vector<float> y(16, -1.0f), z(8, -1.0f);
  RunResult r = runModel(model.get(), 8, 6, &y, &z);
  ASSERT_EQ(r.status, "OK");
  EXPECT_EQ(r.y.data, y.data());
  EXPECT_EQ(checkY(r.y, 6), "");
  EXPECT_EQ(y[6], -1.0f); // past this run's bytes: untouched
  EXPECT_EQ(z[7], 7.5f + 1.0f);
  // Exactly the run's bytes fit too.
  std::vector<float> exact(3, -1.0f);
  r = runModel(model.get(), 8, 3, &exact);
  ASSERT_EQ(r.status, "OK");
  EXPECT_EQ(checkY(r.y, 3), "");
  kiln_tensor_free_data(&r.z);
}

TEST(RunDims, RefusesACallersBufferTooSmall) {
  ModelPtr model = openRunDims();
  ASSERT_TRUE(model);
  std::vector<float> y(2, -1.0f);
  // z allocated by the runtime: released again when the run fails.
  RunResult r = runModel(model.get(), 8, 3, &y);
  EXPECT_EQ(r.status,
            "INVALID_ARGUMENT: output 'y': buffer has 8 bytes, needs 12");
  EXPECT_EQ(r.z.data, nullptr);
  EXPECT_EQ(y[0], -1.0f); // nothing written
  // The next run is unaffected.
  r = runModel(model.get(), 8, 2, &y);
  ASSERT_EQ(r.status, "OK");
  EXPECT_EQ(checkY(r.y, 2), "");
  kiln_tensor_free_data(&r.z);
}

TEST(RunDims, FreesTheEntrysBufferWhenACheckFails) {
  ModelPtr model = openRunDims();
  ASSERT_TRUE(model);
  RunResult r = runModel(model.get(), 4, -1);
  EXPECT_EQ(r.status, "RUNTIME_CHECK_FAILED: node 'Take' (FakeTake, opset 1): "
                      "n is negative");
  EXPECT_EQ(r.y.data, nullptr);
  EXPECT_EQ(r.z.data, nullptr);
}

TEST(RunDims, RefusesARunSymbolInAnInputsDims) {
  kiln_model_desc desc = *fake_run_dims_descriptor();
  static const int64_t runDim[] = {KILN_DIM_SYMBOL(1)};
  kiln_tensor_desc inputs[2] = {desc.inputs[0], desc.inputs[1]};
  inputs[1].shape = runDim;
  desc.inputs = inputs;
  kiln_model *model = nullptr;
  std::string s =
      statusString(kiln_model_open_descriptor(&desc, nullptr, &model));
  EXPECT_NE(s.find("run symbol 'y.dim0' is in an input's dims"),
            std::string::npos)
      << s;
  EXPECT_EQ(model, nullptr);
}

TEST(RunDims, RefusesUnknownSymbolFlags) {
  kiln_model_desc desc = *fake_run_dims_descriptor();
  kiln_dim_symbol symbols[2] = {desc.symbols[0], desc.symbols[1]};
  symbols[1].flags = 6;
  desc.symbols = symbols;
  kiln_model *model = nullptr;
  std::string s =
      statusString(kiln_model_open_descriptor(&desc, nullptr, &model));
  EXPECT_NE(s.find("symbol 'y.dim0' has flags 0x6"), std::string::npos) << s;
}

} // namespace
