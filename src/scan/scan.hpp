#pragma once
// Static scan of a candidate: flags code that looks like a known reward hack (side streams,
// tampering with torch / timing / comparison functions, cached results, ...) without importing
// it. Findings are hints for a person and warnings in a strict verdict; the runtime checks of
// the worker decide. Torch-free; thousands of files per second. Rules: docs/static-scan.md.
#include <filesystem>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

namespace kbv::scan {

// One suspicious spot in a candidate.
struct Finding {
  std::string rule;      // a name from rules(), e.g. "side_stream"
  std::string severity;  // "warning" or "info"
  int line = 0;          // 1-based line in the scanned file
  std::string excerpt;   // that line, trimmed (and shortened past ~120 characters)
  std::string why;       // one line: why the rule exists
};

// A rule of the scan, with its default severity and its one-line reason.
struct RuleInfo {
  std::string_view name;
  std::string_view severity;
  std::string_view why;
};

// Every rule, in a fixed order (the order of the summary).
const std::vector<RuleInfo>& rules();

// Scans a Python candidate, including the C++/CUDA in its string literals. Findings are sorted
// by line, at most one per rule and line. The Python is parsed by CPython's tokenizer and ast in
// a child process (the interpreter kbv was configured with; nothing is executed); a source that
// does not parse yields one syntax_error finding. Throws ScanError when that interpreter cannot
// be run.
std::vector<Finding> scan_source(std::string_view python_source);
// The same for many sources, with one child process for all of them (what `kbv check` uses).
std::vector<std::vector<Finding>> scan_sources(const std::vector<std::string_view>& python_sources);

// Scans a C++/CUDA source file's text (a .cu/.cpp that a candidate builds with load()).
std::vector<Finding> scan_cxx_source(std::string_view cxx_source);

// Reads and scans a file: .cu/.cuh/.cpp/.cc/.cxx/.c/.h/.hpp as C++, anything else as Python.
// Throws ScanError when the file cannot be read.
std::vector<Finding> scan_file(const std::filesystem::path& path);
// Reads and scans many files, parsing all the Python ones in one child process.
std::vector<std::vector<Finding>> scan_files(const std::vector<std::filesystem::path>& paths);

// The files `kbv check PATH` scans: PATH itself, or for a folder every .py/.cu/.cuh/.cpp file
// below it, sorted. Throws ScanError when PATH does not exist.
std::vector<std::filesystem::path> scan_targets(const std::filesystem::path& path);

struct ScanError : std::runtime_error {
  using std::runtime_error::runtime_error;
};

}  // namespace kbv::scan
