//===- Bench.h - kiln-run --bench: latency percentiles and throughput -----===//
//
// `kiln-run MODEL.so --bench` (what `kiln bench` runs): warm-up, then runs
// for a duration or a count from N concurrent callers, each with its own run
// context, and prints latency percentiles and throughput.
//
//===----------------------------------------------------------------------===//

#ifndef KILN_TOOLS_KILN_RUN_BENCH_H
#define KILN_TOOLS_KILN_RUN_BENCH_H

#include "kiln/runtime.h"

#include <cstdint>
#include <vector>

namespace kiln_run {

struct BenchOptions {
  uint64_t warmup = 10;     ///< untimed runs per caller before timing starts
  double seconds = 3;       ///< timed phase, when count is 0
  uint64_t count = 0;       ///< timed runs in all (over every caller); 0: use seconds
  uint32_t concurrency = 1; ///< callers running at once, a run context each
};

/// Latencies of the timed runs (milliseconds, sorted) and the phase's length.
struct BenchResult {
  std::vector<double> latencies;
  double wallSeconds = 0;
};

/// Runs the benchmark; throws std::runtime_error with the runtime's message if
/// a run fails. `inputs` are read concurrently and must stay valid.
BenchResult runBench(kiln_model *model, const std::vector<kiln_tensor> &inputs,
                     const BenchOptions &options);

/// The nearest-rank percentile `p` (0..100] of sorted values.
double percentile(const std::vector<double> &sorted, double p);

/// Prints the report: the setup line, `latency_ms p50=... p90=... p99=...`
/// and `throughput_per_s X`.
void printBench(const BenchResult &result, const BenchOptions &options,
                int32_t threads);

} // namespace kiln_run

#endif // KILN_TOOLS_KILN_RUN_BENCH_H
