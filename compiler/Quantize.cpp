//===- Quantize.cpp - `kiln compile --quantize int8` ----------------------===//
//
// 1. Pick the ops to quantize: Conv (group 1 or depthwise), MatMul and Gemm
//    whose weights are f32 initializers, minus the ones kept in float (named by
//    --keep-float, or whose output is a model output: the last classifier).
// 2. Calibrate: the f32 model with each tensor to quantize as an extra output
//    (through an Identity, so the output files have known names) is compiled
//    for the host and run by kiln-run on every calibration input set; each
//    tensor's range is the min and max seen.
// 3. Rewrite the graph in onnxruntime's QDQ form, which kiln-fold-qdq folds
//    into integer kernels: QuantizeLinear/DequantizeLinear (u8, per tensor)
//    on the quantized ops' inputs and outputs (the output after a Relu or Clip that
//    alone consumes it, so the Relu folds into the requantization), weights as
//    s8 initializers (symmetric, per output channel) behind a
//    DequantizeLinear, a bias as int32 with scale x_scale * w_scale.
//
//===----------------------------------------------------------------------===//

#include "compiler/Quantize.h"

#include "compiler/Pipeline.h"
#include "tools/kiln-run/Npy.h"

#include "mlir/IR/Diagnostics.h"
#include "mlir/IR/Location.h"
#include "llvm/ADT/DenseMap.h"
#include "llvm/ADT/SmallString.h"
#include "llvm/ADT/StringExtras.h"
#include "llvm/ADT/StringMap.h"
#include "llvm/ADT/StringSet.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/Program.h"

#include <onnx/onnx_pb.h>

#include <algorithm>
#include <climits>
#include <cmath>
#include <cstring>
#include <fstream>
#include <limits>

using namespace mlir;

namespace kiln {

namespace {

/// A Conv, MatMul or Gemm to quantize and the tensors around it.
struct QuantizedOp {
  int node;             // index in graph.node
  std::string input;    // its activation input (calibrated)
  std::string output;   // the tensor quantized after it ("" = none)
  std::string weight;   // the f32 initializer
  int weightAxis;       // the output-channel axis of the weight
  std::string bias;     // f32 initializer of its bias, "" if none
};

/// u8 per-tensor parameters from a range, as quantize_static's MinMax
/// calibration makes them: the range widened to hold 0.
struct ActivationParams {
  float scale = 1.0f;
  uint8_t zeroPoint = 0;
};

ActivationParams activationParams(double lo, double hi) {
  lo = std::min(lo, 0.0);
  hi = std::max(hi, 0.0);
  ActivationParams p;
  double scale = (hi - lo) / 255.0;
  if (!(scale > 0) || !std::isfinite(scale))
    return p;
  p.scale = (float)scale;
  double zp = std::nearbyint(-lo / (double)p.scale);
  p.zeroPoint = (uint8_t)std::clamp(zp, 0.0, 255.0);
  return p;
}

std::string nodeLabel(const onnx::NodeProto &node, int index) {
  return node.name().empty() ? node.op_type() + " #" + std::to_string(index)
                             : node.name();
}

int64_t intAttribute(const onnx::NodeProto &node, StringRef name,
                     int64_t otherwise) {
  for (const onnx::AttributeProto &a : node.attribute())
    if (a.name() == name)
      return a.i();
  return otherwise;
}

float floatAttribute(const onnx::NodeProto &node, StringRef name,
                     float otherwise) {
  for (const onnx::AttributeProto &a : node.attribute())
    if (a.name() == name)
      return a.f();
  return otherwise;
}

/// The values of an f32 initializer held in the model (raw or float_data).
bool readFloats(const onnx::TensorProto &tensor, std::vector<float> &values) {
  if (tensor.data_type() != onnx::TensorProto::FLOAT ||
      tensor.data_location() == onnx::TensorProto::EXTERNAL)
    return false;
  int64_t count = 1;
  for (int64_t d : tensor.dims())
    count *= d;
  if (tensor.has_raw_data()) {
    if ((int64_t)tensor.raw_data().size() != count * 4)
      return false;
    values.resize(count);
    std::memcpy(values.data(), tensor.raw_data().data(), count * 4);
    return true;
  }
  if (tensor.float_data_size() != count)
    return false;
  values.assign(tensor.float_data().begin(), tensor.float_data().end());
  return true;
}

onnx::TensorProto makeTensor(const std::string &name, int type,
                             ArrayRef<int64_t> dims, const void *data,
                             size_t bytes) {
  onnx::TensorProto t;
  t.set_name(name);
  t.set_data_type(type);
  for (int64_t d : dims)
    t.add_dims(d);
  t.set_raw_data(std::string((const char *)data, bytes));
  return t;
}

onnx::NodeProto makeNode(StringRef op, ArrayRef<std::string> inputs,
                         const std::string &output, const std::string &name,
                         std::optional<int64_t> axis = std::nullopt) {
  onnx::NodeProto n;
  n.set_op_type(op.str());
  n.set_name(name);
  for (const std::string &input : inputs)
    n.add_input(input);
  n.add_output(output);
  if (axis) {
    onnx::AttributeProto *a = n.add_attribute();
    a->set_name("axis");
    a->set_type(onnx::AttributeProto::INT);
    a->set_i(*axis);
  }
  return n;
}

class Quantizer {
public:
  Quantizer(MLIRContext &context, const CompileOptions &options,
            const QuantizeOptions &quantize, StringRef workDir)
      : context(context), options(options), quantize(quantize),
        workDir(workDir.str()),
        loc(FileLineColLoc::get(&context, options.modelPath, 0, 0)) {}

