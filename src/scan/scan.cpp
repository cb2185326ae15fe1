// Drives a scan: parse the Python (python_facts.hpp), split each source into views, run the
// rules, and turn the marks into findings (one per rule and line, sorted by line).
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

std::string read_text(const std::filesystem::path& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw ScanError("cannot read '" + path.string() + "'");
  std::ostringstream text;
  text << in.rdbuf();
  return std::move(text).str();
}

// The line the parser stopped at, and its message ("SyntaxError: '(' was never closed").
Finding syntax_error_finding(std::string_view source, const detail::SyntaxProblem& problem) {
  const RuleInfo& info = rules()[static_cast<std::size_t>(detail::Rule::syntax_error)];
  auto starts = detail::split_cxx(source).line_starts;
  int line = std::clamp(problem.line, 0, static_cast<int>(starts.size()) - 1);
  std::size_t begin = starts[static_cast<std::size_t>(line)];
  std::size_t end = source.find('\n', begin);
  std::string_view text = source.substr(begin, end == std::string_view::npos ? std::string_view::npos : end - begin);
  return Finding{std::string(info.name), std::string(info.severity), line + 1, excerpt_of(text),
                 problem.message + ": " + std::string(info.why)};
}

bool is_cxx_path(const std::filesystem::path& path) {
  static const char* const kCxx[] = {".cu", ".cuh", ".cpp", ".cc", ".cxx", ".c", ".h", ".hpp"};
  auto ext = path.extension().string();
  return std::any_of(std::begin(kCxx), std::end(kCxx), [&](const char* e) { return ext == e; });
}

}  // namespace

std::vector<std::vector<Finding>> scan_sources(const std::vector<std::string_view>& python_sources) {
  auto facts = detail::python_facts(python_sources);
  std::vector<std::vector<Finding>> out;
  out.reserve(python_sources.size());
  for (std::size_t i = 0; i < python_sources.size(); ++i) {
    detail::ScanContext ctx;
    ctx.source = python_sources[i];
    if (const auto& problem = facts[i].syntax_problem) {
      out.push_back({syntax_error_finding(ctx.source, *problem)});
      continue;
    }
    ctx.facts = &facts[i];
    ctx.views = detail::split_python(ctx.source, facts[i]);
    detail::find_current_streams(ctx);
    detail::run_literal_rules(ctx);
    detail::run_python_rules(ctx);
    out.push_back(findings_of(ctx));
  }
  return out;
}

std::vector<Finding> scan_source(std::string_view python_source) { return scan_sources({python_source}).front(); }

std::vector<Finding> scan_cxx_source(std::string_view cxx_source) {
  detail::ScanContext ctx;
  ctx.source = cxx_source;
  ctx.python = false;
  ctx.views = detail::split_cxx(cxx_source);
  detail::find_current_streams(ctx);
  detail::run_literal_rules(ctx);
  return findings_of(ctx);
}

std::vector<std::vector<Finding>> scan_files(const std::vector<std::filesystem::path>& paths) {
  std::vector<std::string> texts;
  texts.reserve(paths.size());
  for (const auto& path : paths) texts.push_back(read_text(path));
  std::vector<std::string_view> python;
  for (std::size_t i = 0; i < paths.size(); ++i)
    if (!is_cxx_path(paths[i])) python.push_back(texts[i]);
  auto python_findings = scan_sources(python);
  std::vector<std::vector<Finding>> out;
  std::size_t next = 0;
  for (std::size_t i = 0; i < paths.size(); ++i)
    out.push_back(is_cxx_path(paths[i]) ? scan_cxx_source(texts[i]) : std::move(python_findings[next++]));
  return out;
}

std::vector<Finding> scan_file(const std::filesystem::path& path) { return scan_files({path}).front(); }

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
