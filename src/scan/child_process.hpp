#pragma once
// Runs programs with bytes on their stdin and returns their stdout (kbv_scan's only children:
// the Python helper that parses candidates, python_facts.hpp). Torch-free, no shell, no change to
// the process's signal handling (SIGPIPE is blocked in the calling thread only).
#include <string>
#include <string_view>
#include <vector>

namespace kbv::scan::detail {

// One child per input, all running at once (argv[0] is the program's path); their stdouts, in
// order. Throws ScanError when one cannot start, is killed, or exits non-zero (with the end of
// its stderr in the message).
std::vector<std::string> run_each_with_stdin(const std::vector<std::string>& argv,
                                             const std::vector<std::string_view>& inputs);

inline std::string run_with_stdin(const std::vector<std::string>& argv, std::string_view input) {
  return run_each_with_stdin(argv, {input}).front();
}

}  // namespace kbv::scan::detail