  FailureOr<std::string> run() {
    if (failed(readModel()) || failed(chooseOps()) || failed(calibrate()))
      return failure();
    rewrite();
    SmallString<256> path(workDir);
    llvm::sys::path::append(path, "quantized.onnx");
    if (failed(writeModel(model, path)))
      return failure();
    return std::string(path);
  }

private:
  InFlightDiagnostic error() { return emitError(loc); }

  LogicalResult readModel() {
    auto buffer = llvm::MemoryBuffer::getFile(options.modelPath,
                                              /*IsText=*/false,
                                              /*RequiresNullTerminator=*/false);
    if (!buffer)
      return error() << "cannot read model file '" << options.modelPath
                     << "': " << buffer.getError().message();
    if ((*buffer)->getBufferSize() > (size_t)INT_MAX ||
        !model.ParseFromArray((*buffer)->getBufferStart(),
                              (int)(*buffer)->getBufferSize()) ||
        !model.has_graph())
      return error() << "not a valid ONNX model: '" << options.modelPath
                     << "' does not parse as an ONNX ModelProto";
    int64_t opset = 0;
    for (const onnx::OperatorSetIdProto &id : model.opset_import())
      if (id.domain().empty() || id.domain() == "ai.onnx")
        opset = id.version();
    // Per-channel DequantizeLinear (its axis) is opset 13.
    if (opset < 13)
      return error() << "--quantize needs a model of opset 13 or newer (this "
                        "one is opset "
                     << opset << "); convert it with onnx.version_converter";
    for (onnx::TensorProto &t : *model.mutable_graph()->mutable_initializer()) {
      if (t.data_location() == onnx::TensorProto::EXTERNAL)
        return error() << "--quantize does not read weights in external data "
                          "yet (initializer '"
                       << t.name() << "')";
      initializers[t.name()] = &t;
    }
    return success();
  }

  /// The f32 initializer `name` of rank `rank` (0: any), or null.
  const onnx::TensorProto *floatInitializer(const std::string &name,
                                            int rank = 0) const {
    auto it = initializers.find(name);
    if (it == initializers.end() ||
        it->second->data_type() != onnx::TensorProto::FLOAT ||
        (rank && it->second->dims_size() != rank))
      return nullptr;
    return it->second;
  }

