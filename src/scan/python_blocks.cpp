// Block structure of the Python code (indentation), and the rules that need it:
// silent_fallback (try/except around the kernel or in forward) and result_caching's outputs
// saved on self in forward and returned on a later call.
#include <set>

#include "scan/scan_context.hpp"

namespace kbv::scan::detail {

namespace {

bool starts_with_word(std::string_view text, std::string_view word) {
  return text.substr(0, word.size()) == word &&
         (text.size() == word.size() || !is_word(text[word.size()]));
}

std::string_view code_line(const ScanContext& ctx, int line) {
  return ctx.views.line(ctx.views.code, line);
}

// First statement line after `line` that is not indented deeper (the end of its block).
int block_end(const ScanContext& ctx, int line) {
  const int n = ctx.views.line_count();
  const int indent = ctx.statement_indent[static_cast<std::size_t>(line)];
  for (int j = line + 1; j < n; ++j) {
    int ind = ctx.statement_indent[static_cast<std::size_t>(j)];
    if (ind >= 0 && ind <= indent) return j;
  }
  return n;
}

// The code between the starts of lines `first` and `end`.
std::string_view code_lines(const ScanContext& ctx, int first, int end) {
  const auto& starts = ctx.views.line_starts;
  std::size_t b = starts[static_cast<std::size_t>(first)];
  std::size_t e = end < ctx.views.line_count() ? starts[static_cast<std::size_t>(end)]
                                               : ctx.views.code.size();
  return std::string_view(ctx.views.code).substr(b, e - b);
}

// Position of the assignment '=' in a line (not ==, <=, >=, !=, nor a keyword argument's,
// which sits inside brackets), or npos.
std::size_t assignment_pos(std::string_view line) {
  int depth = 0;
  for (std::size_t k = 0; k < line.size(); ++k) {
    char c = line[k];
    if (c == '(' || c == '[' || c == '{') ++depth;
    else if (c == ')' || c == ']' || c == '}') --depth;
    else if (c == '=' && depth == 0) {
      char prev = k > 0 ? line[k - 1] : ' ';
      char next = k + 1 < line.size() ? line[k + 1] : ' ';
      if (next == '=' ) { ++k; continue; }
      if (prev == '!' || prev == '<' || prev == '>' || prev == '=' || prev == ':') continue;
      return k;
    }
  }
  return std::string_view::npos;
}

bool is_dotted_name(std::string_view s) {
  return !s.empty() && !(s[0] >= '0' && s[0] <= '9') && dotted_name_at(s, 0).size() == s.size();
}

void add_name(ScanContext& ctx, std::string_view name) {
  for (const auto& n : ctx.extension_names)
    if (n == name) return;
  ctx.extension_names.emplace_back(name);
}

// `ext = load_inline(...)`, `ext = cpp_extension.load(...)`: ext is a custom extension.
void find_extension_names(ScanContext& ctx) {
  std::string_view code = ctx.views.code;
  for (std::string_view call : {std::string_view("load_inline("), std::string_view("load(")}) {
    for (std::size_t p = code.find(call); p != std::string_view::npos; p = code.find(call, p + 1)) {
      if (p > 0 && is_word(code[p - 1])) continue;
      if (p > 0 && code[p - 1] == '.') {
        std::string_view before = code.substr(0, p - 1);
        std::string_view owner = "cpp_extension";
        if (before.size() < owner.size() || before.substr(before.size() - owner.size()) != owner)
          continue;  // torch.load(, np.load(: not an extension
      }
      int line = ctx.views.line_of(p);
      std::string_view text = code_line(ctx, line);
      std::size_t eq = assignment_pos(text);
      std::size_t local = p - ctx.views.line_starts[static_cast<std::size_t>(line)];
      if (eq == std::string_view::npos || eq > local) continue;
      std::string_view lhs = trim(text.substr(0, eq));
      if (is_dotted_name(lhs)) add_name(ctx, lhs);
    }
  }
  // @triton.jit kernels are custom kernels too.
  const int n = ctx.views.line_count();
  for (int i = 0; i < n; ++i) {
    if (ctx.statement_indent[static_cast<std::size_t>(i)] < 0) continue;
    std::string_view t = trim(code_line(ctx, i));
    if (t.empty() || t[0] != '@' || t.find("triton.jit") == std::string_view::npos) continue;
    for (int j = i + 1; j < n; ++j) {
      if (ctx.statement_indent[static_cast<std::size_t>(j)] < 0) continue;
      std::string_view d = trim(code_line(ctx, j));
      if (d.substr(0, 4) != "def ") break;
      add_name(ctx, dotted_name_at(d, 4));
      break;
    }
  }
  // Aliases (`self.relu = relu_ext`), twice to follow an alias of an alias.
  for (int round = 0; round < 2 && !ctx.extension_names.empty(); ++round) {
    for (int i = 0; i < n; ++i) {
      if (ctx.statement_indent[static_cast<std::size_t>(i)] < 0) continue;
      std::string_view text = code_line(ctx, i);
      std::size_t eq = assignment_pos(text);
      if (eq == std::string_view::npos) continue;
      std::string_view lhs = trim(text.substr(0, eq));
      std::string_view rhs = trim(text.substr(eq + 1));
      if (!is_dotted_name(lhs)) continue;
      for (std::size_t k = 0; k < ctx.extension_names.size(); ++k)
        if (rhs == ctx.extension_names[k]) {
          add_name(ctx, lhs);
          break;
        }
    }
  }
}

void find_silent_fallbacks(ScanContext& ctx) {
  const int n = ctx.views.line_count();
  for (int i = 0; i < n; ++i) {
    if (ctx.statement_indent[static_cast<std::size_t>(i)] < 0) continue;
    std::string_view t = trim(code_line(ctx, i));
    if (!starts_with_word(t, "try") || trim(t.substr(3)).substr(0, 1) != ":") continue;
    int end = block_end(ctx, i);
    if (end >= n || !starts_with_word(trim(code_line(ctx, end)), "except")) continue;
    bool fallback = ctx.in_forward(i);
    if (!fallback) {
      std::string_view body = code_lines(ctx, i, end);
      fallback = body.find("load_inline(") != std::string_view::npos ||
                 body.find("cpp_extension") != std::string_view::npos;
      for (const auto& name : ctx.extension_names)
        fallback = fallback || contains_name(body, name);
    }
    if (fallback) ctx.mark(Rule::silent_fallback, i, Severity::warning);
  }
}

// In forward: `self.out = y ... return self.out` (or self.cache[k] = y ... return self.cache[k]).
void find_saved_outputs(ScanContext& ctx) {
  for (auto [def, end] : ctx.forward_bodies) {
    if (def + 1 >= end) continue;
    std::string_view body = code_lines(ctx, def + 1, end);
    std::set<std::string_view> assigned;
    for (std::size_t p = body.find("self."); p != std::string_view::npos;
         p = body.find("self.", p + 1)) {
      if (p > 0 && (is_word(body[p - 1]) || body[p - 1] == '.')) continue;
      std::size_t a = p + 5, e = a;
      while (e < body.size() && is_word(body[e])) ++e;
      std::string_view attr = body.substr(a, e - a);
      std::size_t k = e;
      while (k < body.size() && is_blank(body[k])) ++k;
      if (k < body.size() && body[k] == '[') {  // self.cache[key] = ...
        int depth = 0;
        for (; k < body.size(); ++k) {
          if (body[k] == '[') ++depth;
          if (body[k] == ']' && --depth == 0) break;
        }
        ++k;
        while (k < body.size() && is_blank(body[k])) ++k;
      }
      if (k + 1 < body.size() && body[k] == '=' && body[k + 1] != '=' && !attr.empty())
        assigned.insert(attr);
    }
    if (assigned.empty()) continue;
    for (int i = def + 1; i < end; ++i) {
      if (ctx.statement_indent[static_cast<std::size_t>(i)] < 0) continue;
      std::string_view t = trim(code_line(ctx, i));
      if (!starts_with_word(t, "return")) continue;
      std::string_view value = trim(t.substr(6));
      while (!value.empty() && value.front() == '(') value = trim(value.substr(1));
      if (value.substr(0, 5) != "self.") continue;
      std::string_view attr = value.substr(5);
      std::size_t e = 0;
      while (e < attr.size() && is_word(attr[e])) ++e;
      if (assigned.count(attr.substr(0, e))) ctx.mark(Rule::result_caching, i, Severity::warning);
    }
  }
}

}  // namespace

void analyse_python_blocks(ScanContext& ctx) {
  const int n = ctx.views.line_count();
  ctx.statement_indent.assign(static_cast<std::size_t>(n), -1);
  for (int i = 0; i < n; ++i) {
    if (ctx.views.continuation[static_cast<std::size_t>(i)]) continue;
    std::string_view text = code_line(ctx, i);
    int indent = 0;
    std::size_t k = 0;
    for (; k < text.size() && is_blank(text[k]); ++k)
      indent = text[k] == '\t' ? (indent / 8 + 1) * 8 : indent + 1;
    if (k < text.size()) ctx.statement_indent[static_cast<std::size_t>(i)] = indent;
  }
  for (int i = 0; i < n; ++i) {
    if (ctx.statement_indent[static_cast<std::size_t>(i)] < 0) continue;
    std::string_view t = trim(code_line(ctx, i));
    if (starts_with_word(t, "async")) t = trim(t.substr(5));
    if (!starts_with_word(t, "def")) continue;
    if (dotted_name_at(trim(t.substr(3)), 0) != "forward") continue;
    ctx.forward_bodies.emplace_back(i, block_end(ctx, i));
  }
  find_extension_names(ctx);
}

void run_block_rules(ScanContext& ctx) {
  find_silent_fallbacks(ctx);
  find_saved_outputs(ctx);
}

void find_current_streams(ScanContext& ctx) {
  std::string_view text = ctx.views.strings;
  std::string_view call = "getCurrentCUDAStream";
  for (std::size_t p = text.find(call); p != std::string_view::npos; p = text.find(call, p + 1)) {
    ctx.asks_current_stream = true;
    int line = ctx.views.line_of(p);
    std::string_view before =
        text.substr(ctx.views.line_starts[static_cast<std::size_t>(line)],
                    p - ctx.views.line_starts[static_cast<std::size_t>(line)]);
    std::size_t eq = before.rfind('=');
    if (eq == std::string_view::npos) continue;
    std::string_view lhs = trim(before.substr(0, eq));
    std::size_t b = lhs.size();
    while (b > 0 && is_word(lhs[b - 1])) --b;
    if (b < lhs.size()) ctx.current_stream_names.emplace_back(lhs.substr(b));
  }
  if (ctx.views.code.find("current_stream(") != std::string::npos) ctx.asks_current_stream = true;
}

}  // namespace kbv::scan::detail
