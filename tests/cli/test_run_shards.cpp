// kbv run --shard I/N and kbv merge through the real kbv binary and the fake worker: the shards
// together evaluate every job exactly once, and their merged DB equals a single run's.
#include <gtest/gtest.h>

#include <algorithm>
#include <map>
#include <set>

#include "cli_harness.hpp"
#include "db_peek.hpp"

namespace kbv::testing {
namespace {

// Six candidates of two runs over three problems, one of them incorrect.
void corpus(Scratch& s) {
  for (int p = 1; p <= 3; ++p) s.problem(p);
  for (const char* run : {"model-a", "model-b"})
    for (int p = 1; p <= 3; ++p) s.candidate(run, p, 0, p == 2 ? std::vector<std::string>{"outcome=incorrect"} : std::vector<std::string>{});
}

std::vector<std::string> run_args(const Scratch& s, const std::string& db, const std::vector<std::string>& extra = {}) {
  std::vector<std::string> a{"run", "--problems", s.path("suite"), "--runs", s.path("runs"), "--db", db, "--device", "cpu",
                             "--protocol", "standard,verified"};
  a.insert(a.end(), extra.begin(), extra.end());
  return a;
}

// What a verdict says that a fake worker decides: by natural key, the outcome and stage.
constexpr const char* kVerdictsByKey =
    "SELECT run_name || ' L' || level || ' P' || problem_id || ' S' || sample_id || ' ' || protocol || ' ' ||"
    " problem_sha256 || ' ' || candidate_sha256 || ' ' || precision || ' ' || problem_size || ' ' || device_fingerprint"
    " || ' -> ' || outcome || ' ' || stage FROM verdicts ORDER BY 1";

std::vector<std::string> evals(const Scratch& s) {
  std::vector<std::string> out;
  for (const auto& l : s.worker_log())
    if (l.rfind("eval ", 0) == 0) out.push_back(l);
  return out;
}

TEST(RunShards, ShardsEvaluateEveryJobExactlyOnceAndKeepACandidatesProtocolsTogether) {
  Scratch s("shards-once");
  corpus(s);
  std::vector<std::string> all;
  std::map<std::string, int> shard_of_candidate;
  for (int i = 0; i < 2; ++i) {
    s.clear_worker_log();
    auto r = s.kbv(run_args(s, s.path("shard" + std::to_string(i) + ".db"), {"--shard", std::to_string(i) + "/2"}));
    ASSERT_EQ(r.exit_code, 0) << r.output;
    EXPECT_NE(r.output.find("shard " + std::to_string(i) + "/2"), std::string::npos) << r.output;
    auto mine = evals(s);
    EXPECT_FALSE(mine.empty()) << "shard " << i << " got no work";
    for (const auto& e : mine) {
      all.push_back(e);
      std::string candidate = e.substr(5, e.rfind(' ') - 5);
      auto [it, fresh] = shard_of_candidate.emplace(candidate, i);
      EXPECT_EQ(it->second, i) << candidate << " has protocols in two shards";
    }
  }
  std::sort(all.begin(), all.end());
  EXPECT_EQ(std::adjacent_find(all.begin(), all.end()), all.end()) << "a job ran twice";
  EXPECT_EQ(all.size(), 12u);  // 6 candidates x 2 protocols
  // Each shard's run row says which shard it was.
  EXPECT_EQ(query(s.path("shard1.db"), "SELECT json_extract(options, '$.shard') FROM runs"), std::vector<std::string>{"1/2"});
}

TEST(RunShards, MergedShardDbsEqualASingleRunAndMergingAgainChangesNothing) {
  Scratch s("shards-merge");
  corpus(s);
  ASSERT_EQ(s.kbv(run_args(s, s.path("single.db"))).exit_code, 0);
  for (int i = 0; i < 3; ++i)
    ASSERT_EQ(s.kbv(run_args(s, s.path("shard" + std::to_string(i) + ".db"), {"--shard", std::to_string(i) + "/3"})).exit_code, 0);
  std::vector<std::string> merge{"merge", s.path("merged.db"), s.path("shard0.db"), s.path("shard1.db"), s.path("shard2.db")};
  auto m = s.kbv(merge);
  ASSERT_EQ(m.exit_code, 0) << m.output;
  EXPECT_NE(m.output.find("12 verdict(s) added, 0 replaced"), std::string::npos) << m.output;
  auto single = query(s.path("single.db"), kVerdictsByKey);
  EXPECT_EQ(single.size(), 12u);
  EXPECT_EQ(query(s.path("merged.db"), kVerdictsByKey), single);
  // Provenance: every verdict points at a run copied from a shard DB.
  EXPECT_EQ(query(s.path("merged.db"), "SELECT count(*) FROM verdicts v JOIN runs r ON r.id = v.run_id"
                                       " WHERE json_extract(r.options, '$.merged_from.db') LIKE '%shard_.db'"),
            std::vector<std::string>{"12"});

  auto dump = [&] {
    auto rows = query(s.path("merged.db"), "SELECT json_array(id, run_id, created_at, updated_at, verdict_json) FROM verdicts ORDER BY id");
    for (auto& r : query(s.path("merged.db"), "SELECT json_array(id, status, options) FROM runs ORDER BY id")) rows.push_back(r);
    return rows;
  };
  auto before = dump();
  auto again = s.kbv(merge);
  ASSERT_EQ(again.exit_code, 0) << again.output;
  EXPECT_NE(again.output.find("0 verdict(s) added, 0 replaced, 12 already there; 0 conflict(s)"), std::string::npos)
      << again.output;
  EXPECT_EQ(dump(), before);
  // The merged DB reads like any other.
  auto report = s.kbv({"report", "--db", s.path("merged.db")});
  EXPECT_EQ(report.exit_code, 0) << report.output;
}

TEST(RunShards, MergeReportsAConflictAndKeepsTheRulesWinner) {
  Scratch s("shards-conflict");
  s.problem(1);
  s.write("outcome.txt", "correct");
  s.candidate("model-a", 1, 0, {"outcome_file=" + s.path("outcome.txt")});
  ASSERT_EQ(s.kbv(run_args(s, s.path("first.db"))).exit_code, 0);
  // The same job evaluated again elsewhere, later, with another result.
  execute(s.path("first.db"), "UPDATE verdicts SET updated_at = '2000-01-01T00:00:00Z'");
  s.write("outcome.txt", "incorrect");
  ASSERT_EQ(s.kbv(run_args(s, s.path("second.db"))).exit_code, 0);
  auto m = s.kbv({"merge", s.path("merged.db"), s.path("first.db"), s.path("second.db")});
  ASSERT_EQ(m.exit_code, 0) << m.output;
  EXPECT_NE(m.output.find("conflict model-a L1 P1 S0 standard: kept incorrect (from " + s.path("second.db") +
                          "), dropped correct (from " + s.path("merged.db") + ")"),
            std::string::npos)
      << m.output;
  EXPECT_EQ(query(s.path("merged.db"), "SELECT outcome FROM verdicts WHERE protocol = 'standard'"),
            std::vector<std::string>{"incorrect"});
}

TEST(RunShards, BadShardOrMergeArgumentsAreUsageErrors) {
  Scratch s("shards-usage");
  corpus(s);
  for (const char* bad : {"2/2", "1", "0/0", "a/2"}) {
    auto r = s.kbv(run_args(s, s.db(), {"--shard", bad}));
    EXPECT_EQ(r.exit_code, 2) << bad << ": " << r.output;
    EXPECT_EQ(s.worker_calls("eval"), 0u);
  }
  auto m = s.kbv({"merge", s.path("out.db"), s.path("missing.db")});
  EXPECT_EQ(m.exit_code, 1) << m.output;
  EXPECT_NE(m.output.find("missing.db"), std::string::npos) << m.output;
}

}  // namespace
}  // namespace kbv::testing
