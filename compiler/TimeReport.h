//===- TimeReport.h - where `kiln compile` spends its time -------*- C++ -*-===//
//
// `kiln compile --time-report`: wall time and peak memory of each phase
// (import, MLIR passes, LLVM translation, weights, LLVM optimization, code
// generation, linking), then MLIR's own per-pass timing, as plain text on
// stderr. Phases are closed in order by `mark`; a disabled report costs a
// branch per phase.
//
//===----------------------------------------------------------------------===//
#ifndef KILN_COMPILER_TIMEREPORT_H
#define KILN_COMPILER_TIMEREPORT_H

#include "mlir/Support/Timing.h"

#include "llvm/ADT/SmallVector.h"
#include "llvm/ADT/StringRef.h"
#include "llvm/Support/raw_ostream.h"

#include <chrono>
#include <memory>
#include <string>

namespace mlir {
class PassManager;
} // namespace mlir

namespace kiln {

class TimeReport {
public:
  explicit TimeReport(bool enabled);
  ~TimeReport();

  bool isEnabled() const { return enabled; }

  /// Ends the phase named `phase`: the time since the previous mark (or the
  /// report's creation) and the process's peak memory so far.
  void mark(llvm::StringRef phase);

  /// Times every pass `pm` runs (listed by pass, after the phases).
  void instrument(mlir::PassManager &pm);

  /// Writes the report (phases, total, MLIR passes) to `os`.
  void print(llvm::raw_ostream &os);

private:
  struct Phase {
    std::string name;
    double seconds;
    double cpuSeconds;
    double peakMB;
  };
  bool enabled;
  std::chrono::steady_clock::time_point start, last;
  double lastCpu;
  llvm::SmallVector<Phase> phases;
  std::string passReport;
  std::unique_ptr<llvm::raw_string_ostream> passStream;
  std::unique_ptr<mlir::DefaultTimingManager> passTiming;
  std::unique_ptr<mlir::TimingScope> passRoot;
};

/// The process's peak resident memory so far, in MB (0 where unknown).
double peakResidentMB();

} // namespace kiln

#endif // KILN_COMPILER_TIMEREPORT_H
