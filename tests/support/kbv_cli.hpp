#pragma once
// Runs the real `kbv eval` binary and reads back the JSON verdict it wrote, or the real kbv-judge
// on one job. Shared by the CPU integration tests and the GPU tests.
#include <fcntl.h>
#include <sys/file.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <filesystem>
#include <fstream>
#include <map>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "core/job.hpp"
#include "fresh_temp_dir.hpp"
#include "orchestrate/subprocess.hpp"

namespace kbv::testing {

inline const std::string kSource = KBV_SOURCE_DIR;
inline const std::string kBin = KBV_BIN_DIR;

inline std::string example_problem(const std::string& file) { return kSource + "/examples/problems/level1/" + file; }
inline std::string example_candidate(const std::string& file) { return kSource + "/examples/candidates/" + file; }
inline std::string fixture(const std::string& file) { return kSource + "/tests/integration/fixtures/" + file; }
// examples/attacks/NAME.py bundled with its helper module and `settings` (bundle.py --set) into
// `dest`, as the sandbox sees a candidate file alone. Throws if bundle.py fails.
inline void bundle_attack(const std::string& name, const std::string& dest, const std::map<std::string, std::string>& settings = {}) {
  ProcessSpec spec;
  spec.argv = {"python3", kSource + "/examples/attacks/bundle.py"};
  for (const auto& [key, value] : settings) spec.argv.insert(spec.argv.end(), {"--set", key + "=" + value});
  spec.argv.push_back(kSource + "/examples/attacks/" + name + ".py:" + dest);
  ProcessResult r = run_process(spec, Clock::now() + std::chrono::seconds(60));
  if (!r.exited || r.exit_code != 0) throw std::runtime_error("bundle.py failed for " + name + ": " + r.output_head);
}

// bundle_attack into a file of its own: <temp>/kbv-attack-<pid>/NAME.py.
inline std::string bundled_attack(const std::string& name) {
  const auto dir = std::filesystem::temp_directory_path() / ("kbv-attack-" + std::to_string(::getpid()));
  std::filesystem::create_directories(dir);
  const std::string out = (dir / (name + ".py")).string();
  bundle_attack(name, out);
  return out;
}

// One build folder per test process: a candidate used by several tests is built once.
inline const std::string& build_dir() {
  static const std::string dir = [] {
    auto d = std::filesystem::temp_directory_path() / ("kbv-test-builds-" + std::to_string(::getpid()));
    std::filesystem::create_directories(d);
    return d.string();
  }();
  return dir;
}

#ifdef KBV_SHARED_BUILD_DIR
// The build folder of the tests that evaluate the same C++ extension sources (relu_cpp_ext,
// swish_cpp_ext, honest_shape_specialised): each is compiled once per ctest run, not once per test
// (~25 s of CPU a compile on the 2-core machine). A test that checks how a build is made, or
// leaves a build folder other than it found it, keeps its own build_dir().
// ctest empties it before the first of them (the fixture kbv_shared_builds, tests/schedule) and
// runs them one at a time (the lock of the same name): two judges on one cache entry at once
// either wait for each other (a ctest slot held idle through another test's build) or, with a
// kbv older than the build cache's entry lock, collide (each hands the entry to its own sandbox's
// uid). The lock on the folder, held for the rest of the test process, keeps them apart when they
// are run without ctest as well.
inline const std::string& shared_build_dir() {
  static const std::string dir = [] {
    const std::string d = KBV_SHARED_BUILD_DIR;
    std::filesystem::create_directories(d);
    int fd = ::open((d + "/.kbv-test-lock").c_str(), O_RDWR | O_CREAT | O_CLOEXEC, 0644);
    if (fd >= 0) ::flock(fd, LOCK_EX);  // released when the test process ends
    return d;
  }();
  return dir;
}
#endif


struct CliResult {
  ProcessResult process;
  nlohmann::json verdict;  // null when kbv wrote none

  std::string outcome() const { return verdict.is_object() ? verdict.value("outcome", "") : "<no verdict>"; }
  std::string reason() const { return verdict.is_object() ? verdict.value("reason", "") : ""; }
  // What to print when an expectation fails.
  // Everything kbv printed that was kept (the head, then the tail after it).
  std::string output() const { return process.output_head + process.output_tail; }
  std::string context() const {
    return output() + "\n" + (verdict.is_object() ? verdict.dump(1).substr(0, 4000) : "");
  }
};

// kbv eval <args> --device <device> --json <tmp> --build-dir <builds> [--time-budget ...]
// `builds`: build_dir() unless given (shared_build_dir()).
inline CliResult run_kbv_eval(std::vector<std::string> args, const std::string& device,
                              double timeout_seconds = 900, const std::string& builds = "",
                              const std::map<std::string, std::string>& env = {}) {
  static std::atomic<int> counter{0};  // tests may evaluate from several threads
  std::string json_path = build_dir() + "/verdict-" + std::to_string(++counter) + ".json";
  ProcessSpec spec;
  spec.argv = {kBin + "/kbv", "eval"};
  spec.argv.insert(spec.argv.end(), args.begin(), args.end());
  spec.argv.insert(spec.argv.end(), {"--device", device, "--json", json_path, "--build-dir", builds.empty() ? build_dir() : builds});
  spec.env_set = env;
  auto deadline = Clock::now() + std::chrono::seconds(static_cast<long>(timeout_seconds));
  CliResult r;
  r.process = run_process(spec, deadline);
  std::ifstream in(json_path);
  if (in) r.verdict = nlohmann::json::parse(in, nullptr, false);
  return r;
}

struct JudgeVerdicts {
  ProcessResult process;
  std::map<std::string, nlohmann::json> verdicts;  // by protocol
  int verdicts_before_released = -1;               // verdicts it had sent when it said "released"; -1: never said
};

// The real kbv-judge on one job, given on stdin as kbv gives it; the verdicts it reports.
inline JudgeVerdicts run_judge_job(const WorkerJob& job, Clock::duration limit, std::map<std::string, std::string> env = {}) {
  ProcessSpec spec;
  spec.argv = {kBin + "/kbv-judge"};
  spec.stdin_data = nlohmann::json(job).dump();
  spec.env_set = std::move(env);
  JudgeVerdicts r;
  r.process = run_process(spec, Clock::now() + limit, [&](const std::string& line) -> std::optional<Clock::time_point> {
    auto m = nlohmann::json::parse(line, nullptr, false);
    if (m.is_object() && m.value("event", "") == "verdict") r.verdicts[m["verdict"].value("protocol", "")] = m["verdict"];
    if (m.is_object() && m.value("event", "") == "released") r.verdicts_before_released = static_cast<int>(r.verdicts.size());
    return std::nullopt;
  });
  return r;
}

}  // namespace kbv::testing
