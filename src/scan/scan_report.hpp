#pragma once
// `kbv check` output: findings per file as text, a per-rule summary, and the same as JSON.
#include <cstddef>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "scan/scan.hpp"

namespace kbv::scan {

struct FileFindings {
  std::string path;
  std::vector<Finding> findings;
};

// "path:line  rule  excerpt  (why)" per finding, at most max_per_rule per rule (then a count of
// the rest); "path: no findings" when there are none.
std::string format_file_findings(const FileFindings& file, std::size_t max_per_rule = 5);

// Files scanned, warnings and infos, and a count per rule (rules() order, non-zero only).
std::string format_summary(const std::vector<FileFindings>& files);

void to_json(nlohmann::json& j, const Finding& f);

// {"schema_version": 1, "files": [{"path", "findings": [...]}], "summary": {...}}
nlohmann::json check_report_json(const std::vector<FileFindings>& files);

}  // namespace kbv::scan
