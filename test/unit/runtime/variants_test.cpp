// Multi-variant artifacts: the variant table (kiln_artifact_desc) and how the
// runtime picks from it (options.cpu_variant, KILN_CPU, the CPU's features,
// KILN_CPU_DISABLE to stand in for a smaller CPU).
#include "kiln/runtime.h"
#include "kiln/runtime.hpp"
#include "test_util.h"

#include <gtest/gtest.h>

#include <cstdlib>
#include <string>

using kiln_test::statusString;

extern "C" const kiln_model_desc *fake_add_descriptor(void);

namespace {

// A feature the tests can take away with KILN_CPU_DISABLE, per architecture
// (elsewhere the runtime checks no feature and these tests do not apply).
#if defined(__x86_64__)
constexpr const char *kFeature = "avx2";
constexpr const char *kFeatureGlob = "avx*";
#define KILN_TEST_CHECKS_FEATURES 1
#elif defined(__aarch64__) && defined(__linux__)
constexpr const char *kFeature = "neon";
constexpr const char *kFeatureGlob = "ne*";
#define KILN_TEST_CHECKS_FEATURES 1
#else
constexpr const char *kFeature = "";
constexpr const char *kFeatureGlob = "";
#endif

kiln_model_desc gWide, gBase;
const kiln_model_desc *wideDescriptor(void) { return &gWide; }
const kiln_model_desc *baseDescriptor(void) { return &gBase; }

kiln_variant_desc gVariants[3];
kiln_artifact_desc gArtifact;

class Variants : public ::testing::Test {
protected:
  void SetUp() override {
    unsetenv("KILN_CPU");
    unsetenv("KILN_CPU_DISABLE");
    gWide = *fake_add_descriptor();
    gWide.cpu = "wide";
    gWide.cpu_features = kFeature;
    gBase = *fake_add_descriptor();
    gBase.cpu = "base";
    // Most capable first; a variant of a device this runtime does not know
    // sits between them and is skipped (the devices it knows: vulkan_test's
    // MultiDevice).
    gVariants[0] = {"cpu", "wide", kFeature, 0, 0, wideDescriptor};
    gVariants[1] = {"tpu", "gpu", "", 0, 0, wideDescriptor};
    gVariants[2] = {"cpu", "base", "", 0, 0, baseDescriptor};
    gArtifact = {KILN_ARTIFACT_ABI_VERSION, 3, "fake_add", gVariants};
  }
  void TearDown() override {
    unsetenv("KILN_CPU");
    unsetenv("KILN_CPU_DISABLE");
  }

