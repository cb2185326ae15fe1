// Drives one scan: split the source into views, find the block structure, run the rules, and
// turn the marks into findings (one per rule and line, sorted by line).
#include "scan/scan.hpp"

#include <algorithm>
#include <fstream>
#include <sstream>

#include "scan/scan_context.hpp"

namespace kbv::scan {

namespace {

constexpr std::size_t kExcerptMax = 120;  // characters of a line kept in a finding

std::string excerpt_of(std::string_view line) {
  line = detail::trim(line);
  if (line.size() <= kExcerptMax) return std::string(line);
  std::size_t cut = kExcerptMax;
  while (cut > 0 && (static_cast<unsigned char>(line[cut]) & 0xC0) == 0x80) --cut;  // UTF-8
  return std::string(line.substr(0, cut)) + "...";
}

std::vector<Finding> findings_of(detail::ScanContext& ctx) {
  auto& marks = ctx.marks;
  std::sort(marks.begin(), marks.end(), [](const detail::Mark& a, const detail::Mark& b) {
    if (a.line != b.line) return a.line < b.line;
    if (a.rule != b.rule) return a.rule < b.rule;
    return a.severity < b.severity;  // a warning wins over an info on the same line
  });
  marks.erase(std::unique(marks.begin(), marks.end(),
                          [](const detail::Mark& a, const detail::Mark& b) {
                            return a.line == b.line && a.rule == b.rule;
                          }),
              marks.end());
  std::vector<Finding> out;
  out.reserve(marks.size());
  for (const auto& m : marks) {
    const RuleInfo& info = rules()[static_cast<std::size_t>(m.rule)];
    out.push_back(Finding{std::string(info.name),
                          m.severity == detail::Severity::info ? "info" : "warning", m.line + 1,
                          excerpt_of(ctx.views.line(ctx.source, m.line)), std::string(info.why)});
  }
  return out;
}

bool is_cxx_path(const std::filesystem::path& path) {
  static const char* const kCxx[] = {".cu", ".cuh", ".cpp", ".cc", ".cxx", ".c", ".h", ".hpp"};
  auto ext = path.extension().string();
  return std::any_of(std::begin(kCxx), std::end(kCxx), [&](const char* e) { return ext == e; });
}

}  // namespace

std::vector<Finding> scan_source(std::string_view python_source) {
  detail::ScanContext ctx;
  ctx.source = python_source;
  ctx.views = detail::split_python(python_source);
  detail::analyse_python_blocks(ctx);
  detail::find_current_streams(ctx);
  detail::run_literal_rules(ctx);
  detail::run_block_rules(ctx);
  return findings_of(ctx);
}

std::vector<Finding> scan_cxx_source(std::string_view cxx_source) {
  detail::ScanContext ctx;
  ctx.source = cxx_source;
  ctx.python = false;
  ctx.views = detail::split_cxx(cxx_source);
  ctx.statement_indent.assign(static_cast<std::size_t>(ctx.views.line_count()), -1);
  detail::find_current_streams(ctx);
  detail::run_literal_rules(ctx);
  return findings_of(ctx);
}

std::vector<Finding> scan_file(const std::filesystem::path& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw ScanError("cannot read '" + path.string() + "'");
  std::ostringstream text;
  text << in.rdbuf();
  const std::string source = std::move(text).str();
  return is_cxx_path(path) ? scan_cxx_source(source) : scan_source(source);
}

std::vector<std::filesystem::path> scan_targets(const std::filesystem::path& path) {
  namespace fs = std::filesystem;
  std::error_code ec;
  if (!fs::exists(path, ec))
    throw ScanError("'" + path.string() + "' does not exist; pass candidate .py files or folders");
  if (!fs::is_directory(path, ec)) return {path};
  std::vector<fs::path> files;
  const auto options = fs::directory_options::skip_permission_denied;
  for (auto it = fs::recursive_directory_iterator(path, options, ec);
       it != fs::recursive_directory_iterator(); it.increment(ec)) {
    if (ec) break;
    if (!it->is_regular_file(ec)) continue;
    auto ext = it->path().extension().string();
    if (ext == ".py" || ext == ".cu" || ext == ".cuh" || ext == ".cpp") files.push_back(it->path());
  }
  std::sort(files.begin(), files.end());
  return files;
}

}  // namespace kbv::scan
