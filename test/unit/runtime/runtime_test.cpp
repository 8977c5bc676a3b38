// Tests of the public runtime API (runtime.h) against the fake models.
#include "kiln/runtime.h"
#include "artifact.h"
#include "fake_dynamic_model.h"
#include "test_util.h"

#include <sys/stat.h>

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <string>
#include <vector>

using kiln_test::modelPath;
using kiln_test::statusString;

extern "C" const kiln_model_desc *fake_add_descriptor(void);

// Under ASan (-DKILN_SANITIZE=address), a huge allocation returns NULL, as
// malloc does, instead of aborting: the tests check the runtime's answer.
extern "C" const char *__asan_default_options() {
  return "allocator_may_return_null=1";
}

namespace {

/// `data` with kiln's checksum trailer (runtime/src/artifact.h) appended.
std::string sealed(const std::string &data) {
  unsigned char trailer[KILN_ARTIFACT_TRAILER_SIZE];
  kiln_artifact_store_le64(trailer, data.size());
  kiln_artifact_store_le64(trailer + 8,
                           kiln_artifact_hash(data.data(), data.size()));
  memcpy(trailer + 16, KILN_ARTIFACT_MAGIC, 8);
  return data + std::string(reinterpret_cast<char *>(trailer), sizeof(trailer));
}

struct ModelCloser {
  void operator()(kiln_model *m) const { kiln_model_close(m); }
};
using ModelPtr = std::unique_ptr<kiln_model, ModelCloser>;

const int64_t kShape23[] = {2, 3};

ModelPtr openFake(int32_t threads = 1, const std::string &name = "fake_model") {
  kiln_model_options options;
  kiln_model_options_init(&options);
  options.num_threads = threads;
  kiln_model *model = nullptr;
  kiln_status status = kiln_model_open(modelPath(name).c_str(), &options, &model);
  EXPECT_EQ(statusString(status), "OK");
  return ModelPtr(model);
}

/// Inputs a, b of the fake model plus caller-owned output buffers.
struct FakeRun {
  float a[6] = {1, 2, 3, 4, 5, 6};
  float b[6] = {10, -20, 30, -40, 50, -60};
  float sum[6] = {0};
  int64_t positive = -1;
  kiln_tensor inputs[2];
  kiln_tensor outputs[2];

