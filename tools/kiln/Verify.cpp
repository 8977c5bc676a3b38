//===- Verify.cpp - `kiln verify`: kiln against onnxruntime ---------------===//
//
// The comparison, the bisection and the reproducer are Python
// (python/kiln/verify.py: onnx rewrites the graph, onnxruntime is the
// reference); this verb finds a Python that has onnxruntime and runs the
// script with this kiln. The Python is $KILN_PYTHON, else the project's
// .venv, else python3 on PATH.
//
//===----------------------------------------------------------------------===//

#include "tools/kiln/Commands.h"

#include "llvm/ADT/SmallString.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/Program.h"
#include "llvm/Support/raw_ostream.h"

#include <cstdlib>
#include <optional>
#include <vector>

using namespace llvm;

namespace kiln::tool {
namespace {

/// A Python that can import onnx, onnxruntime and numpy, or std::nullopt.
std::optional<std::string> findPython(std::string &tried) {
  std::vector<std::string> candidates;
  if (const char *env = std::getenv("KILN_PYTHON"))
    candidates.push_back(env);
  SmallString<256> venv(KILN_SOURCE_DIR);
  sys::path::append(venv, ".venv", "bin", "python");
  candidates.push_back(std::string(venv));
  if (ErrorOr<std::string> onPath = sys::findProgramByName("python3"))
    candidates.push_back(*onPath);
  for (const std::string &python : candidates) {
    if (!sys::fs::can_execute(python))
      continue;
    tried += "\n  " + python;
    StringRef argv[] = {python, "-c", "import numpy, onnx, onnxruntime"};
    std::optional<StringRef> redirects[] = {std::nullopt, StringRef(""),
                                            StringRef("")};
    if (sys::ExecuteAndWait(python, argv, std::nullopt, redirects) == 0)
      return python;
  }
  return std::nullopt;
}

std::optional<std::string> findScript(const char *argv0) {
  std::vector<std::string> candidates;
  if (const char *env = std::getenv("KILN_VERIFY_SCRIPT"))
    candidates.push_back(env);
  SmallString<256> source(KILN_SOURCE_DIR);
  sys::path::append(source, "python", "kiln", "verify.py");
  candidates.push_back(std::string(source));
  std::string self = sys::fs::getMainExecutable(argv0, (void *)&findScript);
  SmallString<256> installed(
      sys::path::parent_path(sys::path::parent_path(self)));
  sys::path::append(installed, "share", "kiln", "verify.py");
  candidates.push_back(std::string(installed));
  for (const std::string &path : candidates)
    if (sys::fs::is_regular_file(path))
      return path;
  return std::nullopt;
}

} // namespace

int runVerify(const char *argv0, ArrayRef<StringRef> args) {
  std::optional<std::string> script = findScript(argv0);
  if (!script) {
    errs() << "kiln: error: kiln verify needs python/kiln/verify.py (set "
              "KILN_VERIFY_SCRIPT to its path)\n";
    return 1;
  }
  std::string tried;
  std::optional<std::string> python = findPython(tried);
  if (!python) {
    errs() << "kiln: error: kiln verify needs a Python with numpy, onnx and "
              "onnxruntime (pip install onnxruntime onnx numpy, or set "
              "KILN_PYTHON); tried:"
           << (tried.empty() ? std::string("\n  (no python found)") : tried)
           << "\n";
    return 1;
  }
  std::string self = sys::fs::getMainExecutable(argv0, (void *)&findScript);
  std::vector<StringRef> argv = {*python, *script, "--kiln", self};
  argv.insert(argv.end(), args.begin(), args.end());
  std::string error;
  int rc = sys::ExecuteAndWait(*python, argv, std::nullopt, {}, 0, 0, &error);
  if (rc < 0) {
    errs() << "kiln: error: running " << *script << " failed: " << error
           << "\n";
    return 1;
  }
  return rc;
}

} // namespace kiln::tool
