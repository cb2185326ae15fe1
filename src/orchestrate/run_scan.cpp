#include "orchestrate/run_scan.hpp"

#include <algorithm>
#include <filesystem>
#include <regex>
#include <tuple>

#include "core/errors.hpp"

namespace fs = std::filesystem;

namespace kbv {
namespace {

const std::regex kLevelFolder(R"(level_?(\d+))");
const std::regex kProblemFile(R"((\d+)_(.+)\.py)");
const std::regex kKernelFile(R"(level_(\d+)_problem_(\d+)_sample_(\d+)_kernel\.py)");

void add_kernels_in(const fs::path& folder, const std::string& run, std::vector<CandidateFile>& out) {
  for (const auto& entry : fs::directory_iterator(folder)) {
    if (!entry.is_regular_file()) continue;
    std::smatch m;
    std::string name = entry.path().filename().string();
    if (!std::regex_match(name, m, kKernelFile)) continue;
    out.push_back({run, entry.path().string(), std::stoi(m[1]), std::stoi(m[2]), std::stoi(m[3])});
  }
}

}  // namespace

std::map<std::pair<int, int>, ProblemFile> scan_problems(const std::string& suite_dir) {
  if (!fs::is_directory(suite_dir)) throw UsageError("problem suite '" + suite_dir + "' is not a folder");
  std::map<std::pair<int, int>, ProblemFile> problems;
  for (const auto& level_entry : fs::directory_iterator(suite_dir)) {
    std::smatch m;
    std::string folder = level_entry.path().filename().string();
    if (!level_entry.is_directory() || !std::regex_match(folder, m, kLevelFolder)) continue;
    int level = std::stoi(m[1]);
    for (const auto& entry : fs::directory_iterator(level_entry.path())) {
      std::string name = entry.path().filename().string();
      std::smatch pm;
      if (!entry.is_regular_file() || !std::regex_match(name, pm, kProblemFile)) continue;
      ProblemFile p{entry.path().string(), level, std::stoi(pm[1]), pm[2]};
      problems[{level, p.id}] = p;
    }
  }
  if (problems.empty())
    throw UsageError("no problems under '" + suite_dir + "' (expected level1/{id}_{Name}.py files)");
  return problems;
}

std::vector<CandidateFile> scan_candidates(const std::string& runs_dir) {
  if (!fs::is_directory(runs_dir)) throw UsageError("runs folder '" + runs_dir + "' is not a folder");
  std::vector<CandidateFile> out;
  add_kernels_in(runs_dir, fs::path(runs_dir).lexically_normal().filename().string(), out);
  if (!out.empty() && out.front().run.empty()) {
    for (auto& c : out) c.run = fs::absolute(runs_dir).lexically_normal().parent_path().filename().string();
  }
  for (const auto& entry : fs::directory_iterator(runs_dir))
    if (entry.is_directory()) add_kernels_in(entry.path(), entry.path().filename().string(), out);
  std::sort(out.begin(), out.end(), [](const CandidateFile& a, const CandidateFile& b) {
    return std::tie(a.run, a.level, a.problem_id, a.sample_id) < std::tie(b.run, b.level, b.problem_id, b.sample_id);
  });
  return out;
}

RunScan scan_run(const std::string& suite_dir, const std::string& runs_dir) {
  RunScan scan;
  scan.problems = scan_problems(suite_dir);
  for (auto& c : scan_candidates(runs_dir)) {
    auto it = scan.problems.find({c.level, c.problem_id});
    if (it == scan.problems.end())
      scan.unmatched.push_back(c);
    else
      scan.matched.emplace_back(c, it->second);
  }
  return scan;
}

}  // namespace kbv
