#pragma once
// `kbv run`: every candidate of a runs folder against its problem, under one or more
// protocols, into the results store. Builds first, in parallel on the CPU cores (each
// candidate once, into the content-addressed build cache), then evaluates one job at a time
// per device, so timing has the device to itself. A crash or hang costs one verdict; Ctrl-C
// stops cleanly; a re-run skips what the store already holds (natural key).
#include <iosfwd>
#include <string>
#include <vector>

namespace kbv {

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
  double time_budget = 2.0;
  double compile_timeout = 900;
  double run_timeout = 600;
  double sandbox_memory_gib = 64;     // host memory limit of each candidate's sandbox; 0: none
  bool quiet = false;
};

// Returns the process exit code: 0 done, 130 interrupted, 2 usage errors are thrown as UsageError.
int run_command(const RunOptions& options, const std::vector<std::string>& argv, std::ostream& out);

}  // namespace kbv