  LogicalResult chooseOps() {
    const onnx::GraphProto &graph = model.graph();
    llvm::StringSet<> graphOutputs;
    for (const onnx::ValueInfoProto &o : graph.output())
      graphOutputs.insert(o.name());
    llvm::StringMap<SmallVector<int>> consumers;
    for (int i = 0; i < graph.node_size(); ++i)
      for (const std::string &in : graph.node(i).input())
        if (!in.empty())
          consumers[in].push_back(i);
    // The initializer `tensor` is, through Identity nodes (exporters pass
    // some biases so); `tensor` itself otherwise.
    llvm::StringMap<int> producers;
    for (int i = 0; i < graph.node_size(); ++i)
      for (const std::string &out : graph.node(i).output())
        producers[out] = i;
    auto throughIdentity = [&](std::string tensor) {
      for (int hops = 0; hops < 8 && !initializers.count(tensor); ++hops) {
        auto it = producers.find(tensor);
        if (it == producers.end())
          break;
        const onnx::NodeProto &p = graph.node(it->second);
        if (p.op_type() != "Identity" || p.input_size() != 1 ||
            (!p.domain().empty() && p.domain() != "ai.onnx"))
          break;
        tensor = p.input(0);
      }
      return initializers.count(tensor) ? tensor : std::string();
    };
    // Whether `tensor` reaches a model output through ops that only reshape
    // or normalize it.
    auto feedsOutput = [&](std::string tensor) {
      for (int hops = 0; hops < 8; ++hops) {
        if (graphOutputs.contains(tensor))
          return true;
        auto it = consumers.find(tensor);
        if (it == consumers.end() || it->second.size() != 1)
          return false;
        const onnx::NodeProto &next = graph.node(it->second[0]);
        if (!llvm::is_contained({"Softmax", "LogSoftmax", "Flatten", "Reshape",
                                 "Identity", "Squeeze"},
                                next.op_type()) ||
            next.output_size() != 1)
          return false;
        tensor = next.output(0);
      }
      return false;
    };
    llvm::StringSet<> keep;
    for (const std::string &name : quantize.keepFloat)
      keep.insert(name);
    llvm::StringSet<> seen;
    for (int i = 0; i < graph.node_size(); ++i) {
      const onnx::NodeProto &node = graph.node(i);
      if (!node.domain().empty() && node.domain() != "ai.onnx")
        continue;
      if (!node.name().empty())
        seen.insert(node.name());
      QuantizedOp op;
      op.node = i;
      const std::string &type = node.op_type();
      // Conv: one group, or depthwise (one filter per channel: [C, 1, KH,
      // KW] with group C, the 8-bit depthwise kernel's form).
      const onnx::TensorProto *convWeight =
          type == "Conv" && node.input_size() >= 2
              ? floatInitializer(node.input(1))
              : nullptr;
      int64_t group = intAttribute(node, "group", 1);
      if (convWeight && convWeight->dims_size() >= 3 &&
          (group == 1 || (convWeight->dims_size() == 4 &&
                          convWeight->dims(0) == group &&
                          convWeight->dims(1) == 1))) {
        op.weightAxis = 0;
        if (node.input_size() >= 3 &&
            floatInitializer(throughIdentity(node.input(2)), 1))
          op.bias = throughIdentity(node.input(2));
      } else if (type == "MatMul" && node.input_size() == 2 &&
                 floatInitializer(node.input(1), 2) &&
                 !initializers.count(node.input(0))) {
        op.weightAxis = 1;
      } else if (type == "Gemm" && node.input_size() >= 2 &&
                 floatInitializer(node.input(1), 2) &&
                 intAttribute(node, "transA", 0) == 0 &&
                 floatAttribute(node, "alpha", 1.0f) == 1.0f &&
                 floatAttribute(node, "beta", 1.0f) == 1.0f &&
                 !initializers.count(node.input(0))) {
        op.weightAxis = intAttribute(node, "transB", 0) ? 0 : 1;
        if (node.input_size() >= 3 &&
            floatInitializer(throughIdentity(node.input(2)), 1))
          op.bias = throughIdentity(node.input(2));
      } else {
        continue;
      }
      std::string label = nodeLabel(node, i);
      if (keep.contains(node.name())) {
        note(label + " (" + type + "): kept in float (--keep-float)");
        continue;
      }
      if (feedsOutput(node.output(0))) {
        note(label + " (" + type +
             "): kept in float (its output is a model output)");
        continue;
      }
      op.input = node.input(0);
      op.weight = node.input(1);
      // The output is quantized after a Relu or Clip (ReLU6) that alone
      // consumes it: kiln-fold-qdq folds either into the requantization.
      op.output = node.output(0);
      auto users = consumers.find(op.output);
      if (users != consumers.end() && users->second.size() == 1 &&
          llvm::is_contained({"Relu", "Clip"},
                             graph.node(users->second[0]).op_type()))
        op.output = graph.node(users->second[0]).output(0);
      if (graphOutputs.contains(op.output))
        op.output.clear();
      ops.push_back(op);
      note(label + " (" + type + "): int8");
    }
    for (const std::string &name : quantize.keepFloat)
      if (!seen.contains(name))
        return error() << "--keep-float names node '" << name
                       << "', which the model does not have";
    if (ops.empty())
      return error() << "--quantize int8: the model has no Conv, MatMul or "
                        "Gemm with constant f32 weights to quantize";
    for (const QuantizedOp &op : ops) {
      addCalibrated(op.input);
      if (!op.output.empty())
        addCalibrated(op.output);
    }
    return success();
  }

