#include "core/job.hpp"

#include <algorithm>

namespace kbv {

NLOHMANN_DEFINE_TYPE_NON_INTRUSIVE_WITH_DEFAULT(TimingOptions, enabled, budget_seconds, min_seconds,
                                                min_rounds, target_rel_ci, warmup_seconds,
                                                max_input_sets, input_set_budget_bytes, torch_compile)

std::vector<std::string> job_protocols(const WorkerJob& job) {
  if (job.protocols.empty()) return {job.protocol};
  std::vector<std::string> out;  // each once, in the order first given
  for (const auto& p : job.protocols)
    if (std::find(out.begin(), out.end(), p) == out.end()) out.push_back(p);
  return out;
}

bool device_free_build(const WorkerJob& job) {
  return job.build_only && !job.build_cuda_arch.empty() && job.device.rfind("cuda", 0) == 0;
}

void to_json(nlohmann::json& j, const WorkerJob& job) {
  j = nlohmann::json{{"problem_path", job.problem_path},
                     {"candidate_path", job.candidate_path},
                     {"protocol", job.protocol},
                     {"protocols", job.protocols},
                     {"precision", job.precision},
                     {"device", job.device},
                     {"size", job.size},
                     {"build_root", job.build_root},
                     {"batch_folders", job.batch_folders},
                     {"secret", job.secret},
                     {"hidden_tests_path", job.hidden_tests_path},
                     {"measure_memory", job.measure_memory},
                     {"build_only", job.build_only},
                     {"build_cuda_arch", job.build_cuda_arch},
                     {"timing", job.timing},
                     {"compile_timeout_seconds", job.compile_timeout_seconds},
                     {"run_timeout_seconds", job.run_timeout_seconds},
                     {"sandbox_memory_bytes", job.sandbox_memory_bytes},
                     {"sandbox_max_processes", job.sandbox_max_processes}};
  if (job.tolerance) j["tolerance"] = *job.tolerance;
}

void from_json(const nlohmann::json& j, WorkerJob& job) {
  WorkerJob defaults;
  job.problem_path = j.at("problem_path").get<std::string>();
  job.candidate_path = j.value("candidate_path", defaults.candidate_path);
  job.protocol = j.value("protocol", defaults.protocol);
  job.protocols = j.value("protocols", defaults.protocols);
  job.precision = j.value("precision", defaults.precision);
  job.device = j.value("device", defaults.device);
  job.size = j.value("size", defaults.size);
  job.build_root = j.value("build_root", defaults.build_root);
  job.batch_folders = j.value("batch_folders", defaults.batch_folders);
  job.secret = j.value("secret", defaults.secret);
  job.hidden_tests_path = j.value("hidden_tests_path", defaults.hidden_tests_path);
  job.measure_memory = j.value("measure_memory", defaults.measure_memory);
  job.build_only = j.value("build_only", defaults.build_only);
  job.build_cuda_arch = j.value("build_cuda_arch", defaults.build_cuda_arch);
  job.timing = j.value("timing", defaults.timing);
  job.compile_timeout_seconds = j.value("compile_timeout_seconds", defaults.compile_timeout_seconds);
  job.run_timeout_seconds = j.value("run_timeout_seconds", defaults.run_timeout_seconds);
  job.sandbox_memory_bytes = j.value("sandbox_memory_bytes", defaults.sandbox_memory_bytes);
  job.sandbox_max_processes = j.value("sandbox_max_processes", defaults.sandbox_max_processes);
  if (j.contains("tolerance") && !j["tolerance"].is_null()) job.tolerance = j["tolerance"].get<double>();
}

}  // namespace kbv
