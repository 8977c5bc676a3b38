//===- runtime_hpp_test.cpp - tests of the C++ wrapper kiln/runtime.hpp ---===//
//
// The wrapper over the fake model (fake_model.c: sum = a + b, a scalar count
// of positive sums, run-time checks on a[0]): RAII, views, both output modes,
// run contexts, and exceptions carrying the runtime's code and message.
//
//===----------------------------------------------------------------------===//

#include "kiln/runtime.hpp"

#include "test_util.h"

#include <gtest/gtest.h>

#include <string>
#include <thread>
#include <vector>

using kiln_test::modelPath;

namespace {

const std::vector<float> kA = {1, -2, 3, -4, 5, -6};
const std::vector<float> kB = {10, 1, 10, 1, 10, 1};

std::vector<kiln::Input> feeds(const std::vector<float> &a,
                               const std::vector<float> &b) {
  return {kiln::Input::of("b", b.data(), {2, 3}),
          kiln::Input::of("a", a.data(), {2, 3})};
}

/// The code and message of the kiln::Error `fn` throws.
template <typename Fn> std::pair<kiln_status_code_t, std::string> thrown(Fn fn) {
  try {
    fn();
  } catch (const kiln::Error &e) {
    return {e.code(), e.what()};
  }
  ADD_FAILURE() << "no kiln::Error thrown";
  return {KILN_STATUS_OK, ""};
}

TEST(RuntimeHpp, DescribesTheModel) {
  kiln::Model model = kiln::Model::open(modelPath("fake_model"), {2});
  EXPECT_STREQ(model.name(), "fake_add");
  EXPECT_EQ(model.numThreads(), 2);
  EXPECT_EQ(model.scratchSize(), 256u);
  ASSERT_EQ(model.numInputs(), 2u);
  std::vector<kiln::TensorInfo> in = model.inputs();
  EXPECT_STREQ(in[1].name, "b");
  EXPECT_STREQ(in[1].dtypeName(), "float32");
  EXPECT_EQ(in[1].shape.vec(), (std::vector<int64_t>{2, 3}));
  EXPECT_EQ(in[1].byteSize(), 24u);
  std::vector<kiln::TensorInfo> out = model.outputs();
  ASSERT_EQ(out.size(), 2u);
  EXPECT_EQ(out[1].dtype, KILN_DTYPE_INT64);
  EXPECT_TRUE(out[1].shape.empty());
  EXPECT_EQ(out[1].numElements(), 1);
  EXPECT_EQ(model.findOutput("stats/../positive:0"), 1u);
  auto [code, message] = thrown([&] { model.findInput("c"); });
  EXPECT_EQ(code, KILN_STATUS_NOT_FOUND);
  EXPECT_EQ(message, "unknown input 'c' (the model's inputs: 'a', 'b')");
}

TEST(RuntimeHpp, RunsWithRuntimeAllocatedOutputs) {
  kiln::Model model = kiln::Model::open(modelPath("fake_model"), {1});
  std::vector<kiln::Tensor> out = model.run(feeds(kA, kB));
  ASSERT_EQ(out.size(), 2u);
  EXPECT_EQ(out[0].name(), "sum");
  EXPECT_EQ(out[0].shape(), (std::vector<int64_t>{2, 3}));
  EXPECT_EQ(out[0].data<float>().vec(),
            (std::vector<float>{11, -1, 13, -3, 15, -5}));
  EXPECT_EQ(out[1].data<int64_t>()[0], 3);
  EXPECT_TRUE(out[1].shape().empty());
  auto [code, message] = thrown([&] { out[0].data<int64_t>(); });
  EXPECT_EQ(code, KILN_STATUS_INVALID_ARGUMENT);
  EXPECT_EQ(message, "output 'sum' has dtype float32, not int64");
  // release() hands the buffer over (the caller frees it with std::free).
  size_t bytes = out[0].byteSize();
  float *sum = static_cast<float *>(out[0].release());
  ASSERT_NE(sum, nullptr);
  EXPECT_EQ(out[0].raw(), nullptr);
  EXPECT_EQ(bytes, 24u);
  EXPECT_EQ(sum[2], 13);
  std::free(sum);
}

TEST(RuntimeHpp, StaticModelHasNoSymbols) {
  kiln::Model model = kiln::Model::open(modelPath("fake_model"), {1});
  EXPECT_TRUE(model.symbols().empty());
  for (const kiln::TensorInfo &t : model.inputs())
    EXPECT_FALSE(t.hasSymbols());
}

TEST(RuntimeHpp, RunsIntoCallerBuffers) {
  kiln::Model model = kiln::Model::open(modelPath("fake_model"), {1});
  std::vector<float> sum(6, 0.f);
  int64_t positive = -1;
  model.run(feeds(kA, kB), {{"stats/../positive:0", &positive, sizeof positive},
                            {"sum", sum.data(), sum.size() * sizeof(float)}});
  EXPECT_EQ(sum, (std::vector<float>{11, -1, 13, -3, 15, -5}));
  EXPECT_EQ(positive, 3);

  // A buffer too small: the runtime's message, unchanged.
  auto [code, message] = thrown([&] {
    model.run(feeds(kA, kB), {{"stats/../positive:0", &positive, 8},
                              {"sum", sum.data(), 16}});
  });
  EXPECT_EQ(code, KILN_STATUS_INVALID_ARGUMENT);
  EXPECT_EQ(message, "output 'sum': buffer has 16 bytes, needs 24");
}

TEST(RuntimeHpp, ErrorsCarryTheRuntimesCodeAndMessage) {
  kiln::Model model = kiln::Model::open(modelPath("fake_model"), {1});
  std::vector<float> wide(7, 0.f);
  auto [code, message] = thrown([&] {
    model.run({kiln::Input::of("a", kA.data(), {2, 3}),
               kiln::Input::of("b", wide.data(), {1, 7})});
  });
  EXPECT_EQ(code, KILN_STATUS_INVALID_ARGUMENT);
  EXPECT_EQ(message, "input 'b': expected shape [2,3], got [1,7]");

  std::vector<int64_t> ints(6, 0);
  std::tie(code, message) = thrown([&] {
    model.run({kiln::Input::of("a", kA.data(), {2, 3}),
               kiln::Input::of("b", ints.data(), {2, 3})});
  });
  EXPECT_EQ(message, "input 'b': expected dtype float32, got int64");

  std::tie(code, message) =
      thrown([&] { model.run({kiln::Input::of("a", kA.data(), {2, 3})}); });
  EXPECT_EQ(message, "missing input 'b' (float32 [2,3])");

  std::vector<float> bad = kA;
  bad[0] = -1000;
  std::tie(code, message) = thrown([&] { model.run(feeds(bad, kB)); });
  EXPECT_EQ(code, KILN_STATUS_RUNTIME_CHECK_FAILED);
  EXPECT_EQ(message, "node 'Gather_0' (Gather, opset 13): index 5 is out of "
                     "range [-3, 3) on axis 0");

  std::tie(code, message) =
      thrown([] { kiln::Model::open(modelPath("fake_model_abi99")); });
  EXPECT_EQ(code, KILN_STATUS_UNSUPPORTED);
  EXPECT_NE(message.find("fake_model_abi99"), std::string::npos) << message;

  // The status wrapper frees what it owns and reports OK for NULL.
  kiln::Status ok;
  EXPECT_TRUE(ok.ok());
  EXPECT_STREQ(ok.message(), "OK");
}

TEST(RuntimeHpp, RunContextsFromManyThreads) {
  kiln::Model model = kiln::Model::open(modelPath("fake_model"), {2});
  std::vector<std::thread> threads;
  std::vector<int> wrong(4, 0);
  for (int t = 0; t < 4; ++t) {
    threads.emplace_back([&, t] {
      kiln::RunContext context(model);
      std::vector<float> a(6), b(6);
      for (int i = 0; i < 200; ++i) {
        for (int k = 0; k < 6; ++k) {
          a[k] = float(t * 1000 + i);
          b[k] = float(k);
        }
        // Alternate the context and the model's thread-safe run.
        std::vector<kiln::Tensor> out =
            i % 2 ? context.run(feeds(a, b)) : model.run(feeds(a, b));
        for (int k = 0; k < 6; ++k)
          wrong[t] += out[0].data<float>()[k] != float(t * 1000 + i + k);
      }
    });
  }
  for (std::thread &t : threads)
    t.join();
  EXPECT_EQ(wrong, (std::vector<int>{0, 0, 0, 0}));
}

TEST(RuntimeHpp, HandlesMove) {
  kiln::Model a = kiln::Model::open(modelPath("fake_model"), {1});
  kiln::Model b = std::move(a);
  EXPECT_EQ(a.get(), nullptr);
  kiln::RunContext context(b);
  kiln::RunContext moved = std::move(context);
  EXPECT_EQ(context.get(), nullptr);
  EXPECT_EQ(moved.run(feeds(kA, kB))[1].data<int64_t>()[0], 3);
}

} // namespace
