#include "report/export_layout.hpp"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "core/errors.hpp"

#include <algorithm>
#include <cctype>
#include <map>
#include <set>

namespace kbv {

std::string run_folder_name(const std::string& label) {
  std::string out;
  for (char c : label)
    out +=
        (std::isalnum(static_cast<unsigned char>(c)) || c == '.' || c == '_' || c == '-') ? c : '_';
  if (out.empty() || out == "." || out == "..") out = "run_" + out;
  return out;
}

int current_protocol_version(const std::vector<VerdictRecord>& records,
                             const std::string& protocol) {
  int version = 0;
  for (const auto& r : records)
    if (r.verdict.protocol == protocol) version = std::max(version, r.verdict.protocol_version);
  return version;
}

std::vector<ExportGroup> export_groups(const std::vector<VerdictRecord>& records,
                                       const std::vector<std::string>& labels,
                                       const std::string& protocol, int protocol_version,
                                       std::optional<int> level) {
  // (run folder, level) -> (problem id, sample id) -> the latest record of that sample
  std::map<std::pair<std::string, int>, std::map<std::pair<int, int>, const VerdictRecord*>> latest;
  for (std::size_t i = 0; i < records.size(); ++i) {
    const auto& r = records[i];
    if (r.verdict.protocol != protocol || r.verdict.protocol_version != protocol_version) continue;
    if (level && r.sample.level != *level) continue;
    auto& slot = latest[{run_folder_name(labels[i]), r.sample.level}]
                       [{r.sample.problem_id, r.sample.sample_id}];
    if (!slot || slot->updated_at <= r.updated_at) slot = &r;
  }
  std::map<std::string, std::set<int>> levels_of_run;
  for (const auto& [where, samples] : latest) levels_of_run[where.first].insert(where.second);
  std::string spanning;
  for (const auto& [run, levels] : levels_of_run)
    if (levels.size() > 1) spanning += fmt::format("{}{} (levels {})", spanning.empty() ? "" : ", ", run, fmt::join(levels, ", "));
  if (!spanning.empty())
    throw UsageError(fmt::format(
        "run(s) {} hold more than one level, and KernelBench's eval_results.json holds one (keyed by problem id); "
        "export one level at a time, each to its own folder: kbv export --level 1 --out DIR1 ..., kbv export --level 2 "
        "--out DIR2 ...",
        spanning));

  std::vector<ExportGroup> groups;
  for (const auto& [where, samples] : latest) {
    ExportGroup g;
    g.level = where.second;
    g.folder = where.first;
    for (const auto& [key, r] : samples) g.records.push_back(r);
    groups.push_back(std::move(g));
  }
  return groups;
}

}  // namespace kbv
