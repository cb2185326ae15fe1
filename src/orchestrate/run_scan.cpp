#include "orchestrate/run_scan.hpp"

#include <algorithm>
#include <charconv>
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

// The digits as an int; nullopt when they do not fit (the regexes only pass digits).
std::optional<int> to_int(const std::string& digits) {
  int value = 0;
  auto [end, ec] = std::from_chars(digits.data(), digits.data() + digits.size(), value);
  if (ec != std::errc() || end != digits.data() + digits.size()) return std::nullopt;
  return value;
}

std::string out_of_range(const std::string& what, const std::string& digits) {
  return what + " " + digits + " is out of range (at most 2147483647)";
}

// Whether `path` lies beneath `root` (both canonical).
bool beneath(const fs::path& path, const fs::path& root) {
  auto rel = path.lexically_relative(root);
  return !rel.empty() && *rel.begin() != "..";
}

void add_kernels_in(const fs::path& folder, const std::string& run, const fs::path& root, std::vector<CandidateFile>& out,
                    std::vector<SkippedPath>* skipped) {
  for (const auto& entry : fs::directory_iterator(folder)) {
    if (!entry.is_regular_file()) continue;
    std::smatch m;
    std::string name = entry.path().filename().string();
    if (!std::regex_match(name, m, kKernelFile)) continue;
    // The judge reads a candidate with its own rights and hands the sandbox a copy: a link out
    // of the runs folder (to a file only kbv's user may read) is not the run's to give.
    std::error_code ec;
    if (entry.is_symlink(ec) && !beneath(fs::canonical(entry.path(), ec), root)) {
      if (skipped) skipped->push_back({entry.path().string(), "a link to a file outside the runs folder: not judged"});
      continue;
    }
    auto level = to_int(m[1]), problem = to_int(m[2]), sample = to_int(m[3]);
    if (!level || !problem || !sample) {
      if (skipped)
        skipped->push_back({entry.path().string(), !level     ? out_of_range("level", m[1])
                                                   : !problem ? out_of_range("problem id", m[2])
                                                              : out_of_range("sample id", m[3])});
      continue;
    }
    out.push_back({run, entry.path().string(), *level, *problem, *sample});
  }
}

}  // namespace

bool RunFilter::accepts(const CandidateFile& c) const {
  if (level && c.level != *level) return false;
  if (!problem_ids.empty() && !problem_ids.count(c.problem_id)) return false;
  if (!runs.empty() && !runs.count(c.run)) return false;
  if (shard && !shard->holds(c)) return false;
  return true;
}

std::map<std::pair<int, int>, ProblemFile> scan_problems(const std::string& suite_dir, std::vector<SkippedPath>* skipped,
                                                         std::vector<DuplicateProblem>* duplicates) {
  if (!fs::is_directory(suite_dir)) throw UsageError("problem suite '" + suite_dir + "' is not a folder");
  std::map<std::pair<int, int>, std::vector<ProblemFile>> found;
  for (const auto& level_entry : fs::directory_iterator(suite_dir)) {
    std::smatch m;
    std::string folder = level_entry.path().filename().string();
    if (!level_entry.is_directory() || !std::regex_match(folder, m, kLevelFolder)) continue;
    auto level = to_int(m[1]);
    if (!level) {
      if (skipped) skipped->push_back({level_entry.path().string(), out_of_range("level", m[1])});
      continue;
    }
    for (const auto& entry : fs::directory_iterator(level_entry.path())) {
      std::string name = entry.path().filename().string();
      std::smatch pm;
      if (!entry.is_regular_file() || !std::regex_match(name, pm, kProblemFile)) continue;
      auto id = to_int(pm[1]);
      if (!id) {
        if (skipped) skipped->push_back({entry.path().string(), out_of_range("problem id", pm[1])});
        continue;
      }
      found[{*level, *id}].push_back({entry.path().string(), *level, *id, pm[2]});
    }
  }
  std::map<std::pair<int, int>, ProblemFile> problems;
  for (auto& [key, files] : found) {
    if (files.size() == 1) {
      problems[key] = files.front();
      continue;
    }
    DuplicateProblem d{key.first, key.second, {}};
    for (const auto& f : files) d.paths.push_back(f.path);
    std::sort(d.paths.begin(), d.paths.end());
    if (duplicates) duplicates->push_back(std::move(d));
  }
  if (problems.empty() && found.empty())
    throw UsageError("no problems under '" + suite_dir + "' (expected level1/{id}_{Name}.py files)");
  return problems;
}

