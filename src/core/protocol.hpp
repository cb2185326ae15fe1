#pragma once
// A protocol is a named, versioned set of rules (SPEC: standard / verified / strict). Every
// verdict records the protocol's name and version; changing a rule here means bumping version.
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace kbv {

enum class Precision { fp32, bf16, fp16 };
std::string_view precision_name(Precision p);
Precision precision_from_name(std::string_view name);  // throws UsageError

// How one correctness distribution's inputs are made from the problem's get_inputs().
enum class DistributionKind {
  seeded_template,  // get_inputs() itself under `seed` (KernelBench's trials)
  scaled,           // one get_inputs() draw under `seed`, float tensors times `scale`, ints kept
  normal,           // fresh N(0,1), mixed sign, float tensors only
  heavy_tail,       // fresh Student-t(2)-like draws with rare large outliers
  zeros_ties,       // fresh values on a coarse grid: many exact zeros and ties
  sparse_spike,     // fresh N(0, 0.01^2) with 16 spikes of 100..200: a kernel that samples or skips terms misses them
  reinit_params,    // scaled x1 inputs, but parameters re-initialised (non-zero biases, non-unit norms)
  wide_range,       // fresh values of magnitude 1e-6..1e5 (beyond fp16's largest and below its normals) where the dtype holds them
  hidden_file,      // set `input_set` of a KernelBench-Verified hidden-test file's get_hidden_inputs()
};
std::string_view distribution_kind_name(DistributionKind k);

struct DistributionSpec {
  std::string name;  // stable, shown in verdicts: "trial_0", "D1_x1", "D4_neg", "normal", ...
  DistributionKind kind = DistributionKind::seeded_template;
  double scale = 1.0;
  std::uint64_t seed = 0;
  int input_set = 0;  // hidden_file only: which of the file's input lists
  bool operator==(const DistributionSpec&) const = default;
};

struct Tolerance {
  double atol = 1e-3;
  double rtol = 1e-3;
};

// torch_compile is never a protocol's headline baseline: an extra series, on request
// (`--torch-compile`), timed like the others.
enum class BaselineKind { eager_tf32_off, eager_tf32_on, torch_compile };
std::string_view baseline_name(BaselineKind b);

struct Protocol {
  std::string name;
  int version = 1;
  BaselineKind baseline = BaselineKind::eager_tf32_off;  // the one the headline speedup uses
  bool secret_seeds = false;      // strict: correctness seeds drawn per evaluation, never fixed
  bool nan_pattern_must_match = false;
  bool integrity_checks = false;  // strict's runtime checks (see docs/protocols.md)
  bool measure_memory = false;
  // A tolerance failure is judged again against a float64 truth (docs/protocols.md, "Numerics").
  bool numerics_model = false;

  Tolerance tolerance(Precision p) const;
  // The correctness distributions, in run order. `secret` seeds strict's draws.
  std::vector<DistributionSpec> distributions(std::uint64_t secret) const;
};

const Protocol& protocol_by_name(std::string_view name);  // throws UsageError on unknown names
std::vector<std::string> protocol_names();

}  // namespace kbv
