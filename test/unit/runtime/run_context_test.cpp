// Concurrent runs on one opened model: kiln_model_run from many threads and
// explicit run contexts (runtime.h, "Threading"), against the fake model, whose
// entry stages its sums in the scratch arena, so that two runs sharing an
// arena would show in their outputs. test/e2e/test_concurrency.py does the
// same with a real compiled model under ThreadSanitizer.
#include "kiln/runtime.h"
#include "fake_dynamic_model.h"
#include "test_util.h"

#include <gtest/gtest.h>

#include <atomic>
#include <cstring>
#include <memory>
#include <string>
#include <thread>
#include <vector>

using kiln_test::statusString;

extern "C" const kiln_model_desc *fake_add_descriptor(void);
extern "C" int fake_add_gate_entered;
extern "C" int fake_add_gate_open;

namespace {

const int64_t kShape23[] = {2, 3};

struct ModelCloser {
  void operator()(kiln_model *m) const { kiln_model_close(m); }
};
using ModelPtr = std::unique_ptr<kiln_model, ModelCloser>;

ModelPtr openStatic(int32_t threads, void *scratch = nullptr,
                    size_t scratchSize = 0) {
  kiln_model_options options;
  kiln_model_options_init(&options);
  options.num_threads = threads;
  options.scratch = scratch;
  options.scratch_size = scratchSize;
  kiln_model *model = nullptr;
  EXPECT_EQ(statusString(kiln_model_open_descriptor(fake_add_descriptor(),
                                                    &options, &model)),
            "OK");
  return ModelPtr(model);
}

/// One run's tensors, with inputs that differ per (thread, iteration).
struct Job {
  float a[6], b[6], sum[6];
  int64_t positive = -1;
  kiln_tensor inputs[2];
  kiln_tensor outputs[2];

