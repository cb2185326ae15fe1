#pragma once
// `kbv audit PROBLEM|SUITE...`: the reference of every problem under every protocol's
// distributions, no candidate: is its output finite, and does some distribution discriminate
// (a trivial output — zeros, a constant, the input — must not pass everywhere)?
#include <iosfwd>
#include <string>
#include <vector>

namespace kbv {

struct AuditOptions {
  std::vector<std::string> paths;  // problem files or suites (folders with levelN/)
  std::string device = "auto";
  std::string size = "auto";
  std::string precision = "fp32";
  std::string json_path;
  int jobs = 2;
  double timeout = 600;
};

// Exit code: 0 when every reference is finite and no problem is degenerate under strict;
// 1 otherwise (each one named).
int run_audit_command(const AuditOptions& options, std::ostream& out);

}  // namespace kbv