  /// Opens gArtifact; "<variant>" or the status.
  std::string open(const char *cpuVariant = nullptr) {
    kiln_model_options options;
    kiln_model_options_init(&options);
    options.num_threads = 1;
    options.cpu_variant = cpuVariant;
    kiln_model *model = nullptr;
    kiln_status status = kiln_model_open_artifact(&gArtifact, &options, &model);
    if (status)
      return statusString(status);
    std::string variant = kiln_model_variant(model);
    EXPECT_EQ(kiln_model_get_artifact(model), &gArtifact);
    EXPECT_STREQ(kiln_model_name(model), "fake_add");
    kiln_model_close(model);
    return "<" + variant + ">";
  }
};

TEST_F(Variants, PicksTheFirstTheCpuRuns) {
  EXPECT_EQ(open(), kiln_cpu_has_feature(kFeature) == 1 ? "<wide>" : "<base>");
#ifdef KILN_TEST_CHECKS_FEATURES
  // The same table on a CPU without the feature: the next CPU variant.
  setenv("KILN_CPU_DISABLE", kFeature, 1);
  EXPECT_EQ(kiln_cpu_has_feature(kFeature), 0);
  EXPECT_EQ(open(), "<base>");
  EXPECT_EQ(kiln_artifact_default_model(&gArtifact), &gBase);
  setenv("KILN_CPU_DISABLE", kFeatureGlob, 1);
  EXPECT_EQ(open(), "<base>");
#endif
}

TEST_F(Variants, ForcedByOptionOrEnvironment) {
  EXPECT_EQ(open("base"), "<base>");
  setenv("KILN_CPU", "base", 1);
  EXPECT_EQ(open(), "<base>");
  EXPECT_EQ(kiln_artifact_default_model(&gArtifact), &gBase);
  // The option wins over the environment.
  if (kiln_cpu_has_feature(kFeature) == 1)
    EXPECT_EQ(open("wide"), "<wide>");
  setenv("KILN_CPU", "nope", 1);
  EXPECT_EQ(open(), "INVALID_ARGUMENT: model 'fake_add' has no CPU variant "
                    "'nope' (chosen by KILN_CPU); its variants: wide, gpu, "
                    "base");
  unsetenv("KILN_CPU");
  // A device variant is not a CPU variant.
  EXPECT_EQ(open("gpu"), "INVALID_ARGUMENT: model 'fake_add' has no CPU "
                         "variant 'gpu' (chosen by options.cpu_variant); its "
                         "variants: wide, gpu, base");
#ifdef KILN_TEST_CHECKS_FEATURES
  setenv("KILN_CPU_DISABLE", kFeature, 1);
  EXPECT_EQ(open("wide"),
            std::string("UNSUPPORTED: cannot run variant 'wide' of model "
                        "'fake_add' (chosen by options.cpu_variant): this CPU "
                        "lacks the feature the model was compiled for: ") +
                kFeature);
#endif
}

TEST_F(Variants, NoneRuns) {
#ifdef KILN_TEST_CHECKS_FEATURES
  gVariants[2].cpu_features = kFeature;
  setenv("KILN_CPU_DISABLE", kFeature, 1);
  std::string lacks =
      std::string("this CPU lacks the feature the model was compiled for: ") +
      kFeature;
  EXPECT_EQ(open(), "UNSUPPORTED: no variant of model 'fake_add' runs on "
                    "this CPU (wide: " +
                        lacks + "; base: " + lacks + ")");
  // What `<name>_descriptor()` of an object gives then: the most portable,
  // whose open says what is missing.
  EXPECT_EQ(kiln_artifact_default_model(&gArtifact), &gBase);
#else
  GTEST_SKIP() << "no CPU feature is checked on this architecture";
#endif
}

TEST_F(Variants, MalformedTables) {
  kiln_model *model = nullptr;
  EXPECT_EQ(statusString(kiln_model_open_artifact(nullptr, nullptr, &model)),
            "INVALID_ARGUMENT: the artifact descriptor is NULL");
  EXPECT_EQ(kiln_artifact_default_model(nullptr), nullptr);
  gArtifact.abi_version = 99;
  EXPECT_EQ(open(), "UNSUPPORTED: model 'fake_add' has a variant table of "
                    "version 99; this runtime reads version 1 (rebuild the "
                    "model with this kiln, or update the runtime)");
  gArtifact.abi_version = KILN_ARTIFACT_ABI_VERSION;
  gArtifact.num_variants = 0;
  EXPECT_EQ(open(),
            "INVALID_ARGUMENT: model 'fake_add': its variant table is empty");
  gArtifact.num_variants = 3;
  gVariants[1].descriptor = nullptr;
  EXPECT_EQ(open(), "INVALID_ARGUMENT: model 'fake_add': variant 1 of its "
                    "table lacks its device, name, cpu_features or "
                    "descriptor");
  EXPECT_EQ(model, nullptr);
}

TEST_F(Variants, PlainDescriptorIsOneVariant) {
  // A model without a table is one variant, named by its cpu.
  kiln_model_options options;
  kiln_model_options_init(&options);
  EXPECT_EQ(options.cpu_variant, nullptr);
  options.num_threads = 1;
  options.cpu_variant = "generic";
  kiln_model *model = nullptr;
  ASSERT_EQ(statusString(
                kiln_model_open_descriptor(fake_add_descriptor(), &options,
                                           &model)),
            "OK");
  EXPECT_STREQ(kiln_model_variant(model), "");
  EXPECT_EQ(kiln_model_get_artifact(model), nullptr);
  kiln_model_close(model);
  options.cpu_variant = "x86-64-v4";
  EXPECT_EQ(statusString(kiln_model_open_descriptor(fake_add_descriptor(),
                                                    &options, &model)),
            "INVALID_ARGUMENT: model 'fake_add' has no CPU variant "
            "'x86-64-v4' (chosen by options.cpu_variant): it has no variant "
            "table and was compiled for cpu 'generic' only (open a "
            "multi-variant model with kiln_model_open or "
            "kiln_model_open_artifact)");
  // KILN_CPU is for tables only: a plain model opens whatever it says.
  setenv("KILN_CPU", "x86-64-v4", 1);
  options.cpu_variant = nullptr;
  ASSERT_EQ(statusString(kiln_model_open_descriptor(fake_add_descriptor(),
                                                    &options, &model)),
            "OK");
  kiln_model_close(model);
}

TEST_F(Variants, CppWrapper) {
  kiln::Options options;
  options.threads = 1;
  options.cpuVariant = "base";
  kiln::Model model = kiln::Model::openArtifact(&gArtifact, options);
  EXPECT_STREQ(model.variant(), "base");
  options.cpuVariant = "nope";
  EXPECT_THROW(kiln::Model::openArtifact(&gArtifact, options), kiln::Error);
}

TEST(CpuDisable, MasksNamedFeaturesOnly) {
#ifdef KILN_TEST_CHECKS_FEATURES
  if (kiln_cpu_has_feature(kFeature) != 1)
    GTEST_SKIP() << "this CPU lacks " << kFeature;
  setenv("KILN_CPU_DISABLE", " foo , bar*", 1);
  EXPECT_EQ(kiln_cpu_has_feature(kFeature), 1);
  setenv("KILN_CPU_DISABLE", kFeatureGlob, 1);
  EXPECT_EQ(kiln_cpu_has_feature(kFeature), 0);
  EXPECT_EQ(kiln_cpu_has_feature("no-such-feature"), -1);
  unsetenv("KILN_CPU_DISABLE");
  EXPECT_EQ(kiln_cpu_has_feature(kFeature), 1);
#else
  GTEST_SKIP() << "no CPU feature is checked on this architecture";
#endif
}

} // namespace
