#pragma once
// What the rules share while one file is scanned (internal to kbv_scan).
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "scan/python_facts.hpp"
#include "scan/source_views.hpp"

namespace kbv::scan::detail {

// Indices into rules(); the order is the summary's.
enum class Rule : std::uint8_t {
  silent_fallback,
  side_stream,
  threads_or_processes,
  torch_attribute_reassignment,
  timing_tampering,
  comparison_tampering,
  tensor_subclass,
  precision_downcast,
  tf32_or_matmul_precision,
  ctypes,
  introspection,
  environment_read,
  file_io,
  access_policy_window,
  result_caching,
  rng_reseed,
  dynamic_code,
  shape_specialisation,
  syntax_error,
  count
};

enum class Severity : std::uint8_t { warning, info };

struct Mark {
  Rule rule;
  int line;  // 0-based
  Severity severity;
};

struct ScanContext {
  std::string_view source;
  SourceViews views;
  bool python = true;
  // What CPython's parser found (nullptr for a C++ file).
  const PythonFacts* facts = nullptr;
  // C++: names holding torch's current stream, and whether the source asks for it at all.
  std::vector<std::string> current_stream_names;
  bool asks_current_stream = false;

  std::vector<Mark> marks;

  void mark(Rule rule, int line, Severity severity) { marks.push_back({rule, line, severity}); }
  bool in_forward(int line) const {
    if (facts)
      for (const auto& f : facts->forwards)
        if (line > f.def_line && line < f.end_line) return true;
    return false;
  }
};

Severity default_severity(Rule rule);

// The rule a dotted name falls under when it is assigned to (target) or kept aside as a bare
// reference to wrap or restore (rules.cpp): time.* -> timing_tampering; torch/F/nn/np/numpy/
// math names of comparison functions -> comparison_tampering; torch timing names ->
// timing_tampering; any other torch/F/nn target -> torch_attribute_reassignment.
std::optional<Rule> classify_name(std::string_view name, bool target);

// Rules decided on the parsed Python: silent_fallback's try/except, result_caching's outputs
// saved on self in forward (python_rules.cpp).
void run_python_rules(ScanContext& ctx);
// Names of C++ variables holding getCurrentCUDAStream() (cxx_streams.cpp).
void find_current_streams(ScanContext& ctx);
// Every literal-triggered rule (rules.cpp).
void run_literal_rules(ScanContext& ctx);

// Small text helpers shared by the rule files.
inline bool is_word(char c) {
  return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_';
}
inline bool is_blank(char c) { return c == ' ' || c == '\t' || c == '\r' || c == '\f'; }
inline std::string_view trim(std::string_view s) {
  while (!s.empty() && (is_blank(s.front()) || s.front() == '\n')) s.remove_prefix(1);
  while (!s.empty() && (is_blank(s.back()) || s.back() == '\n')) s.remove_suffix(1);
  return s;
}
// A dotted name (torch.cuda.Event) starting at pos, or empty.
inline std::string_view dotted_name_at(std::string_view text, std::size_t pos) {
  std::size_t e = pos;
  while (e < text.size()) {
    bool dot = text[e] == '.' && e > pos && e + 1 < text.size() && is_word(text[e + 1]);
    if (!is_word(text[e]) && !dot) break;
    ++e;
  }
  return text.substr(pos, e - pos);
}
// Whether `name` occurs in text as a whole dotted name.
inline bool contains_name(std::string_view text, std::string_view name) {
  for (std::size_t p = text.find(name); p != std::string_view::npos; p = text.find(name, p + 1)) {
    bool start_ok = p == 0 || (!is_word(text[p - 1]) && text[p - 1] != '.');
    std::size_t e = p + name.size();
    bool end_ok = e >= text.size() || !is_word(text[e]);
    if (start_ok && end_ok) return true;
  }
  return false;
}

}  // namespace kbv::scan::detail
