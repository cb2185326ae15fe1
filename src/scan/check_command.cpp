#include "scan/check_command.hpp"

#include <filesystem>
#include <fstream>

#include "core/errors.hpp"
#include "scan/scan.hpp"
#include "scan/scan_report.hpp"

namespace kbv::scan {

int run_check_command(const CheckCommand& cmd, std::ostream& out) {
  namespace fs = std::filesystem;
  std::vector<fs::path> files;
  for (const auto& path : cmd.paths) {
    if (!fs::exists(path))
      throw UsageError("cannot check '" + path +
                       "': no such file or folder (pass candidate .py files or run folders)");
    auto found = scan_targets(path);
    files.insert(files.end(), found.begin(), found.end());
  }
  std::ofstream json_out;
  if (!cmd.json.empty()) {
    json_out.open(cmd.json);
    if (!json_out) throw UsageError("cannot write '" + cmd.json + "'");
  }
  std::vector<std::vector<Finding>> findings;
  try {
    findings = scan_files(files);  // one Python parser process for every file
  } catch (const ScanError& err) {
    throw UsageError(err.what());
  }
  std::vector<FileFindings> results;
  results.reserve(files.size());
  for (std::size_t i = 0; i < files.size(); ++i) {
    results.push_back({files[i].string(), std::move(findings[i])});
    if (!cmd.quiet) out << format_file_findings(results.back());
  }
  out << format_summary(results);
  if (json_out.is_open()) json_out << check_report_json(results).dump(2) << "\n";
  return 0;
}

}  // namespace kbv::scan
