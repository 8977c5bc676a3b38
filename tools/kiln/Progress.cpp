//===- Progress.cpp - `kiln compile`'s stage lines ------------------------===//

#include "tools/kiln/Progress.h"

#include "llvm/Support/Format.h"
#include "llvm/Support/raw_ostream.h"

#include <unistd.h>

using namespace llvm;

namespace kiln::tool {

/// A compile shorter than this shows nothing on a terminal by default.
constexpr double kQuietSeconds = 2.0;

ProgressReporter::ProgressReporter(Mode mode)
    : enabled_(mode == Mode::Always ||
               (mode == Mode::Auto && ::isatty(STDERR_FILENO))),
      live_(mode == Mode::Always), start_(Clock::now()), last_(start_) {}

void ProgressReporter::stage(StringRef stage, StringRef detail) {
  if (!enabled_)
    return;
  Clock::time_point now = Clock::now();
  double seconds = std::chrono::duration<double>(now - last_).count();
  double total = std::chrono::duration<double>(now - start_).count();
  last_ = now;
  std::string line;
  raw_string_ostream os(line);
  os << "kiln: " << format("%-16s", stage.str().c_str())
     << format("%7.2f s  (total %6.2f s)", seconds, total);
  if (!detail.empty())
    os << "  " << detail;
  os << "\n";
  if (!live_ && total >= kQuietSeconds) {
    live_ = true;
    for (const std::string &earlier : pending_)
      errs() << earlier;
    pending_.clear();
  }
  if (live_)
    errs() << line;
  else
    pending_.push_back(line);
}

} // namespace kiln::tool
