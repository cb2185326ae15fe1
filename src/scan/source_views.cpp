#include "scan/source_views.hpp"

#include "scan/python_facts.hpp"

#include <algorithm>

namespace kbv::scan::detail {

namespace {

// Blanks // and /* */ comments in t[begin, end), leaving C++ string literals alone. Newlines stay.
void blank_cxx_comments(std::string& t, std::size_t begin, std::size_t end) {
  enum { normal, in_string, line_comment, block_comment } state = normal;
  for (std::size_t k = begin; k < end; ++k) {
    char c = t[k];
    char next = k + 1 < end ? t[k + 1] : '\0';
    switch (state) {
      case normal:
        if (c == '"') {
          state = in_string;
        } else if (c == '\'' && k + 2 < end && t[k + 2] == '\'') {
          k += 2;  // a char literal such as '"'
        } else if (c == '/' && next == '/') {
          state = line_comment;
          t[k] = ' ';
        } else if (c == '/' && next == '*') {
          state = block_comment;
          t[k] = t[k + 1] = ' ';
          ++k;
        }
        break;
      case in_string:
        if (c == '\\') ++k;
        else if (c == '"' || c == '\n') state = normal;
        break;
      case line_comment:
        if (c == '\n') state = normal;
        else t[k] = ' ';
        break;
      case block_comment:
        if (c == '*' && next == '/') {
          t[k] = t[k + 1] = ' ';
          ++k;
          state = normal;
        } else if (c != '\n') {
          t[k] = ' ';
        }
        break;
    }
  }
}

std::vector<std::size_t> line_starts_of(std::string_view source) {
  std::vector<std::size_t> starts{0};
  for (std::size_t i = 0; i < source.size(); ++i)
    if (source[i] == '\n') starts.push_back(i + 1);
  return starts;
}

// Blanks t[begin, end) except its newlines, so offsets keep their lines.
void blank(std::string& t, std::size_t begin, std::size_t end) {
  for (std::size_t k = begin; k < std::min(end, t.size()); ++k)
    if (t[k] != '\n') t[k] = ' ';
}

}  // namespace

int SourceViews::line_of(std::size_t offset) const {
  auto it = std::upper_bound(line_starts.begin(), line_starts.end(), offset);
  return static_cast<int>(it - line_starts.begin()) - 1;
}

std::string_view SourceViews::line(std::string_view text, int line) const {
  std::size_t begin = line_starts[static_cast<std::size_t>(line)];
  std::size_t end = static_cast<std::size_t>(line) + 1 < line_starts.size()
                        ? line_starts[static_cast<std::size_t>(line) + 1] - 1
                        : text.size();
  return text.substr(begin, end - begin);
}

SourceViews split_python(std::string_view source, const PythonFacts& facts) {
  SourceViews v;
  v.code.assign(source);
  for (auto& c : v.code)
    if (c == '\t' || c == '\r' || c == '\f') c = ' ';
  v.strings.assign(source.size(), ' ');
  v.line_starts = line_starts_of(source);
  for (std::size_t start : v.line_starts)
    if (start > 0) v.strings[start - 1] = '\n';
  if (source.substr(0, 3) == "\xef\xbb\xbf") blank(v.code, 0, 3);  // a UTF-8 byte order mark is no code
  for (auto [b, e] : facts.comments) blank(v.code, b, e);
  for (const auto& s : facts.strings) {
    blank(v.code, s.begin, s.end);
    // A string that is a whole statement (docstring, or prose used as a comment) is not code.
    if (s.statement || s.body_end <= s.body_begin) continue;
    for (std::size_t k = s.body_begin; k < std::min(s.body_end, source.size()); ++k) v.strings[k] = source[k];
    blank_cxx_comments(v.strings, s.body_begin, std::min(s.body_end, source.size()));
  }
  return v;
}

SourceViews split_cxx(std::string_view source) {
  SourceViews v;
  v.code.assign(source.size(), ' ');
  v.strings.assign(source);
  v.line_starts = line_starts_of(source);
  for (std::size_t start : v.line_starts)
    if (start > 0) v.code[start - 1] = '\n';
  blank_cxx_comments(v.strings, 0, v.strings.size());
  return v;
}

}  // namespace kbv::scan::detail
