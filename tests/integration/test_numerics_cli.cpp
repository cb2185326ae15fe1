// The numerics model (docs/protocols.md, "Numerics") on the CPU, through the real kbv: a sum
// whose terms cancel, where any two fp32 orders disagree far outside the tolerance. An honest
// reordering must pass verified and strict (its error against a float64 run of Model is eager's
// own), while a dropped term or a lower precision must still fail -- and standard, KernelBench's
// rule, stays element-wise.
#include <gtest/gtest.h>

#include "kbv_cli.hpp"

namespace kbv {
namespace {

using testing::CliResult;

std::string numerics_fixture(const std::string& name) { return testing::fixture("numerics/" + name); }
const std::string kProblem = numerics_fixture("cancelling_sum.py");

CliResult eval(const std::string& candidate, const std::string& protocol) {
  return testing::run_kbv_eval({kProblem, numerics_fixture(candidate), "--protocol", protocol, "--no-timing"}, "cpu");
}

// Distributions where the tolerance check failed and the numerics model was consulted.
int numerics_rescues(const CliResult& r) {
  int n = 0;
  for (const auto& d : r.verdict["correctness"]["distributions"])
    if (d.contains("numerics") && d["numerics"]["within"].get<bool>() && d["status"] == "pass") ++n;
  return n;
}

TEST(Numerics, AnHonestReorderingPassesVerifiedThroughTheFloat64Truth) {
  auto r = eval("reordered.py", "verified");
  ASSERT_EQ(r.outcome(), "correct") << r.context();
  EXPECT_GT(numerics_rescues(r), 0) << "the tolerance check alone must have failed somewhere: else this test proves nothing\n"
                                    << r.context();
  for (const auto& d : r.verdict["correctness"]["distributions"]) {
    if (!d.contains("numerics")) continue;
    const auto& n = d["numerics"];
    EXPECT_GT(n["eager_max_abs_err"].get<double>(), 0.0) << d.dump();
    EXPECT_LE(n["candidate_max_abs_err"].get<double>(), n["factor"].get<double>() * n["eager_max_abs_err"].get<double>());
  }
}

TEST(Numerics, AnHonestReorderingPassesStrict) {
  auto r = eval("reordered.py", "strict");
  EXPECT_EQ(r.outcome(), "correct") << r.context();
}

TEST(Numerics, StandardKeepsKernelBenchsElementWiseRule) {
  auto r = eval("reordered.py", "standard");
  EXPECT_EQ(r.outcome(), "incorrect") << r.context();
}

TEST(Numerics, ADroppedTermStillFails) {
  auto r = eval("dropped_term.py", "verified");
  ASSERT_EQ(r.outcome(), "incorrect") << r.context();
  EXPECT_NE(r.reason().find("float64"), std::string::npos) << r.context();
}

TEST(Numerics, ALowerPrecisionThanAskedStillFails) {
  auto r = eval("reduced_precision.py", "verified");
  EXPECT_EQ(r.outcome(), "incorrect") << r.context();
}

}  // namespace
}  // namespace kbv
