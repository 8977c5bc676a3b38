//===- Bench.cpp - kiln-run --bench: latency percentiles and throughput ---===//

#include "tools/kiln-run/Bench.h"

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <memory>
#include <mutex>
#include <stdexcept>
#include <string>
#include <thread>

namespace kiln_run {

namespace {

using Clock = std::chrono::steady_clock;

struct ContextDestroyer {
  void operator()(kiln_run_context *c) const { kiln_run_context_destroy(c); }
};

/// One concurrent caller: its run context and its own output buffers.
struct Caller {
  std::unique_ptr<kiln_run_context, ContextDestroyer> context;
  std::vector<std::vector<unsigned char>> buffers;
  std::vector<kiln_tensor> outputs;
  std::vector<double> latencies;
  Clock::time_point end;
};

std::string takeMessage(kiln_status s) {
  std::string message = kiln_status_message(s);
  kiln_status_free(s);
  return message;
}

} // namespace

BenchResult runBench(kiln_model *model, const std::vector<kiln_tensor> &inputs,
                     const BenchOptions &options) {
  size_t numOutputs = kiln_model_num_outputs(model);
  std::vector<Caller> callers(options.concurrency);
  for (Caller &c : callers) {
    kiln_run_context *context = nullptr;
    if (kiln_status s = kiln_run_context_create(model, &context))
      throw std::runtime_error(takeMessage(s));
    c.context.reset(context);
    // Caller-provided buffers, as a serving loop would reuse them.
    c.buffers.resize(numOutputs);
    c.outputs.resize(numOutputs);
    for (size_t j = 0; j < numOutputs; ++j) {
      kiln_tensor_info info;
      if (kiln_status s = kiln_model_output_info(model, j, &info))
        throw std::runtime_error(takeMessage(s));
      c.buffers[j].resize(std::max<size_t>(1, kiln_tensor_info_byte_size(&info)));
      c.outputs[j] = kiln_tensor{};
      c.outputs[j].name = info.name;
      c.outputs[j].data = c.buffers[j].data();
      c.outputs[j].byte_size = c.buffers[j].size();
    }
    if (kiln_model_num_symbols(model) > 0) {
      // Symbolic dims: the outputs' sizes come from the inputs; one run with
      // runtime-allocated outputs gives them.
      std::vector<kiln_tensor> sizing(numOutputs);
      for (size_t j = 0; j < numOutputs; ++j)
        sizing[j].name = c.outputs[j].name;
      kiln_status s = kiln_model_run_with_context(
          model, c.context.get(), inputs.data(), inputs.size(), sizing.data(),
          sizing.size());
      if (s)
        throw std::runtime_error(takeMessage(s));
      for (size_t j = 0; j < numOutputs; ++j) {
        c.buffers[j].resize(std::max<size_t>(1, sizing[j].byte_size));
        c.outputs[j].data = c.buffers[j].data();
        c.outputs[j].byte_size = c.buffers[j].size();
        kiln_tensor_free_data(&sizing[j]);
      }
    }
    if (options.count)
      c.latencies.reserve(options.count / options.concurrency + 1);
  }

  std::atomic<uint32_t> warmedUp{0};
  std::atomic<bool> go{false}, failed{false};
  std::atomic<uint64_t> claimed{0};
  std::mutex errorMutex;
  std::string error;
  Clock::time_point start, deadline;

  auto body = [&](Caller &c) {
    auto runOnce = [&]() -> bool {
      kiln_status s = kiln_model_run_with_context(
          model, c.context.get(), inputs.data(), inputs.size(),
          c.outputs.data(), c.outputs.size());
      if (!s)
        return true;
      std::lock_guard<std::mutex> lock(errorMutex);
      if (error.empty())
        error = kiln_status_message(s);
      kiln_status_free(s);
      failed = true;
      return false;
    };
    for (uint64_t i = 0; i < options.warmup && !failed; ++i)
      runOnce();
    warmedUp.fetch_add(1);
    while (!go.load(std::memory_order_acquire))
      std::this_thread::yield();
    while (!failed.load(std::memory_order_relaxed)) {
      if (options.count ? claimed.fetch_add(1) >= options.count
                        : Clock::now() >= deadline)
        break;
      Clock::time_point t0 = Clock::now();
      if (!runOnce())
        break;
      Clock::time_point t1 = Clock::now();
      c.latencies.push_back(
          std::chrono::duration<double, std::milli>(t1 - t0).count());
    }
    c.end = Clock::now();
  };

  std::vector<std::thread> threads;
  for (Caller &c : callers)
    threads.emplace_back(body, std::ref(c));
  // Time starts when every caller has warmed up.
  while (warmedUp.load() < callers.size())
    std::this_thread::yield();
  start = Clock::now();
  deadline = start + std::chrono::duration_cast<Clock::duration>(
                         std::chrono::duration<double>(options.seconds));
  go.store(true, std::memory_order_release);
  for (std::thread &t : threads)
    t.join();
  if (failed)
    throw std::runtime_error(error);

  BenchResult result;
  Clock::time_point end = start;
  for (Caller &c : callers) {
    result.latencies.insert(result.latencies.end(), c.latencies.begin(),
                            c.latencies.end());
    end = std::max(end, c.end);
  }
  std::sort(result.latencies.begin(), result.latencies.end());
  result.wallSeconds = std::chrono::duration<double>(end - start).count();
  return result;
}

double percentile(const std::vector<double> &sorted, double p) {
  if (sorted.empty())
    return 0;
  size_t rank = (size_t)std::ceil(p / 100 * (double)sorted.size());
  return sorted[std::min(sorted.size(), std::max<size_t>(rank, 1)) - 1];
}

void printBench(const BenchResult &result, const BenchOptions &options,
                int32_t threads) {
  const std::vector<double> &l = result.latencies;
  double sum = 0;
  for (double v : l)
    sum += v;
  std::printf("bench: %u concurrent run%s (a run context each), %d thread%s, "
              "%llu warm-up runs each, %.3f s\n",
              options.concurrency, options.concurrency == 1 ? "" : "s",
              (int)threads, threads == 1 ? "" : "s",
              (unsigned long long)options.warmup,
              result.wallSeconds);
  // Nanosecond resolution, as --repeat prints: tiny models run in microseconds.
  std::printf("latency_ms p50=%.6f p90=%.6f p99=%.6f min=%.6f max=%.6f "
              "mean=%.6f (%zu runs)\n",
              percentile(l, 50), percentile(l, 90), percentile(l, 99),
              l.empty() ? 0 : l.front(), l.empty() ? 0 : l.back(),
              l.empty() ? 0 : sum / (double)l.size(), l.size());
  std::printf("throughput_per_s %.3f\n",
              result.wallSeconds > 0 ? (double)l.size() / result.wallSeconds : 0);
}

} // namespace kiln_run
