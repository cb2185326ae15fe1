// kbv run over several devices, through the real kbv binary and the fake worker (which logs the
// device each evaluation was handed and the CUDA_VISIBLE_DEVICES it saw).
#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <map>
#include <set>
#include <sstream>

#include "cli_harness.hpp"
#include "db_peek.hpp"

namespace kbv::testing {
namespace {

struct DeviceCall {
  std::string device, visible, job;  // job: "<candidate> <protocol>"
};

std::vector<DeviceCall> device_calls(const Scratch& s) {
  std::vector<DeviceCall> out;
  std::ifstream in(s.path("devices.log"));
  for (std::string line; std::getline(in, line);) {
    std::istringstream words(line);
    DeviceCall c;
    std::string candidate, protocol;
    words >> c.device >> c.visible >> candidate >> protocol;
    c.job = candidate + " " + protocol;
    out.push_back(c);
  }
  return out;
}

// Eight candidates; each evaluation takes a moment, so both devices are busy at once.
Scratch& corpus(Scratch& s) {
  s.set_env("FAKE_WORKER_DEVICE_LOG", s.path("devices.log"));
  for (int p = 1; p <= 4; ++p) s.problem(p);
  for (const char* run : {"model-a", "model-b"})
    for (int p = 1; p <= 4; ++p) s.candidate(run, p, 0, {"sleep=0.2"});
  return s;
}

std::vector<std::string> args(const Scratch& s, const std::vector<std::string>& extra) {
  std::vector<std::string> a{"run", "--problems", s.path("suite"), "--runs", s.path("runs"), "--db", s.db(), "--protocol",
                             "standard,verified"};
  a.insert(a.end(), extra.begin(), extra.end());
  return a;
}

// Every job exactly once, and each of `devices` got some of them (so no job went to two).
void expect_disjoint_work(const std::vector<DeviceCall>& calls, const std::set<std::string>& devices) {
  std::map<std::string, std::string> device_of_job;
  std::map<std::string, int> jobs_per_device;
  for (const auto& c : calls) {
    EXPECT_TRUE(device_of_job.emplace(c.job, c.device).second) << c.job << " ran twice";
    ++jobs_per_device[c.device];
  }
  EXPECT_EQ(device_of_job.size(), 16u);  // 8 candidates x 2 protocols
  std::set<std::string> used;
  for (const auto& [d, n] : jobs_per_device) used.insert(d);
  EXPECT_EQ(used, devices);
  // A candidate's protocols share its build cache entry, which one sandbox at a time may hold.
  std::map<std::string, std::string> device_of_candidate;
  for (const auto& c : calls) {
    std::string candidate = c.job.substr(0, c.job.find(' '));
    auto [it, added] = device_of_candidate.emplace(candidate, c.device);
    EXPECT_EQ(it->second, c.device) << candidate << " was evaluated on two devices";
  }
}

struct Turn {
  std::string device, job;
  long long process_start = 0, turn_start = 0, end = 0;
};

std::vector<Turn> turns(const Scratch& s) {
  std::vector<Turn> out;
  std::ifstream in(s.path("turns.log"));
  for (std::string line; std::getline(in, line);) {
    std::istringstream words(line);
    Turn t;
    std::string candidate, protocol;
    words >> t.device >> t.process_start >> t.turn_start >> t.end >> candidate >> protocol;
    t.job = candidate + " " + protocol;
    out.push_back(t);
  }
  return out;
}

// --prestart: judges start while the device is busy (their start-up overlaps), but each waits
// for the one before it to exit: on every device, no two evaluations' turns overlap.
// Each judge served both protocols of its candidate with one sandbox (strict, verified, standard
// in that order), so there is one turn per candidate.
void expect_turns_one_at_a_time(const std::vector<Turn>& all, std::size_t jobs, bool expect_ahead) {
  ASSERT_EQ(all.size(), jobs);
  for (const auto& t : all) EXPECT_EQ(t.job.substr(t.job.find(' ') + 1), "verified+standard") << t.job;
  std::map<std::string, std::vector<Turn>> by_device;
  for (const auto& t : all) by_device[t.device].push_back(t);
  int started_ahead = 0;
  for (auto& [device, list] : by_device) {
    std::sort(list.begin(), list.end(), [](const Turn& a, const Turn& b) { return a.turn_start < b.turn_start; });
    for (std::size_t i = 1; i < list.size(); ++i) {
      EXPECT_GT(list[i].turn_start, list[i - 1].end)
          << device << ": " << list[i].job << " began its turn before " << list[i - 1].job << " ended";
      started_ahead += list[i].process_start < list[i - 1].end;
    }
  }
  if (expect_ahead) EXPECT_GE(started_ahead, static_cast<int>(jobs) / 2) << "judges were not started ahead";
  else EXPECT_EQ(started_ahead, 0);
}

TEST(RunDevices, JudgesStartedAheadWaitForTheirTurn) {
  Scratch s("devices-prestart");
  corpus(s);
  s.set_env("FAKE_WORKER_TURN_LOG", s.path("turns.log"));
  auto r = s.kbv(args(s, {"--gpus", "cuda:0", "--prestart", "2"}));
  ASSERT_EQ(r.exit_code, 0) << r.output;
  expect_turns_one_at_a_time(turns(s), 8, true);
  EXPECT_NE(r.output.find("start-up done ahead"), std::string::npos) << r.output;
}

TEST(RunDevices, TwoDevicesEachTakeTurnsWithJudgesStartedAhead) {
  Scratch s("devices-prestart-two");
  corpus(s);
  s.set_env("FAKE_WORKER_TURN_LOG", s.path("turns.log"));
  auto r = s.kbv(args(s, {"--gpus", "cuda:0,cuda:1", "--prestart", "1"}));
  ASSERT_EQ(r.exit_code, 0) << r.output;
  expect_turns_one_at_a_time(turns(s), 8, true);
  expect_disjoint_work(device_calls(s), {"cuda:0", "cuda:1"});
}

// Consecutive turns on one device, in turn order: the gaps from each judge's verdicts (its logged
// end) to the next judge's turn, in seconds.
std::vector<double> turn_gaps(std::vector<Turn> list) {
  std::sort(list.begin(), list.end(), [](const Turn& a, const Turn& b) { return a.turn_start < b.turn_start; });
  std::vector<double> gaps;
  for (std::size_t i = 1; i < list.size(); ++i) gaps.push_back(static_cast<double>(list[i].turn_start - list[i - 1].end) / 1e9);
  return gaps;
}

// Four candidates on one device, two judges started ahead, each judge ending with `directive`;
// the turns must never overlap. Returns the gaps between consecutive turns.
std::vector<double> run_with_slow_exits(Scratch& s, const std::string& directive) {
  for (int p = 1; p <= 4; ++p) {
    s.problem(p);
    s.candidate("model-a", p, 0, {"sleep=0.5", directive});
  }
  s.set_env("FAKE_WORKER_TURN_LOG", s.path("turns.log"));
  auto r = s.kbv(args(s, {"--gpus", "cuda:0", "--prestart", "2"}));
  EXPECT_EQ(r.exit_code, 0) << r.output;
  expect_turns_one_at_a_time(turns(s), 4, true);
  return turn_gaps(turns(s));
}

// A judge says the device is free once its sandbox and twin have ended and its verdicts are
// sent: the next judge's turn begins then, not after this one's exit (its CUDA teardown, here
// 1.2 s). Turns still never overlap, and the exit is its verdicts' stage "exit", outside their
// wall time. (An exiting judge still holds its evaluator: two more start ahead.)
TEST(RunDevices, AJudgeThatSaysTheDeviceIsFreeHandsOnItsTurnBeforeItExits) {
  Scratch s("devices-released");
  for (double gap : run_with_slow_exits(s, "released_exit=1.2")) EXPECT_LT(gap, 1.0) << "the next turn waited for the judge's exit";
  auto rows = query(s.db(), "SELECT json_extract(verdict_json, '$.stage_seconds.exit') || '|' || json_extract(verdict_json, '$.wall_seconds') "
                            "FROM verdicts WHERE json_extract(verdict_json, '$.protocol') = 'standard'");
  ASSERT_EQ(rows.size(), 4u);
  for (const auto& row : rows) {
    const double exit = std::stod(row.substr(0, row.find('|'))), wall = std::stod(row.substr(row.find('|') + 1));
    EXPECT_GT(exit, 1.0) << row;
    EXPECT_LT(wall, 1.0) << "the exit counted in the verdict's wall time: " << row;
  }
}

// Without that word (a judge that failed, or an older one) the next turn waits for the exit.
TEST(RunDevices, WithoutTheJudgesWordTheNextTurnWaitsForItsExit) {
  Scratch s("devices-not-released");
  for (double gap : run_with_slow_exits(s, "hang_after_verdict=1.2"))
    EXPECT_GE(gap, 1.15) << "a turn began before the judge before it had exited";
}

TEST(RunDevices, PrestartZeroStartsEachJudgeAfterTheLast) {
  Scratch s("devices-prestart-off");
  corpus(s);
  s.set_env("FAKE_WORKER_TURN_LOG", s.path("turns.log"));
  auto r = s.kbv(args(s, {"--gpus", "cuda:0", "--prestart", "0"}));
  ASSERT_EQ(r.exit_code, 0) << r.output;
  expect_turns_one_at_a_time(turns(s), 8, false);
}

TEST(RunDevices, TwoDevicesGetDisjointWorkAndEveryJobRunsOnce) {
  Scratch s("devices-two");
  corpus(s);
  auto r = s.kbv(args(s, {"--gpus", "cuda:0,cuda:1"}));
  ASSERT_EQ(r.exit_code, 0) << r.output;
  expect_disjoint_work(device_calls(s), {"cuda:0", "cuda:1"});
}

// No GPU on this machine: CUDA_VISIBLE_DEVICES alone (UUIDs, counted as listed without NVML)
// makes two devices, and each worker sees the variable as kbv got it, so its logical cuda:i is
// the physical GPU the user meant.
TEST(RunDevices, CudaVisibleDevicesDecidesTheDevicesAndReachesEveryWorker) {
  if (std::filesystem::exists("/dev/nvidiactl")) GTEST_SKIP() << "this machine has NVIDIA GPUs; the test needs a host without";
  Scratch s("devices-visible");
  corpus(s);
  s.set_env("CUDA_VISIBLE_DEVICES", "GPU-1111,GPU-2222");
  auto r = s.kbv(args(s, {}));
  ASSERT_EQ(r.exit_code, 0) << r.output;
  EXPECT_EQ(r.output.find("no GPU found"), std::string::npos) << r.output;
  auto calls = device_calls(s);
  expect_disjoint_work(calls, {"cuda:0", "cuda:1"});
  for (const auto& c : calls) EXPECT_EQ(c.visible, "GPU-1111,GPU-2222");
}

// "-1" alone would mean the CPU (VisibleDevices.EmptyOrMinusOneMeansNoGpu); --gpus still wins.
TEST(RunDevices, GpusWinOverCudaVisibleDevices) {
  Scratch s("devices-gpus-win");
  corpus(s);
  s.set_env("CUDA_VISIBLE_DEVICES", "-1");
  auto r = s.kbv(args(s, {"--gpus", "0,1"}));
  ASSERT_EQ(r.exit_code, 0) << r.output;
  expect_disjoint_work(device_calls(s), {"cuda:0", "cuda:1"});
}

}  // namespace
}  // namespace kbv::testing
