//===- main.cpp - running a kiln model from C++ with kiln/runtime.hpp ------===//
//
//   kiln_cpp_example MODEL.so [THREADS]
//
// Opens the model, describes it, runs it on inputs filled with ones, prints
// the outputs, runs it from two threads with a run context each, and shows the
// error a bad input gives. Every failure is a kiln::Error with the runtime's
// status code and message.
//
//===----------------------------------------------------------------------===//

#include "kiln/runtime.hpp"

#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <iostream>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

namespace {

std::string shapeString(const std::vector<int64_t> &shape) {
  std::ostringstream s;
  s << '[';
  for (size_t i = 0; i < shape.size(); ++i)
    s << (i ? "," : "") << shape[i];
  s << ']';
  return s.str();
}

/// Up to 8 elements of an output, for the types this example prints.
std::string firstValues(const kiln::Tensor &t) {
  std::ostringstream s;
  auto print = [&](auto span) {
    for (size_t i = 0; i < span.size() && i < 8; ++i)
      s << (i ? " " : "") << span[i];
    if (span.size() > 8)
      s << " ...";
  };
  switch (t.dtype()) {
  case KILN_DTYPE_FLOAT32: print(t.data<float>()); break;
  case KILN_DTYPE_INT64: print(t.data<int64_t>()); break;
  case KILN_DTYPE_INT32: print(t.data<int32_t>()); break;
  default: s << "(" << t.byteSize() << " bytes)"; break;
  }
  return s.str();
}

/// A buffer of ones of the input's type (a float 1.0f, an integer 1, ...).
std::vector<unsigned char> ones(const kiln::TensorInfo &info) {
  std::vector<unsigned char> bytes(info.byteSize());
  size_t size = kiln_dtype_size(info.dtype);
  for (size_t at = 0; at + size <= bytes.size(); at += size) {
    switch (info.dtype) {
    case KILN_DTYPE_FLOAT32: { float one = 1; std::memcpy(&bytes[at], &one, 4); break; }
    case KILN_DTYPE_FLOAT64: { double one = 1; std::memcpy(&bytes[at], &one, 8); break; }
    default: bytes[at] = 1; break; // little-endian integers and bool
    }
  }
  return bytes;
}

} // namespace

int main(int argc, char **argv) {
  if (argc < 2 || argc > 3 ||
      (argc == 3 && std::strspn(argv[2], "0123456789") != std::strlen(argv[2]))) {
    std::cerr << "usage: " << argv[0] << " MODEL.so [THREADS]\n";
    return 2;
  }
  try {
    kiln::Options options;
    options.threads = argc > 2 ? std::atoi(argv[2]) : 0;
    kiln::Model model = kiln::Model::open(argv[1], options);
    std::cout << "model " << model.name() << ", " << model.numThreads()
              << " threads\n";

    std::vector<std::vector<unsigned char>> storage;
    std::vector<kiln::Input> inputs;
    for (const kiln::TensorInfo &info : model.inputs()) {
      std::cout << "input " << info.name << " " << info.dtypeName() << " "
                << shapeString(info.shape.vec()) << "\n";
      storage.push_back(ones(info));
      inputs.push_back({info.name, info.dtype, info.shape.vec(),
                        storage.back().data(), storage.back().size()});
    }

    // The runtime allocates the outputs; kiln::Tensor frees them.
    for (const kiln::Tensor &t : model.run(inputs))
      std::cout << "output " << t.name() << " " << t.dtypeName() << " "
                << shapeString(t.shape()) << ": " << firstValues(t) << "\n";

    // Two threads, each with its own run context (its own scratch arena).
    std::vector<std::string> seen(2);
    std::vector<std::thread> threads;
    for (int t = 0; t < 2; ++t)
      threads.emplace_back([&, t] {
        kiln::RunContext context(model);
        for (int i = 0; i < 100; ++i)
          seen[t] = firstValues(context.run(inputs)[0]);
      });
    for (std::thread &t : threads)
      t.join();
    std::cout << "threads agree: " << (seen[0] == seen[1] ? "yes" : "no") << "\n";

    // A bad input: the runtime's message names it.
    if (!inputs.empty()) {
      inputs[0].shape.push_back(1);
      try {
        model.run(inputs);
      } catch (const kiln::Error &e) {
        std::cout << "bad input: " << e.codeName() << ": " << e.what() << "\n";
      }
    }
  } catch (const kiln::Error &e) {
    std::cerr << "error: " << e.codeName() << ": " << e.what() << "\n";
    return 1;
  }
  return 0;
}
