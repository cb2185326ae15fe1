#pragma once
// `kbv run`: every candidate of a runs folder against its problem, under one or more
// protocols, into the results store. Builds first, in parallel on the CPU cores (each
// candidate once, into the content-addressed build cache), then evaluates one job at a time
// per device, so timing has the device to itself. A crash or hang costs one verdict; Ctrl-C
// stops cleanly; a re-run skips what the store already holds (natural key, resume_rule.hpp).
// What survives what (Ctrl-C, kill -9, a locked DB, a full disk, two runs): docs/store.md.
#include <iosfwd>
#include <optional>
#include <string>
#include <vector>

#include "core/defaults.hpp"
#include "orchestrate/run_scan.hpp"

namespace kbv {

// Exit codes of run_command besides 0 (done) and the CLI's 1 (error) and 2 (usage).
// Every evaluation of the run was an internal_error: kbv judged nothing (verdicts are stored and
// the next run evaluates them again).
inline constexpr int kExitAllInternalErrors = 1;
inline constexpr int kExitStoreFailed = 74;  // the DB failed mid-run; finished verdicts are in the spill file (EX_IOERR)
inline constexpr int kExitDbBusy = 75;       // another kbv run holds the DB; nothing done (EX_TEMPFAIL)
inline constexpr int kExitInterrupted = 130; // Ctrl-C or SIGTERM; verdicts so far are stored

struct RunOptions {
  std::string problems_dir;
  std::string runs_dir;
  std::string db_path = "kbv.db";
  std::vector<std::string> protocols = {"verified"};
  std::string precision = "fp32";
  std::vector<std::string> devices;  // "cuda:0", "cuda:1"...; empty: auto (every GPU, or the CPU)
  int jobs = 0;                      // parallel builds; 0: the number of cores
  std::string size = "auto";         // default | small | auto (small on the CPU)
  std::string build_dir;             // default: $KBV_CACHE/builds
  double time_budget = defaults::kRunTimeBudgetSeconds;
  double compile_timeout = defaults::kCompileTimeoutSeconds;
  double run_timeout = defaults::kRunTimeoutSeconds;
  double sandbox_memory_gib = defaults::kSandboxMemoryGiB;  // host memory limit of each candidate's sandbox; 0: none
  // How long a failing store write is retried (with backoff) before the run stops and keeps
  // its verdicts in the spill file; also bounds SQLite's busy_timeout.
  double store_wait = 300;
  RunFilter filter;                  // --level, --ids, --run
  std::string hidden_tests_dir;      // --hidden-tests: <dir>/level<L>/<id>_hidden.py checked as extra distributions
  bool torch_compile = false;        // --torch-compile: also time torch.compile(Model)
  std::string torch_pch = "auto";    // --torch-pch auto | on | off: precompile torch/extension.h before the builds
  // --prestart N: judges started ahead per device, their start-up done while the device runs
  // another evaluation (DeviceTurns); -1: auto (2 on a GPU, 0 on the CPU, whose timing the
  // start-up would disturb).
  int prestart = -1;
  // --sandbox-per-protocol: each protocol of a candidate in a judge (and sandbox) of its own, as
  // before one sandbox served them all; for comparing the two, and as a fallback.
  bool sandbox_per_protocol = false;
  // Evaluate each candidate as soon as its build ends, while the rest build (niced, on all but
  // two cores per device, without the GPU: docs/scale.md). Unset: on where it can be (a GPU, and
  // Landlock ABI 5), silently off elsewhere; --overlap-builds (true) says why when it cannot be;
  // --no-overlap-builds (false): builds first.
  std::optional<bool> overlap_builds;
  bool list = false;                 // print the plan (what would be evaluated) and stop
  bool quiet = false;
};

// Where kbv run spills verdicts when the DB's own folder cannot take them either:
// $KBV_CACHE/spill (docs/store.md, "Store failures and the spill file"). kbv report looks there too.
std::string spill_fallback_dir();

// Throws UsageError for a value that cannot work (a limit of 0, NaN, an unknown protocol, an
// unusable --build-dir), before any work. Merges a protocol given twice, with a note on `out`.
void check_run_options(RunOptions& options, std::ostream& out);

// Returns the process exit code (0, kExitAllInternalErrors, kExitStoreFailed, kExitDbBusy, kExitInterrupted); usage
// errors are thrown as UsageError.
int run_command(const RunOptions& options, const std::vector<std::string>& argv, std::ostream& out);

}  // namespace kbv
