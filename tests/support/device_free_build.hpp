#pragma once
// One device-free build (kbv run --overlap-builds): the real kbv-judge, a build-only job for
// cuda:0 with its architecture given, started as kbv run starts it (no GPU visible). Shared by the
// CPU tests (tests/integration/test_device_free_build.cpp) and the GPU ones
// (tests/gpu/test_device_free_gpu.cpp).
#include <filesystem>
#include <map>
#include <string>

#include <nlohmann/json.hpp>

#include "core/job.hpp"
#include "kbv_cli.hpp"

namespace kbv::testing {

struct JudgeReply {
  ProcessResult process;
  nlohmann::json verdict;
  std::string context() const { return process.describe() + "\n" + process.output_head + process.output_tail + "\n" + verdict.dump(1); }
};

// `build_root` empty: a fresh folder named after `name`.
inline JudgeReply build_device_free(const std::string& candidate, const std::string& name, const std::string& arch = "9.0",
                                    const std::string& build_root = "", std::map<std::string, std::string> env = {}) {
  namespace fs = std::filesystem;
  fs::path root = fs::temp_directory_path() / ("kbv-device-free-" + std::to_string(::getpid()) + "-" + name);
  fs::remove_all(root);
  WorkerJob job;
  job.problem_path = example_problem("19_ReLU.py");
  job.candidate_path = candidate;
  job.protocol = "standard";
  job.device = "cuda:0";
  job.build_only = true;
  job.build_cuda_arch = arch;
  job.build_root = build_root.empty() ? (root / "builds").string() : build_root;
  // No GPU visible, as kbv run starts it.
  env["CUDA_VISIBLE_DEVICES"] = "";
  JudgeVerdicts run = run_judge_job(job, std::chrono::minutes(10), std::move(env));
  JudgeReply r;
  r.process = std::move(run.process);
  if (!run.verdicts.empty()) r.verdict = run.verdicts.begin()->second;
  return r;
}

}  // namespace kbv::testing
