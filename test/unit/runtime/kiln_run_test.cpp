// Runs the kiln-run tool on the fake model and checks its files and output.
#include "test_util.h"

#include <gtest/gtest.h>

#include <cstring>
#include <filesystem>
#include <regex>
#include <string>
#include <vector>

using kiln_test::CommandResult;
using kiln_test::modelPath;
using kiln_test::runCommand;
using kiln_test::TempDir;

namespace {

const float kA[6] = {1, 2, 3, 4, 5, 6};
const float kB[6] = {0.5f, -20, 0.25f, -40, 1, -60};

CommandResult kilnRun(std::vector<std::string> args) {
  args.insert(args.begin(), KILN_RUN_PATH);
  return runCommand(args);
}

TEST(KilnRun, Inspect) {
  CommandResult r = kilnRun({modelPath("fake_model"), "--inspect"});
  ASSERT_EQ(r.exitCode, 0) << r.err;
  // Everything before the start-up timings, which vary.
  std::string head = r.out.substr(0, r.out.find("open_ms:"));
  EXPECT_EQ(head, "name: fake_add\n"
                  "abi_version: 3\n"
                  "producer: kiln unit tests\n"
                  "target: x86_64-unknown-linux-gnu\n"
                  "cpu: generic\n"
                  "features: \n"
                  "scratch_bytes: 256\n"
                  "runtime_checks: 2\n"
                  "device: cpu\n"
                  "executable 0 host x86_64-unknown-linux-gnu static-entry "
                  "(entry)\n"
                  "memory 0 host-scratch 256 bytes, align 64\n"
                  "input a float32 [2,3]\n"
                  "input b float32 [2,3]\n"
                  "output sum float32 [2,3]\n"
                  "output stats/../positive:0 int64 []\n");
  EXPECT_TRUE(std::regex_search(r.out, std::regex("\nopen_ms: [0-9.]+\n")))
      << r.out;

  // A model of ABI version 1 is refused, naming both versions.
  std::string old = modelPath("fake_model_v1");
  r = kilnRun({old, "--inspect"});
  EXPECT_EQ(r.exitCode, 1);
  EXPECT_EQ(r.err, "kiln-run: error: " + old +
                       ": model 'old_model' was built for model ABI version "
                       "1, but this runtime supports version 3; recompile the "
                       "model with a matching kiln or link a matching "
                       "runtime\n");
}

TEST(KilnRun, FromNpyFiles) {
  TempDir dir;
  kiln_test::writeNpy(dir.file("a.npy"), "<f4", {2, 3}, kA, sizeof(kA));
  kiln_test::writeNpy(dir.file("b.npy"), "<f4", {2, 3}, kB, sizeof(kB), 2);
  std::string out = dir.file("out");
  CommandResult r = kilnRun({modelPath("fake_model"), "--input",
                             "a=" + dir.file("a.npy"),
                             "--input=b=" + dir.file("b.npy"), "--output-dir",
                             out, "--threads", "2"});
  ASSERT_EQ(r.exitCode, 0) << r.err;
  EXPECT_EQ(r.out, "sum float32 [2,3]\nstats/../positive:0 int64 []\n");
  EXPECT_EQ(r.err, "");

  kiln_test::NpyContents sum = kiln_test::readNpy(out + "/sum.npy");
  EXPECT_EQ(sum.descr, "<f4");
  EXPECT_EQ(sum.shape, (std::vector<int64_t>{2, 3}));
  ASSERT_EQ(sum.data.size(), 24u);
  float values[6];
  std::memcpy(values, sum.data.data(), sizeof(values));
  for (int i = 0; i < 6; ++i)
    EXPECT_EQ(values[i], kA[i] + kB[i]);

  // "stats/../positive:0": '/' and ':' become '_'; no path escapes DIR.
  kiln_test::NpyContents positive =
      kiln_test::readNpy(out + "/stats_.._positive_0.npy");
  EXPECT_EQ(positive.descr, "<i8");
  EXPECT_TRUE(positive.shape.empty());
  int64_t count;
  ASSERT_EQ(positive.data.size(), 8u);
  std::memcpy(&count, positive.data.data(), 8);
  EXPECT_EQ(count, 3);
  size_t files = 0;
  for (auto &entry : std::filesystem::directory_iterator(out)) {
    (void)entry;
    ++files;
  }
  EXPECT_EQ(files, 2u);
}

TEST(KilnRun, RandomInputsAreSeeded) {
  TempDir dir;
  auto runWithSeed = [&](const std::string &seed, const std::string &sub) {
    CommandResult r = kilnRun({modelPath("fake_model"), "--seed", seed,
                               "--output-dir", dir.file(sub)});
    EXPECT_EQ(r.exitCode, 0) << r.err;
    return kiln_test::readNpy(dir.file(sub) + "/sum.npy").data;
  };
  std::string s1 = runWithSeed("7", "x"), s2 = runWithSeed("7", "y");
  std::string s3 = runWithSeed("8", "z");
  EXPECT_EQ(s1, s2);
  EXPECT_NE(s1, s3);
  // Without --seed the seed is 0, and one input may come from a file.
  kiln_test::writeNpy(dir.file("a.npy"), "<f4", {2, 3}, kA, sizeof(kA));
  CommandResult r = kilnRun({modelPath("fake_model"), "--input",
                             "a=" + dir.file("a.npy")});
  EXPECT_EQ(r.exitCode, 0) << r.err;
  EXPECT_EQ(r.out, "sum float32 [2,3]\nstats/../positive:0 int64 []\n");
}

TEST(KilnRun, Repeat) {
  CommandResult r = kilnRun({modelPath("fake_model"), "--repeat", "5",
                             "--threads", "3"});
  ASSERT_EQ(r.exitCode, 0) << r.err;
  std::regex line(
      "sum float32 \\[2,3\\]\nstats/\\.\\./positive:0 int64 \\[\\]\n"
      "latency_ms median=[0-9.]+ min=[0-9.]+ max=[0-9.]+ \\(5 runs, 3 "
      "threads\\)\n");
  EXPECT_TRUE(std::regex_match(r.out, line)) << r.out;
}

TEST(KilnRun, ModelUsingExportedRuntimeSymbol) {
  // kiln-run exports kiln_parallel_for, so a model calling the symbol loads.
  CommandResult r = kilnRun({modelPath("fake_model_symbol"), "--threads", "2"});
  EXPECT_EQ(r.exitCode, 0) << r.err;
  EXPECT_EQ(r.out, "sum float32 [2,3]\nstats/../positive:0 int64 []\n");
}

void expectError(const CommandResult &r, const std::string &message) {
  EXPECT_EQ(r.exitCode, 1);
  EXPECT_EQ(r.out, "");
  EXPECT_NE(r.err.find(message), std::string::npos)
      << "stderr: " << r.err << "\nexpected: " << message;
}

TEST(KilnRun, WrongDtype) {
  TempDir dir;
  const int64_t ints[6] = {1, 2, 3, 4, 5, 6};
  kiln_test::writeNpy(dir.file("a.npy"), "<i8", {2, 3}, ints, sizeof(ints));
  expectError(kilnRun({modelPath("fake_model"), "--input", "a=" + dir.file("a.npy")}),
              "kiln-run: error: input 'a': expected dtype float32, got int64\n");
}

TEST(KilnRun, WrongShape) {
  TempDir dir;
  kiln_test::writeNpy(dir.file("a.npy"), "<f4", {3, 2}, kA, sizeof(kA));
  expectError(kilnRun({modelPath("fake_model"), "--input", "a=" + dir.file("a.npy")}),
              "input 'a': expected shape [2,3], got [3,2]");
}

TEST(KilnRun, BadNpyFiles) {
  TempDir dir;
  std::string model = modelPath("fake_model");
  kiln_test::writeFile(dir.file("garbage.npy"), "hello, world");
  expectError(kilnRun({model, "--input", "a=" + dir.file("garbage.npy")}),
              dir.file("garbage.npy") + ": not a .npy file");
  // Too little data for the shape.
  kiln_test::writeNpy(dir.file("short.npy"), "<f4", {2, 3}, kA, 20);
  expectError(kilnRun({model, "--input", "a=" + dir.file("short.npy")}),
              "holds 20 bytes of data, but dtype '<f4' and shape [2,3] need 24 "
              "(truncated file?)");
  kiln_test::writeNpy(dir.file("big.npy"), ">f4", {2, 3}, kA, sizeof(kA));
  expectError(kilnRun({model, "--input", "a=" + dir.file("big.npy")}),
              "big-endian .npy data ('>f4') is not supported");
  kiln_test::writeNpy(dir.file("str.npy"), "<U4", {2, 3}, kA, sizeof(kA));
  expectError(kilnRun({model, "--input", "a=" + dir.file("str.npy")}),
              "unsupported .npy dtype '<U4'");
  std::string header = "\x93NUMPY\x01";
  header += '\0';
  header += "\x10";
  header += '\0';
  header += "{'descr': '<f4',";
  kiln_test::writeFile(dir.file("trunc.npy"), header);
  expectError(kilnRun({model, "--input", "a=" + dir.file("trunc.npy")}),
              "malformed .npy header");
  std::string v9 = "\x93NUMPY\x09";
  v9 += std::string(10, '\0');
  kiln_test::writeFile(dir.file("v9.npy"), v9);
  expectError(kilnRun({model, "--input", "a=" + dir.file("v9.npy")}),
              "unsupported .npy format version 9.0");
  expectError(kilnRun({model, "--input", "a=" + dir.file("missing.npy")}),
              "cannot open '" + dir.file("missing.npy") + "'");
}

TEST(KilnRun, BadArguments) {
  std::string model = modelPath("fake_model");
  expectError(kilnRun({model, "--input", "c=x.npy"}),
              "kiln-run: error: --input c: unknown input 'c' (the model's "
              "inputs: 'a', 'b')");
  expectError(kilnRun({model, "--input", "a"}),
              "--input expects NAME=FILE.npy, got 'a'");
  expectError(kilnRun({model, "--frobnicate"}), "unknown option '--frobnicate'");
  expectError(kilnRun({model, "--threads", "-1"}),
              "invalid value '-1' for --threads");
  expectError(kilnRun({model, "--repeat", "0"}), "--repeat must be at least 1");
  expectError(kilnRun({model, "--seed"}), "option '--seed' needs a value");
  expectError(kilnRun({}), "no model file given");
  expectError(kilnRun({modelPath("no_such_model")}),
              "cannot open model '" + modelPath("no_such_model") +
                  "': No such file or directory");
  expectError(kilnRun({modelPath("not_a_model")}), "is not a kiln model");
  CommandResult help = kilnRun({"--help"});
  EXPECT_EQ(help.exitCode, 0);
  EXPECT_NE(help.out.find("usage: kiln-run"), std::string::npos);
}

} // namespace
