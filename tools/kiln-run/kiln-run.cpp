//===- kiln-run.cpp - Run a compiled kiln model with only the runtime -----===//
//
// kiln-run model.so [--input NAME=file.npy ...] [--output-dir DIR]
//                   [--threads N] [--repeat N] [--seed S] [--inspect]
//                   [--device auto|cpu|vulkan[:DEVICE]|cuda[:DEVICE]]
// kiln-run model.so --bench [--warmup N] [--duration S | --count N]
//                   [--concurrency N]      (Bench.cpp; what `kiln bench` runs)
//
// Links the kiln runtime and the C++ standard library only (no LLVM/MLIR), so
// loading a model here costs what it costs a user's program. Errors print one
// message on stderr and exit with status 1. See docs/runtime-api.md.
//
//===----------------------------------------------------------------------===//

#include "kiln/runtime.h"
#include "tools/kiln-run/Bench.h"
#include "tools/kiln-run/Npy.h"
#include "tools/kiln-run/Sizes.h"

#include <algorithm>
#include <cctype>
#include <cerrno>
#include <chrono>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <unistd.h>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <map>
#include <memory>
#include <set>
#include <sstream>
#include <stdexcept>
#include <string>
#include <vector>

namespace {

/// Every failure becomes this; main() prints it and exits with 1.
struct Error : std::runtime_error {
  using std::runtime_error::runtime_error;
};

const char *const kUsage =
    "usage: kiln-run MODEL.so [--input NAME=FILE.npy ...] [--output-dir DIR]\n"
    "                [--threads N] [--repeat N] [--seed S] [--device D]\n"
    "       kiln-run MODEL.so --bench [--warmup N] [--duration S | --count N]\n"
    "                [--concurrency N] [--threads N] [--input ...] [--seed S]\n"
    "\n"
    "Runs a model compiled by kiln. Inputs without --input get seeded random\n"
    "data (floats ~standard normal, integers uniform in [0,100), bool 0/1).\n"
    "Prints one line per output: NAME DTYPE [D0,D1,...]; with --output-dir,\n"
    "also writes each output to DIR/NAME.npy (NAME made file-name safe).\n"
    "\n"
    "  --input NAME=FILE.npy  read input NAME from a .npy file (C order, "
    "little\n"
    "                         endian; dtypes f2 f4 f8 i1 i2 i4 i8 u1 u2 u4 u8 "
    "b1;\n"
    "                         a bfloat16 input takes ml_dtypes' bfloat16,\n"
    "                         which numpy saves as V2, or u2 bit patterns;\n"
    "                         bfloat16 outputs are written as V2; float8,\n"
    "                         float4e2m1, int4, uint4, int2, uint2 inputs\n"
    "                         take V1 or u1 (one element per byte, as\n"
    "                         ml_dtypes), outputs are V1)\n"
    "  --output-dir DIR       write outputs as .npy files (created if "
    "missing)\n"
    "  --threads N            threads, caller included (default 0 = one per "
    "CPU)\n"
    "  --repeat N             run once to warm up, then N timed runs; print\n"
    "                         latency_ms median=X min=Y max=Z (N runs, T "
    "threads)\n"
    "  --seed S               seed for the random inputs (default 0)\n"
    "  --dim SYMBOL=SIZE      a symbolic dim's size for the random inputs\n"
    "                         (default: what an --input file gives it, else\n"
    "                         its minimum; docs/dynamic-shapes.md)\n"
    "  --device D             where the model runs: auto (default: the first "
    "of\n"
    "                         cuda, hip, vulkan, cpu the model holds and "
    "this\n"
    "                         machine runs; KILN_DEVICE overrides it), cpu,\n"
    "                         vulkan, vulkan:DEVICE, cuda, cuda:DEVICE, hip or\n"
    "                         hip:DEVICE (a device index\n"
    "                         or part of its name; see KILN_VULKAN_DEVICE,\n"
    "                         KILN_CUDA_DEVICE in docs/gpu.md), or a list\n"
    "                         tried in order (vulkan,cpu)\n"
    "  --sizes                with --inspect: code, weights and scratch "
    "bytes,\n"
    "                         per section and per kernel\n"
    "  --inspect              print the descriptor, open_ms (time spent in\n"
    "                         kiln_model_open) and ready_ns (the steady clock\n"
    "                         when the model was ready, for tools that time "
    "the\n"
    "                         process) instead of running\n"
    "  --no-ready-ns          with --inspect: leave ready_ns out (kiln "
    "inspect)\n"
    "  --bench                benchmark (what `kiln bench` runs): print "
    "latency\n"
    "                         percentiles (latency_ms p50= p90= p99=) and\n"
    "                         throughput_per_s instead of the outputs\n"
    "  --warmup N             untimed runs per concurrent caller (default 10)\n"
    "  --duration S           seconds of timed runs (default 3)\n"
    "  --count N              timed runs in all, instead of a duration\n"
    "  --concurrency N        concurrent callers, a run context each (default "
    "1)\n"
    "  --profile FILE         write a Chrome trace of the runs' kernels "
    "(parallel\n"
    "                         loops, named by their ONNX nodes) to FILE at "
    "exit;\n"
    "                         - prints the kernels taking the most time "
    "instead\n"
    "                         (the same as KILN_PROFILE=FILE, docs/tools.md)\n";

//===----------------------------------------------------------------------===//
// Helpers
//===----------------------------------------------------------------------===//

std::string shapeString(const int64_t *shape, int32_t rank) {
  std::string s = "[";
  for (int32_t i = 0; i < rank; ++i) {
    if (i)
      s += ",";
    s += std::to_string(shape[i]);
  }
  return s + "]";
}

/// Owns a kiln_status and throws its message.
void check(kiln_status status, const std::string &context = "") {
  if (!status)
    return;
  std::string message = kiln_status_message(status);
  kiln_status_free(status);
  throw Error(context.empty() ? message : context + ": " + message);
}

uint64_t parseUnsigned(const std::string &flag, const std::string &text,
                       uint64_t max) {
  if (text.empty() || text.find_first_not_of("0123456789") != std::string::npos)
    throw Error("invalid value '" + text + "' for " + flag +
                ": expected a non-negative integer");
  errno = 0;
  unsigned long long value = std::strtoull(text.c_str(), nullptr, 10);
  if (errno == ERANGE || value > max)
    throw Error("value '" + text + "' for " + flag + " is too large");
  return value;
}

//===----------------------------------------------------------------------===//
// .npy files
//===----------------------------------------------------------------------===//

using Array = kiln_run::NpyArray;
using kiln_run::npyCode;

/// A .npy file's array; its errors become kiln-run's.
Array readNpy(const std::string &path) {
  try {
    return kiln_run::readNpyFile(path);
  } catch (const kiln_run::NpyError &e) {
    throw Error(e.what());
  }
}

std::string npyDescr(kiln_dtype dtype) {
  std::string code = npyCode(dtype);
  if (code.empty())
    throw Error(std::string("cannot write dtype ") + kiln_dtype_name(dtype) +
                " to .npy");
  return (kiln_dtype_size(dtype) == 1 ? "|" : "<") + code;
}

void writeNpy(const std::string &path, kiln_dtype dtype, const int64_t *shape,
              int32_t rank, const void *data, size_t size) {
  std::string dims = "(";
  for (int32_t i = 0; i < rank; ++i)
    dims += std::to_string(shape[i]) + (rank == 1 ? "," : i + 1 < rank ? ", " : "");
  dims += ")";
  std::string header = "{'descr': '" + npyDescr(dtype) +
                       "', 'fortran_order': False, 'shape': " + dims + ", }";
  // Pad with spaces so that data starts at a multiple of 64; end with '\n'.
  size_t total = 10 + header.size() + 1;
  header.append((64 - total % 64) % 64, ' ');
  header += '\n';
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  if (!out)
    throw Error("cannot create '" + path + "': " + std::strerror(errno));
  unsigned char prefix[10] = {0x93, 'N', 'U', 'M', 'P', 'Y', 1, 0,
                              (unsigned char)(header.size() & 0xff),
                              (unsigned char)(header.size() >> 8)};
  out.write((const char *)prefix, sizeof(prefix));
  out.write(header.data(), (std::streamsize)header.size());
  out.write((const char *)data, (std::streamsize)size);
  out.close();
  if (!out)
    throw Error("cannot write '" + path + "'");
}

/// An output name as a file name: characters outside [A-Za-z0-9._-] become
/// '_', a leading '.' becomes '_' (so no hidden files, no "." or ".."), an
/// empty name becomes "output_<index>", names are cut at 200 bytes, and a name
/// taken by an earlier output gets "_<index>" appended.
std::string safeFileStem(const std::string &name, size_t index,
                         std::set<std::string> &taken) {
  std::string stem;
  for (char c : name.substr(0, 200)) {
    bool ok = std::isalnum((unsigned char)c) || c == '_' || c == '-' || c == '.';
    stem += ok ? c : '_';
  }
  if (!stem.empty() && stem[0] == '.')
    stem[0] = '_';
  if (stem.empty())
    stem = "output_" + std::to_string(index);
  while (taken.count(stem))
    stem += "_" + std::to_string(index);
  taken.insert(stem);
  return stem;
}

//===----------------------------------------------------------------------===//
// Random inputs
//===----------------------------------------------------------------------===//

/// splitmix64: small, fast, and the same stream on every platform.
class Random {
public:
  explicit Random(uint64_t seed) : state(seed) {}
  uint64_t next() {
    uint64_t z = (state += 0x9E3779B97F4A7C15ull);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    return z ^ (z >> 31);
  }
  /// Uniform in (0, 1].
  double uniform() { return ((next() >> 11) + 1) * (1.0 / 9007199254740992.0); }
  /// Approximately standard normal: the sum of 12 uniforms minus 6 (mean 0,
  /// variance 1, within +-6). Integer and float adds only, so the stream is
  /// bit-identical on every platform (libm's log and cos are not), and
  /// kiln-run needs no libm, whose loading was ~1/10 of its start-up.
  double normal() {
    double sum = 0;
    for (int i = 0; i < 12; ++i)
      sum += uniform();
    return sum - 6.0;
  }

private:
  uint64_t state;
};

uint16_t floatToHalf(float value) {
  uint32_t f;
  std::memcpy(&f, &value, 4);
  uint32_t sign = (f >> 16) & 0x8000u;
  int32_t exp = (int32_t)((f >> 23) & 0xff) - 127 + 15;
  uint32_t mant = f & 0x7fffffu;
  if (((f >> 23) & 0xff) == 0xff) // inf / nan
    return (uint16_t)(sign | 0x7c00u | (mant ? 0x200u : 0));
  if (exp >= 31)
    return (uint16_t)(sign | 0x7c00u);
  if (exp <= 0) {
    if (exp < -10)
      return (uint16_t)sign;
    mant |= 0x800000u;
    uint32_t shift = (uint32_t)(14 - exp);
    uint32_t half = mant >> shift;
    uint32_t rest = mant & ((1u << shift) - 1), mid = 1u << (shift - 1);
    if (rest > mid || (rest == mid && (half & 1)))
      ++half;
    return (uint16_t)(sign | half);
  }
  uint32_t half = sign | ((uint32_t)exp << 10) | (mant >> 13);
  uint32_t rest = mant & 0x1fffu;
  if (rest > 0x1000u || (rest == 0x1000u && (half & 1)))
    ++half; // may carry into the exponent, which is the right rounding
  return (uint16_t)half;
}

uint16_t floatToBfloat16(float value) {
  uint32_t f;
  std::memcpy(&f, &value, 4);
  if ((f & 0x7fffffffu) > 0x7f800000u)
    return (uint16_t)((f >> 16) | 0x40);
  f += 0x7fffu + ((f >> 16) & 1);
  return (uint16_t)(f >> 16);
}

void fillRandom(kiln_dtype dtype, size_t count, unsigned char *out,
                Random &random) {
  for (size_t i = 0; i < count; ++i) {
    switch (dtype) {
    case KILN_DTYPE_FLOAT32: {
      float v = (float)random.normal();
      std::memcpy(out + 4 * i, &v, 4);
      break;
    }
    case KILN_DTYPE_FLOAT64: {
      double v = random.normal();
      std::memcpy(out + 8 * i, &v, 8);
      break;
    }
    case KILN_DTYPE_FLOAT16: {
      uint16_t v = floatToHalf((float)random.normal());
      std::memcpy(out + 2 * i, &v, 2);
      break;
    }
    case KILN_DTYPE_BFLOAT16: {
      uint16_t v = floatToBfloat16((float)random.normal());
      std::memcpy(out + 2 * i, &v, 2);
      break;
    }
    case KILN_DTYPE_BOOL:
      out[i] = (unsigned char)(random.next() >> 63);
      break;
    default: { // integers: uniform in [0, 100), little-endian
      uint64_t v = random.next() % 100;
      size_t size = kiln_dtype_size(dtype);
      for (size_t b = 0; b < size; ++b)
        out[size * i + b] = (unsigned char)(v >> (8 * b));
      break;
    }
    }
  }
}

//===----------------------------------------------------------------------===//
// main
//===----------------------------------------------------------------------===//

struct Options {
  std::string model;
  std::vector<std::pair<std::string, std::string>> inputs; // name, file
  /// --dim NAME=V: a symbol's value for the random inputs (default: the value
  /// a --input file gives it, else its minimum).
  std::map<std::string, int64_t> dims;
  std::string outputDir;
  int32_t threads = 0;
  std::string device; ///< options.device; empty = auto
  uint64_t repeat = 0;
  uint64_t seed = 0;
  bool inspect = false; ///< print the descriptor instead of running
  bool readyNs = true;  ///< --inspect prints the ready clock
  bool sizes = false;   ///< with --inspect: where the artifact's bytes go
  bool bench = false;   ///< benchmark instead of printing outputs
  std::vector<std::string> benchFlags; ///< given, to refuse them without --bench
  kiln_run::BenchOptions benchOptions;
  std::string profile; ///< --profile: KILN_PROFILE for the runtime
};

double parseSeconds(const std::string &flag, const std::string &value) {
  char *end = nullptr;
  errno = 0;
  double v = std::strtod(value.c_str(), &end);
  if (value.empty() || *end || errno || !(v > 0) || v > 1e6)
    throw Error(flag + " expects a number of seconds > 0, got '" + value + "'");
  return v;
}

Options parseArgs(int argc, char **argv) {
  Options options;
  for (int i = 1; i < argc; ++i) {
    std::string arg = argv[i];
    if (arg == "-h" || arg == "--help") {
      std::fputs(kUsage, stdout);
      std::exit(0);
    }
    if (arg == "--sizes") {
      options.sizes = true;
      continue;
    }
    if (arg == "--inspect") {
      options.inspect = true;
      continue;
    }
    if (arg == "--no-ready-ns") {
      options.readyNs = false;
      continue;
    }
    if (arg == "--bench") {
      options.bench = true;
      continue;
    }
    if (arg.size() > 1 && arg[0] == '-') {
      std::string flag = arg, value;
      size_t eq = arg.find('=');
      bool inlineValue = arg.rfind("--", 0) == 0 && eq != std::string::npos;
      if (inlineValue) {
        flag = arg.substr(0, eq);
        value = arg.substr(eq + 1);
      }
      static const std::set<std::string> known = {
          "--input",  "--output-dir", "--threads",    "--repeat",
          "--seed",   "--warmup",     "--duration",   "--count",
          "--concurrency", "--device", "--profile", "--dim"};
      if (!known.count(flag))
        throw Error("unknown option '" + flag + "' (see kiln-run --help)");
      if (!inlineValue) {
        if (i + 1 >= argc)
          throw Error("option '" + flag + "' needs a value");
        value = argv[++i];
      }
      if (flag == "--input") {
        size_t sep = value.find('=');
        if (sep == std::string::npos || sep == 0 || sep + 1 == value.size())
          throw Error("--input expects NAME=FILE.npy, got '" + value + "'");
        options.inputs.emplace_back(value.substr(0, sep), value.substr(sep + 1));
      } else if (flag == "--dim") {
        size_t sep = value.find('=');
        if (sep == std::string::npos || sep == 0 || sep + 1 == value.size())
          throw Error("--dim expects SYMBOL=SIZE, got '" + value + "'");
        options.dims[value.substr(0, sep)] =
            (int64_t)parseUnsigned("--dim", value.substr(sep + 1), INT64_MAX);
      } else if (flag == "--profile") {
        if (value.empty())
          throw Error("--profile needs a file name (or - for a summary)");
        options.profile = value;
      } else if (flag == "--output-dir") {
        if (value.empty())
          throw Error("--output-dir needs a directory");
        options.outputDir = value;
      } else if (flag == "--device") {
        // One device, or a comma-separated list of them tried in order.
        std::stringstream items(value);
        std::string item;
        bool valid = !value.empty() && value.back() != ',';
        while (valid && std::getline(items, item, ','))
          valid = (item == "auto" && value == "auto") || item == "cpu" ||
                  item == "vulkan" ||
                  (item.rfind("vulkan:", 0) == 0 && item.size() > 7) ||
                  item == "cuda" ||
                  (item.rfind("cuda:", 0) == 0 && item.size() > 5) ||
                  item == "hip" ||
                  (item.rfind("hip:", 0) == 0 && item.size() > 4);
        if (!valid)
          throw Error("--device expects auto, cpu, vulkan, vulkan:DEVICE, "
                      "cuda, cuda:DEVICE, hip, hip:DEVICE or a comma-separated "
                      "list of them, got '" +
                      value + "'");
        options.device = value;
      } else if (flag == "--threads") {
        options.threads = (int32_t)parseUnsigned(flag, value, 4096);
      } else if (flag == "--repeat") {
        options.repeat = parseUnsigned(flag, value, 100000000);
        if (options.repeat == 0)
          throw Error("--repeat must be at least 1");
      } else if (flag == "--seed") {
        options.seed = parseUnsigned(flag, value, UINT64_MAX);
      } else if (flag == "--warmup") {
        options.benchOptions.warmup = parseUnsigned(flag, value, 100000000);
        options.benchFlags.push_back(flag);
      } else if (flag == "--duration") {
        options.benchOptions.seconds = parseSeconds(flag, value);
        options.benchFlags.push_back(flag);
      } else if (flag == "--count") {
        options.benchOptions.count = parseUnsigned(flag, value, 1000000000);
        if (options.benchOptions.count == 0)
          throw Error("--count must be at least 1");
        options.benchFlags.push_back(flag);
      } else if (flag == "--concurrency") {
        options.benchOptions.concurrency =
            (uint32_t)parseUnsigned(flag, value, 1024);
        if (options.benchOptions.concurrency == 0)
          throw Error("--concurrency must be at least 1");
        options.benchFlags.push_back(flag);
      }
      continue;
    }
    if (!options.model.empty())
      throw Error("unexpected argument '" + arg + "': only one model file");
    options.model = arg;
  }
  if (options.model.empty())
    throw Error(std::string("no model file given\n") + kUsage);
  if (options.sizes && !options.inspect)
    throw Error("--sizes needs --inspect (kiln inspect MODEL --sizes)");
  if (!options.bench && !options.benchFlags.empty())
    throw Error(options.benchFlags.front() + " needs --bench");
  if (options.bench) {
    auto has = [&](const char *f) {
      return std::find(options.benchFlags.begin(), options.benchFlags.end(),
                       f) != options.benchFlags.end();
    };
    if (has("--count") && has("--duration"))
      throw Error("--bench takes --duration or --count, not both");
    if (options.repeat || !options.outputDir.empty() || options.inspect)
      throw Error("--bench does not combine with --repeat, --output-dir or "
                  "--inspect");
  }
  return options;
}

const char *orNone(const char *text) { return text ? text : "(none)"; }

/// A format / memory-kind name for printing ("unknown" for a value the
/// runtime has no name for; an opened descriptor has none).
const char *formatName(uint32_t format) {
  const char *name = kiln_executable_format_name(format);
  return name ? name : "unknown";
}

const char *memoryKindName(uint32_t kind) {
  const char *name = kiln_memory_kind_name(kind);
  return name ? name : "unknown";
}

/// The executables of `desc`, one line each (`prefix` before each line):
/// device modules with their kernels; the host code with its kernel table's
/// size (its ONNX nodes: --profile).
void printExecutables(const kiln_model_desc *desc, const char *prefix) {
  for (uint32_t e = 0; e < desc->num_executables; ++e) {
    const kiln_executable_desc &x = desc->executables[e];
    std::printf("%sexecutable %u %s %s", prefix, e, formatName(x.format),
                orNone(x.target));
    if (x.format == KILN_EXECUTABLE_HOST)
      std::printf(" %s%s%s\n", x.entry ? "static-entry" : "dynamic-entry",
                  e == desc->entry_executable ? " (entry)" : "",
                  x.num_kernels
                      ? (", " + std::to_string(x.num_kernels) + " kernels")
                            .c_str()
                      : "");
    else {
      std::printf(" %llu bytes,%s %u kernels:", (unsigned long long)x.size,
                  (x.flags & KILN_EXECUTABLE_ALTERNATIVE)
                      ? " alternative of the one before,"
                      : "",
                  x.num_kernels);
      for (uint32_t k = 0; k < x.num_kernels; ++k)
        std::printf(" %s", x.kernel_names[k]);
      std::printf("\n");
    }
  }
}

/// The device a variant's descriptor runs on, from its code.
const char *descriptorDevice(const kiln_model_desc *desc) {
  bool spirv = false, cuda = false, hip = false;
  for (uint32_t e = 0; e < desc->num_executables; ++e) {
    uint32_t format = desc->executables[e].format;
    spirv |= format == KILN_EXECUTABLE_SPIRV;
    cuda |= format == KILN_EXECUTABLE_PTX || format == KILN_EXECUTABLE_CUBIN;
    hip |= format == KILN_EXECUTABLE_HSACO;
  }
  return desc->entry_executable != KILN_NO_EXECUTABLE ? "cpu"
         : spirv                                      ? "vulkan"
         : cuda                                       ? "cuda"
         : hip                                        ? "hip"
                                                      : "unknown";
}

/// A multi-variant artifact's table: the devices it holds, then one line per
/// variant (other devices first, then the CPUs most capable first) saying
/// which was opened and why the others were not, and the kernels of each
/// variant that was not opened (the opened one's are above).
void printVariants(const kiln_model *model) {
  const kiln_artifact_desc *artifact = kiln_model_get_artifact(model);
  if (!artifact)
    return;
  std::vector<std::string> devices;
  for (uint32_t i = 0; i < artifact->num_variants; ++i)
    if (std::find(devices.begin(), devices.end(),
                  artifact->variants[i].device) == devices.end())
      devices.push_back(artifact->variants[i].device);
  std::printf("devices:");
  for (const std::string &device : devices)
    std::printf(" %s", device.c_str());
  std::printf("\nvariant: %s\n", kiln_model_variant(model));
  const kiln_model_desc *opened = kiln_model_get_descriptor(model);
  for (uint32_t i = 0; i < artifact->num_variants; ++i) {
    const kiln_variant_desc &v = artifact->variants[i];
    const kiln_model_desc *desc = v.descriptor();
    std::string why = "runs here";
    if (desc == opened) {
      why = "opened";
    } else if (std::strcmp(v.device, "cpu") != 0) {
      why = "another device; --device " + std::string(v.device) +
            " opens it";
    } else if (kiln_status status = kiln_cpu_check_features(v.cpu_features)) {
      why = kiln_status_message(status);
      kiln_status_free(status);
    }
    std::printf("variant %u %s %s features=%s (%s)\n", i, v.device, v.name,
                v.cpu_features[0] ? v.cpu_features : "baseline", why.c_str());
    // The other variants' kernels: a descriptor the runtime has not
    // validated is described only as far as its tables are sound.
    if (desc == opened || !desc || desc->abi_version != KILN_MODEL_ABI_VERSION ||
        (desc->num_executables && !desc->executables))
      continue;
    std::string prefix = "variant " + std::to_string(i) + " ";
    std::printf("%sdevice: %s\n", prefix.c_str(), descriptorDevice(desc));
    bool sound = true;
    for (uint32_t e = 0; e < desc->num_executables && sound; ++e) {
      const kiln_executable_desc &x = desc->executables[e];
      sound = x.format == KILN_EXECUTABLE_HOST || !x.num_kernels ||
              x.kernel_names;
      for (uint32_t k = 0; sound && k < x.num_kernels &&
                           x.format != KILN_EXECUTABLE_HOST;
           ++k)
        sound = x.kernel_names[k] != nullptr;
    }
    if (sound)
      printExecutables(desc, prefix.c_str());
    if (desc->num_dispatches)
      std::printf("%sdispatches: %u\n", prefix.c_str(), desc->num_dispatches);
  }
}

/// `kiln inspect`: what the compiled model says about itself, one `key: value`
/// or `kind fields...` line each. Only an opened (validated) descriptor gets
/// here.
void printDescriptor(const kiln_model *model) {
  const kiln_model_desc *desc = kiln_model_get_descriptor(model);
  std::printf("name: %s\nabi_version: %u\nproducer: %s\ntarget: %s\ncpu: "
              "%s\nfeatures: %s\n",
              orNone(desc->name), desc->abi_version, orNone(desc->producer),
              orNone(desc->target_triple), orNone(desc->cpu),
              orNone(desc->cpu_features));
  std::printf("scratch_bytes: %llu\nruntime_checks: %u\n",
              (unsigned long long)kiln_model_scratch_size(model),
              desc->num_check_messages);
  // The device the code is for: the host, or the device of its modules.
  std::printf("device: %s\n", descriptorDevice(desc));
  printExecutables(desc, "");
  if (desc->num_dispatches)
    std::printf("dispatches: %u\n", desc->num_dispatches);
  for (uint32_t d = 0; d < desc->num_dispatches; ++d) {
    const kiln_dispatch_desc &x = desc->dispatches[d];
    std::printf("dispatch %u executable %u kernel %s workgroups [%u,%u,%u] "
                "x [%u,%u,%u] bindings %u\n",
                d, x.executable,
                desc->executables[x.executable].kernel_names[x.kernel],
                x.workgroup_count[0], x.workgroup_count[1],
                x.workgroup_count[2], x.workgroup_size[0], x.workgroup_size[1],
                x.workgroup_size[2], x.num_bindings);
  }
  for (uint32_t m = 0; m < desc->num_memory_needs; ++m) {
    const kiln_memory_need &need = desc->memory_needs[m];
    std::printf("memory %u %s %llu bytes, align %llu\n", m,
                memoryKindName(need.kind), (unsigned long long)need.size,
                (unsigned long long)need.alignment);
  }
  // Symbolic dims: `symbol NAME MIN..MAX` (MIN.. when unbounded), and a
  // shape's symbolic dim by its symbol's name.
  for (uint32_t s = 0; s < desc->num_symbols; ++s) {
    std::printf("symbol %s %lld..", desc->symbols[s].name,
                (long long)desc->symbols[s].min);
    if (desc->symbols[s].max != KILN_DIM_UNBOUNDED)
      std::printf("%lld", (long long)desc->symbols[s].max);
    std::printf("\n");
  }
  auto print = [desc](const char *kind, const kiln_tensor_desc &t) {
    std::printf("%s %s %s [", kind, t.name,
                kiln_dtype_name((kiln_dtype)t.dtype));
    for (int32_t d = 0; d < t.rank; ++d) {
      if (KILN_DIM_IS_SYMBOL(t.shape[d]) &&
          KILN_DIM_SYMBOL_ID(t.shape[d]) < desc->num_symbols)
        std::printf("%s%s", d ? "," : "",
                    desc->symbols[KILN_DIM_SYMBOL_ID(t.shape[d])].name);
      else
        std::printf("%s%lld", d ? "," : "", (long long)t.shape[d]);
    }
    std::printf("]\n");
  };
  for (uint32_t i = 0; i < desc->num_inputs; ++i)
    print("input", desc->inputs[i]);
  for (uint32_t i = 0; i < desc->num_outputs; ++i)
    print("output", desc->outputs[i]);
  printVariants(model);
}

struct ModelCloser {
  void operator()(kiln_model *model) const { kiln_model_close(model); }
};

int runMain(int argc, char **argv) {
  Options options = parseArgs(argc, argv);
  // The runtime reads KILN_PROFILE when the model is opened and writes the
  // trace at exit (runtime/src/profile.c).
  if (!options.profile.empty()) {
    // A trace that cannot be written is an error now, not after the runs.
    if (options.profile != "-") {
      std::FILE *trace = std::fopen(options.profile.c_str(), "w");
      if (!trace)
        throw Error("--profile: cannot write '" + options.profile +
                    "': " + std::strerror(errno));
      std::fclose(trace);
    }
    setenv("KILN_PROFILE", options.profile.c_str(), 1);
  }

  kiln_model_options modelOptions;
  kiln_model_options_init(&modelOptions);
  modelOptions.num_threads = options.threads;
  modelOptions.device =
      options.device.empty() ? nullptr : options.device.c_str();
  kiln_model *rawModel = nullptr;
  auto openStart = std::chrono::steady_clock::now();
  kiln_status openStatus =
      kiln_model_open(options.model.c_str(), &modelOptions, &rawModel);
  // --inspect describes a device model even where its device cannot open
  // (no driver, no GPU): the descriptor, opened with device "none", and why.
  std::string deviceError;
  if (openStatus && options.inspect && options.device.empty()) {
    modelOptions.device = "none";
    if (!kiln_model_open(options.model.c_str(), &modelOptions, &rawModel) &&
        std::strcmp(kiln_model_device(rawModel), "none") == 0) {
      deviceError = kiln_status_message(openStatus);
      kiln_status_free(openStatus);
      openStatus = nullptr;
    } else if (rawModel) {
      kiln_model_close(rawModel);
      rawModel = nullptr;
    }
  }
  check(openStatus);
  auto ready = std::chrono::steady_clock::now();
  std::chrono::duration<double, std::milli> openTime = ready - openStart;
  std::unique_ptr<kiln_model, ModelCloser> model(rawModel);
  if (options.inspect) {
    printDescriptor(model.get());
    if (!deviceError.empty())
      std::printf("device_error: %s\n", deviceError.c_str());
    if (options.sizes)
      kiln_run::printSizes(options.model, kiln_model_get_descriptor(model.get()));
    // In-process start-up (load, validate, arena, thread pool): the figure
    // to set beside another engine's in-process session creation.
    std::printf("open_ms: %.3f\n", openTime.count());
    // When the model was ready, on the steady clock (CLOCK_MONOTONIC on
    // Linux): a caller that read the clock before starting this process
    // gets process start to model ready, without the exit.
    if (options.readyNs)
      std::printf(
          "ready_ns: %lld\n",
          (long long)std::chrono::duration_cast<std::chrono::nanoseconds>(
              ready.time_since_epoch())
              .count());
    return 0;
  }

  // Inputs: from files, by name.
  size_t numInputs = kiln_model_num_inputs(model.get());
  std::vector<Array> arrays(numInputs);
  std::vector<bool> given(numInputs, false);
  for (const auto &[name, file] : options.inputs) {
    size_t index;
    check(kiln_model_find_input(model.get(), name.c_str(), &index),
          "--input " + name);
    if (given[index])
      throw Error("--input " + name + " is given more than once");
    given[index] = true;
    arrays[index] = readNpy(file);
    kiln_tensor_info info;
    check(kiln_model_input_info(model.get(), index, &info));
    // numpy has no bfloat16: a bfloat16 input takes uint16 bit patterns.
    if (info.dtype == KILN_DTYPE_BFLOAT16 &&
        arrays[index].dtype == KILN_DTYPE_UINT16)
      arrays[index].dtype = KILN_DTYPE_BFLOAT16;
    // Nor float8, float4, int4, ...: V1 (ml_dtypes' arrays) or uint8 bit
    // patterns, one element per byte.
    if (kiln_run::isVoidByte(info.dtype) &&
        (kiln_run::isVoidByte(arrays[index].dtype) ||
         arrays[index].dtype == KILN_DTYPE_UINT8))
      arrays[index].dtype = info.dtype;
    // int4, uint4, float4e2m1, int2, uint2 cross the ABI packed.
    if (kiln_dtype_bits(arrays[index].dtype) < 8) {
      Array &a = arrays[index];
      int64_t n = 1;
      for (int64_t d : a.shape)
        n *= d;
      std::vector<uint8_t> packed(kiln_dtype_buffer_size(a.dtype, n));
      kiln_pack_elements(a.dtype, a.data.data(), packed.data(), n);
      a.data.assign(packed.begin(), packed.end());
    }
  }
  // Symbolic dims of the random inputs: --dim, else what a file gave the
  // symbol, else its minimum.
  size_t numSymbols = kiln_model_num_symbols(model.get());
  std::vector<int64_t> symbolValues(numSymbols, -1);
  for (size_t s = 0; s < numSymbols; ++s) {
    const char *name = nullptr;
    int64_t min = 0;
    check(kiln_model_symbol_info(model.get(), s, &name, &min, nullptr));
    auto it = options.dims.find(name);
    if (it != options.dims.end()) {
      symbolValues[s] = it->second;
      options.dims.erase(it);
      continue;
    }
    for (size_t i = 0; i < numInputs && symbolValues[s] < 0; ++i) {
      if (!given[i])
        continue;
      kiln_tensor_info info;
      check(kiln_model_input_info(model.get(), i, &info));
      for (int32_t d = 0; d < info.rank && d < (int32_t)arrays[i].shape.size();
           ++d)
        if (info.shape[d] == KILN_DIM_SYMBOL(s))
          symbolValues[s] = arrays[i].shape[d];
    }
    if (symbolValues[s] < 0)
      symbolValues[s] = min;
  }
  if (!options.dims.empty())
    throw Error("--dim " + options.dims.begin()->first +
                ": the model has no such symbol");
  // The rest: seeded random data, one stream, in input order.
  Random random(options.seed);
  for (size_t i = 0; i < numInputs; ++i) {
    if (given[i])
      continue;
    kiln_tensor_info info;
    check(kiln_model_input_info(model.get(), i, &info));
    Array &array = arrays[i];
    array.dtype = info.dtype;
    array.shape.assign(info.shape, info.shape + info.rank);
    for (int64_t &d : array.shape)
      if (KILN_DIM_IS_SYMBOL(d))
        d = symbolValues[KILN_DIM_SYMBOL_ID(d)];
    info.shape = array.shape.data();
    size_t bytes = kiln_tensor_info_byte_size(&info);
    array.data.resize(bytes);
    fillRandom(info.dtype, bytes / std::max<size_t>(1, kiln_dtype_size(info.dtype)),
               array.data.data(), random);
  }
  std::vector<kiln_tensor> inputs(numInputs);
  for (size_t i = 0; i < numInputs; ++i) {
    kiln_tensor_info info;
    check(kiln_model_input_info(model.get(), i, &info));
    kiln_tensor &t = inputs[i];
    t.name = info.name;
    t.dtype = arrays[i].dtype;
    t.rank = (int32_t)arrays[i].shape.size();
    t.shape = arrays[i].shape.data();
    t.data = arrays[i].data.data();
    t.byte_size = arrays[i].data.size();
  }

  if (options.bench) {
    kiln_run::BenchResult result =
        kiln_run::runBench(model.get(), inputs, options.benchOptions);
    kiln_run::printBench(result, options.benchOptions,
                         kiln_model_num_threads(model.get()));
    std::fflush(stdout);
    if (std::ferror(stdout))
      throw Error("cannot write to standard output");
    return 0;
  }

  // Outputs: the runtime allocates them on the first run; later runs reuse
  // those buffers as caller-provided ones.
  size_t numOutputs = kiln_model_num_outputs(model.get());
  std::vector<kiln_tensor> outputs(numOutputs);
  struct OutputsFreer {
    std::vector<kiln_tensor> &outputs;
    ~OutputsFreer() {
      for (kiln_tensor &t : outputs)
        kiln_tensor_free_data(&t);
    }
  } freer{outputs};
  for (size_t i = 0; i < numOutputs; ++i) {
    kiln_tensor_info info;
    check(kiln_model_output_info(model.get(), i, &info));
    outputs[i].name = info.name;
  }

  auto runOnce = [&] {
    check(kiln_model_run(model.get(), inputs.data(), inputs.size(),
                         outputs.data(), outputs.size()));
  };
  runOnce(); // the only run, or the warm-up
  std::vector<double> times;
  for (uint64_t r = 0; r < options.repeat; ++r) {
    auto start = std::chrono::steady_clock::now();
    runOnce();
    auto end = std::chrono::steady_clock::now();
    times.push_back(std::chrono::duration<double, std::milli>(end - start).count());
  }

  if (!options.outputDir.empty()) {
    std::error_code ec;
    std::filesystem::create_directories(options.outputDir, ec);
    if (ec || !std::filesystem::is_directory(options.outputDir))
      throw Error("cannot create output directory '" + options.outputDir +
                  "': " + (ec ? ec.message() : "not a directory"));
  }
  std::set<std::string> taken;
  for (size_t i = 0; i < numOutputs; ++i) {
    const kiln_tensor &t = outputs[i];
    std::printf("%s %s %s\n", t.name, kiln_dtype_name(t.dtype),
                shapeString(t.shape, t.rank).c_str());
    if (!options.outputDir.empty()) {
      std::string path = (std::filesystem::path(options.outputDir) /
                          (safeFileStem(t.name, i, taken) + ".npy"))
                             .string();
      if (kiln_dtype_bits(t.dtype) < 8) {
        // Packed: written one element per byte, as ml_dtypes' arrays are.
        int64_t n = 1;
        for (int32_t d = 0; d < t.rank; ++d)
          n *= t.shape[d];
        std::vector<uint8_t> unpacked(n);
        kiln_unpack_elements(t.dtype, t.data, unpacked.data(), n);
        writeNpy(path, t.dtype, t.shape, t.rank, unpacked.data(), n);
      } else {
        writeNpy(path, t.dtype, t.shape, t.rank, t.data, t.byte_size);
      }
    }
  }
  if (!times.empty()) {
    std::vector<double> sorted = times;
    std::sort(sorted.begin(), sorted.end());
    size_t n = sorted.size();
    double median = n % 2 ? sorted[n / 2] : (sorted[n / 2 - 1] + sorted[n / 2]) / 2;
    // Nanosecond resolution: a tiny model runs in well under a microsecond, and a
    // rounded 0.000 would make a ratio against another engine meaningless.
    std::printf("latency_ms median=%.6f min=%.6f max=%.6f (%zu runs, %d threads)\n",
                median, sorted.front(), sorted.back(), n,
                (int)kiln_model_num_threads(model.get()));
  }
  std::fflush(stdout);
  if (std::ferror(stdout))
    throw Error("cannot write to standard output");
  return 0;
}

} // namespace

int main(int argc, char **argv) {
  try {
    return runMain(argc, argv);
  } catch (const Error &e) {
    std::fprintf(stderr, "kiln-run: error: %s\n", e.what());
  } catch (const std::bad_alloc &) {
    std::fprintf(stderr, "kiln-run: error: out of memory\n");
  } catch (const std::exception &e) {
    std::fprintf(stderr, "kiln-run: error: %s\n", e.what());
  }
  // A failed run may leave work on a device (a Vulkan run past its timeout
  // keeps running on lavapipe's threads; the runtime leaks that device rather
  // than wait for it). exit() would run the driver's static destructors under
  // those threads and crash, so leave without them: nothing else is buffered.
  std::fflush(stdout);
  std::fflush(stderr);
  _exit(1);
}
