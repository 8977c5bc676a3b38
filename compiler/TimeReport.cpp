//===- TimeReport.cpp - where `kiln compile` spends its time --------------===//

#include "compiler/TimeReport.h"

#include "mlir/Pass/PassManager.h"

#include "llvm/Support/Format.h"

#if defined(__unix__) || defined(__APPLE__)
#include <sys/resource.h>
#endif

namespace kiln {

double peakResidentMB() {
#if defined(__unix__) || defined(__APPLE__)
  struct rusage usage;
  if (getrusage(RUSAGE_SELF, &usage) == 0)
#if defined(__APPLE__)
    return usage.ru_maxrss / (1024.0 * 1024.0); // bytes
#else
    return usage.ru_maxrss / 1024.0; // kilobytes
#endif
#endif
  return 0;
}

/// CPU seconds (user + system) used so far by this process and by the tools
/// it ran (clang, lld): on a loaded machine the honest measure of work.
static double cpuSeconds() {
#if defined(__unix__) || defined(__APPLE__)
  double total = 0;
  for (int who : {RUSAGE_SELF, RUSAGE_CHILDREN}) {
    struct rusage usage;
    if (getrusage(who, &usage) == 0)
      total += usage.ru_utime.tv_sec + usage.ru_utime.tv_usec * 1e-6 +
               usage.ru_stime.tv_sec + usage.ru_stime.tv_usec * 1e-6;
  }
  return total;
#else
  return 0;
#endif
}

TimeReport::TimeReport(bool enabled)
    : enabled(enabled), start(std::chrono::steady_clock::now()), last(start),
      lastCpu(enabled ? cpuSeconds() : 0) {}

TimeReport::~TimeReport() = default;

void TimeReport::mark(llvm::StringRef phase) {
  if (!enabled)
    return;
  auto now = std::chrono::steady_clock::now();
  double cpu = cpuSeconds();
  phases.push_back({phase.str(),
                    std::chrono::duration<double>(now - last).count(),
                    cpu - lastCpu, peakResidentMB()});
  last = now;
  lastCpu = cpu;
}

void TimeReport::instrument(mlir::PassManager &pm) {
  if (!enabled)
    return;
  // MLIR's pass timing, written into a string printed after the phases
  // (the manager prints when it is destroyed). One manager for every pass
  // manager: a pass that runs in several groups is listed once.
  if (!passTiming) {
    passStream = std::make_unique<llvm::raw_string_ostream>(passReport);
    passTiming = std::make_unique<mlir::DefaultTimingManager>();
    passTiming->setEnabled(true);
    passTiming->setDisplayMode(mlir::DefaultTimingManager::DisplayMode::List);
    passTiming->setOutput(mlir::createOutputStrategy(
        mlir::DefaultTimingManager::OutputFormat::Text, *passStream));
    passRoot = std::make_unique<mlir::TimingScope>(passTiming->getRootScope());
  }
  pm.enableTiming(*passRoot);
}

void TimeReport::print(llvm::raw_ostream &os) {
  if (!enabled)
    return;
  double total = 0, totalCpu = 0;
  for (const Phase &phase : phases) {
    total += phase.seconds;
    totalCpu += phase.cpuSeconds;
  }
  os << "===-------------------------------------------------------------===\n"
     << "  kiln compile time report\n"
     << "===-------------------------------------------------------------===\n"
     << "  wall s      %    cpu s   peak MB  phase\n";
  for (const Phase &phase : phases)
    os << llvm::format("%8.3f %6.1f %8.3f %9.1f  ", phase.seconds,
                       total > 0 ? 100 * phase.seconds / total : 0.0,
                       phase.cpuSeconds, phase.peakMB)
       << phase.name << "\n";
  os << llvm::format("%8.3f %6.1f %8.3f %9.1f  ", total, 100.0, totalCpu,
                     peakResidentMB())
     << "total\n"
     << "(cpu s: user + system time of kiln and the tools it ran; peak MB: "
        "kiln's peak resident memory so far)\n";
  if (passTiming) {
    passRoot.reset();
    passTiming.reset(); // prints into passReport
    passStream->flush();
    os << "\nMLIR passes by name (the three pass groups above; a nested "
          "pass summed over functions; \"root\" is the whole compile):\n"
       << passReport;
  }
  os.flush();
}

} // namespace kiln
