#include "scan/scan_report.hpp"

#include <map>
#include <sstream>

namespace kbv::scan {

namespace {

struct Totals {
  std::size_t files = 0, files_with_findings = 0, warnings = 0, infos = 0;
  std::map<std::string, std::size_t> by_rule;
};

Totals totals_of(const std::vector<FileFindings>& files) {
  Totals t;
  t.files = files.size();
  for (const auto& file : files) {
    if (!file.findings.empty()) ++t.files_with_findings;
    for (const auto& f : file.findings) {
      (f.severity == "info" ? t.infos : t.warnings)++;
      ++t.by_rule[f.rule];
    }
  }
  return t;
}

}  // namespace

std::string format_file_findings(const FileFindings& file, std::size_t max_per_rule) {
  std::ostringstream out;
  if (file.findings.empty()) {
    out << file.path << ": no findings\n";
    return out.str();
  }
  std::map<std::string, std::size_t> shown, hidden;
  for (const auto& f : file.findings) {
    if (shown[f.rule] >= max_per_rule) {
      ++hidden[f.rule];
      continue;
    }
    ++shown[f.rule];
    out << file.path << ":" << f.line << "  " << f.rule
        << (f.severity == "info" ? " [info]" : "") << "  " << f.excerpt << "  (" << f.why
        << ")\n";
  }
  for (const auto& [rule, n] : hidden)
    out << file.path << ": ... " << n << " more " << rule << " finding" << (n == 1 ? "" : "s")
        << " (all in --json)\n";
  return out.str();
}

std::string format_summary(const std::vector<FileFindings>& files) {
  Totals t = totals_of(files);
  std::ostringstream out;
  out << "\n" << t.files << " file" << (t.files == 1 ? "" : "s") << " scanned, "
      << t.files_with_findings << " with findings: " << t.warnings << " warning"
      << (t.warnings == 1 ? "" : "s") << ", " << t.infos << " info\n";
  for (const auto& rule : rules()) {
    auto it = t.by_rule.find(std::string(rule.name));
    if (it == t.by_rule.end()) continue;
    std::string name(rule.name);
    name.resize(std::max<std::size_t>(name.size(), 30), ' ');
    out << "  " << name << " " << it->second << (rule.severity == "info" ? "  (info)" : "")
        << "\n";
  }
  out << "Findings are hints, not verdicts: the runtime checks of `kbv eval --protocol strict` "
         "decide.\n";
  return out.str();
}

void to_json(nlohmann::json& j, const Finding& f) {
  j = nlohmann::json{{"rule", f.rule},
                     {"severity", f.severity},
                     {"line", f.line},
                     {"excerpt", f.excerpt},
                     {"why", f.why}};
}

nlohmann::json check_report_json(const std::vector<FileFindings>& files) {
  Totals t = totals_of(files);
  nlohmann::json j;
  j["schema_version"] = 1;
  j["files"] = nlohmann::json::array();
  for (const auto& file : files)
    j["files"].push_back({{"path", file.path}, {"findings", file.findings}});
  j["summary"] = {{"files", t.files},
                  {"files_with_findings", t.files_with_findings},
                  {"warnings", t.warnings},
                  {"infos", t.infos},
                  {"by_rule", t.by_rule}};
  return j;
}

}  // namespace kbv::scan