  void addCalibrated(const std::string &tensor) {
    if (rangeIndex.try_emplace(tensor, calibrated.size()).second)
      calibrated.push_back(tensor);
  }

  void note(const std::string &line) {
    if (quantize.note)
      quantize.note(line);
  }

  /// The model's inputs that are not initializers.
  std::vector<std::string> modelInputs() const {
    std::vector<std::string> names;
    for (const onnx::ValueInfoProto &in : model.graph().input())
      if (!initializers.count(in.name()))
        names.push_back(in.name());
    return names;
  }

  LogicalResult writeModel(const onnx::ModelProto &m, StringRef path) {
    std::ofstream out(path.str(), std::ios::binary);
    if (!out || !m.SerializeToOstream(&out) || !out.flush())
      return error() << "cannot write '" << path << "'";
    return success();
  }

  /// The calibration sets: per set, `--input NAME=FILE` arguments (none for
  /// a random set: kiln-run's `--seed` makes it).
  LogicalResult calibrationSets(std::vector<std::vector<std::string>> &sets) {
    if (quantize.randomSets) {
      for (unsigned k = 0; k < quantize.randomSets; ++k)
        sets.push_back({"--seed", std::to_string(k)});
      return success();
    }
    const std::string &dir = quantize.calibrationDir;
    if (!llvm::sys::fs::is_directory(dir))
      return error() << "--calibration '" << dir << "' is not a folder";
    std::vector<std::string> inputs = modelInputs();
    std::vector<std::string> entries;
    std::error_code ec;
    for (llvm::sys::fs::directory_iterator it(dir, ec), end; it != end && !ec;
         it.increment(ec))
      entries.push_back(it->path());
    if (ec)
      return error() << "cannot list --calibration '" << dir
                     << "': " << ec.message();
    std::sort(entries.begin(), entries.end());
    for (const std::string &entry : entries) {
      if (llvm::sys::fs::is_directory(entry)) {
        std::vector<std::string> args;
        for (const std::string &input : inputs) {
          SmallString<256> file(entry);
          llvm::sys::path::append(file, input + ".npy");
          if (!llvm::sys::fs::is_regular_file(file))
            return error() << "calibration set '" << entry << "' has no '"
                           << input << ".npy' for the model's input '"
                           << input << "'";
          args.push_back("--input");
          args.push_back(input + "=" + std::string(file));
        }
        sets.push_back(std::move(args));
      } else if (StringRef(entry).ends_with(".npy")) {
        if (inputs.size() != 1)
          return error() << "calibration file '" << entry
                         << "': a model with " << inputs.size()
                         << " inputs takes one folder per input set (each "
                            "with INPUT.npy for every input)";
        sets.push_back({"--input", inputs[0] + "=" + entry});
      }
    }
    if (sets.empty())
      return error() << "--calibration '" << dir
                     << "' holds no input set (.npy files or folders of them)";
    return success();
  }

