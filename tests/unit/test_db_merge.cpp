// kbv merge: shard DBs into one by natural key; idempotent, order-free, provenance kept.
#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <sstream>

#include "../support/report_fixtures.hpp"
#include "core/sha256.hpp"
#include "store/db_merge.hpp"
#include "store/result_store.hpp"

namespace kbv {
namespace {

namespace fs = std::filesystem;
using testing::FakeVerdict;
using testing::make_sample;
using testing::make_verdict;

class DbMerge : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::temp_directory_path() /
           ("kbv-merge-test-" + std::to_string(::getpid()) + "-" + ::testing::UnitTest::GetInstance()->current_test_info()->name());
    fs::remove_all(dir_);
    fs::create_directories(dir_);
  }
  void TearDown() override { fs::remove_all(dir_); }

  std::string at(const std::string& name) const { return (dir_ / name).string(); }

  // A DB as one `kbv run` on host `host` leaves it: one finished run and its verdicts.
  std::string shard_db(const std::string& name, const std::vector<FakeVerdict>& verdicts, const std::string& host = "node1") {
    ResultStore store(at(name));
    RunRecord r;
    r.argv = {"kbv", "run", "--shard", name};
    r.hostname = host;
    std::int64_t run = store.begin_run(r);
    for (const auto& f : verdicts) store.put_verdict(make_sample(f), make_verdict(f), run);
    store.finish_run(run);
    return at(name);
  }

  // Every row of `table` as text, without ids, in a stable order: what "the same DB" means here.
  static std::vector<std::string> rows(const std::string& db, const std::string& sql) {
    SqliteDb h(db, SqliteDb::Mode::read_only, 1000);
    auto st = h.prepare(sql);
    std::vector<std::string> out;
    while (st.step()) {
      std::string row;
      for (int i = 0; i < st.column_count(); ++i) row += st.column_text(i) + "|";
      out.push_back(row);
    }
    return out;
  }
  static std::vector<std::string> verdict_rows(const std::string& db) {
    return rows(db,
                "SELECT v.run_name, v.level, v.problem_id, v.sample_id, v.protocol, v.outcome, v.updated_at, v.verdict_json,"
                " json_extract(r.options, '$.merged_from.db') FROM verdicts v LEFT JOIN runs r ON r.id = v.run_id"
                " ORDER BY 1, 2, 3, 4, 5");
  }
  static std::vector<std::string> everything(const std::string& db) {
    auto out = rows(db, "SELECT * FROM runs ORDER BY id");
    for (auto& r : rows(db, "SELECT * FROM verdicts ORDER BY id")) out.push_back(r);
    for (auto& r : rows(db, "SELECT * FROM meta ORDER BY key")) out.push_back(r);
    return out;
  }
  static void set_updated_at(const std::string& db, const std::string& when) {
    SqliteDb h(db, SqliteDb::Mode::read_write, 1000);
    h.exec("UPDATE verdicts SET updated_at = '" + when + "'");
  }

  fs::path dir_;
};

FakeVerdict sample(int problem, int s, Outcome outcome = Outcome::correct, const std::string& protocol = "verified") {
  FakeVerdict f;
  f.problem = problem;
  f.sample = s;
  f.outcome = outcome;
  f.protocol = protocol;
  return f;
}

TEST_F(DbMerge, ShardsMergeIntoEveryVerdictOnceEachPointingAtItsShardsRun) {
  auto a = shard_db("a.db", {sample(1, 0), sample(1, 0, Outcome::correct, "strict"), sample(2, 0, Outcome::incorrect)}, "node1");
  auto b = shard_db("b.db", {sample(3, 0, Outcome::compile_error), sample(3, 1)}, "node2");
  MergeSummary s = merge_result_dbs(at("out.db"), {a, b});
  EXPECT_EQ(s.inputs, 2);
  EXPECT_EQ(s.verdicts_added, 5);
  EXPECT_EQ(s.verdicts_total, 5);
  EXPECT_EQ(s.runs_added, 2);
  EXPECT_TRUE(s.conflicts.empty());
  // Provenance: each verdict's run row says which DB and host it came from, and its run id there.
  auto prov = rows(at("out.db"),
                   "SELECT v.problem_id, v.sample_id, v.protocol, r.hostname, json_extract(r.options, '$.merged_from.db'),"
                   " json_extract(r.options, '$.merged_from.run_id') FROM verdicts v JOIN runs r ON r.id = v.run_id"
                   " ORDER BY 1, 2, 3");
  EXPECT_EQ(prov, (std::vector<std::string>{"1|0|strict|node1|" + a + "|1|", "1|0|verified|node1|" + a + "|1|",
                                            "2|0|verified|node1|" + a + "|1|", "3|0|verified|node2|" + b + "|1|",
                                            "3|1|verified|node2|" + b + "|1|"}));
  // The merged DB is a results DB like any other.
  ResultStore merged(at("out.db"), ResultStore::Mode::read_only);
  EXPECT_EQ(merged.verdicts().size(), 5u);
}

