#pragma once
// What the CLI asks one worker to do. Sent as JSON on the worker's stdin (never on its command
// line, where the candidate could read the secret seed from /proc/self/cmdline).
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "core/defaults.hpp"

namespace kbv {

// A judge started ahead (kbv-judge --device-gate) reads one byte here when the device is its own.
inline constexpr int kDeviceGateFd = 5;

struct TimingOptions {
  bool enabled = true;
  double budget_seconds = defaults::kEvalTimeBudgetSeconds;  // stop sampling after this long, converged or not
  double min_seconds = 0.1;
  int min_rounds = 20;
  double target_rel_ci = defaults::kTargetRelativeCi;  // stop once the speedup's 95% CI is within +-1%
  double warmup_seconds = 0.2;
  int max_input_sets = 4;               // timed calls rotate over up to this many input sets
  std::int64_t input_set_budget_bytes = 4LL << 30;  // ...as long as they fit in this much memory
  // Also time torch.compile(Model) (default mode) as a baseline series. Off by default: the
  // first compile of a problem costs seconds to minutes (inductor caches it on disk after that).
  bool torch_compile = false;
};

struct WorkerJob {
  std::string problem_path;
  std::string candidate_path;
  std::string protocol = "verified";
  // kbv run: every protocol of the candidate, in this order, served by one sandbox (its start,
  // build load and teardown paid once); the judge sends one verdict per protocol it finished.
  // Empty: `protocol` alone.
  std::vector<std::string> protocols;
  std::string precision = "fp32";
  std::string device = "cuda:0";
  std::string size = "default";         // "small" applies the problem's KBV_SMALL overrides
  std::string build_root;               // candidate extensions build under build_root/<source hash>
  // The folders of the batch the candidate belongs to (kbv run: its runs folder; kbv eval: every
  // candidate's folder and those --hide-from-candidates names): hidden from its sandbox with the
  // candidate's own folder, so no candidate reads another. Empty: none.
  std::vector<std::string> batch_folders;
  std::uint64_t secret = 0;             // seeds strict's hidden distributions
  // A KernelBench-Verified hidden-test file (get_hidden_inputs()): its input lists become extra
  // correctness distributions, "hidden_1".."hidden_N". Empty: none.
  std::string hidden_tests_path;
  std::optional<double> tolerance;      // overrides the protocol's atol = rtol
  bool measure_memory = true;           // GPU only; the protocol may also turn it off
  // Stop after the build stage (kbv run builds candidates in parallel on the CPUs first, then
  // evaluates them one GPU at a time; the second import finds the build done).
  bool build_only = false;
  // With build_only on a CUDA device: build for this architecture ("9.0") without the device.
  // The sandbox sees no GPU and makes no CUDA context, so the build can run beside an evaluation
  // on the same GPU (kbv run --overlap-builds) without being a tenant of it.
  std::string build_cuda_arch;
  TimingOptions timing;
  // The judge enforces these on the candidate's sandbox, as absolute deadlines from its start:
  // the build (importing the candidate) must end within compile_timeout, and everything after
  // it within run_timeout. Nothing the sandbox says moves them.
  double compile_timeout_seconds = defaults::kCompileTimeoutSeconds;
  double run_timeout_seconds = defaults::kRunTimeoutSeconds;
  // Limits of the candidate's sandbox (docs/architecture.md); 0: none.
  std::int64_t sandbox_memory_bytes = static_cast<std::int64_t>(defaults::kSandboxMemoryGiB * (1LL << 30));
  std::int64_t sandbox_max_processes = defaults::kSandboxMaxProcesses;
};

// The protocols a job asks for, in order, each once: `protocols`, or `protocol` alone.
std::vector<std::string> job_protocols(const WorkerJob& job);

// A build for a CUDA device that runs without it (build_only with build_cuda_arch): the judge
// and the sandbox see no GPU.
bool device_free_build(const WorkerJob& job);

void to_json(nlohmann::json& j, const TimingOptions& t);
void from_json(const nlohmann::json& j, TimingOptions& t);
void to_json(nlohmann::json& j, const WorkerJob& job);
void from_json(const nlohmann::json& j, WorkerJob& job);

}  // namespace kbv
