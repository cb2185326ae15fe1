// `kbv run` on a runs folder made from the examples (two "models", several samples), on the
// CPU: it fills the store; killed with SIGKILL halfway and run again, it completes with no
// duplicate and no missing verdict; `kbv report` and `kbv export` read the result.
#include <fcntl.h>
#include <gtest/gtest.h>
#include <unistd.h>

#include <atomic>
#include <filesystem>
#include <fstream>
#include <map>
#include <set>
#include <thread>

#include "core/job.hpp"
#include "kbv_cli.hpp"
#include "store/result_store.hpp"

namespace fs = std::filesystem;

namespace kbv {
namespace {

using testing::example_candidate;
using testing::example_problem;
using testing::fixture;

struct RunFolder {
  fs::path root;
  int jobs = 0;  // candidates x protocols
};

RunFolder make_run_folder(const std::string& name) {
  RunFolder f;
  f.root = fs::temp_directory_path() / ("kbv-run-test-" + std::to_string(::getpid()) + "-" + name);
  fs::remove_all(f.root);
  fs::create_directories(f.root / "suite/level1");
  fs::copy_file(example_problem("19_ReLU.py"), f.root / "suite/level1/19_ReLU.py");
  fs::copy_file(example_problem("7_Swish.py"), f.root / "suite/level1/7_Swish.py");
  auto put = [&](const std::string& run, const std::string& file, const std::string& source) {
    fs::create_directories(f.root / "runs" / run);
    fs::copy_file(source, f.root / "runs" / run / file);
  };
  put("model_a", "level_1_problem_19_sample_0_kernel.py", example_candidate("relu_wrong_cpu.py"));
  put("model_a", "level_1_problem_19_sample_1_kernel.py", example_candidate("relu_shape_shortcut.py"));
  put("model_a", "level_1_problem_7_sample_0_kernel.py", fixture("swish_torch.py"));
  put("model_b", "level_1_problem_19_sample_0_kernel.py", example_candidate("relu_raises.py"));
  put("model_b", "level_1_problem_19_sample_1_kernel.py", example_candidate("relu_crash_segfault.py"));
  put("model_b", "level_1_problem_19_sample_2_kernel.py", fixture("relu_print_flood.py"));
  put("model_b", "level_1_problem_7_sample_0_kernel.py", fixture("swish_torch.py"));
  put("model_b", "level_1_problem_99_sample_0_kernel.py", fixture("swish_torch.py"));  // no such problem
  f.jobs = 7 * 2;
  return f;
}

ProcessSpec kbv_run_spec(const RunFolder& f) {
  ProcessSpec spec;
  spec.argv = {testing::kBin + "/kbv", "run", "--problems", (f.root / "suite").string(), "--runs", (f.root / "runs").string(),
               "--db", (f.root / "kbv.db").string(), "--protocol", "standard,verified", "--time-budget", "0.3",
               "--build-dir", testing::build_dir(), "--jobs", "2", "--gpus", "cpu"};
  return spec;
}

std::int64_t stored(const RunFolder& f) {
  if (!fs::exists(f.root / "kbv.db")) return 0;
  try {
    ResultStore store((f.root / "kbv.db").string(), ResultStore::Mode::read_only);
    return store.verdict_count();
  } catch (...) {
    return 0;  // not created yet
  }
}

TEST(RunCli, SigkillHalfwayThenResumeCompletesWithoutDuplicates) {
  RunFolder f = make_run_folder("resume");
  std::atomic<bool> kill{false};
  ProcessResult first;
  std::thread runner([&] {
    ProcessSpec spec = kbv_run_spec(f);
    spec.cancel = &kill;  // cancelling SIGKILLs the whole process group: kbv run and its workers
    first = run_process(spec, Clock::now() + std::chrono::minutes(10));
  });
  auto give_up = std::chrono::steady_clock::now() + std::chrono::minutes(5);
  while (stored(f) < 3 && std::chrono::steady_clock::now() < give_up && !first.exited)
    std::this_thread::sleep_for(std::chrono::milliseconds(200));
  kill = true;
  runner.join();
  ASSERT_TRUE(first.cancelled) << "kbv run finished before it could be killed: " << first.output_tail;
  std::int64_t after_kill = stored(f);
  EXPECT_GE(after_kill, 3);
  EXPECT_LT(after_kill, f.jobs) << "the kill came too late to test resuming";

  auto second = run_process(kbv_run_spec(f), Clock::now() + std::chrono::minutes(10));
  std::string printed = second.output_head + second.output_tail;
  ASSERT_TRUE(second.exited && second.exit_code == 0) << second.describe() << "\n" << printed;
  EXPECT_NE(printed.find("already in"), std::string::npos) << printed;
  EXPECT_NE(printed.find("problem_99"), std::string::npos) << "unmatched candidates are named";

  ResultStore store((f.root / "kbv.db").string(), ResultStore::Mode::read_only);
  auto records = store.verdicts();
  ASSERT_EQ(static_cast<int>(records.size()), f.jobs);
  std::set<std::tuple<std::string, int, int, std::string>> keys;
  std::map<std::string, std::string> outcome;
  for (const auto& r : records) {
    keys.insert({r.sample.run_name, r.sample.problem_id, r.sample.sample_id, r.verdict.protocol});
    outcome[r.sample.run_name + "/" + std::to_string(r.sample.problem_id) + "/" + std::to_string(r.sample.sample_id) + "/" +
            r.verdict.protocol] = std::string(outcome_name(r.verdict.outcome));
  }
  EXPECT_EQ(static_cast<int>(keys.size()), f.jobs) << "no duplicate, none missing";
  EXPECT_EQ(outcome["model_a/19/1/standard"], "correct") << "the shape shortcut fools standard";
  EXPECT_EQ(outcome["model_a/19/1/verified"], "incorrect");
  EXPECT_EQ(outcome["model_b/19/1/verified"], "crashed");
  EXPECT_EQ(outcome["model_b/19/0/verified"], "runtime_error");
  EXPECT_EQ(outcome["model_b/7/0/verified"], "correct");
  // Every verdict says where its time went; a correct one spent some in correctness and timing.
  for (const auto& r : records) {
    if (r.sample.run_name != "model_b" || r.sample.problem_id != 7 || r.verdict.protocol != "verified") continue;
    const auto& st = r.verdict.stage_seconds;
    ASSERT_TRUE(st.count("start") && st.count("correctness") && st.count("timing")) << nlohmann::json(st).dump();
    double sum = 0;
    for (const auto& [stage, seconds] : st) sum += seconds;
    EXPECT_NEAR(sum, r.verdict.wall_seconds, 0.5) << "stage times add up to the evaluation's wall time";
  }
  // The run prints the build/evaluation split and keeps it in its record.
  EXPECT_NE(printed.find("build phase:"), std::string::npos) << printed;
  EXPECT_NE(printed.find("evaluation time by stage:"), std::string::npos) << printed;
  auto runs = store.runs();
  ASSERT_FALSE(runs.empty());
  EXPECT_EQ(runs.back().status, "finished");
  EXPECT_TRUE(runs.back().options.contains("throughput")) << runs.back().options.dump();

  // A third run has nothing left to do.
  auto third = run_process(kbv_run_spec(f), Clock::now() + std::chrono::minutes(2));
  EXPECT_NE((third.output_head + third.output_tail).find(" 0 to evaluate"), std::string::npos) << third.output_head;

  // The report and the export read what the run wrote.
  ProcessSpec report;
  report.argv = {testing::kBin + "/kbv", "report", "--db", (f.root / "kbv.db").string(), "--html", (f.root / "report.html").string()};
  auto rep = run_process(report, Clock::now() + std::chrono::minutes(1));
  EXPECT_EQ(rep.exit_code, 0) << rep.output_tail;
  EXPECT_NE((rep.output_head + rep.output_tail).find("model_a"), std::string::npos);
  EXPECT_TRUE(fs::exists(f.root / "report.html"));
  ProcessSpec exp;
  exp.argv = {testing::kBin + "/kbv", "export", "--db", (f.root / "kbv.db").string(), "--out", (f.root / "export").string()};
  auto ex = run_process(exp, Clock::now() + std::chrono::minutes(1));
  EXPECT_EQ(ex.exit_code, 0) << ex.output_tail;
  EXPECT_TRUE(fs::exists(f.root / "export/model_b/eval_results.json")) << ex.output_head << ex.output_tail;
  if (!::testing::Test::HasFailure()) fs::remove_all(f.root);
}

// Swish's problem with two candidates (one correct, one wrong), in a fresh folder `root`.
fs::path make_swish_pair(const std::string& name) {
  fs::path root = fs::temp_directory_path() / ("kbv-run-test-" + std::to_string(::getpid()) + "-" + name);
  fs::remove_all(root);
  fs::create_directories(root / "suite/level1");
  fs::create_directories(root / "runs/m");
  fs::copy_file(example_problem("7_Swish.py"), root / "suite/level1/7_Swish.py");
  fs::copy_file(fixture("swish_torch.py"), root / "runs/m/level_1_problem_7_sample_0_kernel.py");
  fs::copy_file(example_candidate("relu_wrong_cpu.py"), root / "runs/m/level_1_problem_7_sample_1_kernel.py");
  return root;
}

// `kbv run` on the CPU over `root` (make_swish_pair) into root/DB, builds in root/builds; its output.
std::string run_swish_pair(const fs::path& root, const std::string& db, const std::vector<std::string>& extra) {
  ProcessSpec spec;
  spec.argv = {testing::kBin + "/kbv", "run", "--problems", (root / "suite").string(), "--runs", (root / "runs").string(),
               "--db", (root / db).string(), "--time-budget", "0.2", "--build-dir", (root / "builds").string(), "--jobs", "2",
               "--gpus", "cpu"};
  spec.argv.insert(spec.argv.end(), extra.begin(), extra.end());
  auto r = run_process(spec, Clock::now() + std::chrono::minutes(5));
  EXPECT_EQ(r.exit_code, 0) << r.output_head << r.output_tail;
  return r.output_head + r.output_tail;
}

// A run's candidates cannot read each other: examples/attacks/copy_sibling.py in one model's
// folder looks through the whole runs folder (outside /tmp: the test's working folder) for
// another model's ModelNew. Its sandbox sees neither folder (the job's batch_folders), so its
// zeros are incorrect; the other model's honest ReLU is correct. A link out of the runs folder
// (to a file only kbv's user may read) is skipped, not judged.
TEST(RunCli, ARunsCandidatesCannotReadEachOther) {
  const fs::path root = fs::absolute("kbv-run-siblings-" + std::to_string(::getpid()));
  fs::remove_all(root);
  fs::create_directories(root / "suite/level1");
  fs::create_directories(root / "runs/model_a");
  fs::create_directories(root / "runs/model_b");
  fs::create_directories(root / "private");
  fs::copy_file(example_problem("19_ReLU.py"), root / "suite/level1/19_ReLU.py");
  const std::string relu = "import torch\nimport torch.nn as nn\n\nclass ModelNew(nn.Module):\n    def forward(self, x):\n        return torch.relu(x)\n";
  std::ofstream(root / "runs/model_b/level_1_problem_19_sample_1_kernel.py") << relu;
  std::ofstream(root / "private/theirs.py") << relu;
  fs::permissions(root / "private/theirs.py", fs::perms::owner_read | fs::perms::owner_write);
  fs::create_symlink(root / "private/theirs.py", root / "runs/model_b/level_1_problem_19_sample_2_kernel.py");
  testing::bundle_attack("copy_sibling", (root / "runs/model_a/level_1_problem_19_sample_0_kernel.py").string(),
                         {{"candidates_dir", (root / "runs").string()}});
  ProcessSpec spec;
  spec.argv = {testing::kBin + "/kbv", "run", "--problems", (root / "suite").string(), "--runs", (root / "runs").string(),
               "--db", (root / "kbv.db").string(), "--protocol", "standard", "--time-budget", "0.2", "--build-dir",
               testing::build_dir(), "--jobs", "2", "--gpus", "cpu"};
  auto r = run_process(spec, Clock::now() + std::chrono::minutes(5));
  const std::string printed = r.output_head + r.output_tail;
  EXPECT_EQ(r.exit_code, 0) << printed;
  EXPECT_NE(printed.find("a link to a file outside the runs folder"), std::string::npos) << printed;
  std::map<std::string, Verdict> by_run;
  ResultStore store((root / "kbv.db").string(), ResultStore::Mode::read_only);
  for (const auto& v : store.verdicts()) by_run[v.sample.run_name + "/" + std::to_string(v.sample.sample_id)] = v.verdict;
  ASSERT_EQ(by_run.size(), 2u) << printed;
  EXPECT_EQ(by_run["model_a/0"].outcome, Outcome::incorrect) << by_run["model_a/0"].reason;
  EXPECT_EQ(by_run["model_a/0"].output_tail.find("TOOK"), std::string::npos) << by_run["model_a/0"].output_tail;
  EXPECT_NE(by_run["model_a/0"].output_tail.find("files in"), std::string::npos) << "it looked: " << by_run["model_a/0"].output_tail;
  EXPECT_EQ(by_run["model_b/1"].outcome, Outcome::correct) << by_run["model_b/1"].reason;
  // One run's folder as --runs (as kbv generate --then-run passes it): the runs beside it are
  // hidden too.
  spec.argv[5] = (root / "runs" / "model_a").string();
  spec.argv[7] = (root / "one.db").string();
  auto one = run_process(spec, Clock::now() + std::chrono::minutes(5));
  EXPECT_EQ(one.exit_code, 0) << one.output_head << one.output_tail;
  ResultStore one_store((root / "one.db").string(), ResultStore::Mode::read_only);
  auto rows = one_store.verdicts();
  ASSERT_EQ(rows.size(), 1u) << one.output_head << one.output_tail;
  EXPECT_EQ(rows.front().verdict.outcome, Outcome::incorrect) << rows.front().verdict.reason;
  EXPECT_EQ(rows.front().verdict.output_tail.find("TOOK"), std::string::npos) << rows.front().verdict.output_tail;
  if (!::testing::Test::HasFailure()) fs::remove_all(root);
}

// A second run into a new DB finds the sources in the build cache and starts no build worker.
TEST(RunCli, WarmBuildCacheSkipsTheBuildWorkers) {
  fs::path root = make_swish_pair("warm");
  auto run_into = [&](const std::string& db) { return run_swish_pair(root, db, {"--protocol", "standard"}); };
  std::string cold = run_into("cold.db");
  EXPECT_NE(cold.find("2 candidate sources built"), std::string::npos) << cold;
  EXPECT_NE(cold.find("0 already in the build cache"), std::string::npos) << cold;
  std::string warm = run_into("warm.db");
  EXPECT_NE(warm.find("0 candidate sources built"), std::string::npos) << warm;
  EXPECT_NE(warm.find("2 already in the build cache"), std::string::npos) << warm;
  ResultStore store((root / "warm.db").string(), ResultStore::Mode::read_only);
  EXPECT_EQ(store.verdict_count(), 2) << "evaluated all the same";
  if (!::testing::Test::HasFailure()) fs::remove_all(root);
}

// --prestart through the real judge and sandbox: the judge starts its interpreter and the
// sandbox's ahead, waits for its turn, and only then hands the build cache entry over and sends
// the jobs. The verdicts match a run without it, and each says its start-up was done ahead.
TEST(RunCli, JudgesStartedAheadGiveTheSameVerdicts) {
  fs::path root = make_swish_pair("prestart");
  auto run_into = [&](const std::string& db, const std::string& prestart) {
    return run_swish_pair(root, db, {"--protocol", "standard,verified", "--prestart", prestart});
  };
  std::string ahead = run_into("ahead.db", "1");
  EXPECT_NE(ahead.find("start-up done ahead"), std::string::npos) << ahead;
  run_into("plain.db", "0");
  auto outcomes = [&](const std::string& db, bool want_ahead) {
    std::map<std::string, Outcome> out;
    std::map<std::string, int> ahead;  // per candidate: verdicts whose judge's start-up was done ahead
    ResultStore store((root / db).string(), ResultStore::Mode::read_only);
    for (const auto& r : store.verdicts()) {
      out[r.verdict.candidate.path + " " + r.verdict.protocol] = r.verdict.outcome;
      ahead[r.verdict.candidate.path] += static_cast<int>(r.verdict.stage_seconds.count("ahead"));
      EXPECT_EQ(r.verdict.stage_seconds.count("waiting"), 0u) << "folded into ahead";
    }
    // A judge's start-up is in the verdict of the first protocol it served.
    for (const auto& [candidate, n] : ahead) EXPECT_EQ(n > 0, want_ahead) << db << ": " << candidate;
    return out;
  };
  auto with = outcomes("ahead.db", true), without = outcomes("plain.db", false);
  EXPECT_EQ(with.size(), 4u);
  EXPECT_EQ(with, without);
  int correct = 0;
  for (const auto& [key, outcome] : with) correct += outcome == Outcome::correct;
  EXPECT_EQ(correct, 2) << "swish_torch is correct under both protocols, relu_wrong_cpu under neither";
  if (!::testing::Test::HasFailure()) fs::remove_all(root);
}

// One sandbox serves every protocol of its candidate (strict first, then verified, standard),
// and the verdicts are those of one judge per protocol: the same outcomes and flags. swish_torch
// is correct under all three; swish_positive_only is incorrect under strict and verified (negative
// inputs), and the sandbox that found so still serves standard, where it is correct;
// relu_wrong_cpu cannot even construct here (a runtime error), so each protocol gets a judge of
// its own.
TEST(RunCli, OneSandboxServesEveryProtocolWithTheSameVerdicts) {
  fs::path root = make_swish_pair("one-sandbox");
  fs::copy_file(fixture("swish_positive_only.py"), root / "runs/m/level_1_problem_7_sample_2_kernel.py");
  run_swish_pair(root, "together.db", {"--protocol", "standard,verified,strict", "--prestart", "0"});
  for (const char* p : {"standard", "verified", "strict"}) run_swish_pair(root, "apart.db", {"--protocol", p, "--prestart", "0"});
  using Key = std::pair<int, std::string>;  // sample, protocol
  auto read = [&](const std::string& db, std::map<int, int>* judges) {
    std::map<Key, std::pair<Outcome, std::vector<std::string>>> out;
    ResultStore store((root / db).string(), ResultStore::Mode::read_only);
    for (const auto& r : store.verdicts()) {
      std::vector<std::string> flags;
      for (const auto& f : r.verdict.flags) flags.push_back(f.name);
      out[{r.sample.sample_id, r.verdict.protocol}] = {r.verdict.outcome, flags};
      // Each judge's start-up and build are in the verdict of the first protocol it served.
      if (judges) (*judges)[r.sample.sample_id] += static_cast<int>(r.verdict.stage_seconds.count("build"));
    }
    return out;
  };
  std::map<int, int> judges;
  auto together = read("together.db", &judges), apart = read("apart.db", nullptr);
  EXPECT_EQ(together.size(), 9u);
  EXPECT_EQ(together, apart);
  EXPECT_EQ(judges, (std::map<int, int>{{0, 1}, {1, 3}, {2, 1}})) << "judges per candidate";
  auto outcome = [&](int sample, const std::string& p) { return together[{sample, p}].first; };
  for (const char* p : {"standard", "verified", "strict"}) {
    EXPECT_EQ(outcome(0, p), Outcome::correct) << p;
    EXPECT_EQ(outcome(1, p), Outcome::runtime_error) << p;
  }
  EXPECT_EQ(outcome(2, "strict"), Outcome::incorrect);
  EXPECT_EQ(outcome(2, "verified"), Outcome::incorrect);
  EXPECT_EQ(outcome(2, "standard"), Outcome::correct);
  if (!::testing::Test::HasFailure()) fs::remove_all(root);
}

// A protocol that times out in the sandbox the protocols before it used leaves their verdicts as
// they were: strict (served first) is correct, verified (the second ModelNew stalls) a timeout.
TEST(RunCli, ATimeoutInALaterProtocolLeavesTheEarlierVerdicts) {
  fs::path root = make_swish_pair("later-timeout");
  fs::remove(root / "runs/m/level_1_problem_7_sample_1_kernel.py");
  fs::copy_file(fixture("swish_slow_second_model.py"), root / "runs/m/level_1_problem_7_sample_0_kernel.py",
                fs::copy_options::overwrite_existing);
  run_swish_pair(root, "kbv.db", {"--protocol", "verified,strict", "--prestart", "0", "--run-timeout", "20"});
  std::map<std::string, Verdict> by_protocol;
  ResultStore store((root / "kbv.db").string(), ResultStore::Mode::read_only);
  for (const auto& r : store.verdicts()) by_protocol[r.verdict.protocol] = r.verdict;
  ASSERT_EQ(by_protocol.size(), 2u);
  EXPECT_EQ(by_protocol["strict"].outcome, Outcome::correct) << by_protocol["strict"].reason;
  EXPECT_TRUE(by_protocol["strict"].timing.has_value());
  EXPECT_EQ(by_protocol["verified"].outcome, Outcome::timeout) << by_protocol["verified"].reason;
  if (!::testing::Test::HasFailure()) fs::remove_all(root);
}

// A judge started ahead whose gate kbv closes unopened (kbv is stopping) leaves quietly: no
// verdict, exit 0, and it does not wait for anything.
TEST(RunCli, AJudgeWhoseGateClosesUnopenedEndsWithoutAVerdict) {
  fs::path root = fs::temp_directory_path() / ("kbv-run-test-" + std::to_string(::getpid()) + "-gate");
  fs::remove_all(root);
  fs::create_directories(root);
  WorkerJob job;
  job.problem_path = example_problem("7_Swish.py");
  job.candidate_path = fixture("swish_torch.py");
  job.protocol = "standard";
  job.device = "cpu";
  job.size = "small";
  job.build_root = (root / "builds").string();
  int gate[2];
  ASSERT_EQ(::pipe2(gate, O_CLOEXEC), 0);
  ::close(gate[1]);  // closed, never written
  ProcessSpec spec;
  spec.argv = {testing::kBin + "/kbv-judge", "--device-gate"};
  spec.stdin_data = nlohmann::json(job).dump();
  spec.fd5 = gate[0];
  std::vector<std::string> stages;
  bool verdict = false;
  auto r = run_process(spec, Clock::now() + std::chrono::minutes(3), [&](const std::string& line) -> std::optional<Clock::time_point> {
    auto m = nlohmann::json::parse(line, nullptr, false);
    if (m.is_object() && m.value("event", "") == "stage") stages.push_back(m.value("stage", ""));
    if (m.is_object() && m.value("event", "") == "verdict") verdict = true;
    return std::nullopt;
  });
  ::close(gate[0]);
  EXPECT_TRUE(r.exited && r.exit_code == 0) << r.describe() << r.output_head << r.output_tail;
  EXPECT_FALSE(verdict);
  ASSERT_FALSE(stages.empty());
  EXPECT_EQ(stages.back(), "waiting");
  if (!::testing::Test::HasFailure()) fs::remove_all(root);
}

// The judge precompiles torch/extension.h into the build root (--torch-pch on) and a C++
// load_inline build's main.cpp uses it: g++ (-Winvalid-pch) names every variant it rejects, so
// a build that used the -O0 variant has no complaint about it.
// --jobs 2: the builds wait for the header (each then uses it); --jobs 8: it is made beside them
// (kPchBesideBuildsMinJobs), the first builds parse the header themselves, and every build and
// verdict must be the same.
class RunCliPch : public ::testing::TestWithParam<int> {};

TEST_P(RunCliPch, LoadInlineBuildsUseThePrecompiledTorchHeader) {
  const std::string jobs = std::to_string(GetParam());
  fs::path root = fs::temp_directory_path() / ("kbv-run-test-" + std::to_string(::getpid()) + "-pch-" + jobs);
  fs::remove_all(root);
  fs::create_directories(root / "suite/level1");
  fs::create_directories(root / "runs/m");
  fs::copy_file(example_problem("19_ReLU.py"), root / "suite/level1/19_ReLU.py");
  fs::copy_file(example_candidate("relu_cpp_ext.py"), root / "runs/m/level_1_problem_19_sample_0_kernel.py");
  // Its own cpp source includes torch/extension.h a second time: g++ must find the header
  // beside the PCH for #pragma once (a build that failed on this before the link was there).
  fs::copy_file(testing::kSource + "/examples/hacks/honest_shape_specialised.py", root / "runs/m/level_1_problem_19_sample_1_kernel.py");
  ProcessSpec spec;
  spec.argv = {testing::kBin + "/kbv", "run", "--problems", (root / "suite").string(), "--runs", (root / "runs").string(),
               "--db", (root / "kbv.db").string(), "--protocol", "standard", "--time-budget", "0.2", "--build-dir",
               (root / "builds").string(), "--jobs", jobs, "--gpus", "cpu", "--torch-pch", "on"};
  auto r = run_process(spec, Clock::now() + std::chrono::minutes(10));
  std::string out = r.output_head + r.output_tail;
  ASSERT_EQ(r.exit_code, 0) << out;
  EXPECT_NE(out.find("torch/extension.h precompiled"), std::string::npos) << out;
  fs::path pch;  // builds/torch-pch/<key of the torch headers>
  for (const auto& entry : fs::directory_iterator(root / "builds/torch-pch")) pch = entry.path();
  ASSERT_FALSE(pch.empty()) << out;
  EXPECT_TRUE(fs::exists(pch / "torch/extension.h.gch/O0.gch")) << out;
  EXPECT_TRUE(fs::exists(pch / "kbv/binding.h.gch/O0.gch")) << out;
  // Both main.cpp files begin with kbv's lean binding, its PCH's header (docs/scale.md).
  int binding = 0;
  for (const auto& entry : fs::recursive_directory_iterator(root / "builds"))
    if (entry.path().filename() == "main.cpp") {
      std::ifstream in(entry.path());
      std::string first;
      std::getline(in, first);
      binding += first.rfind("#include <kbv/binding.h>", 0) == 0;
    }
  EXPECT_EQ(binding, 2) << out;
  int logs = 0;
  for (const auto& entry : fs::recursive_directory_iterator(root / "builds"))
    if (entry.path().filename() == "build.log" && entry.path().string().find("torch-pch") == std::string::npos) {
      std::ifstream in(entry.path());
      std::string log((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
      ++logs;
      EXPECT_NE(log.find("-I" + pch.string()), std::string::npos) << log;
      EXPECT_EQ(log.find("O0.gch: not used"), std::string::npos) << log;
    }
  EXPECT_EQ(logs, 2) << "build logs under " << (root / "builds");
  ResultStore store((root / "kbv.db").string(), ResultStore::Mode::read_only);
  auto records = store.verdicts();
  ASSERT_EQ(records.size(), 2u);
  for (const auto& r : records) EXPECT_EQ(r.verdict.outcome, Outcome::correct) << r.verdict.reason;
  if (!::testing::Test::HasFailure()) fs::remove_all(root);  // 2.2 GB of headers
}

INSTANTIATE_TEST_SUITE_P(RunCli, RunCliPch, ::testing::Values(2, 8),
                         [](const ::testing::TestParamInfo<int>& info) {
                           return info.param == 2 ? std::string("BuildsWaitForIt") : std::string("MadeBesideTheBuilds");
                         });

}  // namespace
}  // namespace kbv