  LogicalResult calibrate() {
    std::vector<std::vector<std::string>> sets;
    if (failed(calibrationSets(sets)))
      return failure();
    // The f32 model with every calibrated tensor as an output.
    onnx::ModelProto probe = model;
    onnx::GraphProto *graph = probe.mutable_graph();
    for (size_t k = 0; k < calibrated.size(); ++k) {
      std::string name = "kiln_calibration_" + std::to_string(k);
      *graph->add_node() =
          makeNode("Identity", {calibrated[k]}, name, name);
      onnx::ValueInfoProto *out = graph->add_output();
      out->set_name(name);
      out->mutable_type()->mutable_tensor_type()->set_elem_type(
          onnx::TensorProto::FLOAT);
    }
    SmallString<256> probePath(workDir), probeLib(workDir);
    llvm::sys::path::append(probePath, "calibration.onnx");
    llvm::sys::path::append(probeLib, "calibration.so");
    if (failed(writeModel(probe, probePath)))
      return failure();
    CompileOptions probeOptions = options;
    probeOptions.modelPath = std::string(probePath);
    probeOptions.outputPath = std::string(probeLib);
    probeOptions.emit = EmitKind::SharedLibrary;
    probeOptions.device = "cpu";
    probeOptions.devices.clear();
    probeOptions.precision = "fp32";
    probeOptions.triple.clear();
    probeOptions.cpu.clear();
    probeOptions.name = "calibration";
    probeOptions.keepIntermediates = false;
    probeOptions.timeReport = false;
    probeOptions.progress = nullptr;
    {
      DialectRegistry registry;
      registerCompilerDialects(registry);
      MLIRContext probeContext(registry);
      probeContext.disableMultithreading();
      std::string messages;
      ScopedDiagnosticHandler handler(&probeContext, [&](Diagnostic &diag) {
        if (diag.getSeverity() == DiagnosticSeverity::Error)
          messages += (messages.empty() ? "" : "; ") + diag.str();
        return success();
      });
      if (failed(compileModel(probeContext, probeOptions)))
        return error() << "cannot compile the f32 model for calibration: "
                       << messages;
    }
    lo.assign(calibrated.size(), std::numeric_limits<double>::infinity());
    hi.assign(calibrated.size(), -std::numeric_limits<double>::infinity());
    for (size_t s = 0; s < sets.size(); ++s) {
      SmallString<256> outDir(workDir);
      llvm::sys::path::append(outDir, "set" + std::to_string(s));
      SmallVector<StringRef> args = {quantize.runner, probeLib, "--output-dir",
                                     outDir};
      for (const std::string &a : sets[s])
        args.push_back(a);
      SmallString<256> log(workDir);
      llvm::sys::path::append(log, "run.log");
      std::optional<StringRef> redirects[] = {std::nullopt, StringRef(log),
                                              StringRef(log)};
      std::string execError;
      int rc = llvm::sys::ExecuteAndWait(quantize.runner, args, std::nullopt,
                                         redirects, 0, 0, &execError);
      if (rc != 0) {
        auto text = llvm::MemoryBuffer::getFile(log);
        return error() << "calibration run " << s + 1 << " of " << sets.size()
                       << " failed: "
                       << (rc < 0 ? execError
                           : text ? (*text)->getBuffer().trim().str()
                                  : "exit status " + std::to_string(rc));
      }
      for (size_t k = 0; k < calibrated.size(); ++k) {
        SmallString<256> file(outDir);
        llvm::sys::path::append(file,
                                "kiln_calibration_" + std::to_string(k) +
                                    ".npy");
        try {
          kiln_run::NpyArray a = kiln_run::readNpyFile(std::string(file));
          if (a.dtype != KILN_DTYPE_FLOAT32)
            return error() << "tensor '" << calibrated[k]
                           << "' is not float32: kiln quantizes f32 models";
          const float *v = (const float *)a.data.data();
          for (size_t i = 0; i < a.data.size() / 4; ++i)
            if (std::isfinite(v[i])) {
              lo[k] = std::min(lo[k], (double)v[i]);
              hi[k] = std::max(hi[k], (double)v[i]);
            }
        } catch (const kiln_run::NpyError &e) {
          return error() << "calibration output of tensor '" << calibrated[k]
                         << "': " << e.what();
        }
      }
      llvm::sys::fs::remove_directories(outDir);
    }
    note("calibrated " + std::to_string(calibrated.size()) + " tensors on " +
         std::to_string(sets.size()) + " input sets");
    return success();
  }