  FakeRun() {
    inputs[0] = {"a", KILN_DTYPE_FLOAT32, 2, kShape23, a, sizeof(a)};
    inputs[1] = {"b", KILN_DTYPE_FLOAT32, 2, kShape23, b, 0};
    outputs[0] = {"sum", KILN_DTYPE_UNDEFINED, 0, nullptr, sum, sizeof(sum)};
    outputs[1] = {"stats/../positive:0", KILN_DTYPE_UNDEFINED, 0, nullptr,
                  &positive, sizeof(positive)};
  }
  std::string run(kiln_model *model, size_t nIn = 2, size_t nOut = 2) {
    return statusString(kiln_model_run(model, inputs, nIn, outputs, nOut));
  }
};

TEST(Status, NullIsOk) {
  EXPECT_EQ(kiln_status_code(nullptr), KILN_STATUS_OK);
  EXPECT_STREQ(kiln_status_message(nullptr), "OK");
  kiln_status_free(nullptr);
  EXPECT_STREQ(kiln_status_code_string(KILN_STATUS_RUNTIME_CHECK_FAILED),
               "RUNTIME_CHECK_FAILED");
  EXPECT_EQ(kiln_api_version(), (uint32_t)KILN_API_VERSION);
}

TEST(Dtype, NamesAndSizes) {
  EXPECT_STREQ(kiln_dtype_name(KILN_DTYPE_FLOAT32), "float32");
  EXPECT_STREQ(kiln_dtype_name(KILN_DTYPE_INT64), "int64");
  EXPECT_STREQ(kiln_dtype_name(KILN_DTYPE_BOOL), "bool");
  EXPECT_STREQ(kiln_dtype_name(KILN_DTYPE_BFLOAT16), "bfloat16");
  EXPECT_STREQ(kiln_dtype_name((kiln_dtype)8), "invalid");
  EXPECT_EQ(kiln_dtype_size(KILN_DTYPE_FLOAT16), 2u);
  EXPECT_EQ(kiln_dtype_size(KILN_DTYPE_UINT64), 8u);
  EXPECT_EQ(kiln_dtype_size(KILN_DTYPE_BOOL), 1u);
  EXPECT_EQ(kiln_dtype_size(KILN_DTYPE_UNDEFINED), 0u);
  const int64_t shape[] = {2, 3, 4};
  kiln_tensor_info info = {"x", KILN_DTYPE_FLOAT64, 3, shape};
  EXPECT_EQ(kiln_tensor_info_num_elements(&info), 24);
  EXPECT_EQ(kiln_tensor_info_byte_size(&info), 192u);
  kiln_tensor_info scalar = {"s", KILN_DTYPE_INT32, 0, nullptr};
  EXPECT_EQ(kiln_tensor_info_num_elements(&scalar), 1);
  EXPECT_EQ(kiln_tensor_info_byte_size(&scalar), 4u);
}

TEST(Model, OpenAndDescribe) {
  ModelPtr model = openFake(2);
  ASSERT_TRUE(model);
  EXPECT_STREQ(kiln_model_name(model.get()), "fake_add");
  EXPECT_EQ(kiln_model_num_threads(model.get()), 2);
  EXPECT_EQ(kiln_model_scratch_size(model.get()), 256u);
  EXPECT_STREQ(kiln_model_get_descriptor(model.get())->producer, "kiln unit tests");
  ASSERT_EQ(kiln_model_num_inputs(model.get()), 2u);
  ASSERT_EQ(kiln_model_num_outputs(model.get()), 2u);

  kiln_tensor_info info;
  ASSERT_EQ(statusString(kiln_model_input_info(model.get(), 1, &info)), "OK");
  EXPECT_STREQ(info.name, "b");
  EXPECT_EQ(info.dtype, KILN_DTYPE_FLOAT32);
  ASSERT_EQ(info.rank, 2);
  EXPECT_EQ(info.shape[0], 2);
  EXPECT_EQ(info.shape[1], 3);
  EXPECT_EQ(kiln_tensor_info_byte_size(&info), 24u);

  ASSERT_EQ(statusString(kiln_model_output_info(model.get(), 1, &info)), "OK");
  EXPECT_STREQ(info.name, "stats/../positive:0");
  EXPECT_EQ(info.dtype, KILN_DTYPE_INT64);
  EXPECT_EQ(info.rank, 0);
  EXPECT_EQ(info.shape, nullptr);

  EXPECT_EQ(statusString(kiln_model_input_info(model.get(), 2, &info)),
            "INVALID_ARGUMENT: input index 2 is out of range: model 'fake_add' "
            "has 2 inputs");

  size_t index = 99;
  ASSERT_EQ(statusString(kiln_model_find_input(model.get(), "b", &index)), "OK");
  EXPECT_EQ(index, 1u);
  ASSERT_EQ(statusString(kiln_model_find_output(model.get(), "sum", &index)), "OK");
  EXPECT_EQ(index, 0u);
  EXPECT_EQ(statusString(kiln_model_find_input(model.get(), "c", &index)),
            "NOT_FOUND: unknown input 'c' (the model's inputs: 'a', 'b')");
}

TEST(Model, DefaultThreadsIsOnePerCpu) {
  kiln_model *model = nullptr;
  ASSERT_EQ(statusString(kiln_model_open(modelPath("fake_model").c_str(),
                                         nullptr, &model)),
            "OK");
  EXPECT_GE(kiln_model_num_threads(model), 1);
  kiln_model_close(model);
}

TEST(Model, RunWithCallerOutputs) {
  for (int threads = 1; threads <= 4; ++threads) {
    ModelPtr model = openFake(threads);
    ASSERT_TRUE(model);
    FakeRun r;
    ASSERT_EQ(r.run(model.get()), "OK") << threads << " threads";
    for (int i = 0; i < 6; ++i)
      EXPECT_EQ(r.sum[i], r.a[i] + r.b[i]);
    EXPECT_EQ(r.positive, 3);
    // Metadata is filled in; the caller's buffers are kept.
    EXPECT_EQ(r.outputs[0].data, r.sum);
    EXPECT_EQ(r.outputs[0].dtype, KILN_DTYPE_FLOAT32);
    EXPECT_EQ(r.outputs[0].rank, 2);
    EXPECT_EQ(r.outputs[0].shape[1], 3);
    EXPECT_EQ(r.outputs[0].byte_size, 24u);
    EXPECT_EQ(r.outputs[1].dtype, KILN_DTYPE_INT64);
    EXPECT_EQ(r.outputs[1].rank, 0);
    // Runs are repeatable on one handle.
    r.a[0] = 100;
    ASSERT_EQ(r.run(model.get()), "OK");
    EXPECT_EQ(r.sum[0], 110);
    EXPECT_EQ(r.positive, 3);
  }
}

TEST(Model, RunWithRuntimeAllocatedOutputs) {
  ModelPtr model = openFake(2);
  FakeRun r;
  // Order of tensors does not matter: matching is by name.
  std::swap(r.inputs[0], r.inputs[1]);
  r.outputs[0].data = nullptr;
  r.outputs[0].byte_size = 0;
  r.outputs[1].data = nullptr;
  ASSERT_EQ(r.run(model.get()), "OK");
  ASSERT_NE(r.outputs[0].data, nullptr);
  ASSERT_NE(r.outputs[1].data, nullptr);
  EXPECT_EQ((uintptr_t)r.outputs[0].data % 64, 0u);
  EXPECT_EQ(r.outputs[0].byte_size, 24u);
  const float *sum = (const float *)r.outputs[0].data;
  for (int i = 0; i < 6; ++i)
    EXPECT_EQ(sum[i], r.a[i] + r.b[i]);
  EXPECT_EQ(*(const int64_t *)r.outputs[1].data, 3);
  kiln_tensor_free_data(&r.outputs[0]);
  EXPECT_EQ(r.outputs[0].data, nullptr);
  free(r.outputs[1].data); // plain free() is equivalent
}

TEST(Model, StaticallyLinkedDescriptor) {
  kiln_model *model = nullptr;
  ASSERT_EQ(statusString(kiln_model_open_descriptor(fake_add_descriptor(),
                                                    nullptr, &model)),
            "OK");
  FakeRun r;
  EXPECT_EQ(r.run(model), "OK");
  EXPECT_EQ(r.sum[5], -54);
  kiln_model_close(model);
}

TEST(Model, CallerProvidedScratch) {
  alignas(64) static unsigned char scratch[512];
  memset(scratch, 0, sizeof(scratch));
  kiln_model_options options;
  kiln_model_options_init(&options);
  options.num_threads = 1;
  options.scratch = scratch;
  options.scratch_size = sizeof(scratch);
  kiln_model *model = nullptr;
  ASSERT_EQ(statusString(kiln_model_open_descriptor(fake_add_descriptor(),
                                                    &options, &model)),
            "OK");
  FakeRun r;
  ASSERT_EQ(r.run(model), "OK");
  EXPECT_EQ(scratch[0], 0xAB);
  EXPECT_EQ(scratch[255], 0xAB);
  EXPECT_EQ(scratch[256], 0); // the model uses only scratch_size bytes
  kiln_model_close(model);

  options.scratch_size = 255;
  EXPECT_EQ(statusString(kiln_model_open_descriptor(fake_add_descriptor(),
                                                    &options, &model)),
            "INVALID_ARGUMENT: options.scratch has 255 bytes, but model "
            "'fake_add' needs 256");
  options.scratch = scratch + 1;
  options.scratch_size = 300;
  EXPECT_EQ(statusString(kiln_model_open_descriptor(fake_add_descriptor(),
                                                    &options, &model)),
            "INVALID_ARGUMENT: options.scratch must be 64-byte aligned");
  options.scratch = nullptr;
  options.num_threads = -2;
  EXPECT_EQ(statusString(kiln_model_open_descriptor(fake_add_descriptor(),
                                                    &options, &model)),
            "INVALID_ARGUMENT: options.num_threads must be >= 0 (0 = one per "
            "CPU), got -2");
}

TEST(Model, DynamicArenaThatCannotBeAllocated) {
  // A run of a model with symbolic dims whose arena cannot grow to its size
  // (fake_dynamic_model.c: 64 bytes a row) fails with OUT_OF_MEMORY; the
  // context keeps the arena it had and serves the next run.
  kiln_model *model = nullptr;
  ASSERT_EQ(statusString(kiln_model_open_descriptor(fake_dynamic_descriptor(),
                                                    nullptr, &model)),
            "OK");
  float x[8] = {1, 2, 3, 4, 5, 6, 7, 8}, y[8] = {0};
  const int64_t huge = INT64_C(1) << 52, two = 2;
  int64_t shape[] = {huge, 4};
  kiln_tensor in = {"x", KILN_DTYPE_FLOAT32, 2, shape, x, 0};
  kiln_tensor out = {"y", KILN_DTYPE_UNDEFINED, 0, nullptr, y, sizeof(y)};
  EXPECT_EQ(statusString(kiln_model_run(model, &in, 1, &out, 1)),
            "OUT_OF_MEMORY: cannot allocate the " +
                std::to_string(fake_dynamic_scratch_bytes(huge)) +
                "-byte scratch arena model 'fake_dynamic' needs for this run");
  shape[0] = two;
  ASSERT_EQ(statusString(kiln_model_run(model, &in, 1, &out, 1)), "OK");
  EXPECT_EQ(y[7], 17.0f);
  kiln_model_close(model);
}

//===----------------------------------------------------------------------===//
// Validation messages
//===----------------------------------------------------------------------===//

TEST(Validation, WrongDtype) {
  ModelPtr model = openFake();
  FakeRun r;
  int64_t ints[6] = {0};
  r.inputs[1].dtype = KILN_DTYPE_INT64;
  r.inputs[1].data = ints;
  EXPECT_EQ(r.run(model.get()),
            "INVALID_ARGUMENT: input 'b': expected dtype float32, got int64");
}

TEST(Validation, WrongRank) {
  ModelPtr model = openFake();
  FakeRun r;
  const int64_t shape[] = {6};
  r.inputs[0].rank = 1;
  r.inputs[0].shape = shape;
  EXPECT_EQ(r.run(model.get()),
            "INVALID_ARGUMENT: input 'a': expected rank 2, got 1 (expected "
            "shape [2,3], got [6])");
}

TEST(Validation, WrongShape) {
  ModelPtr model = openFake();
  FakeRun r;
  const int64_t shape[] = {3, 2};
  r.inputs[0].shape = shape;
  EXPECT_EQ(r.run(model.get()),
            "INVALID_ARGUMENT: input 'a': expected shape [2,3], got [3,2]");
}

TEST(Validation, UnknownName) {
  ModelPtr model = openFake();
  FakeRun r;
  r.inputs[1].name = "c";
  EXPECT_EQ(r.run(model.get()),
            "NOT_FOUND: unknown input 'c' (the model's inputs: 'a', 'b')");
  FakeRun r2;
  r2.outputs[0].name = "total";
  EXPECT_EQ(r2.run(model.get()),
            "NOT_FOUND: unknown output 'total' (the model's outputs: 'sum', "
            "'stats/../positive:0')");
}

TEST(Validation, MissingInput) {
  ModelPtr model = openFake();
  FakeRun r;
  EXPECT_EQ(r.run(model.get(), 1),
            "INVALID_ARGUMENT: missing input 'b' (float32 [2,3])");
}

TEST(Validation, MissingOutput) {
  ModelPtr model = openFake();
  FakeRun r;
  EXPECT_EQ(r.run(model.get(), 2, 1),
            "INVALID_ARGUMENT: missing output 'stats/../positive:0' (int64 []): "
            "every output needs an entry, with data = NULL to have the runtime "
            "allocate it");
}

TEST(Validation, DuplicateInput) {
  ModelPtr model = openFake();
  FakeRun r;
  r.inputs[1].name = "a";
  EXPECT_EQ(r.run(model.get()),
            "INVALID_ARGUMENT: input 'a' is given more than once");
}

TEST(Validation, BuffersAndPointers) {
  ModelPtr model = openFake();
  {
    FakeRun r;
    r.outputs[0].byte_size = 16;
    EXPECT_EQ(r.run(model.get()),
              "INVALID_ARGUMENT: output 'sum': buffer has 16 bytes, needs 24");
  }
  {
    FakeRun r;
    r.inputs[0].byte_size = 20;
    EXPECT_EQ(r.run(model.get()),
              "INVALID_ARGUMENT: input 'a': byte_size is 20, but the tensor "
              "needs 24 bytes");
  }
  {
    FakeRun r;
    r.inputs[0].data = nullptr;
    EXPECT_EQ(r.run(model.get()), "INVALID_ARGUMENT: input 'a': data is NULL");
  }
  {
    FakeRun r;
    r.inputs[0].name = nullptr;
    EXPECT_EQ(r.run(model.get()),
              "INVALID_ARGUMENT: inputs[0] has no name (inputs are matched by "
              "name)");
  }
  {
    FakeRun r;
    EXPECT_EQ(statusString(kiln_model_run(model.get(), nullptr, 2, r.outputs, 2)),
              "INVALID_ARGUMENT: inputs is NULL but n_inputs is 2");
    EXPECT_EQ(statusString(kiln_model_run(nullptr, r.inputs, 2, r.outputs, 2)),
              "INVALID_ARGUMENT: model is NULL");
  }
  // A failed validation leaves runtime-allocated outputs unallocated.
  {
    FakeRun r;
    r.outputs[0].data = nullptr;
    r.inputs[1].name = "zzz";
    EXPECT_NE(r.run(model.get()), "OK");
    EXPECT_EQ(r.outputs[0].data, nullptr);
  }
}

TEST(Validation, BoolInputsMustBeZeroOrOne) {
  // The fake descriptor with input 'a' as bool: the entry reads 24 bytes of
  // it as floats, so the buffer below is 24 bytes.
  kiln_model_desc desc = *fake_add_descriptor();
  kiln_tensor_desc inputs[2] = {desc.inputs[0], desc.inputs[1]};
  inputs[0].dtype = KILN_DTYPE_BOOL;
  desc.inputs = inputs;
  kiln_model *raw = nullptr;
  kiln_model_options options;
  kiln_model_options_init(&options);
  options.num_threads = 1;
  ASSERT_EQ(statusString(kiln_model_open_descriptor(&desc, &options, &raw)),
            "OK");
  ModelPtr model(raw);
  FakeRun run;
  alignas(8) unsigned char flags[24] = {1, 0, 1, 1, 0, 0};
  run.inputs[0] = {"a", KILN_DTYPE_BOOL, 2, kShape23, flags, 6};
  EXPECT_EQ(run.run(model.get()), "OK");
  flags[4] = 2;
  EXPECT_EQ(run.run(model.get()),
            "INVALID_ARGUMENT: input 'a': bool element 4 is 2; bools must be "
            "0 or 1");
  flags[4] = 0xff;
  EXPECT_EQ(run.run(model.get()),
            "INVALID_ARGUMENT: input 'a': bool element 4 is 255; bools must "
            "be 0 or 1");
}

TEST(Validation, RuntimeCheckFailure) {
  ModelPtr model = openFake();
  FakeRun r;
  r.outputs[0].data = nullptr; // runtime-allocated: freed again on failure
  r.a[0] = -1000;
  EXPECT_EQ(r.run(model.get()),
            "RUNTIME_CHECK_FAILED: node 'Gather_0' (Gather, opset 13): index 5 "
            "is out of range [-3, 3) on axis 0");
  EXPECT_EQ(r.outputs[0].data, nullptr);
  r.a[0] = -2000;
  EXPECT_EQ(r.run(model.get()),
            "RUNTIME_CHECK_FAILED: node 'Div_1' (Div, opset 14): integer "
            "division by zero");
  r.a[0] = -3000;
  EXPECT_EQ(r.run(model.get()),
            "INTERNAL: model 'fake_add' returned status 7, which names no check "
            "(it has 2 check messages)");
  // The handle still works after failures.
  r.a[0] = 1;
  EXPECT_EQ(r.run(model.get()), "OK");
  kiln_tensor_free_data(&r.outputs[0]);
}

//===----------------------------------------------------------------------===//
// Opening failures
//===----------------------------------------------------------------------===//

TEST(Open, NonexistentFile) {
  kiln_model *model = nullptr;
  std::string path = modelPath("no_such_model");
  EXPECT_EQ(statusString(kiln_model_open(path.c_str(), nullptr, &model)),
            "NOT_FOUND: cannot open model '" + path +
                "': No such file or directory");
  EXPECT_EQ(model, nullptr);
}

TEST(Open, NotAKilnModel) {
  kiln_model *model = nullptr;
  std::string path = modelPath("not_a_model");
  EXPECT_EQ(statusString(kiln_model_open(path.c_str(), nullptr, &model)),
            "INVALID_ARGUMENT: '" + path +
                "' is not a kiln model: it does not export "
                "'kiln_model_descriptor'");
}

TEST(Open, NotASharedLibrary) {
  kiln_test::TempDir dir;
  std::string path = dir.file("garbage.so");
  kiln_test::writeFile(path, "this is not an ELF file\n");
  kiln_model *model = nullptr;
  // Without kiln's checksum trailer the file never reaches dlopen.
  EXPECT_EQ(statusString(kiln_model_open(path.c_str(), nullptr, &model)),
            "INVALID_ARGUMENT: cannot open model '" + path +
                "': the file is damaged or not a kiln model library: it has "
                "no kiln checksum trailer (truncated, or not written by kiln "
                "compile --emit so)");
  // With one, dlopen's own error is reported.
  kiln_test::writeFile(path, sealed("this is not an ELF file\n"));
  std::string s = statusString(kiln_model_open(path.c_str(), nullptr, &model));
  EXPECT_EQ(s.rfind("INVALID_ARGUMENT: cannot load model '" + path + "': ", 0), 0u)
      << s;
  EXPECT_EQ(statusString(kiln_model_open(dir.path().c_str(), nullptr, &model)),
            "INVALID_ARGUMENT: cannot open model '" + dir.path() +
                "': it is a directory");
}

TEST(Open, TruncatedOrDamagedLibrary) {
  kiln_test::TempDir dir;
  std::string good = kiln_test::readFile(modelPath("fake_model"));
  std::string path = dir.file("m.so");
  kiln_model *model = nullptr;
  // Every truncation is refused before dlopen (which may fault on it).
  for (size_t cut : {size_t(0), size_t(10), good.size() / 2, good.size() - 1}) {
    kiln_test::writeFile(path, good.substr(0, cut));
    std::string s = statusString(kiln_model_open(path.c_str(), nullptr, &model));
    EXPECT_EQ(s.rfind("INVALID_ARGUMENT: cannot open model '" + path +
                          "': the file is damaged",
                      0),
              0u)
        << cut << ": " << s;
    EXPECT_EQ(model, nullptr);
  }
  std::string flipped = good;
  flipped[flipped.size() / 3] ^= 0x40;
  kiln_test::writeFile(path, flipped);
  std::string s = statusString(kiln_model_open(path.c_str(), nullptr, &model));
  EXPECT_NE(s.find("the file is damaged: checksum "), std::string::npos) << s;
  // Bytes appended after the trailer.
  kiln_test::writeFile(path, good + "junk");
  s = statusString(kiln_model_open(path.c_str(), nullptr, &model));
  EXPECT_NE(s.find("the file is damaged"), std::string::npos) << s;
  kiln_test::writeFile(path, good);
  EXPECT_EQ(statusString(kiln_model_open(path.c_str(), nullptr, &model)), "OK");
  kiln_model_close(model);
}

TEST(Open, ChecksumIsTheDocumentedHash) {
  // docs/reliability.md's definition, byte by byte, against artifact.h's
  // loop: in one call, one segment at a time and streamed in blocks, over
  // sizes around the stripe, the block and the 1 MiB segment.
  auto mix = [](uint64_t x) {
    x = (x ^ (x >> 33)) * 0xff51afd7ed558ccdull;
    x = (x ^ (x >> 33)) * 0xc4ceb9fe1a85ec53ull;
    return x ^ (x >> 33);
  };
  uint64_t key[24], state = 0; // splitmix64 from state 0
  for (uint64_t &k : key) {
    uint64_t z = (state += 0x9e3779b97f4a7c15ull);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    k = z ^ (z >> 31);
  }
  auto reference = [&](const std::string &d) {
    const size_t segment = size_t(1) << 20;
    uint64_t h = 0xcbf29ce484222325ull;
    for (size_t at = 0; at < d.size(); at += segment) {
      size_t end = std::min(d.size(), at + segment);
      uint64_t acc[8];
      for (int l = 0; l < 8; ++l)
        acc[l] = 0xcbf29ce484222325ull + l;
      for (size_t stripe = at; stripe < end; stripe += 64) {
        size_t s = (stripe - at) / 64 % 16;
        for (int l = 0; l < 8; ++l) {
          uint64_t w = 0;
          for (int b = 7; b >= 0; --b) {
            size_t i = stripe + 8 * l + b;
            w = (w << 8) | (i < end ? (unsigned char)d[i] : 0);
          }
          uint64_t x = w ^ key[s + l];
          acc[l ^ 1] += w;
          acc[l] += (x & 0xffffffffull) * (x >> 32);
        }
        if (s == 15 && stripe + 64 <= end) // a whole block ends here
          for (int l = 0; l < 8; ++l)
            acc[l] = ((acc[l] ^ (acc[l] >> 47)) ^ key[16 + l]) * 0x9e3779b1ull;
      }
      uint64_t digest = 0;
      for (int l = 0; l < 8; ++l)
        digest = mix(digest ^ acc[l]);
      h = mix(h ^ digest);
    }
    return mix(h ^ d.size());
  };
  std::string data;
  for (size_t i = 0; i < (size_t(3) << 20) + 100; ++i)
    data += static_cast<char>(i * 37 + (i >> 3) + (i >> 17));
  for (size_t size : {size_t(0), size_t(1), size_t(7), size_t(8), size_t(63),
                      size_t(64), size_t(65), size_t(1000), size_t(1024),
                      size_t(1025), size_t(5000), size_t(1) << 20,
                      (size_t(1) << 20) + 1, (size_t(2) << 20) + 64,
                      data.size()}) {
    std::string d = data.substr(0, size);
    uint64_t want = reference(d);
    EXPECT_EQ(kiln_artifact_hash(d.data(), d.size()), want) << size;
    // Streamed: each segment in whole blocks, then the rest.
    uint64_t h = KILN_ARTIFACT_HASH_INIT;
    for (size_t at = 0; at < size; at += KILN_ARTIFACT_SEGMENT) {
      size_t n = std::min<size_t>(size - at, KILN_ARTIFACT_SEGMENT);
      kiln_artifact_segment_state s;
      kiln_artifact_segment_init(&s);
      size_t first = n / 2048 * 1024;
      kiln_artifact_segment_update(&s, d.data() + at, first);
      kiln_artifact_segment_update(&s, d.data() + at + first, n - first);
      h = kiln_artifact_fold(h, kiln_artifact_segment_digest(&s));
    }
    EXPECT_EQ(kiln_artifact_finish(h, size), want) << size;
  }
  EXPECT_NE(kiln_artifact_hash("a", 1), kiln_artifact_hash("b", 1));
  // Format 1 (FNV-1a) missed flips of the top bit of two words; any two
  // flips of one bit position in two words change the hash now, and so do
  // two stripes swapped.
  std::string d = data.substr(0, 4096);
  uint64_t base = kiln_artifact_hash(d.data(), d.size());
  for (int bit = 0; bit < 8; ++bit)
    for (size_t a : {size_t(7), size_t(64 + 7), size_t(4000)}) {
      std::string e = d;
      e[a] ^= char(1 << bit);
      e[a + 8] ^= char(1 << bit);
      EXPECT_NE(kiln_artifact_hash(e.data(), e.size()), base) << a << " " << bit;
    }
  std::string swapped = d;
  std::swap_ranges(swapped.begin() + 64, swapped.begin() + 128,
                   swapped.begin() + 256);
  EXPECT_NE(kiln_artifact_hash(swapped.data(), swapped.size()), base);
}

TEST(Open, LargeFileCheckedByThreads) {
  // 40 MiB: two threads at most (16 MiB per thread). Every thread count
  // gives the same answer; a flipped byte in any thread's part is found.
  kiln_test::TempDir dir;
  std::string data(size_t(40) << 20, '\0');
  for (size_t i = 0; i < data.size(); i += 4096)
    data[i] = static_cast<char>(i >> 12);
  std::string path = dir.file("big.so");
  kiln_test::writeFile(path, sealed(data));
  for (int32_t threads : {1, 2, 0}) {
    kiln_model_options options;
    kiln_model_options_init(&options);
    options.num_threads = threads;
    kiln_model *model = nullptr;
    // Intact: the checksum passes and dlopen refuses the non-ELF bytes.
    std::string s = statusString(kiln_model_open(path.c_str(), &options, &model));
    EXPECT_NE(s.find("cannot load model"), std::string::npos) << threads << s;
  }
  for (size_t at : {size_t(5), data.size() / 2 + 3, data.size() - 1}) {
    std::string bad = sealed(data);
    bad[at] ^= 1;
    kiln_test::writeFile(path, bad);
    for (int32_t threads : {1, 2}) {
      kiln_model_options options;
      kiln_model_options_init(&options);
      options.num_threads = threads;
      kiln_model *model = nullptr;
      std::string s =
          statusString(kiln_model_open(path.c_str(), &options, &model));
      EXPECT_NE(s.find("the file is damaged: checksum"), std::string::npos)
          << at << " " << threads << ": " << s;
    }
  }
}

TEST(Open, FormatOneTrailerAsksForARecompile) {
  kiln_test::TempDir dir;
  std::string data = sealed("not a library");
  data.replace(data.size() - 8, 8, "KILNSUM1");
  std::string path = dir.file("old.so");
  kiln_test::writeFile(path, data);
  kiln_model *model = nullptr;
  std::string s = statusString(kiln_model_open(path.c_str(), nullptr, &model));
  EXPECT_NE(s.find("format 1, written by an older kiln: compile the model "
                   "again"),
            std::string::npos)
      << s;
}

TEST(Open, OnlyRegularFiles) {
  kiln_test::TempDir dir;
  std::string fifo = dir.file("model.so");
  ASSERT_EQ(mkfifo(fifo.c_str(), 0600), 0);
  kiln_model *model = nullptr;
  // Must return at once (a blocking open would wait for a writer forever).
  EXPECT_EQ(statusString(kiln_model_open(fifo.c_str(), nullptr, &model)),
            "INVALID_ARGUMENT: cannot open model '" + fifo +
                "': it is not a regular file (a FIFO, socket or device)");
  EXPECT_EQ(statusString(kiln_model_open("/dev/null", nullptr, &model)),
            "INVALID_ARGUMENT: cannot open model '/dev/null': it is not a "
            "regular file (a FIFO, socket or device)");
}

TEST(Open, HugeScratchIsRefused) {
  // A scratch size near SIZE_MAX once wrapped to a 0-byte arena when rounded
  // up to huge pages; it must be an error, never a small arena.
  kiln_model_desc desc = *fake_add_descriptor();
  for (uint64_t size : {UINT64_C(0xffffffffffffff00),
                        UINT64_MAX - (UINT64_C(2) << 20) + 1,
                        UINT64_C(1) << 62}) {
    kiln_memory_need need = desc.memory_needs[0];
    need.size = size;
    desc.memory_needs = &need;
    kiln_model *model = nullptr;
    kiln_model_options options;
    kiln_model_options_init(&options);
    options.num_threads = 1;
    std::string s =
        statusString(kiln_model_open_descriptor(&desc, &options, &model));
    EXPECT_TRUE(s.rfind("INVALID_ARGUMENT: ", 0) == 0 ||
                s.rfind("OUT_OF_MEMORY: ", 0) == 0)
        << size << ": " << s;
    EXPECT_EQ(model, nullptr) << size;
    desc = *fake_add_descriptor();
  }
}

TEST(Open, ModelNeedingExportedRuntimeSymbol) {
  // fake_model_symbol calls the kiln_parallel_for symbol; this test binary
  // does not export it (kiln-run does), so dlopen reports it.
  kiln_model *model = nullptr;
  std::string s = statusString(kiln_model_open(
      modelPath("fake_model_symbol").c_str(), nullptr, &model));
  EXPECT_NE(s.find("undefined symbol: kiln_parallel_for"), std::string::npos)
      << s;
}

TEST(Open, AbiVersionMismatch) {
  kiln_model *model = nullptr;
  std::string path = modelPath("fake_model_abi99");
  EXPECT_EQ(statusString(kiln_model_open(path.c_str(), nullptr, &model)),
            "UNSUPPORTED: " + path +
                ": model 'fake_add' was built for model ABI version 99, but "
                "this runtime supports version 3; recompile the model with a "
                "matching kiln or link a matching runtime");
  kiln_model_desc desc = *fake_add_descriptor();
  desc.abi_version = 0;
  EXPECT_EQ(statusString(kiln_model_open_descriptor(&desc, nullptr, &model)),
            "UNSUPPORTED: model 'fake_add' was built for model ABI version 0, "
            "but this runtime supports version 3; recompile the model with a "
            "matching kiln or link a matching runtime");
}

TEST(Open, AbiVersion1ModelIsRefused) {
  // A model in the version-1 layout (fake_model_v1.c): only its version and
  // name are read.
  kiln_model *model = nullptr;
  std::string path = modelPath("fake_model_v1");
  EXPECT_EQ(statusString(kiln_model_open(path.c_str(), nullptr, &model)),
            "UNSUPPORTED: " + path +
                ": model 'old_model' was built for model ABI version 1, but "
                "this runtime supports version 3; recompile the model with a "
                "matching kiln or link a matching runtime");
  EXPECT_EQ(model, nullptr);
}

TEST(Open, UnknownCpuFeature) {
  kiln_model_desc desc = *fake_add_descriptor();
  desc.cpu = "znver5";
  desc.cpu_features = "sse2, +no-such-feature";
  kiln_model *model = nullptr;
#if defined(__x86_64__) || defined(__i386__)
  EXPECT_EQ(statusString(kiln_model_open_descriptor(&desc, nullptr, &model)),
            "UNSUPPORTED: cannot run model 'fake_add' (compiled for cpu "
            "'znver5'): unknown CPU feature 'no-such-feature': this runtime "
            "cannot check it (the model's cpu_features are \"sse2, "
            "+no-such-feature\")");
#else
  EXPECT_EQ(statusString(kiln_model_open_descriptor(&desc, nullptr, &model)), "OK");
  kiln_model_close(model);
#endif
}

TEST(Open, CpuFeatures) {
#if defined(__x86_64__)
  // Baseline x86-64 features, in LLVM's "+a,-b" form too.
  EXPECT_EQ(statusString(kiln_cpu_check_features("+sse,+sse2,-avx512f,,cx8")),
            "OK");
  EXPECT_EQ(kiln_cpu_has_feature("sse2"), 1);
  EXPECT_EQ(kiln_cpu_has_feature("avx42"), -1);
  EXPECT_EQ(kiln_cpu_has_feature("avx2"), __builtin_cpu_supports("avx2") ? 1 : 0);
  EXPECT_EQ(kiln_cpu_has_feature("avx512f"),
            __builtin_cpu_supports("avx512f") ? 1 : 0);
  EXPECT_EQ(kiln_cpu_has_feature("fma"), __builtin_cpu_supports("fma") ? 1 : 0);
  // One feature from each cpuid leaf read (1, 7, 7.1, 0x80000001), against
  // the compiler's own detection.
  EXPECT_EQ(kiln_cpu_has_feature("f16c"), __builtin_cpu_supports("f16c") ? 1 : 0);
  EXPECT_EQ(kiln_cpu_has_feature("bmi2"), __builtin_cpu_supports("bmi2") ? 1 : 0);
  EXPECT_EQ(kiln_cpu_has_feature("avx512bw"),
            __builtin_cpu_supports("avx512bw") ? 1 : 0);
  EXPECT_EQ(kiln_cpu_has_feature("avx512vnni"),
            __builtin_cpu_supports("avx512vnni") ? 1 : 0);
  EXPECT_EQ(kiln_cpu_has_feature("avx512bf16"),
            __builtin_cpu_supports("avx512bf16") ? 1 : 0);
  EXPECT_EQ(kiln_cpu_has_feature("sse4a"), __builtin_cpu_supports("sse4a") ? 1 : 0);
  if (!__builtin_cpu_supports("avx512f")) {
    // This CPU really lacks AVX-512: a model needing it must not open.
    kiln_model_desc desc = *fake_add_descriptor();
    desc.cpu = "skylake-avx512";
    desc.cpu_features = "avx2,avx512f,avx512bw";
    kiln_model *model = nullptr;
    EXPECT_EQ(statusString(kiln_model_open_descriptor(&desc, nullptr, &model)),
              "UNSUPPORTED: cannot run model 'fake_add' (compiled for cpu "
              "'skylake-avx512'): this CPU lacks the features the model was "
              "compiled for: avx512f, avx512bw");
  } else {
    GTEST_LOG_(INFO) << "this CPU has AVX-512: the missing-feature case is "
                        "covered by UnknownCpuFeature only";
  }
#else
  GTEST_SKIP() << "CPU features are only checked on x86";
#endif
}

TEST(Open, MalformedDescriptor) {
  kiln_model *model = nullptr;
  const kiln_model_desc base = *fake_add_descriptor();
  auto open = [&](const kiln_model_desc &desc) {
    model = nullptr;
    std::string s =
        statusString(kiln_model_open_descriptor(&desc, nullptr, &model));
    EXPECT_EQ(model, nullptr) << s;
    return s;
  };
  const std::string bad =
      "INVALID_ARGUMENT: malformed descriptor of model 'fake_add': ";

  kiln_model_desc desc = base;
  desc.executables = nullptr;
  EXPECT_EQ(open(desc), bad + "1 executables but no executable array");
  desc = base;
  kiln_executable_desc exe = base.executables[0];
  exe.entry = nullptr;
  desc.executables = &exe;
  EXPECT_EQ(open(desc),
            bad + "host executable 0 needs exactly one entry function, has "
                  "none");
  exe = base.executables[0];
  exe.format = 9;
  EXPECT_EQ(open(desc), bad + "executable 0 has unknown format 9");

  // A host executable's kernel table (profiles): body pointers and names,
  // as many of each; anything else is malformed.
  static const char *const kernelNames[] = {"mm1, relu1", nullptr};
  static void *const bodies[] = {(void *)&fake_add_descriptor, nullptr};
  exe = base.executables[0];
  exe.kernel_names = kernelNames;
  EXPECT_EQ(open(desc), bad + "host executable 0 has device code");
  exe.num_kernels = 1;
  EXPECT_EQ(open(desc), bad + "host executable 0 has 1 kernels but not a "
                              "table of as many body pointers and names");
  exe.data = bodies;
  exe.size = sizeof(void *);
  EXPECT_EQ(statusString(kiln_model_open_descriptor(&desc, nullptr, &model)),
            "OK");
  kiln_model_close(model);
  exe.size = 2 * sizeof(void *);
  EXPECT_EQ(open(desc), bad + "host executable 0 has 1 kernels but not a "
                              "table of as many body pointers and names");
  exe.num_kernels = 2;
  EXPECT_EQ(open(desc), bad + "kernel 1 of host executable 0 has no name");
  exe = base.executables[0];
  desc = base;
  desc.entry_executable = 3;
  EXPECT_EQ(open(desc), bad + "entry executable 3 is not a host executable "
                              "(the model has 1 executables)");
  desc.entry_executable = KILN_NO_EXECUTABLE;
  EXPECT_EQ(open(desc), bad + "no entry executable and no dispatches");

  // Symbols: a dim naming a symbol the model does not have, NULL arrays,
  // bounds, a missing shape function.
  desc = base;
  const int64_t symbolic[] = {KILN_DIM_SYMBOL(0), 3};
  kiln_tensor_desc inputs[2] = {base.inputs[0], base.inputs[1]};
  inputs[0].shape = symbolic;
  desc.inputs = inputs;
  EXPECT_EQ(open(desc), bad + "dim 0 of input 'a' names symbol 0, but the "
                              "model has 0 symbols");
  desc.num_symbols = 1;
  EXPECT_EQ(open(desc), bad + "1 symbols but no symbol array");
  kiln_dim_symbol symbol = {"batch", 4, 2};
  desc.symbols = &symbol;
  EXPECT_EQ(open(desc), bad + "symbol 'batch' has bounds [4, 2]");
  symbol = {"batch", 1, KILN_DIM_UNBOUNDED};
  EXPECT_EQ(open(desc), bad + "1 symbols and no shape function");
  desc.inputs = nullptr;
  EXPECT_EQ(open(desc), bad + "1 symbols and no shape function");
  desc.shape_fn = [](int64_t *, int64_t *const *, uint64_t *,
                     uint64_t *) -> kiln_model_status { return 0; };
  EXPECT_EQ(open(desc), bad + "2 inputs but no input array");
  desc.inputs = inputs;
  EXPECT_EQ(open(desc), bad + "host executable 0 has a static entry, but the "
                              "model has 1 symbols");
  kiln_executable_desc dynamic = base.executables[0];
  dynamic.entry = nullptr;
  dynamic.dynamic_entry = [](int64_t *, void *const *, void *const *,
                             void *, kiln_exec_context *) -> kiln_model_status {
    return 0;
  };
  desc.executables = &dynamic;
  // Well formed, and a host model with symbols runs (docs/dynamic-shapes.md).
  EXPECT_EQ(statusString(kiln_model_open_descriptor(&desc, nullptr, &model)),
            "OK");
  kiln_model_close(model);
  // A symbol no input binds would need the shape function to compute it.
  inputs[0].shape = base.inputs[0].shape;
  EXPECT_EQ(open(desc),
            "UNSUPPORTED: model 'fake_add': symbol 'batch' is in no input's "
            "dims; symbols computed by the shape function are not supported "
            "yet by this runtime");

  // A device executable and a dispatch into it: well formed, unsupported.
  desc = base;
  static const unsigned char ptx[] = ".version 8.0\n";
  static const char *const kernels[] = {"add_kernel"};
  kiln_executable_desc exes[2] = {base.executables[0], {}};
  exes[1].format = KILN_EXECUTABLE_PTX;
  exes[1].target = "sm_80";
  exes[1].data = ptx;
  exes[1].size = sizeof(ptx);
  exes[1].num_kernels = 1;
  exes[1].kernel_names = kernels;
  kiln_binding_desc bindings[2] = {{KILN_BINDING_INPUT, 0, 0, 0, 0, 0},
                                   {KILN_BINDING_OUTPUT, 0, 0, 0, 0, 0}};
  kiln_dispatch_desc dispatch = {};
  dispatch.executable = 1;
  dispatch.workgroup_count[0] = 1;
  dispatch.num_bindings = 2;
  dispatch.bindings = bindings;
  desc.num_executables = 2;
  desc.executables = exes;
  desc.num_dispatches = 1;
  desc.dispatches = &dispatch;
  EXPECT_EQ(open(desc), "UNSUPPORTED: model 'fake_add' has a host entry and "
                        "1 dispatches: host code between device dispatches is "
                        "not supported yet by this runtime");
  bindings[1].index = 5;
  EXPECT_EQ(open(desc), bad + "dispatch 0 binds index 5 of 2");
  bindings[1].index = 0;
  dispatch.kernel = 1;
  EXPECT_EQ(open(desc), bad + "dispatch 0 names kernel 1 of 1");
  dispatch.kernel = 0;
  dispatch.executable = 0;
  EXPECT_EQ(open(desc), bad + "dispatch 0 names executable 0, which is no "
                              "device executable");
  dispatch.executable = 1;
  dispatch.bindings = nullptr;
  EXPECT_EQ(open(desc), bad + "dispatch 0 has a count without its array");
  dispatch.bindings = bindings;
  exes[1].data = nullptr;
  EXPECT_EQ(open(desc), bad + "ptx executable 1 has no code");
  exes[1].data = ptx;
  exes[1].kernel_names = nullptr;
  EXPECT_EQ(open(desc), bad + "ptx executable 1 has 1 kernels but no names");
  exes[1].kernel_names = kernels;
  desc.dispatches = nullptr;
  EXPECT_EQ(open(desc), bad + "1 dispatches but no dispatch array");

  // Memory needs.
  desc = base;
  kiln_memory_need needs[2] = {base.memory_needs[0], base.memory_needs[0]};
  desc.memory_needs = needs;
  desc.num_memory_needs = 2;
  EXPECT_EQ(open(desc), bad + "more than one host-scratch memory need");
  needs[1].kind = KILN_MEMORY_DEVICE_LOCAL;
  EXPECT_EQ(open(desc), "UNSUPPORTED: model 'fake_add' needs device-local "
                        "memory, but has no dispatches that could use it");
  needs[1].kind = 17;
  EXPECT_EQ(open(desc), bad + "memory need 1 has unknown kind 17");
  needs[1] = base.memory_needs[0];
  needs[1].kind = KILN_MEMORY_DEVICE_CONSTANT;
  EXPECT_EQ(open(desc), bad + "memory need 1 (device-constant) lacks initial "
                              "data");
  needs[0].alignment = 48;
  EXPECT_EQ(open(desc), bad + "memory need 0 has alignment 48, not a power "
                              "of two");
  desc.memory_needs = nullptr;
  EXPECT_EQ(open(desc), bad + "2 memory needs but no array");

  // Tensors and the rest.
  desc = base;
  inputs[0] = base.inputs[0];
  inputs[1].dtype = 8; // ONNX STRING
  desc.inputs = inputs;
  EXPECT_EQ(open(desc), "UNSUPPORTED: model 'fake_add': input 'b' has element "
                        "type 8, which this runtime does not support");
  inputs[1] = base.inputs[1];
  inputs[1].name = nullptr;
  EXPECT_EQ(open(desc), bad + "input 1 has no name");
  inputs[1] = base.inputs[1];
  inputs[1].shape = nullptr;
  EXPECT_EQ(open(desc), bad + "input 'b' has rank 2 and no shape");
  desc = base;
  desc.check_messages = nullptr;
  EXPECT_EQ(open(desc), bad + "2 check messages but no array");
  desc = base;
  desc.flags = 4;
  EXPECT_EQ(open(desc), "UNSUPPORTED: model 'fake_add' has flags 0x4, which "
                        "this runtime does not know");
  EXPECT_EQ(statusString(kiln_model_open_descriptor(nullptr, nullptr, &model)),
            "INVALID_ARGUMENT: the model descriptor is NULL");
}

} // namespace
