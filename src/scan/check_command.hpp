#pragma once
// `kbv check FILE... [--json OUT]`: the static scan from the command line.
#include <ostream>
#include <string>
#include <vector>

namespace kbv::scan {

struct CheckCommand {
  std::vector<std::string> paths;  // candidate files, or folders scanned for .py/.cu/.cpp
  std::string json;                // also write the findings here as JSON
  bool quiet = false;              // print only the summary
};

// Prints per file `file:line  rule  excerpt  (why)` and a per-rule summary to out; returns 0
// (findings are warnings, not errors). A missing path or an unwritable --json throws
// kbv::UsageError (exit 2) before anything is scanned.
int run_check_command(const CheckCommand& cmd, std::ostream& out);

}  // namespace kbv::scan
