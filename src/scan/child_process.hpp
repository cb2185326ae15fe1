#pragma once
// Runs a program with bytes on its stdin and returns its stdout (kbv_scan's only child: the
// Python helper that parses candidates, python_facts.hpp). Torch-free, no shell.
#include <string>
#include <string_view>
#include <vector>

namespace kbv::scan::detail {

// argv[0] is the program's path. Throws ScanError when it cannot start, is killed, or exits
// non-zero (with the end of its stderr in the message).
std::string run_with_stdin(const std::vector<std::string>& argv, std::string_view input);

}  // namespace kbv::scan::detail
