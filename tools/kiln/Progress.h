//===- Progress.h - `kiln compile`'s stage lines ----------------*- C++ -*-===//
//
// One line per stage on stderr: its name, its time, the total and what it
// produced. By default only on a terminal and only once the compile has taken
// 2 s (a small model compiles silently); --progress / --verbose always,
// --quiet never.
//
//===----------------------------------------------------------------------===//
#ifndef KILN_TOOLS_KILN_PROGRESS_H
#define KILN_TOOLS_KILN_PROGRESS_H

#include "llvm/ADT/StringRef.h"

#include <chrono>
#include <string>
#include <vector>

namespace kiln::tool {

class ProgressReporter {
public:
  enum class Mode { Auto, Always, Never };
  explicit ProgressReporter(Mode mode);

  /// Whether stage lines may be printed at all (CompileOptions::progress is
  /// set only then).
  bool enabled() const { return enabled_; }
  void stage(llvm::StringRef stage, llvm::StringRef detail);

private:
  using Clock = std::chrono::steady_clock;
  bool enabled_;
  bool live_;
  Clock::time_point start_, last_;
  std::vector<std::string> pending_;
};

} // namespace kiln::tool

#endif // KILN_TOOLS_KILN_PROGRESS_H
