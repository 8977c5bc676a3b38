// Helpers shared by the runtime tests.
#ifndef KILN_TEST_UNIT_RUNTIME_TEST_UTIL_H
#define KILN_TEST_UNIT_RUNTIME_TEST_UTIL_H

#include "kiln/runtime.h"

#include <cstdint>
#include <cstdlib>
#include <string>
#include <vector>

namespace kiln_test {

/// Path of a fake model module built by this folder's CMakeLists.txt.
std::string modelPath(const std::string &name);

/// A fresh directory, removed with its contents on destruction.
class TempDir {
public:
  TempDir();
  ~TempDir();
  const std::string &path() const { return dir; }
  std::string file(const std::string &name) const { return dir + "/" + name; }

private:
  std::string dir;
};

/// Writes a .npy file (format 1.0, or `major` 2/3) with the given descr
/// ("<f4", ...), shape and raw little-endian data.
void writeNpy(const std::string &path, const std::string &descr,
              const std::vector<int64_t> &shape, const void *data, size_t size,
              int major = 1);
void writeFile(const std::string &path, const std::string &contents);
std::string readFile(const std::string &path);

struct NpyContents {
  std::string descr;
  std::vector<int64_t> shape;
  std::string data;
};
/// Minimal reader for files kiln-run writes (format 1.0).
NpyContents readNpy(const std::string &path);

struct CommandResult {
  int exitCode;
  std::string out, err;
};
/// Runs `args` (quoted for the shell) and captures stdout and stderr.
CommandResult runCommand(const std::vector<std::string> &args);

/// Takes ownership of a status and returns "CODE: message" ("OK" for NULL).
std::string statusString(kiln_status status);

/// Sets (or, for a null value, unsets) an environment variable for one scope.
class ScopedEnv {
public:
  ScopedEnv(const char *name, const char *value) : name(name) {
    if (const char *old = std::getenv(name))
      saved = old, hadValue = true;
    if (value)
      setenv(name, value, 1);
    else
      unsetenv(name);
  }
  ~ScopedEnv() {
    if (hadValue)
      setenv(name, saved.c_str(), 1);
    else
      unsetenv(name);
  }
  ScopedEnv(const ScopedEnv &) = delete;
  ScopedEnv &operator=(const ScopedEnv &) = delete;

private:
  const char *name;
  std::string saved;
  bool hadValue = false;
};

} // namespace kiln_test

#endif