  Job(int thread, int iteration) {
    for (int i = 0; i < 6; ++i) {
      a[i] = (float)(thread * 1000 + iteration * 7 + i);
      b[i] = (float)((i % 2 ? -1 : 1) * (thread + 1) * (i + 1));
    }
    inputs[0] = {"a", KILN_DTYPE_FLOAT32, 2, kShape23, a, 0};
    inputs[1] = {"b", KILN_DTYPE_FLOAT32, 2, kShape23, b, 0};
    outputs[0] = {"sum", KILN_DTYPE_UNDEFINED, 0, nullptr, sum, sizeof(sum)};
    outputs[1] = {"stats/../positive:0", KILN_DTYPE_UNDEFINED, 0, nullptr,
                  &positive, sizeof(positive)};
  }
  /// "" when the outputs are a + b and its positive count.
  std::string check() const {
    int64_t want = 0;
    for (int i = 0; i < 6; ++i) {
      if (sum[i] != a[i] + b[i])
        return "sum[" + std::to_string(i) + "] = " + std::to_string(sum[i]) +
               ", want " + std::to_string(a[i] + b[i]);
      want += a[i] + b[i] > 0;
    }
    return positive == want ? "" : "wrong positive count";
  }
};

/// Runs `work(thread)` on `threads` threads; returns the first failure.
template <typename Work> std::string onThreads(int threads, Work work) {
  std::vector<std::string> errors(threads);
  std::vector<std::thread> pool;
  for (int t = 0; t < threads; ++t)
    pool.emplace_back([&, t] { errors[t] = work(t); });
  for (std::thread &th : pool)
    th.join();
  for (const std::string &e : errors)
    if (!e.empty())
      return e;
  return "";
}

TEST(RunContext, ModelRunFromManyThreads) {
  for (int32_t poolThreads : {1, 3}) {
    ModelPtr model = openStatic(poolThreads);
    ASSERT_TRUE(model);
    EXPECT_EQ(onThreads(4,
                        [&](int t) -> std::string {
                          for (int i = 0; i < 300; ++i) {
                            Job r(t, i);
                            std::string s = statusString(kiln_model_run(
                                model.get(), r.inputs, 2, r.outputs, 2));
                            if (s != "OK")
                              return s;
                            if (std::string e = r.check(); !e.empty())
                              return e;
                          }
                          return "";
                        }),
              "")
        << poolThreads << " pool threads";
  }
}

TEST(RunContext, OneContextPerThread) {
  ModelPtr model = openStatic(2);
  ASSERT_TRUE(model);
  EXPECT_EQ(onThreads(4,
                      [&](int t) -> std::string {
                        kiln_run_context *ctx = nullptr;
                        std::string s = statusString(
                            kiln_run_context_create(model.get(), &ctx));
                        if (s != "OK")
                          return s;
                        std::string error;
                        for (int i = 0; i < 300 && error.empty(); ++i) {
                          Job r(t, i);
                          s = statusString(kiln_model_run_with_context(
                              model.get(), ctx, r.inputs, 2, r.outputs, 2));
                          error = s != "OK" ? s : r.check();
                        }
                        kiln_run_context_destroy(ctx);
                        return error;
                      }),
            "");
}

TEST(RunContext, Errors) {
  ModelPtr a = openStatic(1), b = openStatic(1);
  kiln_run_context *ctx = nullptr;
  ASSERT_EQ(statusString(kiln_run_context_create(a.get(), &ctx)), "OK");
  Job r(0, 0);
  EXPECT_EQ(statusString(kiln_model_run_with_context(b.get(), ctx, r.inputs, 2,
                                                     r.outputs, 2)),
            "INVALID_ARGUMENT: the run context belongs to model 'fake_add', "
            "not to model 'fake_add'");
  EXPECT_EQ(statusString(kiln_model_run_with_context(a.get(), nullptr,
                                                     r.inputs, 2, r.outputs,
                                                     2)),
            "INVALID_ARGUMENT: context is NULL");
  EXPECT_EQ(statusString(kiln_run_context_create(nullptr, &ctx)),
            "INVALID_ARGUMENT: model is NULL");
  // Validation errors leave the context usable.
  EXPECT_EQ(statusString(kiln_model_run_with_context(a.get(), ctx, r.inputs, 1,
                                                     r.outputs, 2)),
            "INVALID_ARGUMENT: missing input 'b' (float32 [2,3])");
  EXPECT_EQ(statusString(kiln_model_run_with_context(a.get(), ctx, r.inputs, 2,
                                                     r.outputs, 2)),
            "OK");
  EXPECT_EQ(r.check(), "");
  kiln_run_context_destroy(ctx);
  kiln_run_context_destroy(nullptr);
}

TEST(RunContext, OverlappingUseOfOneContextIsRefused) {
  ModelPtr model = openStatic(1);
  kiln_run_context *ctx = nullptr;
  ASSERT_EQ(statusString(kiln_run_context_create(model.get(), &ctx)), "OK");
  __atomic_store_n(&fake_add_gate_entered, 0, __ATOMIC_SEQ_CST);
  __atomic_store_n(&fake_add_gate_open, 0, __ATOMIC_SEQ_CST);
  Job held(0, 0);
  held.a[0] = -5000; // the fake entry waits at its gate
  std::string heldStatus;
  std::thread first([&] {
    heldStatus = statusString(kiln_model_run_with_context(
        model.get(), ctx, held.inputs, 2, held.outputs, 2));
  });
  while (!__atomic_load_n(&fake_add_gate_entered, __ATOMIC_ACQUIRE))
    std::this_thread::yield();
  Job second(1, 0);
  EXPECT_EQ(statusString(kiln_model_run_with_context(
                model.get(), ctx, second.inputs, 2, second.outputs, 2)),
            "FAILED_PRECONDITION: a run context of model 'fake_add' was used "
            "by two runs at once; use one context per thread (or "
            "kiln_model_run, which takes one from a pool)");
  // kiln_model_run takes another context meanwhile.
  EXPECT_EQ(statusString(kiln_model_run(model.get(), second.inputs, 2,
                                        second.outputs, 2)),
            "OK");
  EXPECT_EQ(second.check(), "");
  __atomic_store_n(&fake_add_gate_open, 1, __ATOMIC_RELEASE);
  first.join();
  EXPECT_EQ(heldStatus, "OK");
  EXPECT_EQ(held.check(), "");
  kiln_run_context_destroy(ctx);
}

TEST(RunContext, CallerScratchServesOneContextAtATime) {
  alignas(64) static unsigned char scratch[256];
  memset(scratch, 0, sizeof(scratch));
  ModelPtr model = openStatic(1, scratch, sizeof(scratch));
  // The model's first context holds the caller's arena: plain runs use it.
  Job r(0, 0);
  ASSERT_EQ(statusString(kiln_model_run(model.get(), r.inputs, 2, r.outputs, 2)),
            "OK");
  EXPECT_EQ(scratch[0], 0xAB);
  // Another context gets its own arena and leaves the caller's alone.
  memset(scratch, 0, sizeof(scratch));
  kiln_run_context *ctx = nullptr;
  ASSERT_EQ(statusString(kiln_run_context_create(model.get(), &ctx)), "OK");
  ASSERT_EQ(statusString(kiln_model_run_with_context(model.get(), ctx,
                                                     r.inputs, 2, r.outputs,
                                                     2)),
            "OK");
  EXPECT_EQ(r.check(), "");
  EXPECT_EQ(scratch[0], 0);
  kiln_run_context_destroy(ctx);
}

//===----------------------------------------------------------------------===//
// The arena of a model with symbolic dims (fake_dynamic_model.c): a run whose
// shape function asks for more than a context's arena grows it, and the
// context keeps it; a caller's options.scratch cannot grow.
//===----------------------------------------------------------------------===//

ModelPtr openDynamic(int32_t threads, void *scratch = nullptr,
                     size_t scratchSize = 0) {
  kiln_model_options options;
  kiln_model_options_init(&options);
  options.num_threads = threads;
  options.scratch = scratch;
  options.scratch_size = scratchSize;
  kiln_model *model = nullptr;
  EXPECT_EQ(statusString(kiln_model_open_descriptor(fake_dynamic_descriptor(),
                                                    &options, &model)),
            "OK");
  return ModelPtr(model);
}

/// Runs the fake dynamic model at `batch` (inputs from `seed`) with `ctx`
/// (NULL: kiln_model_run); "" when it succeeded with y = 2 x + 1 and shape
/// [batch, 4], else the status or what differed.
std::string runDynamic(kiln_model *model, kiln_run_context *ctx, int64_t batch,
                       int seed) {
  std::vector<float> x((size_t)batch * 4), y((size_t)batch * 4, -1.0f);
  for (size_t i = 0; i < x.size(); ++i)
    x[i] = (float)(seed * 131 + (int)i % 97) * 0.5f;
  const int64_t shape[] = {batch, 4};
  kiln_tensor in = {"x", KILN_DTYPE_FLOAT32, 2, shape, x.data(), 0};
  kiln_tensor out = {"y", KILN_DTYPE_UNDEFINED, 0, nullptr, y.data(),
                     y.size() * sizeof(float)};
  std::string s = statusString(
      ctx ? kiln_model_run_with_context(model, ctx, &in, 1, &out, 1)
          : kiln_model_run(model, &in, 1, &out, 1));
  if (s != "OK")
    return s;
  if (out.rank != 2 || out.shape[0] != batch || out.shape[1] != 4)
    return "batch " + std::to_string(batch) + ": wrong output shape";
  for (size_t i = 0; i < x.size(); ++i)
    if (y[i] != 2.0f * x[i] + 1.0f)
      return "batch " + std::to_string(batch) + ": y[" + std::to_string(i) +
             "] = " + std::to_string(y[i]) + ", want " +
             std::to_string(2.0f * x[i] + 1.0f);
  return "";
}

TEST(DynamicArena, GrowsWithTheRunAndIsKept) {
  ModelPtr model = openDynamic(1);
  ASSERT_TRUE(model);
  EXPECT_EQ(kiln_model_scratch_size(model.get()),
            (uint64_t)FAKE_DYNAMIC_STATIC_BYTES);
  for (bool ownContext : {false, true}) {
    SCOPED_TRACE(ownContext ? "own context" : "kiln_model_run");
    kiln_run_context *ctx = nullptr;
    if (ownContext)
      ASSERT_EQ(statusString(kiln_run_context_create(model.get(), &ctx)), "OK");
    // Each larger size gets a new arena (allocated before the old one is
    // freed, so a new address); a smaller one runs in the arena kept.
    void *arena = nullptr;
    const struct {
      int64_t batch;
      bool grows;
    } steps[] = {{1, true},  {64, true},  {7, false},  {130, true},
                 {2, false}, {130, false}, {131, true}};
    for (const auto &step : steps) {
      SCOPED_TRACE("batch " + std::to_string(step.batch));
      ASSERT_EQ(runDynamic(model.get(), ctx, step.batch, (int)step.batch), "");
      void *used = fake_dynamic_last_scratch();
      if (step.grows)
        EXPECT_NE(used, arena) << "the arena should have grown";
      else
        EXPECT_EQ(used, arena) << "the arena kept should serve this run";
      arena = used;
    }
    kiln_run_context_destroy(ctx);
  }
}

TEST(DynamicArena, EachThreadsContextGrowsItsOwn) {
  ModelPtr model = openDynamic(2);
  ASSERT_TRUE(model);
  for (bool ownContext : {false, true}) {
    SCOPED_TRACE(ownContext ? "own contexts" : "kiln_model_run");
    EXPECT_EQ(onThreads(3,
                        [&](int t) -> std::string {
                          kiln_run_context *ctx = nullptr;
                          if (ownContext) {
                            std::string s = statusString(
                                kiln_run_context_create(model.get(), &ctx));
                            if (s != "OK")
                              return s;
                          }
                          // Threads at different sizes at once, growing and
                          // shrinking.
                          const int64_t sizes[] = {1, 64, 7, 130, 2, 300, 5};
                          std::string error;
                          for (int i = 0; i < 60 && error.empty(); ++i)
                            error = runDynamic(model.get(), ctx,
                                               sizes[(i + 2 * t) % 7] + t,
                                               t * 1000 + i);
                          kiln_run_context_destroy(ctx);
                          return error;
                        }),
              "");
  }
}

TEST(DynamicArena, CallerScratchCannotGrow) {
  // Room for 8 rows, then a canary the runs must not touch.
  const size_t size = (size_t)fake_dynamic_scratch_bytes(8);
  alignas(64) static unsigned char scratch[FAKE_DYNAMIC_STATIC_BYTES +
                                           8 * FAKE_DYNAMIC_ROW_BYTES + 64];
  memset(scratch, 0x11, sizeof(scratch));
  ModelPtr model = openDynamic(1, scratch, size);
  ASSERT_TRUE(model);
  EXPECT_EQ(runDynamic(model.get(), nullptr, 8, 1), "");
  EXPECT_EQ(fake_dynamic_last_scratch(), (void *)scratch);
  EXPECT_EQ(scratch[0], 0xAB);
  EXPECT_EQ(runDynamic(model.get(), nullptr, 9, 2),
            "OUT_OF_MEMORY: model 'fake_dynamic' needs " +
                std::to_string(fake_dynamic_scratch_bytes(9)) +
                " scratch bytes for this run, above the " +
                std::to_string(size) + " of options.scratch");
  // The failed run leaves the caller's arena in use, as it was.
  EXPECT_EQ(runDynamic(model.get(), nullptr, 3, 3), "");
  EXPECT_EQ(fake_dynamic_last_scratch(), (void *)scratch);
  for (size_t i = size; i < sizeof(scratch); ++i)
    ASSERT_EQ(scratch[i], 0x11) << "byte " << i << " past options.scratch";
  // A context created while the caller's arena is held owns its arena, which
  // grows.
  kiln_run_context *ctx = nullptr;
  ASSERT_EQ(statusString(kiln_run_context_create(model.get(), &ctx)), "OK");
  EXPECT_EQ(runDynamic(model.get(), ctx, 9, 4), "");
  EXPECT_NE(fake_dynamic_last_scratch(), (void *)scratch);
  EXPECT_EQ(runDynamic(model.get(), ctx, 200, 5), "");
  kiln_run_context_destroy(ctx);
}

} // namespace
