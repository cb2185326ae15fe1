#include "generate/prompt_builder.hpp"

#include <cctype>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string_view>
#include <vector>

#include "core/errors.hpp"

namespace kbv::gen {
namespace {

std::vector<std::string> split_lines(const std::string& text) {
  std::vector<std::string> lines;
  std::istringstream in(text);
  for (std::string line; std::getline(in, line);) lines.push_back(line);
  return lines;
}

// Bracket depth and open triple-quoted string carried from one line to the next.
struct ScanState {
  int depth = 0;
  char triple = 0;         // '"' or '\'' while inside a triple-quoted string
  bool continued = false;  // the line ended with a backslash
  bool open() const { return depth > 0 || triple != 0 || continued; }
};

void scan_line(const std::string& line, ScanState& s) {
  s.continued = false;
  size_t i = 0, n = line.size();
  while (i < n) {
    char c = line[i];
    if (s.triple) {
      if (c == '\\') {
        i += 2;
        continue;
      }
      if (c == s.triple && line.compare(i, 3, std::string(3, s.triple)) == 0) {
        s.triple = 0;
        i += 3;
        continue;
      }
      ++i;
      continue;
    }
    if (c == '#') return;  // comment to end of line
    if (c == '"' || c == '\'') {
      if (line.compare(i, 3, std::string(3, c)) == 0) {
        s.triple = c;
        i += 3;
        continue;
      }
      for (++i; i < n && line[i] != c; ++i)
        if (line[i] == '\\') ++i;
      ++i;
      continue;
    }
    if (c == '(' || c == '[' || c == '{') ++s.depth;
    if ((c == ')' || c == ']' || c == '}') && s.depth > 0) --s.depth;
    ++i;
  }
  if (!s.triple && n > 0 && line.back() == '\\') s.continued = true;
}

bool is_blank(const std::string& line) {
  return line.find_first_not_of(" \t\r") == std::string::npos;
}
bool is_indented(const std::string& line) {
  return !line.empty() && (line[0] == ' ' || line[0] == '\t');
}
bool is_ident_start(char c) {
  return std::isalpha(static_cast<unsigned char>(c)) || c == '_';
}
bool is_ident_char(char c) {
  return std::isalnum(static_cast<unsigned char>(c)) || c == '_';
}

bool starts_def_of(const std::string& line, std::string_view name) {
  std::string_view v(line);
  if (v.substr(0, 4) != "def ") return false;
  v.remove_prefix(4);
  while (!v.empty() && v[0] == ' ') v.remove_prefix(1);
  if (v.substr(0, name.size()) != name) return false;
  v.remove_prefix(name.size());
  while (!v.empty() && v[0] == ' ') v.remove_prefix(1);
  return !v.empty() && v[0] == '(';
}

// A right-hand side built from numbers, strings, names and brackets / arithmetic only: no
// call, no attribute, no comprehension. `2 * hidden` counts (a derived shape constant);
// `torch.float16` and `make_table()` do not.
bool is_literal_expression(std::string_view rhs) {
  size_t i = 0, n = rhs.size();
  bool saw_value = false;
  while (i < n) {
    char c = rhs[i];
    if (c == '#') {  // comment to end of line
      while (i < n && rhs[i] != '\n') ++i;
      continue;
    }
    if (c == '"' || c == '\'') {
      bool triple = rhs.substr(i, 3) == std::string(3, c);
      std::string close = triple ? std::string(3, c) : std::string(1, c);
      size_t j = i + close.size();
      while (j < n && rhs.substr(j, close.size()) != close) j += rhs[j] == '\\' ? 2 : 1;
      if (j >= n) return false;
      i = j + close.size();
      saw_value = true;
      continue;
    }
    if (std::isdigit(static_cast<unsigned char>(c)) ||
        (c == '.' && i + 1 < n && std::isdigit(static_cast<unsigned char>(rhs[i + 1])))) {
      while (i < n &&
             (is_ident_char(rhs[i]) || rhs[i] == '.' ||
              ((rhs[i] == '+' || rhs[i] == '-') && (rhs[i - 1] == 'e' || rhs[i - 1] == 'E'))))
        ++i;
      saw_value = true;
      continue;
    }
    if (is_ident_start(c)) {
      size_t j = i;
      while (j < n && is_ident_char(rhs[j])) ++j;
      std::string_view word = rhs.substr(i, j - i);
      if (word == "lambda" || word == "for" || word == "if" || word == "await" || word == "yield")
        return false;
      if (i > 0 && rhs[i - 1] == '.') return false;  // attribute
      size_t k = j;
      while (k < n && (rhs[k] == ' ' || rhs[k] == '\t')) ++k;
      if (k < n && (rhs[k] == '(' || rhs[k] == '.' || rhs[k] == '['))
        return false;  // call, attribute, index
      i = j;
      saw_value = true;
      continue;
    }
    if (std::string_view(" \t\r\n\\[](){},:+-*/%~").find(c) == std::string_view::npos) return false;
    ++i;
  }
  return saw_value;
}

// `NAME = ...` or `NAME: T = ...` at the start of a statement: the name and the right side.
bool split_simple_assignment(const std::string& stmt, std::string& name, std::string_view& rhs) {
  if (stmt.empty() || !is_ident_start(stmt[0])) return false;
  size_t i = 0;
  while (i < stmt.size() && is_ident_char(stmt[i])) ++i;
  name = stmt.substr(0, i);
  while (i < stmt.size() && (stmt[i] == ' ' || stmt[i] == '\t')) ++i;
  if (i < stmt.size() && stmt[i] == ':') {  // annotation
    while (i < stmt.size() && stmt[i] != '=' && stmt[i] != '\n') ++i;
  }
  if (i >= stmt.size() || stmt[i] != '=' || (i + 1 < stmt.size() && stmt[i + 1] == '='))
    return false;
  rhs = std::string_view(stmt).substr(i + 1);
  return true;
}

}  // namespace

std::string render_template(const std::string& tmpl,
                            const std::map<std::string, std::string>& values,
                            const std::string& template_name) {
  std::string out;
  size_t pos = 0;
  while (true) {
    size_t open = tmpl.find("{{", pos);
    if (open == std::string::npos) break;
    size_t close = tmpl.find("}}", open + 2);
    if (close == std::string::npos) break;
    std::string key = tmpl.substr(open + 2, close - open - 2);
    auto first = key.find_first_not_of(' '), last = key.find_last_not_of(' ');
    key = first == std::string::npos ? "" : key.substr(first, last - first + 1);
    auto it = values.find(key);
    if (it == values.end())
      throw UsageError(template_name + ": placeholder {{" + key +
                       "}} has no value; known: see docs/generate.md (Prompt templates)");
    out.append(tmpl, pos, open - pos);
    out += it->second;
    pos = close + 2;
  }
  out.append(tmpl, pos, std::string::npos);
  return out;
}

std::string strip_problem_inputs(const std::string& source) {
  std::vector<std::string> lines = split_lines(source);
  std::vector<std::string> kept;
  ScanState state;
  size_t i = 0;
  bool dropping_def = false;  // inside the body of a dropped top-level def
  while (i < lines.size()) {
    // One logical statement: lines i..j-1 (brackets, strings and backslashes joined).
    size_t j = i;
    std::string stmt;
    do {
      scan_line(lines[j], state);
      stmt += lines[j];
      stmt += '\n';
      ++j;
    } while (j < lines.size() && state.open());
    const std::string& first = lines[i];
    bool top_level = !is_blank(first) && !is_indented(first);
    bool comment_only = top_level && first[0] == '#';

    bool drop = false;
    if (dropping_def) {
      if (top_level)
        dropping_def = false;  // the def ended
      else
        drop = true;  // its body, or a blank line inside or after it
    }
    if (!dropping_def && top_level && !comment_only) {
      std::string name;
      std::string_view rhs;
      if (starts_def_of(first, "get_inputs") || starts_def_of(first, "get_init_inputs")) {
        drop = dropping_def = true;
      } else if (split_simple_assignment(stmt, name, rhs)) {
        drop = name == "KBV_SMALL" || is_literal_expression(rhs);
      }
    }
    if (!drop)
      for (size_t k = i; k < j; ++k) kept.push_back(lines[k]);
    i = j;
  }
  // Collapse the gaps the removals leave: at most two blank lines in a row, none at the end.
  std::string out;
  int blank_run = 0;
  for (const auto& line : kept) {
    if (is_blank(line)) {
      if (++blank_run > 2) continue;
    } else {
      blank_run = 0;
    }
    out += line;
    out += '\n';
  }
  while (out.size() >= 2 && out[out.size() - 1] == '\n' && out[out.size() - 2] == '\n')
    out.pop_back();
  return out;
}

std::string read_text_file(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw UsageError("cannot read '" + path + "'");
  std::ostringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

std::string build_prompt(const PromptSettings& settings, const std::string& problem_source) {
  namespace fs = std::filesystem;
  auto file = [&](const char* name) { return (fs::path(settings.prompts_dir) / name).string(); };
  std::string example_problem = read_text_file(file("example_problem.py"));
  std::string problem = problem_source;
  if (settings.input_blind) {
    example_problem = strip_problem_inputs(example_problem);
    problem = strip_problem_inputs(problem);
  }
  std::map<std::string, std::string> values = {
      {"example_problem", example_problem},
      {"example_solution", read_text_file(file("example_model_new.py"))},
      {"problem_source", problem},
      {"precision_note",
       settings.precision == "bf16" ? read_text_file(file("precision_bf16.txt")) : ""},
      {"input_note", settings.input_blind ? read_text_file(file("input_blind.txt")) : ""},
  };
  return render_template(read_text_file(file("single_turn.txt")), values, file("single_turn.txt"));
}

}  // namespace kbv::gen
