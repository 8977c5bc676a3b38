/* A hand-written stand-in for a model compiled by kiln for Vulkan, used by
 * the Vulkan runtime tests through kiln_model_open and kiln-run. It follows
 * model_abi.h as a Vulkan artifact must (docs/gpu.md): no host entry, one
 * SPIR-V executable (spirv/elementwise.spvasm, embedded by the build as
 * elementwise_spv.h), two dispatches, one device-constant and one
 * device-local memory need:
 *
 *   inputs  "a" float32 [2,3], "b" float32 [2,3]
 *   outputs "sum" float32 [2,3]  = (a + b) * w, w = {1, 2, 3, 4, 5, 6}
 *           (add into the arena, then mul with the weights) */
#include <stdint.h>

#include "kiln/model_abi.h"

#include "elementwise_spv.h" /* kElementwiseSpv */

#define EXPORT __attribute__((visibility("default")))

static const int64_t kShape23[] = {2, 3};
static const kiln_tensor_desc kInputs[] = {
    {"a", KILN_DTYPE_FLOAT32, 2, kShape23},
    {"b", KILN_DTYPE_FLOAT32, 2, kShape23},
};
static const kiln_tensor_desc kOutputs[] = {
    {"sum", KILN_DTYPE_FLOAT32, 2, kShape23},
};
static const char *const kKernels[] = {"add", "mul", "scale"};
static const kiln_executable_desc kExecutables[] = {
    {KILN_EXECUTABLE_SPIRV, 0, "vulkan1.1", 0, 0, kElementwiseSpv,
     sizeof(kElementwiseSpv), 3, kKernels},
};
static const float kWeights[6] = {1, 2, 3, 4, 5, 6};
static const kiln_memory_need kNeeds[] = {
    {KILN_MEMORY_DEVICE_CONSTANT, 0, sizeof(kWeights), 256, kWeights},
    {KILN_MEMORY_DEVICE_LOCAL, 0, 512, 256, 0},
};
static const kiln_binding_desc kAddBindings[] = {
    {KILN_BINDING_INPUT, 0, 0, 0, 0, 0},
    {KILN_BINDING_INPUT, 1, 0, 0, 0, 0},
    {KILN_BINDING_MEMORY, 1, 0, 0, 256, 24},
};
static const kiln_binding_desc kMulBindings[] = {
    {KILN_BINDING_MEMORY, 1, 0, 0, 256, 24},
    {KILN_BINDING_MEMORY, 0, 0, 0, 0, 0},
    {KILN_BINDING_OUTPUT, 0, 0, 0, 0, 0},
};
static const uint32_t kCount[] = {6};
static const kiln_dispatch_desc kDispatches[] = {
    {0, 0, {1, 1, 1}, 0, {64, 1, 1}, 0, 3, kAddBindings, 1, kCount, 0, 0},
    {0, 1, {1, 1, 1}, 0, {64, 1, 1}, 0, 3, kMulBindings, 1, kCount, 0, 0},
};

static const kiln_model_desc kDesc = {
    .abi_version = KILN_MODEL_ABI_VERSION,
    .name = "fake_vulkan",
    .producer = "kiln unit tests",
    .target_triple = "x86_64-unknown-linux-gnu",
    .cpu = "",
    .cpu_features = "",
    .num_inputs = 2,
    .num_outputs = 1,
    .inputs = kInputs,
    .outputs = kOutputs,
    .num_executables = 1,
    .executables = kExecutables,
    .entry_executable = KILN_NO_EXECUTABLE,
    .num_dispatches = 2,
    .dispatches = kDispatches,
    .num_memory_needs = 2,
    .memory_needs = kNeeds,
};

EXPORT const kiln_model_desc *kiln_model_descriptor(void) { return &kDesc; }
