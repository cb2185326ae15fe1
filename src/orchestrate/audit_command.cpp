#include "orchestrate/audit_command.hpp"

#include <atomic>
#include <filesystem>
#include <fstream>
#include <mutex>
#include <ostream>
#include <thread>

#include <fmt/format.h>

#include "core/errors.hpp"
#include "orchestrate/evaluation_run.hpp"
#include "orchestrate/host.hpp"
#include "orchestrate/run_scan.hpp"

namespace fs = std::filesystem;

namespace kbv {
namespace {

std::vector<std::string> problem_files(const std::vector<std::string>& paths) {
  std::vector<std::string> files;
  for (const auto& p : paths) {
    if (fs::is_directory(p)) {
      for (const auto& [key, problem] : scan_problems(p)) files.push_back(problem.path);
    } else if (fs::is_regular_file(p)) {
      files.push_back(p);
    } else {
      throw UsageError("'" + p + "' is neither a problem file nor a suite folder");
    }
  }
  return files;
}

// Which protocols a degenerate flag names ("no distribution of verified, standard ...").
bool degenerate_under(const Verdict& v, const std::string& protocol) {
  for (const auto& f : v.flags)
    if (f.name == "degenerate" && f.evidence.find(protocol) != std::string::npos) return true;
  return false;
}

}  // namespace

int run_audit_command(const AuditOptions& o, std::ostream& out) {
  auto files = problem_files(o.paths);
  const std::string worker = find_worker_executable();
  std::string device = o.device;
  if (device == "auto") device = default_device();
  const std::string size = o.size == "auto" ? (device == "cpu" ? "small" : "default") : o.size;

  std::vector<Verdict> verdicts(files.size());
  std::atomic<std::size_t> next{0};
  std::vector<std::thread> threads;
  for (int t = 0; t < std::max(1, o.jobs); ++t) {
    threads.emplace_back([&] {
      for (std::size_t i; (i = next++) < files.size();) {
        EvaluationRun run;
        run.worker_path = worker;
        run.job.problem_path = fs::absolute(files[i]).string();
        run.job.candidate_path = "";  // audit mode
        run.job.protocol = "strict";
        run.job.precision = o.precision;
        run.job.device = device;
        run.job.size = size;
        run.job.timing.enabled = false;
        run.job.measure_memory = false;
        run.job.secret = 0x6b627661756469ULL + i;
        run.limits.run_timeout_seconds = o.timeout;
        verdicts[i] = run_evaluation(run);
      }
    });
  }
  for (auto& t : threads) t.join();

  int failures = 0;
  out << fmt::format("| problem | reference | degenerate under | non-discriminative distributions |\n|---|---|---|---|\n");
  nlohmann::json report = nlohmann::json::array();
  for (std::size_t i = 0; i < files.size(); ++i) {
    const Verdict& v = verdicts[i];
    std::string under;
    for (const char* p : {"standard", "verified", "strict"})
      if (degenerate_under(v, p)) under += (under.empty() ? "" : ", ") + std::string(p);
    std::string trivial;
    int shown = 0;
    if (v.correctness)
      for (const auto& d : v.correctness->distributions)
        if (!d.trivial_pass.empty() && shown++ < 6) trivial += (trivial.empty() ? "" : ", ") + d.name + " (" + d.trivial_pass + ")";
    bool ok = v.outcome == Outcome::correct && !degenerate_under(v, "strict");
    if (!ok) ++failures;
    out << fmt::format("| {} | {} | {} | {} |\n", files[i], ok ? "ok" : std::string(outcome_name(v.outcome)) + " " + v.reason,
                       under.empty() ? "-" : under, trivial.empty() ? "-" : trivial);
    report.push_back(v);
  }
  out << fmt::format("\n{} problem(s) audited, {} with a problem (non-finite reference, error, or degenerate under strict)\n",
                     files.size(), failures);
  if (!o.json_path.empty()) std::ofstream(o.json_path) << report.dump(1) << "\n";
  return failures == 0 ? 0 : 1;
}

}  // namespace kbv
