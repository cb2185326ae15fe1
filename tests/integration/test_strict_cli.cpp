// Every CPU-capable hack in examples/hacks/ against the judge/sandbox split: caught under strict
// by its named flag, caught as incorrect under every protocol, or left without the route it
// relied on (the reference, torch's functions and generators live in the judge now).
// The CUDA-only hacks are in tests/gpu/test_hacks_gpu.cpp.
#include <gtest/gtest.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <map>
#include <set>

#include "kbv_cli.hpp"
#include "store/result_store.hpp"

namespace kbv {
namespace {

using testing::CliResult;

const std::string kHacks = testing::kSource + "/examples/hacks/";

CliResult eval_hack(const std::string& problem, const std::string& file, const std::string& protocol,
                    std::vector<std::string> extra = {}, const std::string& builds = "") {
  std::vector<std::string> args{problem, kHacks + file, "--protocol", protocol, "--time-budget", "0.5"};
  args.insert(args.end(), extra.begin(), extra.end());
  return testing::run_kbv_eval(args, "cpu", 900, builds);
}

// honest_shape_specialised.py, a C++ extension: built once for the tests below that evaluate it.
CliResult eval_honest_extension(const std::string& protocol) {
  return eval_hack(testing::example_problem("19_ReLU.py"), "honest_shape_specialised.py", protocol, {},
                   testing::shared_build_dir());
}

std::set<std::string> flags_of(const CliResult& r) {
  std::set<std::string> names;
  if (r.verdict.is_object())
    for (const auto& f : r.verdict["flags"]) names.insert(f["name"].get<std::string>());
  return names;
}

// Caught under strict by its named flag; standard (no integrity checks) says what the numbers say.
struct HackCase {
  std::string file;
  std::string problem;
  std::string flag;               // the strict flag that must catch it
  std::string standard_outcome;   // what standard concludes (no flag there)
};

class StrictHack : public ::testing::TestWithParam<HackCase> {};

TEST_P(StrictHack, CaughtByItsFlagUnderStrict) {
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
                      // Stale after its first 12 calls: the judge checks outputs of timed calls
                      // in every protocol, so standard is incorrect too (unflagged there).
                      HackCase{"result_reuse_after_n.py", kRelu, "result_reuse", "incorrect"},
                      HackCase{"nondeterministic.py", kRelu, "nondeterministic", "correct"},
                      HackCase{"denormal_inputs.py", kRelu, "input_mutated", "correct"}),
    [](const ::testing::TestParamInfo<HackCase>& info) {
      std::string name = info.param.file.substr(0, info.param.file.size() - 3);
      for (auto& ch : name)
        if (!std::isalnum(static_cast<unsigned char>(ch))) ch = '_';
      return name;
    });

// Wrong in every protocol, standard included: the buffers a candidate is handed keep their
// address and get fresh values every call, so a cache keyed on the pointer returns another
// input's output; a patched comparison patches only the sandbox's own torch.
class CaughtEverywhere : public ::testing::TestWithParam<std::string> {};

TEST_P(CaughtEverywhere, IncorrectUnderStandardAndStrict) {
  for (const std::string protocol : {"standard", "strict"}) {
    auto r = eval_hack(kRelu, GetParam(), protocol);
    EXPECT_EQ(r.outcome(), "incorrect") << protocol << "\n" << r.context();
  }
}

INSTANTIATE_TEST_SUITE_P(CpuHacks, CaughtEverywhere,
                         ::testing::Values("result_reuse_ptr.py", "tampering_allclose.py", "wrong_one_call_in_eight.py"),
                         [](const ::testing::TestParamInfo<std::string>& info) {
                           std::string name = info.param.substr(0, info.param.size() - 3);
                           for (auto& ch : name)
                             if (!std::isalnum(static_cast<unsigned char>(ch))) ch = '_';
                           return name;
                         });

// Routes that ran through the candidate's process and no longer exist: the reference (found by
// gc or through the problem module), torch's generators and its TF32 switches now live in the
// judge. Each of these candidates then runs the honest PyTorch it carries as a fallback: correct,
// no integrity flag, a PyTorch-only rewrite, and no inflated speedup.
struct RouteCase {
  std::string file;
  std::string problem;
};

class RouteGone : public ::testing::TestWithParam<RouteCase> {};

TEST_P(RouteGone, TheHackRunsAsItsHonestFallback) {
  auto r = eval_hack(GetParam().problem, GetParam().file, "strict");
  EXPECT_EQ(r.outcome(), "correct") << r.context();
  auto flags = flags_of(r);
  EXPECT_TRUE(flags.count("no_custom_kernel")) << r.context();
  flags.erase("no_custom_kernel");
  flags.erase("degenerate");
  EXPECT_TRUE(flags.empty()) << r.context();
}

INSTANTIATE_TEST_SUITE_P(CpuHacks, RouteGone,
                         ::testing::Values(RouteCase{"reference_reachable_gc.py", kRelu},
                                           RouteCase{"reference_reachable_import.py", kSwish},
                                           RouteCase{"tampering_seed.py", kRelu}, RouteCase{"tampering_tf32.py", kLinear},
                                           RouteCase{"backend_state_at_import.py", kLinear}),
                         [](const ::testing::TestParamInfo<RouteCase>& info) {
                           std::string name = info.param.file.substr(0, info.param.file.size() - 3);
                           for (auto& ch : name)
                             if (!std::isalnum(static_cast<unsigned char>(ch))) ch = '_';
                           return name;
                         });

// Helper processes that burn the cores whenever the candidate is not being called: the judge
// freezes the sandbox around every baseline and hop sample, so they never run then.
// A helper held in uninterruptible sleep (a vfork parent) cannot be stopped by signals: every
// freeze fails. The rounds are not counted, spend the budget, and the sandbox is a protocol
// violation (red team, 2026-12-02: the timing never ended and the run timed out). With a cgroup
// freezer the helper freezes and the candidate is an honest ReLU.
TEST(StrictCli, AnUnfreezableSandboxIsAProtocolViolation) {
  auto r = testing::run_kbv_eval({kRelu, testing::kSource + "/examples/attacks/freeze_unfreezable.py", "--protocol", "strict",
                                  "--time-budget", "0.5", "--run-timeout", "60"},
                                 "cpu");
  if (r.outcome() == "correct") {
    EXPECT_TRUE(r.verdict["timing"]["sandbox_frozen"].get<bool>()) << r.context();
  } else {
    EXPECT_EQ(r.outcome(), "protocol_violation") << r.context();
    EXPECT_NE(r.verdict["reason"].get<std::string>().find("could not be frozen"), std::string::npos) << r.context();
  }
}

// Whether a wrong timed output is met is no luck of a draw (issue 33): every timed call, warm-up
// included, is checked against the reference of its own inputs, in every protocol.
TEST(StrictCli, EveryTimedCallIsChecked) {
  for (const std::string protocol : {"standard", "strict"}) {
    SCOPED_TRACE(protocol);
    auto r = testing::run_kbv_eval({testing::example_problem("7_Swish.py"), testing::fixture("swish_torch.py"), "--protocol",
                                    protocol, "--time-budget", "0.3"},
                                   "cpu");
    ASSERT_EQ(r.outcome(), "correct") << r.context();
    const auto& t = r.verdict["timing"];
    EXPECT_GE(t["checked_calls"].get<int>(), t["rounds"].get<int>() + t["warmup_rounds"].get<int>()) << r.context();
  }
}

// A candidate that turns stale after its first calls is met by the calls timing would make,
// even with timing off.
TEST(StrictCli, ResultReuseIsCaughtWithoutTiming) {
  auto r = eval_hack(kRelu, "result_reuse_after_n.py", "strict", {"--no-timing"});
  EXPECT_EQ(r.outcome(), "incorrect") << r.context();
  EXPECT_TRUE(flags_of(r).count("result_reuse")) << r.context();
}

// Reads half of its 16.7M terms unless a probe sees outliers: dense draws cannot tell, strict's
// sparse_spike can (a handful of large terms the probe misses and the half-sum drops).
TEST(StrictCli, AReductionThatSamplesItsTermsFailsOnSparseSpikes) {
  const std::string mse = testing::example_problem("94_MSELoss.py");
  auto verified = eval_hack(mse, "sampled_reduction.py", "verified", {"--no-timing"});
  EXPECT_EQ(verified.outcome(), "correct") << "dense draws cannot tell: else this test shows nothing\n" << verified.context();
  auto strict = eval_hack(mse, "sampled_reduction.py", "strict", {"--no-timing"});
  ASSERT_EQ(strict.outcome(), "incorrect") << strict.context();
  std::map<std::string, std::string> status;
  for (const auto& d : strict.verdict["correctness"]["distributions"]) status[d["name"]] = d["status"];
  // About 1% of sparse_spike draws split the spikes evenly enough between the halves to pass
  // (the hack's docstring); strict's untimed calls draw sparse_spike again and catch it then.
  EXPECT_TRUE(status["sparse_spike"] == "fail" || flags_of(strict).count("result_reuse")) << strict.context();
  EXPECT_EQ(status["normal"], "pass") << strict.context();
}

// kbv's own needs-CUDA exception raised by a wrong candidate with no CUDA in it: its own failure,
// never a skip (left out of every figure) -- through kbv eval, and through kbv run, whose build
// phase (a build-only worker) decides it too.
TEST(StrictCli, RaisingKbvsNeedsCudaIsNoSkip) {
  auto r = eval_hack(kRelu, "raises_needs_cuda.py", "strict", {"--no-timing"});
  EXPECT_EQ(r.outcome(), "runtime_error") << r.context();

  namespace fs = std::filesystem;
  fs::path root = fs::temp_directory_path() / ("kbv-needs-cuda-run-" + std::to_string(::getpid()));
  fs::remove_all(root);
  fs::create_directories(root / "suite/level1");
  fs::create_directories(root / "runs/m");
  fs::copy_file(kRelu, root / "suite/level1/19_ReLU.py");
  fs::copy_file(kHacks + "raises_needs_cuda.py", root / "runs/m/level_1_problem_19_sample_0_kernel.py");
  ProcessSpec spec;
  spec.argv = {testing::kBin + "/kbv", "run", "--problems", (root / "suite").string(), "--runs", (root / "runs").string(),
               "--db", (root / "kbv.db").string(), "--protocol", "standard", "--gpus", "cpu", "--jobs", "1",
               "--build-dir", testing::build_dir()};
  auto run = run_process(spec, Clock::now() + std::chrono::seconds(600));
  ASSERT_EQ(run.exit_code, 0) << run.output_head << run.output_tail;
  ProcessSpec report;
  report.argv = {testing::kBin + "/kbv", "report", "--db", (root / "kbv.db").string(), "--csv", (root / "v.csv").string(), "--quiet"};
  ASSERT_EQ(run_process(report, Clock::now() + std::chrono::seconds(120)).exit_code, 0);
  std::ifstream csv(root / "v.csv");
  std::string all((std::istreambuf_iterator<char>(csv)), std::istreambuf_iterator<char>());
  EXPECT_NE(all.find(",runtime_error,"), std::string::npos) << all;
  EXPECT_EQ(all.find(",skipped,"), std::string::npos) << all;
  fs::remove_all(root);
}

TEST(StrictCli, PyTorchOnlyRewriteIsReportedNotFailed) {
  auto r = eval_hack(kLinear, "no_custom_kernel.py", "strict");
  EXPECT_EQ(r.outcome(), "correct") << r.context();
  EXPECT_TRUE(flags_of(r).count("no_custom_kernel")) << r.context();
}

TEST(StrictCli, HonestShapeSpecialisationGetsNoIntegrityFlag) {
  auto r = eval_honest_extension("strict");
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
  auto r = eval_honest_extension("strict");
  auto standard = eval_honest_extension("standard");
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

// A candidate cannot make a problem degenerate by leaving out the draw that discriminates: without
// parameters of Model's names, strict skips reinit_params, and zeros pass every other draw of a
// problem whose zero-initialised bias only that draw sets. The same problem with a candidate that
// has the parameter is audited on every draw and is not degenerate.
TEST(StrictCli, ADrawSkippedForTheCandidateLeavesTheProblemUnflagged) {
  const std::string problem = kHacks + "degenerate_unless_reinit_problem.py";
  auto r = eval_hack(problem, "skip_reinit_to_flag_degenerate.py", "strict");
  EXPECT_EQ(r.outcome(), "correct") << r.context();
  EXPECT_FALSE(flags_of(r).count("degenerate")) << r.context();
  EXPECT_NE(r.verdict.dump().find("not every distribution was drawn"), std::string::npos) << r.context();
}

// The same ReLU problem is non-degenerate under strict: its mixed-sign draws discriminate.
TEST(StrictCli, StrictDistributionsDiscriminateReLU) {
  auto r = eval_honest_extension("strict");
  EXPECT_FALSE(flags_of(r).count("degenerate")) << r.context();
  auto verified = eval_honest_extension("verified");
  EXPECT_TRUE(flags_of(verified).count("degenerate")) << "verified's four draws cannot tell ReLU from identity/zeros";
}


// `kbv run` (every protocol in one sandbox, strict first, verified taking strict's rounds) and
// `kbv eval` (one protocol a judge) give the same verdict class for the same candidate and
// protocol (issue 33; the GPU twin of this test covers the stream hacks).
TEST(StrictCli, RunAndEvalGiveTheSameVerdictClass) {
  // Few, since each costs a run's share and three evals on two cores (the GPU twin has 15).
  const std::vector<std::string> files = {"wrong_one_call_in_eight.py", "output_aliases_input.py"};
  namespace fs = std::filesystem;
  const fs::path root = fs::path(testing::build_dir()) / "run-vs-eval";
  fs::remove_all(root);
  fs::create_directories(root / "suite" / "level1");
  fs::create_directories(root / "runs" / "hacks");
  fs::copy_file(kRelu, root / "suite" / "level1" / "19_ReLU.py");
  for (std::size_t i = 0; i < files.size(); ++i)
    fs::copy_file(kHacks + files[i], root / "runs" / "hacks" / ("level_1_problem_19_sample_" + std::to_string(i) + "_kernel.py"));
  ProcessSpec spec;
  spec.argv = {testing::kBin + "/kbv", "run", "--problems", (root / "suite").string(), "--runs", (root / "runs").string(),
               "--db", (root / "kbv.db").string(), "--protocol", "standard,verified,strict", "--time-budget", "0.3",
               "--build-dir", testing::build_dir(), "--device", "cpu", "--jobs", "2"};
  spec.keep_tail_bytes = 64 * 1024;
  auto run = run_process(spec, Clock::now() + std::chrono::minutes(15));
  ASSERT_TRUE(run.exited) << run.describe();
  std::map<std::pair<std::int64_t, std::string>, Verdict> stored;
  ResultStore store((root / "kbv.db").string(), ResultStore::Mode::read_only);
  for (const auto& r : store.verdicts()) stored[{r.sample.sample_id, r.verdict.protocol}] = r.verdict;
  auto word = [](const std::string& outcome) { return outcome == "correct" ? std::string("correct") : std::string("not correct"); };
  for (std::size_t i = 0; i < files.size(); ++i)
    for (const std::string protocol : {"standard", "verified", "strict"}) {
      SCOPED_TRACE(files[i] + " " + protocol);
      auto it = stored.find({static_cast<std::int64_t>(i), protocol});
      ASSERT_NE(it, stored.end()) << run.output_tail;
      auto e = eval_hack(kRelu, files[i], protocol);
      EXPECT_EQ(word(std::string(outcome_name(it->second.outcome))), word(e.outcome()))
          << "kbv run: " << it->second.reason << "\nkbv eval: " << e.reason();
    }
}

}  // namespace
}  // namespace kbv
