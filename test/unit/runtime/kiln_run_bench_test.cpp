// kiln-run --bench (what `kiln bench` runs) on the fake model: the report's
// lines and counts, concurrent callers, option errors, and a failing run.
#include "test_util.h"

#include <gtest/gtest.h>

#include <regex>
#include <string>
#include <vector>

using kiln_test::CommandResult;
using kiln_test::modelPath;
using kiln_test::runCommand;
using kiln_test::TempDir;

namespace {

CommandResult bench(std::vector<std::string> args) {
  args.insert(args.begin(), {KILN_RUN_PATH, modelPath("fake_model"), "--bench"});
  return runCommand(args);
}

const char *const kNumber = "[0-9]+\\.[0-9]{6}";

TEST(KilnRunBench, CountOverConcurrentCallers) {
  CommandResult r = bench({"--count", "300", "--concurrency", "3", "--threads",
                           "2", "--warmup", "4"});
  ASSERT_EQ(r.exitCode, 0) << r.err;
  std::string n = kNumber;
  std::regex report(
      "bench: 3 concurrent runs \\(a run context each\\), 2 threads, 4 "
      "warm-up runs each, [0-9]+\\.[0-9]{3} s\n"
      "latency_ms p50=(" + n + ") p90=(" + n + ") p99=(" + n + ") min=(" + n +
      ") max=(" + n + ") mean=" + n + " \\(300 runs\\)\n"
      "throughput_per_s [0-9]+\\.[0-9]{3}\n");
  std::smatch m;
  ASSERT_TRUE(std::regex_match(r.out, m, report)) << r.out;
  // min <= p50 <= p90 <= p99 <= max
  double min = std::stod(m[4]), p50 = std::stod(m[1]), p90 = std::stod(m[2]),
         p99 = std::stod(m[3]), max = std::stod(m[5]);
  EXPECT_LE(min, p50);
  EXPECT_LE(p50, p90);
  EXPECT_LE(p90, p99);
  EXPECT_LE(p99, max);
}

TEST(KilnRunBench, OneRunIsEveryPercentile) {
  CommandResult r = bench({"--count", "1", "--threads", "1", "--warmup", "0"});
  ASSERT_EQ(r.exitCode, 0) << r.err;
  std::smatch m;
  ASSERT_TRUE(std::regex_search(
      r.out, m,
      std::regex("p50=([0-9.]+) p90=([0-9.]+) p99=([0-9.]+) min=([0-9.]+) "
                 "max=([0-9.]+) mean=([0-9.]+) \\(1 runs\\)")))
      << r.out;
  for (int i = 2; i <= 6; ++i)
    EXPECT_EQ(m[i], m[1]) << r.out;
  EXPECT_NE(r.out.find("1 concurrent run (a run context each), 1 thread, 0 "
                       "warm-up runs each"),
            std::string::npos)
      << r.out;
}

TEST(KilnRunBench, Duration) {
  CommandResult r = bench({"--duration", "0.2", "--threads", "1"});
  ASSERT_EQ(r.exitCode, 0) << r.err;
  std::smatch m;
  ASSERT_TRUE(std::regex_search(r.out, m,
                                std::regex(", ([0-9.]+) s\n.*\\(([0-9]+) runs\\)")))
      << r.out;
  EXPECT_GE(std::stod(m[1]), 0.2);
  EXPECT_GT(std::stoull(m[2]), 0u);
}

void expectError(const CommandResult &r, const std::string &message) {
  EXPECT_EQ(r.exitCode, 1);
  EXPECT_EQ(r.err, "kiln-run: error: " + message + "\n");
  EXPECT_EQ(r.out, "");
}

TEST(KilnRunBench, Errors) {
  expectError(bench({"--count", "2", "--duration", "1"}),
              "--bench takes --duration or --count, not both");
  expectError(bench({"--duration", "0"}),
              "--duration expects a number of seconds > 0, got '0'");
  expectError(bench({"--duration", "x"}),
              "--duration expects a number of seconds > 0, got 'x'");
  expectError(bench({"--concurrency", "0"}), "--concurrency must be at least 1");
  expectError(bench({"--count", "0"}), "--count must be at least 1");
  expectError(bench({"--repeat", "2"}),
              "--bench does not combine with --repeat, --output-dir or "
              "--inspect");
  expectError(runCommand({KILN_RUN_PATH, modelPath("fake_model"), "--count", "3"}),
              "--count needs --bench");

  // A run that fails (the fake model's check on a[0] == -1000) stops the
  // benchmark with the runtime's message.
  TempDir dir;
  const float a[6] = {-1000, 0, 0, 0, 0, 0};
  kiln_test::writeNpy(dir.file("a.npy"), "<f4", {2, 3}, a, sizeof a);
  expectError(bench({"--input", "a=" + dir.file("a.npy"), "--count", "10",
                     "--concurrency", "2"}),
              "node 'Gather_0' (Gather, opset 13): index 5 is out of range "
              "[-3, 3) on axis 0");
}

} // namespace
