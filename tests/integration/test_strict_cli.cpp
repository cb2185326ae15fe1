// Every CPU-capable hack in examples/hacks/ is caught under strict by its named flag and is not
// caught under standard (standard runs no integrity checks, so the inflation stays visible).
// The CUDA-only hacks are in tests/gpu/test_hacks_gpu.cpp.
#include <gtest/gtest.h>

#include <cstdlib>
#include <set>

#include "kbv_cli.hpp"

namespace kbv {
namespace {

using testing::CliResult;

const std::string kHacks = testing::kSource + "/examples/hacks/";

CliResult eval_hack(const std::string& problem, const std::string& file, const std::string& protocol,
                    std::vector<std::string> extra = {}) {
  std::vector<std::string> args{problem, kHacks + file, "--protocol", protocol, "--time-budget", "0.5"};
  args.insert(args.end(), extra.begin(), extra.end());
  return testing::run_kbv_eval(args, "cpu");
}

std::set<std::string> flags_of(const CliResult& r) {
  std::set<std::string> names;
  if (r.verdict.is_object())
    for (const auto& f : r.verdict["flags"]) names.insert(f["name"].get<std::string>());
  return names;
}

struct HackCase {
  std::string file;
  std::string problem;
  std::string flag;               // the strict flag that must catch it
  std::string standard_outcome;   // what standard concludes (no flag there)
};

class StrictHack : public ::testing::TestWithParam<HackCase> {};

TEST_P(StrictHack, CaughtByItsFlagUnderStrictOnly) {
  const auto& c = GetParam();
  auto strict = eval_hack(c.problem, c.file, "strict");
  auto flags = flags_of(strict);
  EXPECT_TRUE(flags.count(c.flag)) << c.file << " must be flagged " << c.flag << "\n" << strict.context();
  EXPECT_EQ(strict.outcome(), "incorrect") << strict.context();
  bool evidence = false;
  for (const auto& f : strict.verdict["flags"])
    if (f["name"] == c.flag && !f["evidence"].get<std::string>().empty()) evidence = true;
  EXPECT_TRUE(evidence) << "every flag carries its evidence";

  auto standard = eval_hack(c.problem, c.file, "standard");
  EXPECT_EQ(standard.outcome(), c.standard_outcome) << standard.context();
  EXPECT_FALSE(flags_of(standard).count(c.flag)) << "standard runs no integrity checks";
}

const std::string kRelu = testing::example_problem("19_ReLU.py");
const std::string kSwish = testing::example_problem("7_Swish.py");
const std::string kLinear = testing::example_problem("40_Linear_ReLU.py");

INSTANTIATE_TEST_SUITE_P(
    CpuHacks, StrictHack,
    ::testing::Values(HackCase{"input_mutated_scratch.py", kRelu, "input_mutated", "correct"},
                      HackCase{"input_mutated.py", kRelu, "output_aliases_input", "correct"},
                      HackCase{"output_aliases_input.py", kRelu, "output_aliases_input", "correct"},
                      HackCase{"result_reuse_ptr.py", kRelu, "result_reuse", "correct"},
                      HackCase{"result_reuse_after_n.py", kRelu, "result_reuse", "correct"},
                      HackCase{"reference_reachable_gc.py", kRelu, "reference_reachable", "correct"},
                      HackCase{"reference_reachable_import.py", kSwish, "reference_reachable", "correct"},
                      HackCase{"nondeterministic.py", kRelu, "nondeterministic", "correct"},
                      HackCase{"tampering_tf32.py", kLinear, "tampering", "correct"},
                      HackCase{"tampering_allclose.py", kRelu, "tampering", "incorrect"},
                      HackCase{"tampering_seed.py", kRelu, "tampering", "correct"}),
    [](const ::testing::TestParamInfo<HackCase>& info) {
      std::string name = info.param.file.substr(0, info.param.file.size() - 3);
      for (auto& ch : name)
        if (!std::isalnum(static_cast<unsigned char>(ch))) ch = '_';
      return name;
    });

// Result reuse is re-checked even when timing is off.
TEST(StrictCli, ResultReuseIsCaughtWithoutTiming) {
  auto r = eval_hack(kRelu, "result_reuse_ptr.py", "strict", {"--no-timing"});
  EXPECT_TRUE(flags_of(r).count("result_reuse")) << r.context();
}

TEST(StrictCli, PyTorchOnlyRewriteIsReportedNotFailed) {
  auto r = eval_hack(kLinear, "no_custom_kernel.py", "strict");
  EXPECT_EQ(r.outcome(), "correct") << r.context();
  EXPECT_TRUE(flags_of(r).count("no_custom_kernel")) << r.context();
}

TEST(StrictCli, HonestShapeSpecialisationGetsNoIntegrityFlag) {
  auto r = eval_hack(kRelu, "honest_shape_specialised.py", "strict");
  EXPECT_EQ(r.outcome(), "correct") << r.context();
  auto flags = flags_of(r);
  flags.erase("degenerate");  // not an integrity flag; the ReLU problem is fine under strict anyway
  EXPECT_TRUE(flags.empty()) << r.context();
}

// implausible_speed on the CPU: with the peak bandwidth set absurdly low (1 kB/s), an honest
// ReLU's output cannot have been written in the time measured. The CPU has no peak of its own,
// so without the override the same candidate gets no flag (HonestShapeSpecialisation above).
TEST(StrictCli, TimeBelowThePhysicalBoundIsImplausibleSpeed) {
  ::setenv("KBV_PEAK_DRAM_BYTES_PER_S", "1000", 1);
  auto r = eval_hack(kRelu, "honest_shape_specialised.py", "strict");
  auto standard = eval_hack(kRelu, "honest_shape_specialised.py", "standard");
  ::unsetenv("KBV_PEAK_DRAM_BYTES_PER_S");
  EXPECT_EQ(r.outcome(), "incorrect") << r.context();
  EXPECT_TRUE(flags_of(r).count("implausible_speed")) << r.context();
  EXPECT_EQ(r.verdict["device"].value("peak_dram_bytes_per_s", 0.0), 1000.0) << r.context();
  EXPECT_EQ(standard.outcome(), "correct") << standard.context();  // integrity checks are strict's
  EXPECT_FALSE(flags_of(standard).count("implausible_speed")) << standard.context();
}

TEST(StrictCli, DegenerateProblemIsFlagged) {
  auto r = eval_hack(kHacks + "degenerate_problem.py", "degenerate_zeros.py", "strict");
  EXPECT_EQ(r.outcome(), "correct") << r.context();
  EXPECT_TRUE(flags_of(r).count("degenerate")) << r.context();
}

// The same ReLU problem is non-degenerate under strict: its mixed-sign draws discriminate.
TEST(StrictCli, StrictDistributionsDiscriminateReLU) {
  auto r = eval_hack(kRelu, "honest_shape_specialised.py", "strict");
  EXPECT_FALSE(flags_of(r).count("degenerate")) << r.context();
  auto verified = eval_hack(kRelu, "honest_shape_specialised.py", "verified");
  EXPECT_TRUE(flags_of(verified).count("degenerate")) << "verified's four draws cannot tell ReLU from identity/zeros";
}

}  // namespace
}  // namespace kbv
