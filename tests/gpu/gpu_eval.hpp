#pragma once
// What the GPU tests share: one `kbv eval` on cuda:0 and the figures they read from its verdict.
#include <set>
#include <string>

#include "kbv_cli.hpp"

namespace kbv {

using testing::CliResult;

inline const std::string kHacks = testing::kSource + "/examples/hacks/";
inline const std::string kRelu = testing::example_problem("19_ReLU.py");

inline CliResult eval_gpu(const std::string& candidate, const std::string& protocol, const std::string& problem = kRelu) {
  // A short run limit: a hack that wedges the sandbox must cost minutes, not the whole session.
  return testing::run_kbv_eval({problem, candidate, "--protocol", protocol, "--time-budget", "1", "--run-timeout", "120"},
                               "cuda:0");
}

inline std::set<std::string> integrity_flags(const CliResult& r) {
  std::set<std::string> names;
  if (r.verdict.is_object())
    for (const auto& f : r.verdict["flags"]) {
      std::string n = f["name"];
      if (n != "no_custom_kernel" && n != "degenerate" && n != "build_cache_tampered" && n != "lower_precision" &&
          n != "sandbox_account_differs")
        names.insert(n);
    }
  return names;
}

inline double headline_speedup(const CliResult& r) {
  if (!r.verdict.is_object() || !r.verdict.contains("timing")) return 0;
  const auto& t = r.verdict["timing"];
  for (const auto& s : t["speedups"])
    if (s["baseline"] == t["primary_baseline"]) return s["median"].get<double>();
  return 0;
}

// A hack gains nothing when it is not correct, or when its speedup is that of honest work (a
// plain CUDA ReLU is ~1.0x on the H200: bench/RESULTS.md).
inline void expect_no_gain(const CliResult& r, double at_most = 1.5) {
  if (r.outcome() == "correct") EXPECT_LT(headline_speedup(r), at_most) << "an inflated speedup\n" << r.context();
  else EXPECT_TRUE(r.outcome() == "incorrect" || r.outcome() == "runtime_error") << r.context();
}

}  // namespace kbv
