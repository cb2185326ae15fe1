// Issue 34 on the CPU, through the real binaries: every figure from the judge's own evidence, and
// nothing a candidate does blamed on the problem or on kbv.
//   - a reference with one infinity: no internal_error, the candidate's own outcome;
//   - a relay that rewrites the sandbox's answers: custom_kernel from the judge's look at the
//     sandbox's processes, the disagreement flagged; an answer that does not carry its request's
//     token is a protocol_violation;
//   - a kernel computed in fp16 where fp32 is asked: incorrect under strict on wide_range, flagged
//     lower_precision.
// The GPU halves (memory from the driver, a candidate that starves the judge of device memory)
// are in tests/gpu/test_judge_evidence_gpu.cpp.
#include <gtest/gtest.h>

#include <set>

#include "kbv_cli.hpp"

namespace kbv {
namespace {

using testing::CliResult;

const std::string kHacks = testing::kSource + "/examples/hacks/";
const std::string kRelu = testing::example_problem("19_ReLU.py");
const std::string kLogProblem = testing::fixture("evidence/log_with_one_zero.py");

CliResult eval(const std::string& problem, const std::string& candidate, const std::string& protocol,
               const std::string& builds = "") {
  return testing::run_kbv_eval({problem, candidate, "--protocol", protocol, "--time-budget", "0.3"}, "cpu", 900, builds);
}

std::set<std::string> flags_of(const CliResult& r) {
  std::set<std::string> names;
  if (r.verdict.is_object())
    for (const auto& f : r.verdict["flags"]) names.insert(f["name"].get<std::string>());
  return names;
}

TEST(JudgeEvidence, OneInfinityInTheReferenceIsTheCandidatesVerdictNotKbvs) {
  // Before: internal_error for every candidate under strict (the degenerate audit's mean).
  auto wrong = eval(kLogProblem, kHacks + "nan_where_reference_has_inf.py", "strict");
  EXPECT_EQ(wrong.outcome(), "incorrect") << wrong.context();
  auto honest = eval(kLogProblem, testing::fixture("evidence/log_honest.py"), "strict");
  EXPECT_EQ(honest.outcome(), "correct") << honest.context();
  for (const auto* r : {&wrong, &honest}) EXPECT_NE(r->outcome(), "internal_error") << r->context();
}

TEST(JudgeEvidence, ARelaysForgedExtensionIsNotACustomKernel) {
  for (const std::string protocol : {"standard", "strict"}) {
    SCOPED_TRACE(protocol);
    auto r = eval(kRelu, testing::bundled_attack("relay_forges_answers"), protocol);
    ASSERT_TRUE(r.verdict.is_object()) << r.context();
    // The forged extension is in the sandbox's account (build.extensions), not in the figure.
    EXPECT_FALSE(r.verdict["custom_kernel"].get<bool>()) << r.context();
    EXPECT_TRUE(flags_of(r).count("sandbox_account_differs")) << r.context();
    EXPECT_NE(r.outcome(), "internal_error") << r.context();
  }
}

TEST(JudgeEvidence, AnHonestExtensionIsStillACustomKernel) {
  auto r = eval(kRelu, testing::example_candidate("relu_cpp_ext.py"), "strict", testing::shared_build_dir());
  EXPECT_EQ(r.outcome(), "correct") << r.context();
  EXPECT_TRUE(r.verdict["custom_kernel"].get<bool>()) << "the judge sees its library mapped\n" << r.context();
  EXPECT_FALSE(flags_of(r).count("sandbox_account_differs")) << r.context();
  EXPECT_FALSE(flags_of(r).count("lower_precision")) << r.context();
}

TEST(JudgeEvidence, AnAnswerWithAnotherRequestsTokenIsAProtocolViolation) {
  auto r = eval(kRelu, testing::bundled_attack("relay_stale_token"), "standard");
  EXPECT_EQ(r.outcome(), "protocol_violation") << r.context();
  EXPECT_NE(r.reason().find("token"), std::string::npos) << r.context();
}

TEST(JudgeEvidence, HalfPrecisionWhereFp32IsAskedIsCaughtByStrict) {
  auto strict = eval(kRelu, kHacks + "half_precision_relu.py", "strict");
  EXPECT_EQ(strict.outcome(), "incorrect") << strict.context();
  EXPECT_TRUE(flags_of(strict).count("lower_precision")) << strict.context();
  bool wide_range_failed = false;
  for (const auto& d : strict.verdict["correctness"]["distributions"])
    if (d["name"] == "wide_range") wide_range_failed = d["status"] == "fail";
  EXPECT_TRUE(wide_range_failed) << strict.context();
  // verified has no draw beyond fp16's range: fp16's rounding is inside its tolerance.
  auto verified = eval(kRelu, kHacks + "half_precision_relu.py", "verified");
  EXPECT_EQ(verified.outcome(), "correct") << verified.context();
}

}  // namespace
}  // namespace kbv
