#include "scan/source_views.hpp"

#include <algorithm>

namespace kbv::scan::detail {

namespace {

bool is_word(char c) {
  return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_';
}

bool is_prefix_letter(char c) {
  switch (c) {
    case 'r': case 'R': case 'b': case 'B': case 'u': case 'U': case 'f': case 'F':
      return true;
    default:
      return false;
  }
}

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

class PythonSplitter {
 public:
  explicit PythonSplitter(std::string_view s) : s_(s), n_(s.size()) {
    v_.code.assign(n_, ' ');
    v_.strings.assign(n_, ' ');
    v_.line_starts.push_back(0);
    v_.continuation.push_back(0);
  }

  SourceViews run() && {
    std::size_t i = 0;
    while (i < n_) {
      char c = s_[i];
      if (c == '\n') {
        bool cont = depth_ > 0 || backslash_;
        newline(i, cont);
        if (!cont) at_statement_start_ = true;
        backslash_ = false;
        ++i;
      } else if (c == '#') {
        while (i < n_ && s_[i] != '\n') ++i;
      } else if (c == '"' || c == '\'') {
        i = string_literal(i, at_statement_start_ && depth_ == 0);
        at_statement_start_ = false;
      } else if (std::size_t len = prefix_length(i)) {
        i += len;  // r"", b'', f"""...: the prefix belongs to the string; blank it
      } else {
        if (c == '\\') backslash_ = true;
        if (c == '(' || c == '[' || c == '{') ++depth_;
        if ((c == ')' || c == ']' || c == '}') && depth_ > 0) --depth_;
        if (c != ' ' && c != '\t' && c != '\r' && c != '\f') {
          v_.code[i] = c;
          at_statement_start_ = false;
        }
        ++i;
      }
    }
    return std::move(v_);
  }

 private:
  void newline(std::size_t at, bool continuation) {
    v_.code[at] = v_.strings[at] = '\n';
    v_.line_starts.push_back(at + 1);
    v_.continuation.push_back(continuation ? 1 : 0);
  }

  // Length of a string prefix (r, rb, f, ...) starting at i and followed by a quote, else 0.
  std::size_t prefix_length(std::size_t i) const {
    if (!is_prefix_letter(s_[i]) || (i > 0 && is_word(s_[i - 1]))) return 0;
    if (i + 1 < n_ && (s_[i + 1] == '"' || s_[i + 1] == '\'')) return 1;
    if (i + 2 < n_ && is_prefix_letter(s_[i + 1]) && (s_[i + 2] == '"' || s_[i + 2] == '\''))
      return 2;
    return 0;
  }

  // Handles the literal opening at i; returns the offset just past it.
  std::size_t string_literal(std::size_t i, bool docstring) {
    const char q = s_[i];
    const bool triple = i + 2 < n_ && s_[i + 1] == q && s_[i + 2] == q;
    const std::size_t body = i + (triple ? 3 : 1);
    std::size_t j = body;
    while (j < n_) {
      char d = s_[j];
      if (d == '\\') {
        if (j + 1 < n_ && s_[j + 1] == '\n') newline(j + 1, true);
        j += 2;
        continue;
      }
      if (d == '\n') {
        if (!triple) break;  // unterminated: the main loop takes the newline
        newline(j, true);
      } else if (d == q && (!triple || (j + 2 < n_ && s_[j + 1] == q && s_[j + 2] == q))) {
        break;
      }
      ++j;
    }
    const std::size_t body_end = std::min(j, n_);
    // A string that is a whole statement (docstring, or prose used as a comment) is not code.
    if (!docstring) {
      for (std::size_t k = body; k < body_end; ++k) v_.strings[k] = s_[k];
      blank_cxx_comments(v_.strings, body, body_end);
    }
    if (j >= n_) return n_;
    if (s_[j] == '\n') return j;
    return j + (triple ? 3 : 1);
  }

  std::string_view s_;
  std::size_t n_;
  SourceViews v_;
  int depth_ = 0;
  bool backslash_ = false;
  bool at_statement_start_ = true;
};

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

SourceViews split_python(std::string_view source) { return PythonSplitter(source).run(); }

SourceViews split_cxx(std::string_view source) {
  SourceViews v;
  v.code.assign(source.size(), ' ');
  v.strings.assign(source);
  v.line_starts.push_back(0);
  v.continuation.push_back(0);
  for (std::size_t i = 0; i < source.size(); ++i) {
    if (source[i] != '\n') continue;
    v.code[i] = '\n';
    v.line_starts.push_back(i + 1);
    v.continuation.push_back(0);
  }
  blank_cxx_comments(v.strings, 0, v.strings.size());
  return v;
}

}  // namespace kbv::scan::detail
