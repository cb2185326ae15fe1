#pragma once
// A candidate split into two same-length views, so every offset keeps its line number:
//   code:    the Python code, with comments, docstrings and string contents blanked;
//   strings: the contents of the string literals (the embedded C++/CUDA), with C/C++ comments
//            blanked; docstrings and everything outside string literals blanked.
// Rules then match against the view that fits them, and never against comments or prose.
#include <cstddef>
#include <string>
#include <string_view>
#include <vector>

namespace kbv::scan::detail {

struct PythonFacts;

struct SourceViews {
  std::string code;
  std::string strings;
  std::vector<std::size_t> line_starts;  // offset of the first byte of each line

  int line_count() const { return static_cast<int>(line_starts.size()); }
  int line_of(std::size_t offset) const;  // 0-based line holding offset
  // Line `line` (0-based) of a text laid out like the views, without its newline.
  std::string_view line(std::string_view text, int line) const;
};

// A Python source (a KernelBench candidate), from the comments and string tokens that CPython's
// tokenizer found in it (python_facts.hpp).
SourceViews split_python(std::string_view source, const PythonFacts& facts);
// A C++/CUDA source (.cu, .cpp): all of it goes to the strings view.
SourceViews split_cxx(std::string_view source);

}  // namespace kbv::scan::detail
