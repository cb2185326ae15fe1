#pragma once
// The few groups that worker stages (Verdict::stage_seconds keys) are summed into when saying
// where evaluation time goes: start-up, build, correctness (and the strict checks), timing,
// memory. Shared by `kbv run`'s closing summary and `kbv report`'s cost table.
#include <array>
#include <map>
#include <string>
#include <string_view>

namespace kbv {

inline constexpr std::array<std::string_view, 5> kStageGroups = {"startup", "build", "correctness", "timing", "memory"};

inline std::string stage_group(const std::string& stage) {
  if (stage == "build" || stage == "built" || stage == "needs_device") return "build";
  if (stage == "timing") return "timing";
  if (stage == "memory") return "memory";
  if (stage == "models" || stage == "correctness" || stage == "audit" || stage == "reuse_check" || stage == "audit_problem")
    return "correctness";
  return "startup";  // start, setup, device, python, tracking, load_problem, done: process start-up and exit
}

// The start-up a judge started ahead did while another evaluation had the device (kbv run
// --prestart): part of no group, since it cost the device nothing.
inline constexpr std::string_view kAheadStage = "ahead";

// The judge's exit after it said the device was free again (its sandbox and twin gone, its own
// work done): the device's next turn had already begun, so it too cost the device nothing.
inline constexpr std::string_view kExitStage = "exit";

// Stages an evaluation spent off the device's path (ahead, exit): in no group, not in wall time.
inline bool off_device_stage(std::string_view stage) { return stage == kAheadStage || stage == kExitStage; }

// Adds a verdict's stage_seconds into per-group totals.
inline void add_stage_groups(const std::map<std::string, double>& stage_seconds, std::map<std::string, double>& groups) {
  for (const auto& [stage, seconds] : stage_seconds)
    if (!off_device_stage(stage)) groups[stage_group(stage)] += seconds;
}

}  // namespace kbv
