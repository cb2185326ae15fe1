#pragma once
// Where a `kbv run` spent its time: wall time of the build and evaluation phases, and the
// workers' time summed per stage group (start-up, build, correctness and checks, timing,
// memory). Printed at the end of a run and kept in the run's record in the store.
#include <cstddef>
#include <map>
#include <string>

#include <nlohmann/json.hpp>

#include "core/stage_group.hpp"
#include "core/verdict.hpp"

namespace kbv {

struct RunThroughput {
  bool overlapped = false;           // --overlap-builds: both phases started together
  int build_jobs = 0;                // builds at once
  std::size_t builds = 0;            // distinct candidate sources built (or tried)
  std::size_t builds_cached = 0;     // sources skipped: already built for this device and kbv
  double build_phase_seconds = 0;    // wall
  double build_worker_seconds = 0;   // sum over the build workers (> wall when parallel)
  double build_cpu_seconds = 0;      // CPU of the build workers' whole process trees (compilers included)
  std::size_t evaluations = 0;       // verdicts from the evaluation phase
  double eval_phase_seconds = 0;     // wall
  std::map<std::string, double> eval_group_seconds;  // evaluation workers' time per stage group
  double eval_ahead_seconds = 0;     // start-up done ahead, while another evaluation had the device

  // new_source false: a second build of a source already counted (its time still adds up).
  void add_build(const Verdict& v, double cpu_seconds = 0, bool new_source = true);
  void add_evaluation(const Verdict& v);

  nlohmann::json to_json() const;
  std::string describe() const;  // a few lines for the terminal
};

}  // namespace kbv