TEST_F(DbMerge, MergingAgainChangesNothing) {
  auto a = shard_db("a.db", {sample(1, 0), sample(2, 0, Outcome::incorrect)});
  auto b = shard_db("b.db", {sample(3, 0)}, "node2");
  merge_result_dbs(at("out.db"), {a, b});
  auto before = everything(at("out.db"));
  MergeSummary again = merge_result_dbs(at("out.db"), {a, b});
  EXPECT_EQ(again.verdicts_added, 0);
  EXPECT_EQ(again.verdicts_replaced, 0);
  EXPECT_EQ(again.verdicts_identical, 3);
  EXPECT_EQ(again.runs_added, 0);
  EXPECT_TRUE(again.conflicts.empty());
  EXPECT_EQ(everything(at("out.db")), before);
  // Nor does merging one input twice in one call.
  merge_result_dbs(at("out.db"), {b, b});
  EXPECT_EQ(everything(at("out.db")), before);
}

TEST_F(DbMerge, InputsAreNeverWritten) {
  auto a = shard_db("a.db", {sample(1, 0)});
  {  // the WAL merged into the file, so the bytes below are all there is
    SqliteDb h(a, SqliteDb::Mode::read_write, 1000);
    h.exec("PRAGMA wal_checkpoint(TRUNCATE)");
  }
  std::string before = sha256_file(a);
  merge_result_dbs(at("out.db"), {a});
  EXPECT_EQ(sha256_file(a), before);
}

TEST_F(DbMerge, ConflictKeepsTheLaterVerdictInWhicheverOrderTheInputsCome) {
  auto early = shard_db("early.db", {sample(1, 0, Outcome::correct)});
  auto late = shard_db("late.db", {sample(1, 0, Outcome::incorrect)}, "node2");
  set_updated_at(early, "2026-01-01T00:00:00Z");
  set_updated_at(late, "2026-02-01T00:00:00Z");
  MergeSummary one = merge_result_dbs(at("one.db"), {early, late});
  MergeSummary two = merge_result_dbs(at("two.db"), {late, early});
  EXPECT_EQ(verdict_rows(at("one.db")).size(), 1u);
  // Same verdict kept, from the same shard, whichever order.
  EXPECT_EQ(verdict_rows(at("one.db")), verdict_rows(at("two.db")));
  EXPECT_NE(verdict_rows(at("one.db")).front().find("|incorrect|"), std::string::npos);
  ASSERT_EQ(one.conflicts.size(), 1u);
  ASSERT_EQ(two.conflicts.size(), 1u);
  EXPECT_EQ(one.conflicts[0].kept_outcome, "incorrect");
  EXPECT_EQ(one.conflicts[0].dropped_outcome, "correct");
  EXPECT_EQ(one.conflicts[0].kept_from, late);
  EXPECT_EQ(two.conflicts[0].kept_from, at("two.db"));  // already there: the late one came first
  EXPECT_TRUE(one.conflicts[0].same_content);
  EXPECT_EQ(one.verdicts_replaced, 1);
  EXPECT_EQ(two.verdicts_replaced, 0);
}

