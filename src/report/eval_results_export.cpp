#include "report/eval_results_export.hpp"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <cctype>
#include <filesystem>
#include <fstream>
#include <iterator>

#include "core/errors.hpp"
#include "report/aggregates.hpp"
#include "report/export_layout.hpp"
#include "report/kernelbench_sample.hpp"
#include "report/verified_results.hpp"

namespace kbv {
namespace fs = std::filesystem;
namespace {

// The skip a CPU machine gives a CUDA candidate (the judge's reason starts so).
bool skipped_for_cuda_on_cpu(const Verdict& v) {
  return v.outcome == Outcome::skipped && v.reason.rfind("candidate needs CUDA", 0) == 0;
}

bool has(const std::vector<std::string>& v, const std::string& x) {
  return std::find(v.begin(), v.end(), x) != v.end();
}

std::string main_protocol(const ExportOptions& options, const std::vector<std::string>& present) {
  if (!options.protocol.empty()) {
    if (!has(present, options.protocol))
      throw UsageError(
          fmt::format("no verdicts under protocol '{}'; present: {} (pick one with --protocol)",
                      options.protocol, fmt::join(present, ", ")));
    return options.protocol;
  }
  // KernelBench-Verified's eval_results.json is its standard run (5 trials of get_inputs()).
  if (options.format == ExportFormat::kernelbench_verified && has(present, "standard"))
    return "standard";
  return present.front();
}

// KernelBench-Verified's hidden run covers the four distributions verified defines; strict
// verdicts carry them too.
std::string hidden_protocol(const std::vector<std::string>& present) {
  for (const char* p : {"verified", "strict"})
    if (has(present, p)) return p;
  return "";
}

// `--out runs` writes beside the kernels, where KernelBench's own results may already be: never
// overwrite a file that kbv did not write (every kbv entry carries kbv_outcome), unless --force.
void refuse_foreign_file(const fs::path& file, bool force) {
  if (force) return;
  std::ifstream in(file, std::ios::binary);
  if (!in) return;
  std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  std::string_view t = text;
  while (!t.empty() && std::isspace(static_cast<unsigned char>(t.front()))) t.remove_prefix(1);
  while (!t.empty() && std::isspace(static_cast<unsigned char>(t.back()))) t.remove_suffix(1);
  if (t.empty() || t == "{}" || text.find("\"kbv_outcome\"") != std::string::npos) return;
  throw UsageError(fmt::format(
      "'{}' exists and was not written by kbv (KernelBench's own results?); move it away, "
      "export to another --out, or pass --force to replace it",
      file.string()));
}

void write_json(const fs::path& file, const nlohmann::ordered_json& j, bool force) {
  refuse_foreign_file(file, force);
  std::error_code ec;
  fs::create_directories(file.parent_path(), ec);
  if (ec)
    throw UsageError(
        fmt::format("cannot create '{}': {}", file.parent_path().string(), ec.message()));
  std::ofstream out(file);
  if (!out) throw UsageError(fmt::format("cannot write '{}'", file.string()));
  // indent=4 as KernelBench's json.dump(eval_results, f, indent=4)
  out << j.dump(4, ' ', false, nlohmann::json::error_handler_t::replace) << "\n";
  if (!out) throw UsageError(fmt::format("cannot write '{}' (disk full?)", file.string()));
}

}  // namespace

ExportFormat export_format_from_name(const std::string& name) {
  if (name == "kernelbench") return ExportFormat::kernelbench;
  if (name == "kernelbench-verified") return ExportFormat::kernelbench_verified;
  throw UsageError(
      fmt::format("unknown export format '{}'; use kernelbench or kernelbench-verified", name));
}

ExportResult export_eval_results(const std::vector<VerdictRecord>& records,
                                 const std::string& out_dir, const ExportOptions& options) {
  auto present = protocols_strictest_first(records);
  if (present.empty()) throw UsageError("the results DB holds no verdicts; nothing to export");
  ExportResult result;
  result.protocol = main_protocol(options, present);
  result.protocol_version = current_protocol_version(records, result.protocol);
  auto labels = run_labels(records);

  const auto groups = export_groups(records, labels, result.protocol, result.protocol_version, options.level);
  if (groups.empty() && options.level)
    throw UsageError(fmt::format("no verdicts of level {} under protocol '{}'; nothing to export", *options.level, result.protocol));
  // Every file is checked before any is written: a refusal leaves the folder as it was.
  for (const auto& g : groups) refuse_foreign_file(fs::path(out_dir) / g.folder / "eval_results.json", options.force);
  for (const auto& g : groups) {
    for (const auto* r : g.records) {
      const bool row = kernelbench_has_row(r->verdict);
      result.left_out += !row;
      result.rows += row;
      result.left_out_cuda += skipped_for_cuda_on_cpu(r->verdict);
    }
    auto j = options.format == ExportFormat::kernelbench ? kernelbench_eval_results(g.records)
                                                         : verified_eval_results(g.records);
    fs::path file = fs::path(out_dir) / g.folder / "eval_results.json";
    write_json(file, j, options.force);
    result.files.push_back(file.string());
  }
  if (options.format != ExportFormat::kernelbench_verified) return result;

  result.hidden_protocol = hidden_protocol(present);
  if (result.hidden_protocol.empty()) return result;
  result.hidden_protocol_version = current_protocol_version(records, result.hidden_protocol);
  for (const auto& g :
       export_groups(records, labels, result.hidden_protocol, result.hidden_protocol_version, options.level)) {
    fs::path file = fs::path(out_dir) / g.folder / "eval_results_hidden.json";
    write_json(file, verified_hidden_results(g.records), options.force);
    result.files.push_back(file.string());
  }
  return result;
}

}  // namespace kbv