  /// Rewrites `model` in place: weights, biases, then Q/DQ pairs.
  void rewrite() {
    onnx::GraphProto *graph = model.mutable_graph();
    std::vector<onnx::NodeProto> front; // DequantizeLinear of constants
    llvm::StringMap<std::vector<float>> weightScales;
    llvm::StringMap<std::string> dequantizedWeights;
    std::vector<onnx::TensorProto> newInitializers;

    for (const QuantizedOp &op : ops) {
      onnx::NodeProto *node = graph->mutable_node(op.node);
      std::string key = op.weight + "/" + std::to_string(op.weightAxis);
      auto done = dequantizedWeights.find(key);
      if (done == dequantizedWeights.end()) {
        const onnx::TensorProto &w = *initializers[op.weight];
        std::vector<float> values;
        readFloats(w, values);
        SmallVector<int64_t> dims(w.dims().begin(), w.dims().end());
        int64_t channels = dims[op.weightAxis];
        int64_t inner = 1;
        for (size_t d = op.weightAxis + 1; d < dims.size(); ++d)
          inner *= dims[d];
        std::vector<float> scales(channels, 0.0f);
        for (size_t i = 0; i < values.size(); ++i) {
          int64_t c = (i / inner) % channels;
          scales[c] = std::max(scales[c], std::fabs(values[i]));
        }
        for (float &s : scales)
          s = s > 0 && std::isfinite(s) ? s / 127.0f : 1.0f;
        std::vector<int8_t> q(values.size());
        for (size_t i = 0; i < values.size(); ++i) {
          float r = std::nearbyint(values[i] / scales[(i / inner) % channels]);
          q[i] = (int8_t)std::clamp(r, -127.0f, 127.0f);
        }
        std::vector<int8_t> zeros(channels, 0);
        std::string base = op.weight + (op.weightAxis ? "_axis1" : "");
        newInitializers.push_back(makeTensor(base + "_quantized",
                                             onnx::TensorProto::INT8, dims,
                                             q.data(), q.size()));
        newInitializers.push_back(makeTensor(base + "_scale",
                                             onnx::TensorProto::FLOAT,
                                             {channels}, scales.data(),
                                             channels * 4));
        newInitializers.push_back(makeTensor(base + "_zero_point",
                                             onnx::TensorProto::INT8,
                                             {channels}, zeros.data(),
                                             channels));
        std::string out = base + "_dequantized";
        front.push_back(makeNode("DequantizeLinear",
                                 {base + "_quantized", base + "_scale",
                                  base + "_zero_point"},
                                 out, out, op.weightAxis));
        done = dequantizedWeights.try_emplace(key, out).first;
        weightScales[key] = std::move(scales);
      }
      node->set_input(1, done->second);

      // The bias: int32 with scale x_scale * w_scale[c] (computed in float,
      // as kiln-fold-qdq checks it), zero point 0.
      if (op.bias.empty())
        continue;
      const std::vector<float> &ws = weightScales[key];
      std::vector<float> b;
      readFloats(*initializers[op.bias], b);
      if (b.size() != ws.size())
        continue;
      size_t k = rangeIndex[op.input];
      float xs = activationParams(lo[k], hi[k]).scale;
      std::vector<float> scales(b.size());
      std::vector<int32_t> q(b.size()), zeros(b.size(), 0);
      for (size_t c = 0; c < b.size(); ++c) {
        scales[c] = xs * ws[c];
        double r = std::nearbyint((double)b[c] / (double)scales[c]);
        q[c] = (int32_t)std::clamp(r, (double)INT32_MIN + 1, (double)INT32_MAX);
      }
      std::string base = op.bias + "_" + nodeLabel(*node, op.node);
      int64_t n = (int64_t)b.size();
      newInitializers.push_back(makeTensor(base + "_quantized",
                                           onnx::TensorProto::INT32, {n},
                                           q.data(), n * 4));
      newInitializers.push_back(makeTensor(
          base + "_scale", onnx::TensorProto::FLOAT, {n}, scales.data(), n * 4));
      newInitializers.push_back(makeTensor(base + "_zero_point",
                                           onnx::TensorProto::INT32, {n},
                                           zeros.data(), n * 4));
      std::string out = base + "_dequantized";
      front.push_back(makeNode(
          "DequantizeLinear",
          {base + "_quantized", base + "_scale", base + "_zero_point"}, out,
          out, 0));
      node->set_input(2, out);
    }

    // Q/DQ pairs on the calibrated tensors; every reader of a tensor reads
    // its dequantized copy.
    llvm::StringMap<std::string> dequantized;
    llvm::StringMap<std::vector<onnx::NodeProto>> after; // producer output
    for (size_t k = 0; k < calibrated.size(); ++k) {
      const std::string &t = calibrated[k];
      ActivationParams p = activationParams(lo[k], hi[k]);
      newInitializers.push_back(makeTensor(t + "_scale",
                                           onnx::TensorProto::FLOAT, {},
                                           &p.scale, 4));
      newInitializers.push_back(makeTensor(t + "_zero_point",
                                           onnx::TensorProto::UINT8, {},
                                           &p.zeroPoint, 1));
      std::vector<onnx::NodeProto> pair = {
          makeNode("QuantizeLinear", {t, t + "_scale", t + "_zero_point"},
                   t + "_quantized", t + "_QuantizeLinear"),
          makeNode("DequantizeLinear",
                   {t + "_quantized", t + "_scale", t + "_zero_point"},
                   t + "_dequantized", t + "_DequantizeLinear")};
      dequantized[t] = t + "_dequantized";
      auto &slot = after[t];
      slot.insert(slot.end(), pair.begin(), pair.end());
    }
    for (onnx::NodeProto &node : *graph->mutable_node())
      for (int i = 0; i < node.input_size(); ++i) {
        auto it = dequantized.find(node.input(i));
        if (it != dequantized.end())
          node.set_input(i, it->second);
      }
    // Nodes in order: constants' DequantizeLinear first, the pairs of model
    // inputs, then each node followed by the pairs of what it produced.
    std::vector<onnx::NodeProto> nodes = std::move(front);
    auto emitPairs = [&](const std::string &tensor) {
      auto it = after.find(tensor);
      if (it != after.end())
        for (onnx::NodeProto &n : it->second)
          nodes.push_back(std::move(n));
    };
    for (const onnx::ValueInfoProto &in : graph->input())
      emitPairs(in.name());
    for (onnx::NodeProto &node : *graph->mutable_node()) {
      std::vector<std::string> outputs(node.output().begin(),
                                       node.output().end());
      nodes.push_back(std::move(node));
      for (const std::string &out : outputs)
        emitPairs(out);
    }
    graph->clear_node();
    for (onnx::NodeProto &n : nodes)
      *graph->add_node() = std::move(n);

    // Drop the f32 weights no node reads any more.
    llvm::StringSet<> read;
    for (const onnx::NodeProto &n : graph->node())
      for (const std::string &in : n.input())
        read.insert(in);
    auto *inits = graph->mutable_initializer();
    inits->erase(std::remove_if(inits->begin(), inits->end(),
                                [&](const onnx::TensorProto &t) {
                                  return !read.contains(t.name());
                                }),
                 inits->end());
    for (onnx::TensorProto &t : newInitializers)
      *graph->add_initializer() = std::move(t);
    initializers.clear();
  }

  MLIRContext &context;
  const CompileOptions &options;
  const QuantizeOptions &quantize;
  std::string workDir;
  Location loc;
  onnx::ModelProto model;
  std::map<std::string, onnx::TensorProto *> initializers;
  std::vector<QuantizedOp> ops;
  std::vector<std::string> calibrated;
  llvm::StringMap<size_t> rangeIndex;
  std::vector<double> lo, hi;
};

} // namespace

FailureOr<std::string> quantizeModel(MLIRContext &context,
                                     const CompileOptions &options,
                                     const QuantizeOptions &quantize,
                                     StringRef workDir) {
  return Quantizer(context, options, quantize, workDir).run();
}

} // namespace kiln
