#pragma once
// The verdict of one (problem, candidate) evaluation: the product's unit of output. The worker
// fills what it measured; the CLI adds the outcome of the process itself (timeouts, crashes).
// Serialised as JSON with schema "kbv.verdict/1" (docs/verdict-schema.md); bump kSchema on any
// change that renames or removes a field.
#include <algorithm>
#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "core/outcome.hpp"

namespace kbv {

inline constexpr const char* kVerdictSchema = "kbv.verdict/1";

struct FileRef {
  std::string path;
  std::string sha256;
};

struct ProblemInfo {
  std::string path;
  std::string sha256;
  int level = 0;   // from the folder name ("level1"), 0 when unknown
  int id = -1;     // the number before the first '_' of the file name, -1 when unknown
  std::string name;
  std::string size = "default";  // "default" or "small" (KBV_SMALL overrides applied)
  std::optional<FileRef> hidden_tests;  // the hidden-test file whose inputs were also checked
};

struct DeviceInfo {
  std::string kind = "cpu";  // "cuda" or "cpu"
  std::string name;          // "NVIDIA H200" or the CPU model
  std::string capability;    // "9.0" on an H200; empty on CPU
  std::int64_t l2_bytes = 0;
  std::int64_t memory_bytes = 0;
  std::string driver;
  // Theoretical peak DRAM bandwidth (memory clock x bus width x 2), for implausible_speed; 0 when
  // unknown (CPU). KBV_PEAK_DRAM_BYTES_PER_S overrides it.
  double peak_dram_bytes_per_s = 0;
};

struct Provenance {
  std::string kbv_version;
  std::string git_commit;
  std::string torch_version;
  std::string cuda_version;
  std::string python_version;
  std::string hostname;
  std::string started_at;  // UTC, ISO 8601
  std::vector<std::string> argv;
};

struct ExtensionBuild {
  std::string requested_name;  // what the candidate passed to load_inline(name=...)
  std::string unique_name;     // what kbv built it as (never collides across candidates)
  std::string build_dir;
  double seconds = 0;
  bool cuda = false;
  // Its CUDA source compiled without its own #include <torch/extension.h> (sandbox/build_hooks).
  bool extension_h_left_out = false;
  // ... and with torch/types.h less the operators it does not name (the lean prelude).
  bool lean_prelude = false;
  // Its main.cpp compiled with torch/extension.h less the C++ frontend (the lean binding).
  bool lean_binding = false;
};

struct BuildResult {
  double seconds = 0;            // wall time of importing the candidate, builds included
  std::string build_dir;         // keyed by the candidate source's hash
  std::string log_path;          // compiler output of every extension
  std::string log_tail;
  std::vector<ExtensionBuild> extensions;
};

enum class DistributionStatus { pass, fail, skipped };

// The numerics check (docs/protocols.md, "Numerics"): computed where the tolerance check fails.
// Errors are against a float64 run of Model on the same inputs (the truth); the candidate passes
// when its error is within `factor` times eager PyTorch's own, in the max norm and in RMS.
struct NumericsCheck {
  double factor = 0;
  double candidate_max_abs_err = 0;
  double eager_max_abs_err = 0;
  double candidate_rms_err = 0;
  double eager_rms_err = 0;
  bool within = false;
  std::string note;  // why it could not be computed, when it could not
};

struct DistributionResult {
  std::string name;
  std::string kind;
  DistributionStatus status = DistributionStatus::pass;
  std::string reason;  // why it failed or was skipped; empty on pass
  double max_abs_err = 0;
  double max_rel_err = 0;
  std::int64_t mismatched = 0;  // elements outside atol + rtol*|ref|
  std::int64_t numel = 0;
  // A trivial output that also passes here ("zeros", "constant", "input"); empty when the
  // distribution discriminates. Every distribution trivial = a degenerate problem.
  std::string trivial_pass;
  std::optional<NumericsCheck> numerics;  // present where the tolerance check failed
  // mean |c - r| over the compared elements (KernelBench's avg_difference); absent where the
  // judge did not measure it.
  std::optional<double> mean_abs_err;
};

struct CorrectnessResult {
  double atol = 0;
  double rtol = 0;
  std::vector<DistributionResult> distributions;
  std::vector<std::string> skipped;  // names of distributions skipped (reference NaN/Inf...)
};

// Raw samples and their summary for one timed callable (candidate or a baseline).
struct SeriesStats {
  std::string name;  // "candidate", "eager_tf32_off", "eager_tf32_on"
  std::int64_t samples = 0;
  double median_ms = 0;
  double q1_ms = 0;
  double q3_ms = 0;
  double min_ms = 0;
  double max_ms = 0;
  double mean_ms = 0;
  std::vector<double> samples_ms;
};

struct SpeedupResult {
  std::string baseline;  // which series the candidate was compared with
  double median = 0;     // median over rounds of baseline_ms / candidate_ms (paired)
  double ci_low = 0;     // 95% confidence interval of that median
  double ci_high = 0;
  std::string compare;   // FASTER / SLOWER / SAME / UNSURE
};

struct TimingResult {
  std::string clock;           // "cuda_events" or "cpu_steady_clock"
  std::string primary_baseline;
  bool l2_flush = false;
  std::int64_t l2_flush_bytes = 0;
  int input_sets = 1;          // timed calls rotate over this many input sets
  int warmup_rounds = 0;
  int rounds = 0;
  double seconds = 0;
  std::string stop_reason;     // "converged" (CI within target) or "budget" (time ran out)
  double target_rel_ci = 0.01;
  std::vector<SeriesStats> series;
  std::vector<SpeedupResult> speedups;
  // The judge times the candidate (in the sandbox's process) and the baselines (behind a round
  // trip to its twin process) through the same cross-process hop; hop_ms is the median of that
  // round trip alone, measured in the same rounds and subtracted from every sample above.
  double hop_ms = 0;
  std::int64_t hop_samples = 0;
  // Every call's work was queued before the timing started (the judge's stream held by a gate),
  // so host dispatch is outside the samples; false when a forward() synchronised (or queued more
  // than the launch queue holds) and the host's time is in them.
  bool gated = false;
  // Timed calls whose outputs the judge read and compared with the reference of their inputs
  // (every call whose reference is finite, warm-up included).
  int checked_calls = 0;
  // Candidate samples credited the floor (2 us): its call ended within that of the hop. When half
  // or more are, the speedup rests on the timer's floor, not on the kernel: never FASTER.
  int floor_samples = 0;
  // torch.compile(Model)'s first call (compilation, or a load from inductor's cache), when the
  // torch_compile series was asked for; its failure is a warning, not the candidate's.
  std::optional<double> torch_compile_seconds;
  // Every baseline and hop sample was taken with the candidate's sandbox frozen (its cgroup's
  // freezer, else SIGSTOP to its PID namespace): none of its processes ran meanwhile.
  bool sandbox_frozen = false;
  // GPU: the hop timed again once the sandbox had ended (its context gone, so an idle device),
  // and the share of the timed rounds' hops above 1.25x that idle hop's 90th percentile + 20 us:
  // work of the sandbox's context left on the GPU while the judge timed anything else
  // (docs/checks.md, device_busy).
  std::optional<double> idle_hop_ms;
  std::optional<double> busy_hop_share;
  // CPU: the time the judge's threads spent waiting for a core during the counted baseline
  // samples, as a share of those samples' time (the kernel's schedstat). Above 0.1 the host was
  // contended and every speedup is UNSURE (docs/timing.md).
  std::optional<double> cpu_wait_share;
  // The protocol whose rounds these are, where that is another protocol of the same candidate
  // served by the same sandbox with the same setting (verified takes strict's: docs/timing.md);
  // empty when the rounds are this protocol's own.
  std::string rounds_of;
};

struct MemoryUse {
  std::int64_t peak_allocated_bytes = 0;  // caching allocator, above what was allocated before
  std::int64_t peak_device_bytes = 0;     // all device allocations incl. raw cudaMalloc
  std::int64_t resident_bytes = 0;        // held between calls: every tensor reachable from the
                                          // model object and its module's globals (held_memory.hpp)
  // Candidate: the device memory of its sandbox's processes as the driver accounts it (NVML, per
  // process) above that of kbv's twin (a bare torch process with a CUDA context), the most the
  // judge saw at random timed rounds, between calls and with a call queued. The judge's own
  // observation, where the three figures above are the sandbox's account.
  std::optional<std::int64_t> process_bytes;
  // What a process that runs a model holds beyond the model's own memory, which the baseline's
  // figures (measured in the judge, above what was allocated before) do not count: the workspaces
  // of the libraries it calls and the code of the kernels it loads. On the H200 an honest
  // torch.matmul candidate's processes held 32 MiB more than its peak and held memory (cuBLAS's
  // workspace), a LayerNorm 12 MiB (bench/RESULTS.md, 2026-12-02).
  static constexpr std::int64_t kProcessOverheadBytes = std::int64_t{64} << 20;
  // What running the model needs: what it holds plus the peak of one forward, or, when larger, its
  // processes' whole device memory less that overhead. Reports compare this.
  std::int64_t footprint_bytes() const {
    return std::max(resident_bytes + peak_device_bytes, process_bytes.value_or(0) - kProcessOverheadBytes);
  }
};

struct MemoryResult {
  std::string method;  // how peak_device_bytes was observed
  MemoryUse candidate;
  MemoryUse baseline;
  double ratio_allocated = 0;  // candidate / baseline, peaks
  double ratio_device = 0;
  double ratio_footprint = 0;  // candidate / baseline, footprint_bytes()
};

// An integrity finding of the strict protocol (docs/checks.md), or an informational mark such as
// no_custom_kernel or degenerate. `evidence` says which call, which tensor and how much.
struct Flag {
  std::string name;
  std::string evidence;
  bool operator==(const Flag&) const = default;
};

// The time limits an evaluation ran under, as kbv run and kbv eval set them (0: unknown). A
// stored timeout is evaluated again by a re-run with a larger limit (docs/store.md, "Resume").
struct VerdictLimits {
  double compile_timeout_seconds = 0;
  double run_timeout_seconds = 0;
};

struct Verdict {
  std::string schema = kVerdictSchema;
  std::string protocol;
  int protocol_version = 0;
  std::string precision = "fp32";
  Outcome outcome = Outcome::crashed;
  std::string reason;   // one line a user can act on; empty when correct
  std::string stage;    // the last stage the worker reached
  ProblemInfo problem;
  FileRef candidate;
  DeviceInfo device;
  Provenance provenance;
  std::optional<BuildResult> build;
  std::optional<CorrectnessResult> correctness;
  std::optional<TimingResult> timing;
  std::optional<MemoryResult> memory;
  bool custom_kernel = false;         // a candidate extension was built and loaded
  std::vector<Flag> flags;            // integrity flags (strict); empty elsewhere
  std::vector<std::string> warnings;
  std::string output_tail;            // last bytes the worker printed (stdout + stderr)
  // What isolated the candidate's sandbox (isolation/isolation_report.hpp); empty when none ran.
  nlohmann::json isolation;
  double wall_seconds = 0;
  // Wall seconds spent in each worker stage, measured by the orchestrator from the worker's
  // stage messages ("start" = process start-up until the worker's first message). Where an
  // evaluation's time goes: start-up, build, correctness, timing, memory.
  std::map<std::string, double> stage_seconds;
  std::optional<VerdictLimits> limits;  // absent in verdicts written before kbv recorded them
};

void to_json(nlohmann::json& j, const Outcome& o);
void from_json(const nlohmann::json& j, Outcome& o);
void to_json(nlohmann::json& j, const ProblemInfo& p);
void from_json(const nlohmann::json& j, ProblemInfo& p);
void to_json(nlohmann::json& j, const TimingResult& t);
void to_json(nlohmann::json& j, const MemoryUse& m);
void from_json(const nlohmann::json& j, MemoryUse& m);
void from_json(const nlohmann::json& j, TimingResult& t);
void to_json(nlohmann::json& j, const DistributionResult& d);
void from_json(const nlohmann::json& j, DistributionResult& d);
void to_json(nlohmann::json& j, const Verdict& v);
void from_json(const nlohmann::json& j, Verdict& v);

std::string_view distribution_status_name(DistributionStatus s);

nlohmann::json device_to_json(const DeviceInfo& d);
DeviceInfo device_from_json(const nlohmann::json& j);

}  // namespace kbv
