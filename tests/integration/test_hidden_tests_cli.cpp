// KernelBench-Verified hidden-test files through the real kbv on the CPU (`kbv eval --hidden-test`,
// `kbv run --hidden-tests`): each list get_hidden_inputs() returns is one more correctness
// distribution, so a candidate right only on the protocol's own inputs fails on them; a stored
// verdict checked without them is evaluated again; and torch.compile(Model) is timed as an extra
// baseline series when asked for.
#include <gtest/gtest.h>

#include <filesystem>

#include "kbv_cli.hpp"
#include "store/result_store.hpp"

namespace fs = std::filesystem;

namespace kbv {
namespace {

using testing::CliResult;

std::string hidden_fixture(const std::string& name) { return testing::fixture("hidden/" + name); }
const std::string kProblem = hidden_fixture("problems/level1/1_Double.py");
const std::string kHidden = hidden_fixture("hidden_tests/level1/1_hidden.py");

CliResult eval(const std::string& candidate, std::vector<std::string> more) {
  std::vector<std::string> args{kProblem, hidden_fixture(candidate), "--protocol", "verified", "--no-timing"};
  args.insert(args.end(), more.begin(), more.end());
  return testing::run_kbv_eval(args, "cpu");
}

std::vector<std::string> distribution_names(const CliResult& r, const std::string& status) {
  std::vector<std::string> out;
  for (const auto& d : r.verdict["correctness"]["distributions"])
    if (status.empty() || d["status"] == status) out.push_back(d["name"]);
  return out;
}

TEST(HiddenTests, EveryInputListIsOneMoreDistribution) {
  auto r = eval("honest.py", {"--hidden-test", kHidden});
  ASSERT_EQ(r.outcome(), "correct") << r.context();
  auto names = distribution_names(r, "pass");
  for (const char* n : {"D1_x1", "D2_x3", "D3_x0.01", "D4_neg", "hidden_1", "hidden_2", "hidden_3"})
    EXPECT_NE(std::find(names.begin(), names.end(), n), names.end()) << n << "\n" << r.context();
  for (const auto& d : r.verdict["correctness"]["distributions"])
    if (d["name"].get<std::string>().rfind("hidden_", 0) == 0) EXPECT_EQ(d["kind"], "hidden_file");
  ASSERT_TRUE(r.verdict["problem"].contains("hidden_tests")) << r.context();
  EXPECT_EQ(r.verdict["problem"]["hidden_tests"]["sha256"].get<std::string>().size(), 64u);
  // The third list has another shape (32x16): the shared input slot was rebound for it.
  EXPECT_NE(r.output().find("hidden_3"), std::string::npos) << "kbv eval's text shows the hidden distributions\n" << r.output();
}

// examples/attacks/read_hidden_tests.py looks for the hidden-test file and fits only the shapes
// it lists. The suite and its hidden tests lie outside /tmp (the working folder), where only the
// sandbox's view of the host's user data hides them: it finds nothing and fails on hidden_3's
// shape. The control, with that view off (KBV_SANDBOX_READONLY=0), reads the file and passes.
TEST(HiddenTests, ACandidateCannotReadTheHiddenTests) {
  const fs::path base = fs::absolute("kbv-hidden-suite-" + std::to_string(::getpid()));
  fs::remove_all(base);
  fs::create_directories(base / "suite" / "level1");
  fs::create_directories(base / "hidden_tests" / "level1");
  fs::create_directories(base / "cands");
  fs::copy_file(kProblem, base / "suite" / "level1" / "1_Double.py");
  fs::copy_file(kHidden, base / "hidden_tests" / "level1" / "1_hidden.py");
  for (const auto& entry : fs::recursive_directory_iterator(base))
    fs::permissions(entry.path(), entry.is_directory() ? fs::perms::all : fs::perms::owner_all | fs::perms::others_read | fs::perms::group_read);
  fs::permissions(base, fs::perms::all);
  const std::string attacker = (base / "cands" / "attack.py").string();
  testing::bundle_attack("read_hidden_tests", attacker, {{"search_dir", base.string()}});
  const std::vector<std::string> args{(base / "suite" / "level1" / "1_Double.py").string(), attacker, "--protocol", "verified",
                                      "--no-timing", "--hidden-test", (base / "hidden_tests" / "level1" / "1_hidden.py").string()};
  auto r = testing::run_kbv_eval(args, "cpu");
  EXPECT_EQ(r.outcome(), "incorrect") << r.context();
  EXPECT_NE(r.verdict.dump().find("no hidden-test file in sight"), std::string::npos) << r.context();
  if (base.string().rfind("/tmp/", 0) != 0) {
    auto control = testing::run_kbv_eval(args, "cpu", 900, "", {{"KBV_SANDBOX_READONLY", "0"}});
    EXPECT_NE(control.verdict.dump().find("READ "), std::string::npos) << "the attack works where the folder is in sight\n" << control.context();
    EXPECT_EQ(control.outcome(), "correct") << control.context();
  }
  fs::remove_all(base);
}

TEST(HiddenTests, ACandidateRightOnlyOnTheProtocolsInputsFailsOnTheFilesInputs) {
  auto plain = eval("small_values_only.py", {});
  ASSERT_EQ(plain.outcome(), "correct") << "the premise: verified's own distributions miss it\n" << plain.context();
  auto r = eval("small_values_only.py", {"--hidden-test", kHidden});
  ASSERT_EQ(r.outcome(), "incorrect") << r.context();
  EXPECT_EQ(distribution_names(r, "fail"), std::vector<std::string>{"hidden_2"}) << r.context();
  EXPECT_NE(r.reason().find("hidden_2"), std::string::npos) << r.context();
}

// Right on every correctness call, wrong afterwards on the file's values: the timed rounds draw
// the file's lists shaped like get_inputs() and check every one of them.
TEST(HiddenTests, ACandidateRightOnlyWhileCheckedIsMetInTimedRounds) {
  auto r = testing::run_kbv_eval({kProblem, hidden_fixture("counting_small_values.py"), "--protocol", "verified",
                                  "--time-budget", "1", "--hidden-test", hidden_fixture("hidden_tests_large/level1/1_hidden.py")},
                                 "cpu");
  ASSERT_EQ(r.outcome(), "incorrect") << r.context();
  EXPECT_NE(r.reason().find("timed call"), std::string::npos) << r.context();
  for (const auto& d : r.verdict["correctness"]["distributions"]) EXPECT_EQ(d["status"], "pass") << d.dump();
}

// A list Model itself cannot run is the file's fault: problem_error before the candidate runs it.
TEST(HiddenTests, AListModelCannotRunIsAProblemError) {
  auto r = testing::run_kbv_eval({hidden_fixture("problems/level1/2_Linear.py"), hidden_fixture("honest_linear.py"),
                                  "--protocol", "verified", "--no-timing", "--hidden-test", kHidden},
                                 "cpu");
  EXPECT_EQ(r.outcome(), "problem_error") << r.context();
  EXPECT_NE(r.reason().find("through Model"), std::string::npos) << r.context();
}

TEST(HiddenTests, AFileWithoutGetHiddenInputsIsAProblemError) {
  auto r = eval("honest.py", {"--hidden-test", hidden_fixture("hidden_tests/level1/2_hidden.py")});
  EXPECT_EQ(r.outcome(), "problem_error") << r.context();
  EXPECT_NE(r.reason().find("get_hidden_inputs"), std::string::npos) << r.context();
}

TEST(HiddenTests, AMissingFileIsAUsageError) {
  auto r = eval("honest.py", {"--hidden-test", hidden_fixture("no_such_hidden.py")});
  EXPECT_EQ(r.process.exit_code, 2) << r.context();
}

// kbv run --hidden-tests finds <dir>/level1/<id>_hidden.py per problem, and a verdict stored by a
// run without it is evaluated again (it was not checked on those inputs).
TEST(HiddenTests, RunFindsTheFilesAndReevaluatesVerdictsStoredWithoutThem) {
  fs::path root = fs::temp_directory_path() / ("kbv-hidden-run-" + std::to_string(::getpid()));
  fs::remove_all(root);
  fs::create_directories(root);
  const std::string db = (root / "kbv.db").string();
  auto run = [&](std::vector<std::string> more) {
    ProcessSpec spec;
    spec.argv = {testing::kBin + "/kbv", "run", "--problems", hidden_fixture("problems"), "--runs", hidden_fixture("runs"),
                 "--db", db, "--protocol", "verified", "--time-budget", "0.2", "--build-dir", testing::build_dir(),
                 "--jobs", "1", "--gpus", "cpu"};
    spec.argv.insert(spec.argv.end(), more.begin(), more.end());
    return run_process(spec, Clock::now() + std::chrono::seconds(900));
  };
  auto stored_outcome = [&] {
    ResultStore store(db, ResultStore::Mode::read_only);
    auto all = store.verdicts();
    return all.size() == 1 ? std::string(outcome_name(all.front().verdict.outcome)) : "<" + std::to_string(all.size()) + " rows>";
  };
  auto first = run({});
  ASSERT_EQ(first.exit_code, 0) << first.output_head << first.output_tail;
  EXPECT_EQ(stored_outcome(), "correct");

  auto listed = run({"--hidden-tests", hidden_fixture("hidden_tests"), "--list"});
  ASSERT_EQ(listed.exit_code, 0) << listed.output_head << listed.output_tail;
  EXPECT_NE(listed.output_head.find("stored without the hidden tests"), std::string::npos) << listed.output_head;
  EXPECT_NE(listed.output_head.find("hidden tests: 1 of 1 problem(s)"), std::string::npos) << listed.output_head;

  auto second = run({"--hidden-tests", hidden_fixture("hidden_tests")});
  ASSERT_EQ(second.exit_code, 0) << second.output_head << second.output_tail;
  EXPECT_EQ(stored_outcome(), "incorrect");
  {
    ResultStore store(db, ResultStore::Mode::read_only);
    auto v = store.verdicts().front().verdict;
    ASSERT_TRUE(v.problem.hidden_tests.has_value());
    EXPECT_EQ(v.problem.hidden_tests->path, fs::absolute(hidden_fixture("hidden_tests/level1/1_hidden.py")).string());
  }
  // The same file again: nothing to do.
  auto third = run({"--hidden-tests", hidden_fixture("hidden_tests"), "--list"});
  EXPECT_NE(third.output_head.find("0 to evaluate"), std::string::npos) << third.output_head;
  fs::remove_all(root);
}

// torch.compile(Model) as one more timed series (the CPU's inductor compiles C++ with g++).
TEST(TorchCompileBaseline, IsTimedAsAnExtraSeriesWithItsCompileTimeApart) {
  auto r = testing::run_kbv_eval({kProblem, hidden_fixture("honest.py"), "--protocol", "verified", "--time-budget", "0.5",
                                  "--torch-compile"},
                                 "cpu");
  ASSERT_EQ(r.outcome(), "correct") << r.context();
  const auto& t = r.verdict["timing"];
  ASSERT_TRUE(t.contains("torch_compile_seconds")) << r.context();
  EXPECT_GT(t["torch_compile_seconds"].get<double>(), 0.0);
  bool series = false, speedup = false;
  for (const auto& s : t["series"]) series = series || s["name"] == "torch_compile";
  for (const auto& s : t["speedups"]) speedup = speedup || s["baseline"] == "torch_compile";
  EXPECT_TRUE(series && speedup) << r.context();
  EXPECT_NE(t["primary_baseline"], "torch_compile") << "never the headline baseline";
  for (const auto& w : r.verdict["warnings"]) EXPECT_EQ(w.get<std::string>().find("torch.compile(Model) failed"), std::string::npos) << w;
}

TEST(TorchCompileBaseline, IsOffByDefault) {
  auto r = testing::run_kbv_eval({kProblem, hidden_fixture("honest.py"), "--protocol", "verified", "--time-budget", "0.3"}, "cpu");
  ASSERT_EQ(r.outcome(), "correct") << r.context();
  EXPECT_FALSE(r.verdict["timing"].contains("torch_compile_seconds"));
  for (const auto& s : r.verdict["timing"]["series"]) EXPECT_NE(s["name"], "torch_compile");
}

}  // namespace
}  // namespace kbv
