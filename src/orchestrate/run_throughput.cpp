#include "orchestrate/run_throughput.hpp"

#include <algorithm>

#include <fmt/format.h>

namespace kbv {

void RunThroughput::add_build(const Verdict& v, double cpu_seconds, bool new_source) {
  if (new_source) ++builds;
  build_worker_seconds += v.wall_seconds;
  build_cpu_seconds += cpu_seconds;
}

void RunThroughput::add_evaluation(const Verdict& v) {
  ++evaluations;
  add_stage_groups(v.stage_seconds, eval_group_seconds);
  if (auto it = v.stage_seconds.find(std::string(kAheadStage)); it != v.stage_seconds.end()) eval_ahead_seconds += it->second;
}

nlohmann::json RunThroughput::to_json() const {
  return {{"overlapped", overlapped},
          {"build_jobs", build_jobs},
          {"builds", builds},
          {"builds_cached", builds_cached},
          {"build_phase_seconds", build_phase_seconds},
          {"build_worker_seconds", build_worker_seconds},
          {"build_cpu_seconds", build_cpu_seconds},
          {"evaluations", evaluations},
          {"eval_phase_seconds", eval_phase_seconds},
          {"eval_group_seconds", eval_group_seconds},
          {"eval_ahead_seconds", eval_ahead_seconds}};
}

std::string RunThroughput::describe() const {
  std::string out;
  out += fmt::format("  build phase: {} candidate sources, {} at a time: {:.1f} s wall, {:.1f} s of worker time ({:.1f}x parallel); "
                     "{} already built\n",
                     builds, build_jobs, build_phase_seconds, build_worker_seconds,
                     build_phase_seconds > 0 ? build_worker_seconds / build_phase_seconds : 0.0, builds_cached);
  if (builds > 0 && build_cpu_seconds > 0)
    out += fmt::format("  build CPU: {:.1f} s per source (user + system of each build worker's processes, compilers included)\n",
                       build_cpu_seconds / static_cast<double>(builds));
  double per_hour = eval_phase_seconds > 0 ? static_cast<double>(evaluations) * 3600.0 / eval_phase_seconds : 0.0;
  out += fmt::format("  evaluation phase: {} evaluations in {:.1f} s wall ({:.0f} per hour, {:.1f} s each)\n", evaluations,
                     eval_phase_seconds, per_hour, evaluations ? eval_phase_seconds / static_cast<double>(evaluations) : 0.0);
  if (!eval_group_seconds.empty()) {
    out += "  evaluation time by stage:";
    for (std::string_view g : kStageGroups) {
      auto it = eval_group_seconds.find(std::string(g));
      out += fmt::format(" {} {:.1f} s", g, it == eval_group_seconds.end() ? 0.0 : it->second);
    }
    out += "\n";
  }
  if (eval_ahead_seconds > 0)
    out += fmt::format("  start-up done ahead, while another evaluation had the device (--prestart): {:.1f} s\n", eval_ahead_seconds);
  // Overlapped, both phases began together: the run lasted as long as the longer one.
  double total = overlapped ? std::max(build_phase_seconds, eval_phase_seconds) : build_phase_seconds + eval_phase_seconds;
  if (total > 0 && evaluations + builds > 0)
    out += fmt::format("  overall: {:.1f} s wall{}\n", total, overlapped ? " (builds and evaluation overlapped)" : "");
  return out;
}

}  // namespace kbv