TEST_F(DbMerge, AnInternalErrorLosesToARealVerdictEvenWhenLater) {
  auto real = shard_db("real.db", {sample(1, 0, Outcome::timeout)});
  auto broken = shard_db("broken.db", {sample(1, 0, Outcome::internal_error)}, "node2");
  set_updated_at(real, "2026-01-01T00:00:00Z");
  set_updated_at(broken, "2026-03-01T00:00:00Z");
  for (const auto& order : {std::vector<std::string>{real, broken}, std::vector<std::string>{broken, real}}) {
    fs::remove(at("out.db"));
    MergeSummary s = merge_result_dbs(at("out.db"), order);
    auto kept = verdict_rows(at("out.db"));
    ASSERT_EQ(kept.size(), 1u);
    EXPECT_NE(kept.front().find("|timeout|"), std::string::npos) << kept.front();
    ASSERT_EQ(s.conflicts.size(), 1u);
    EXPECT_EQ(s.conflicts[0].dropped_outcome, "internal_error");
  }
}

TEST_F(DbMerge, AnEditedSampleKeepsOnlyTheLaterFilesVerdict) {
  FakeVerdict old_file = sample(1, 0, Outcome::incorrect);
  FakeVerdict new_file = sample(1, 0, Outcome::correct);
  new_file.candidate_sha = "edited";
  auto a = shard_db("old.db", {old_file});
  auto b = shard_db("new.db", {new_file}, "node2");
  set_updated_at(a, "2026-01-01T00:00:00Z");
  set_updated_at(b, "2026-01-02T00:00:00Z");
  MergeSummary s = merge_result_dbs(at("out.db"), {a, b});
  EXPECT_EQ(rows(at("out.db"), "SELECT candidate_sha256, outcome FROM verdicts"), std::vector<std::string>{"edited|correct|"});
  ASSERT_EQ(s.conflicts.size(), 1u);
  EXPECT_FALSE(s.conflicts[0].same_content);
}

TEST_F(DbMerge, ARunMergedWhileRunningTakesItsEndFromTheNextMerge) {
  auto a = at("a.db");
  std::int64_t run = 0;
  {
    ResultStore store(a);
    run = store.begin_run(RunRecord{});
    store.put_verdict(make_sample(sample(1, 0)), make_verdict(sample(1, 0)), run);
  }
  merge_result_dbs(at("out.db"), {a});
  EXPECT_EQ(rows(at("out.db"), "SELECT status FROM runs"), std::vector<std::string>{"running|"});
  {
    ResultStore store(a);
    store.put_verdict(make_sample(sample(2, 0)), make_verdict(sample(2, 0)), run);
    store.finish_run(run);
  }
  MergeSummary s = merge_result_dbs(at("out.db"), {a});
  EXPECT_EQ(s.runs_added, 0);
  EXPECT_EQ(s.verdicts_added, 1);
  EXPECT_EQ(rows(at("out.db"), "SELECT status, json_extract(options, '$.merged_from.db') FROM runs"),
            std::vector<std::string>{"finished|" + a + "|"});
}

TEST_F(DbMerge, RefusesInputsItCannotTrust) {
  auto a = shard_db("a.db", {sample(1, 0)});
  EXPECT_THROW(merge_result_dbs(a, {a}), StoreError);  // the output itself
  EXPECT_THROW(merge_result_dbs(at("out.db"), {at("missing.db")}), StoreError);
  {
    SqliteDb other(at("other.db"), SqliteDb::Mode::read_write, 1000);
    other.exec("CREATE TABLE t (x)");
  }
  EXPECT_THROW(merge_result_dbs(at("out.db"), {at("other.db")}), StoreError);
  auto newer = shard_db("newer.db", {sample(2, 0)});
  {
    SqliteDb h(newer, SqliteDb::Mode::read_write, 1000);
    h.exec("UPDATE meta SET value = '99' WHERE key = 'schema_version'");
  }
  try {
    merge_result_dbs(at("out.db"), {newer});
    FAIL() << "merged a DB of another schema version";
  } catch (const StoreError& e) {
    EXPECT_NE(std::string(e.what()).find("schema version"), std::string::npos) << e.what();
  }
  // Nothing of a refused input got in; an accepted one still merges.
  EXPECT_EQ(merge_result_dbs(at("out.db"), {a}).verdicts_total, 1);
}

}  // namespace
}  // namespace kbv
