#pragma once
// What the rules need to know about a Python candidate, from CPython's own tokenizer and parser
// (python_facts.py, run in one child process per batch of files with the interpreter kbv was
// configured with, KBV_PYTHON; ast.parse never executes the candidate). Lines are 0-based,
// offsets are bytes of the source.
#include <cstddef>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace kbv::scan::detail {

struct SyntaxProblem {
  int line = 0;
  std::string message;  // "SyntaxError: unterminated string literal ..."
};

struct StringToken {
  std::size_t begin = 0, end = 0;            // the whole token, prefix and quotes included
  std::size_t body_begin = 0, body_end = 0;  // its contents
  bool statement = false;                    // a docstring or other string used as a statement
};

struct ForwardFacts {
  int def_line = 0;                                  // the `def forward` line
  int end_line = 0;                                  // first line after the body
  std::vector<std::string> assigned_self_attrs;      // X of `self.X = ...`, `self.X[k] = ...`
  std::vector<std::pair<int, std::string>> returns;  // (line, X) of `return self.X` / `self.X[k]`
};

struct TryFacts {
  int line = 0;                    // the `try:` line (a try with except handlers)
  std::vector<std::string> names;  // dotted names used in its body
};

struct PythonFacts {
  std::optional<SyntaxProblem> syntax_problem;  // set: nothing else was filled
  std::vector<std::pair<std::size_t, std::size_t>> comments;
  std::vector<StringToken> strings;
  std::vector<ForwardFacts> forwards;
  std::vector<TryFacts> tries;
  std::vector<std::pair<int, bool>> key_uses;          // (line, key also holds ._version)
  std::vector<std::pair<int, bool>> cache_decorators;  // (line, decorates forward)
  std::vector<std::string> extension_names;  // load_inline results, aliases, triton kernels
  // Import aliases resolved (`import torch as t`: t.relu is torch.relu):
  std::vector<std::pair<int, std::string>>
      attribute_assignments;  // torch.relu = f, setattr(torch, "relu", f)
  std::vector<std::pair<int, std::string>>
      references;  // _orig = torch.cuda.synchronize, wraps(torch.x)
};

// The facts of each source, in order, from one run of the helper. Throws ScanError when the
// interpreter cannot be run (its path and how to change it are in the message).
std::vector<PythonFacts> python_facts(const std::vector<std::string_view>& sources);

// The interpreter the helper runs with (KBV_PYTHON at configure time).
const std::string& scan_python();

}  // namespace kbv::scan::detail
