// kbv run gives all protocols of a candidate to one judge (one sandbox serves them in turn,
// strict first), through the real kbv binary and the fake worker, which serves them as kbv-judge
// does and logs, per process, the protocols it served.
#include <gtest/gtest.h>

#include <chrono>
#include <fstream>
#include <map>
#include <sstream>

#include "cli_harness.hpp"
#include "db_peek.hpp"

namespace kbv::testing {
namespace {

// candidate path -> the protocols each of its judges served ("strict+verified+standard").
std::multimap<std::string, std::string> served(const Scratch& s) {
  std::multimap<std::string, std::string> out;
  std::ifstream in(s.path("turns.log"));
  for (std::string line; std::getline(in, line);) {
    std::istringstream words(line);
    std::string device, start, turn, end, candidate, protocols;
    words >> device >> start >> turn >> end >> candidate >> protocols;
    out.emplace(candidate.substr(candidate.rfind('/') + 1), protocols);
  }
  return out;
}

// An output found wrong between calls leaves the sandbox fit to serve the next protocol; any
// other end (a runtime error, a timeout, a crash) may leave it mid-call or its device broken, so
// each protocol after it gets a judge of its own. Every protocol gets its verdict either way.
TEST(RunProtocols, OneJudgeServesEveryProtocolUnlessItsSandboxIsUnfit) {
  Scratch s("protocols-one-judge");
  s.set_env("FAKE_WORKER_TURN_LOG", s.path("turns.log"));
  s.problem(1);
  s.problem(2);
  s.problem(3);
  s.candidate("m", 1, 0);
  s.candidate("m", 2, 0, {"outcome=incorrect"});
  s.candidate("m", 3, 0, {"outcome=runtime_error"});
  auto r = s.kbv({"run", "--problems", s.path("suite"), "--runs", s.path("runs"), "--db", s.db(), "--device", "cpu", "--protocol",
                  "standard,verified,strict"});
  ASSERT_EQ(r.exit_code, 0) << r.output;
  auto judges = served(s);
  auto of = [&](const std::string& file) {
    std::vector<std::string> out;
    auto [a, b] = judges.equal_range(file);
    for (auto it = a; it != b; ++it) out.push_back(it->second);
    return out;
  };
  EXPECT_EQ(of("level_1_problem_1_sample_0_kernel.py"), std::vector<std::string>{"strict+verified+standard"});
  EXPECT_EQ(of("level_1_problem_2_sample_0_kernel.py"), std::vector<std::string>{"strict+verified+standard"});
  EXPECT_EQ(of("level_1_problem_3_sample_0_kernel.py"), (std::vector<std::string>{"strict", "verified", "standard"}));
  auto rows = query(s.db(), "SELECT protocol || ' ' || outcome FROM verdicts ORDER BY problem_id, protocol");
  std::vector<std::string> expected{"standard correct",       "strict correct",        "verified correct",
                                    "standard incorrect",     "strict incorrect",      "verified incorrect",
                                    "standard runtime_error", "strict runtime_error", "verified runtime_error"};
  EXPECT_EQ(rows, expected) << r.output;
}

// One source file that is the candidate of two problems is two evaluations: each judge serves
// one problem's protocols, and each verdict lands on its own problem.
TEST(RunProtocols, OneFileForTwoProblemsIsTwoJudges) {
  Scratch s("protocols-same-file");
  s.set_env("FAKE_WORKER_TURN_LOG", s.path("turns.log"));
  s.problem(1, "A");
  s.problem(2, "B");
  for (int p : {1, 2}) s.write("runs/m/level_1_problem_" + std::to_string(p) + "_sample_0_kernel.py", "# the same text\n");
  auto r = s.kbv({"run", "--problems", s.path("suite"), "--runs", s.path("runs"), "--db", s.db(), "--device", "cpu", "--protocol",
                  "standard,verified"});
  ASSERT_EQ(r.exit_code, 0) << r.output;
  auto judges = served(s);
  ASSERT_EQ(judges.size(), 2u);
  for (const auto& [file, protocols] : judges) EXPECT_EQ(protocols, "verified+standard") << file;
  auto rows = query(s.db(), "SELECT problem_id || ' ' || protocol || ' ' || json_extract(verdict_json, '$.problem.path') FROM verdicts "
                            "ORDER BY problem_id, protocol");
  ASSERT_EQ(rows.size(), 4u) << r.output;
  for (const auto& row : rows) {
    const bool first = row.rfind("1 ", 0) == 0;
    EXPECT_NE(row.find(first ? "/1_A.py" : "/2_B.py"), std::string::npos) << row;
  }
}

// A judge whose exit hangs after its verdicts (a candidate's CUDA fault can leave the judge's
// context stuck in teardown) is killed after a grace: its verdicts stand, with a warning, and the
// run goes on instead of holding the device for the whole backstop.
TEST(RunProtocols, AJudgeThatDoesNotExitAfterItsVerdictsIsKilledAndTheVerdictsKept) {
  Scratch s("protocols-stuck-exit");
  s.problem(1);
  s.candidate("m", 1, 0, {"hang_after_verdict=600"});
  auto started = std::chrono::steady_clock::now();
  auto r = s.kbv({"run", "--problems", s.path("suite"), "--runs", s.path("runs"), "--db", s.db(), "--device", "cpu", "--protocol",
                  "standard,strict"},
                 240);
  ASSERT_EQ(r.exit_code, 0) << r.output;
  EXPECT_LT(std::chrono::steady_clock::now() - started, std::chrono::seconds(120)) << "waited for the judge's exit";
  auto rows = query(s.db(), "SELECT protocol || ' ' || outcome FROM verdicts ORDER BY protocol");
  EXPECT_EQ(rows, (std::vector<std::string>{"standard correct", "strict correct"})) << r.output;
  auto warned = query(s.db(), "SELECT count(*) FROM verdicts WHERE verdict_json LIKE '%did not exit within%'");
  EXPECT_EQ(warned, std::vector<std::string>{"2"});
}

}  // namespace
}  // namespace kbv::testing
