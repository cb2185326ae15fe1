#pragma once
// The names a verdict's flags use, defined once: which are integrity findings (under strict they
// make a numerically correct candidate incorrect) and which only inform (no_custom_kernel,
// degenerate). docs/checks.md describes each check behind them.
#include <optional>
#include <string_view>

namespace kbv {

enum class FlagName {
  input_mutated,         // the candidate wrote into its inputs
  output_aliases_input,  // an output is (a view of) an input
  result_reuse,          // a timed call's output was not the reference of its own inputs
  stale_memory,          // an output holds memory the candidate never wrote
  unsynchronized_work,   // the candidate's output was incomplete when its stream said it was done
  nondeterministic,      // the same inputs twice gave different outputs
  implausible_speed,     // faster than writing its outputs at the device's peak bandwidth
  persisting_l2,         // the candidate set persisting-L2 state
  build_cache_tampered,  // a built extension changed after kbv recorded its hash
  device_busy,           // the sandbox's context kept the GPU busy while the judge timed the baselines
  judge_starved,         // the judge ran out of device memory while the sandbox held more than its share
  lower_precision,       // informational: the candidate's error is that of half precision, not the problem's
  sandbox_account_differs,  // informational: the sandbox's report disagrees with what the judge observed
  no_custom_kernel,      // informational: a PyTorch-only rewrite
  degenerate,            // informational: a trivial output passes every distribution
};

struct FlagInfo {
  FlagName id;
  std::string_view name;
  bool integrity;
};

const FlagInfo& flag_info(FlagName f);
inline std::string_view flag_name(FlagName f) { return flag_info(f).name; }
std::optional<FlagName> flag_from_name(std::string_view name);
// Unknown names count as integrity findings: a flag kbv does not know is not harmless.
bool is_integrity_flag(std::string_view name);

}  // namespace kbv