std::vector<CandidateFile> scan_candidates(const std::string& runs_dir, std::vector<SkippedPath>* skipped,
                                           std::string* candidates_root) {
  if (!fs::is_directory(runs_dir)) throw UsageError("runs folder '" + runs_dir + "' is not a folder");
  std::vector<CandidateFile> out;
  const fs::path root = fs::canonical(runs_dir);
  add_kernels_in(runs_dir, fs::path(runs_dir).lexically_normal().filename().string(), root, out, skipped);
  if (candidates_root) *candidates_root = (out.empty() ? root : root.parent_path()).string();
  if (!out.empty() && out.front().run.empty()) {
    for (auto& c : out) c.run = fs::absolute(runs_dir).lexically_normal().parent_path().filename().string();
  }
  for (const auto& entry : fs::directory_iterator(runs_dir))
    if (entry.is_directory()) add_kernels_in(entry.path(), entry.path().filename().string(), root, out, skipped);
  std::sort(out.begin(), out.end(), [](const CandidateFile& a, const CandidateFile& b) {
    return std::tie(a.run, a.level, a.problem_id, a.sample_id, a.path) < std::tie(b.run, b.level, b.problem_id, b.sample_id, b.path);
  });
  return out;
}

RunScan scan_run(const std::string& suite_dir, const std::string& runs_dir, const RunFilter& filter) {
  RunScan scan;
  std::vector<DuplicateProblem> duplicates;
  scan.problems = scan_problems(suite_dir, &scan.skipped, &duplicates);
  std::string candidates_root;
  std::vector<CandidateFile> candidates = scan_candidates(runs_dir, &scan.skipped, &candidates_root);
  scan.batch_folders = {candidates_root};
  for (const auto& c : candidates) {
    std::error_code ec;
    const fs::path folder = fs::weakly_canonical(fs::absolute(c.path).parent_path(), ec);
    const auto rel = folder.lexically_relative(candidates_root);
    if (!ec && (rel.empty() || *rel.begin() == "..") &&
        std::find(scan.batch_folders.begin(), scan.batch_folders.end(), folder.string()) == scan.batch_folders.end())
      scan.batch_folders.push_back(folder.string());
  }
  std::string refused;
  for (auto& d : duplicates) {
    bool needed = std::any_of(candidates.begin(), candidates.end(), [&](const CandidateFile& c) {
      return filter.accepts(c) && c.level == d.level && c.problem_id == d.id;
    });
    if (!needed) {
      scan.duplicates.push_back(std::move(d));
      continue;
    }
    refused += "\n  level " + std::to_string(d.level) + " id " + std::to_string(d.id) + ":";
    for (const auto& p : d.paths) refused += " " + p;
  }
  if (!refused.empty())
    throw UsageError("the suite holds more than one file for a problem that candidates need; rename or remove all but one "
                     "(or leave the problem out with --ids):" + refused);
  // Two files of one run naming the same sample (level_01_problem_019_sample_0 and
  // level_1_problem_19_sample_0) would share one key in the store: one would be dropped unseen.
  std::string colliding;
  for (std::size_t i = 1; i < candidates.size(); ++i) {
    const auto& a = candidates[i - 1];
    const auto& b = candidates[i];
    if (std::tie(a.run, a.level, a.problem_id, a.sample_id) == std::tie(b.run, b.level, b.problem_id, b.sample_id) &&
        filter.accepts(b))
      colliding += "\n  run " + b.run + " level " + std::to_string(b.level) + " problem " + std::to_string(b.problem_id) +
                   " sample " + std::to_string(b.sample_id) + ": " + a.path + " and " + b.path;
  }
  if (!colliding.empty())
    throw UsageError("two candidate files name the same sample (their numbers differ only in leading zeros); rename or remove "
                     "one of each pair:" + colliding);
  for (auto& c : candidates) {
    if (!filter.accepts(c)) continue;
    auto it = scan.problems.find({c.level, c.problem_id});
    if (it == scan.problems.end())
      scan.unmatched.push_back(c);
    else
      scan.matched.emplace_back(c, it->second);
  }
  return scan;
}

}  // namespace kbv
