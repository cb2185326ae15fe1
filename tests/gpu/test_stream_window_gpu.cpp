// The call window on the GPU (docs/timing.md, "The call window"): work a candidate puts on a
// stream that does not follow the caller's is named (unsynchronized_work) and incorrect under
// every protocol, never FASTER; honest multi-stream work stays correct; and `kbv run` gives the
// same verdict class as `kbv eval` for the same candidate and protocol.
#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <future>
#include <map>

#include "gpu_eval.hpp"
#include "store/result_store.hpp"

namespace kbv {
namespace {

namespace fs = std::filesystem;

const std::string kMse = testing::example_problem("94_MSELoss.py");

struct StreamHack {
  std::string file;
  std::string problem;  // examples/problems/level1/<problem>
  // Work that waits for the caller's stream but is not joined may be absorbed into the judge's
  // window by the GPU's time-slicing: then it is timed, and it must at least gain nothing.
  bool may_be_timed_instead = false;
  // ...and then its speedup is that of honest work: at most this (a fused single-pass MSE is
  // ~3x eager's three passes; the hack it stands for would read ~30x).
  double honest_at_most = 1.5;
};

const std::vector<StreamHack> kStreamHacks = {
    {"stream_private_no_wait.py", "94_MSELoss.py"},   {"stream_priority_autograd.py", "19_ReLU.py"},
    {"stream_output_on_side.py", "94_MSELoss.py"},    {"stream_nonblocking_copy.py", "19_ReLU.py"},
    {"stream_graph_replay.py", "19_ReLU.py"},         {"stream_cpp_nonblocking.py", "19_ReLU.py"},
    {"stream_event_not_waited.py", "19_ReLU.py", true},
    // Waited for their inputs, never joined: the judge's window can miss them (time-slicing lets
    // them end before the judge reads), the sandbox's kernel trace of the checked calls cannot.
    {"side_stream.py", "19_ReLU.py"},                 {"side_stream_full_grid.py", "19_ReLU.py"},
    // The red team's (session 21): they wait for their inputs in other ways, so they may be timed.
    {"stream_spin_until_inputs.py", "94_MSELoss.py", true, 5.0},
    {"stream_sync_then_unjoined.py", "94_MSELoss.py", true},
};

bool has_flag(const CliResult& r, const std::string& name) {
  if (!r.verdict.is_object()) return false;
  for (const auto& f : r.verdict["flags"])
    if (f["name"] == name) return true;
  return false;
}

bool any_faster(const CliResult& r) {
  if (!r.verdict.is_object() || !r.verdict.contains("timing")) return false;
  for (const auto& s : r.verdict["timing"]["speedups"])
    if (s.value("compare", "") == "FASTER") return true;
  return false;
}

class GpuStreamWindow : public ::testing::TestWithParam<StreamHack> {};

TEST_P(GpuStreamWindow, CaughtAndNamedUnderEveryProtocol) {
  const StreamHack& h = GetParam();
  for (const std::string protocol : {"standard", "verified", "strict"}) {
    SCOPED_TRACE(protocol);
    auto r = eval_gpu(kHacks + h.file, protocol, testing::example_problem(h.problem));
    if (h.may_be_timed_instead && r.outcome() == "correct") {
      EXPECT_LT(headline_speedup(r), h.honest_at_most) << "an inflated speedup\n" << r.context();
      continue;
    }
    EXPECT_FALSE(any_faster(r)) << r.context();
    EXPECT_EQ(r.outcome(), "incorrect") << r.context();
    EXPECT_TRUE(has_flag(r, "unsynchronized_work")) << r.context();
    EXPECT_NE(r.reason().find("unsynchronized_work"), std::string::npos) << r.context();
  }
}

INSTANTIATE_TEST_SUITE_P(StreamHacks, GpuStreamWindow, ::testing::ValuesIn(kStreamHacks),
                         [](const ::testing::TestParamInfo<StreamHack>& info) {
                           std::string n = info.param.file.substr(0, info.param.file.size() - 3);
                           for (auto& ch : n)
                             if (!std::isalnum(static_cast<unsigned char>(ch))) ch = '_';
                           return n;
                         });

TEST(GpuStreamWindowHonest, TwoJoinedStreamsStayCorrectWithoutFlags) {
  for (const std::string protocol : {"standard", "verified", "strict"}) {
    SCOPED_TRACE(protocol);
    auto r = eval_gpu(testing::example_candidate("relu_two_streams_joined.py"), protocol);
    EXPECT_EQ(r.outcome(), "correct") << r.context();
    EXPECT_TRUE(integrity_flags(r).empty()) << r.context();
    // Its figures are measured alone by scripts/gpu_window_ab.sh (bench/RESULTS.md): beside
    // other tests on the device they are not this test's to assert.
  }
}

// Every candidate here through one `kbv run` (all protocols in one sandbox, strict first) and
// through `kbv eval` one protocol at a time: the same verdict class each time.
TEST(GpuStreamWindowCommands, RunAndEvalAgree) {
  struct Case {
    std::string path, problem;
  };
  std::vector<Case> cases;
  // Not those whose outcome may rest on how the GPU time-slices (they may be timed instead).
  for (const auto& h : kStreamHacks)
    if (!h.may_be_timed_instead) cases.push_back({kHacks + h.file, h.problem});
  for (const std::string f : {"result_reuse_after_n.py", "output_aliases_input.py", "honest_own_stream.py", "stalled_identity.py"})
    cases.push_back({kHacks + f, "19_ReLU.py"});
  cases.push_back({testing::example_candidate("relu_two_streams_joined.py"), "19_ReLU.py"});
  cases.push_back({testing::example_candidate("relu_cuda.py"), "19_ReLU.py"});

  const fs::path root = fs::path(testing::build_dir()) / "run-vs-eval";
  fs::remove_all(root);
  fs::create_directories(root / "suite" / "level1");
  fs::create_directories(root / "runs" / "streams");
  for (const std::string p : {"19_ReLU.py", "94_MSELoss.py"}) fs::copy_file(testing::example_problem(p), root / "suite" / "level1" / p);
  for (std::size_t i = 0; i < cases.size(); ++i) {
    const std::string id = cases[i].problem.substr(0, cases[i].problem.find('_'));
    fs::copy_file(cases[i].path, root / "runs" / "streams" / ("level_1_problem_" + id + "_sample_" + std::to_string(i) + "_kernel.py"));
  }
  ProcessSpec spec;
  spec.argv = {testing::kBin + "/kbv", "run", "--problems", (root / "suite").string(), "--runs", (root / "runs").string(),
               "--db", (root / "kbv.db").string(), "--protocol", "standard,verified,strict", "--time-budget", "0.5",
               "--build-dir", testing::build_dir(), "--device", "cuda:0", "--run-timeout", "120"};
  spec.keep_tail_bytes = 64 * 1024;
  auto run = run_process(spec, Clock::now() + std::chrono::minutes(20));
  ASSERT_TRUE(run.exited) << run.describe();

  std::map<std::pair<std::int64_t, std::string>, Verdict> stored;
  ResultStore store((root / "kbv.db").string(), ResultStore::Mode::read_only);
  for (const auto& r : store.verdicts()) stored[{r.sample.sample_id, r.verdict.protocol}] = r.verdict;
  auto word = [](const std::string& outcome) { return outcome == "correct" ? std::string("correct") : std::string("not correct"); };
  // The evaluations run six at a time: a verdict class of these candidates does not rest on the
  // device being idle (those that may be timed instead are left out above).
  struct Eval {
    std::size_t i;
    std::string protocol;
    std::future<CliResult> result;
  };
  std::vector<Eval> evals;
  for (std::size_t i = 0; i < cases.size(); ++i)
    for (const std::string protocol : {"standard", "verified", "strict"}) evals.push_back({i, protocol, {}});
  for (std::size_t start = 0; start < evals.size(); start += 6) {
    for (std::size_t k = start; k < std::min(evals.size(), start + 6); ++k)
      evals[k].result = std::async(std::launch::async, [&cases, &e = evals[k]] {
        return testing::run_kbv_eval({testing::example_problem(cases[e.i].problem), cases[e.i].path, "--protocol", e.protocol,
                                      "--time-budget", "0.5", "--run-timeout", "120"},
                                     "cuda:0");
      });
    for (std::size_t k = start; k < std::min(evals.size(), start + 6); ++k) evals[k].result.wait();
  }
  for (auto& ev : evals) {
    SCOPED_TRACE(cases[ev.i].path + " " + ev.protocol);
    auto it = stored.find({static_cast<std::int64_t>(ev.i), ev.protocol});
    ASSERT_NE(it, stored.end()) << run.output_tail;
    const CliResult e = ev.result.get();
    EXPECT_EQ(word(std::string(outcome_name(it->second.outcome))), word(e.outcome()))
        << "kbv run: " << it->second.reason << "\nkbv eval: " << e.reason();
    EXPECT_NE(e.outcome(), "internal_error") << e.context();
    EXPECT_NE(it->second.outcome, Outcome::internal_error) << it->second.reason;
  }
}

}  // namespace
}  // namespace kbv
