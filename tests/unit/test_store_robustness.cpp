// The store under conditions that are not the happy path: a damaged file, rows that cannot be
// read, verdicts without a key, runs whose process died, a DB locked by another connection (the
// writer retries, then spills), spill files imported back, one run lock per DB.
#include <gtest/gtest.h>
#include <sqlite3.h>
#include <sys/wait.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <filesystem>
#include <fstream>
#include <thread>

#include "../support/report_fixtures.hpp"
#include "store/db_run_lock.hpp"
#include "store/process_identity.hpp"
#include "store/result_store.hpp"
#include "store/verdict_spill.hpp"
#include "store/verdict_writer.hpp"

namespace kbv {
namespace {

namespace fs = std::filesystem;
using testing::FakeVerdict;
using testing::make_sample;
using testing::make_verdict;

class StoreRobustness : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::temp_directory_path() / ("kbv-store-robust-" + std::to_string(::getpid()) + "-" +
                                        ::testing::UnitTest::GetInstance()->current_test_info()->name());
    fs::remove_all(dir_);
    fs::create_directories(dir_);
    path_ = (dir_ / "results.db").string();
  }
  void TearDown() override { fs::remove_all(dir_); }

  void sql(const std::string& text) {
    SqliteDb db(path_, SqliteDb::Mode::read_write, 1000);
    db.exec(text);
  }
  void put(ResultStore& store, int sample, Outcome outcome = Outcome::correct) {
    FakeVerdict f;
    f.sample = sample;
    f.outcome = outcome;
    store.put_verdict(make_sample(f), make_verdict(f));
  }

  fs::path dir_;
  std::string path_;
};

TEST_F(StoreRobustness, DamagedDbIsRefusedForWritingButNotForReading) {
  {
    ResultStore store(path_);
    for (int i = 0; i < 40; ++i) put(store, i);
  }
  auto size = fs::file_size(path_);
  ASSERT_GT(size, 6u * 4096);
  {
    // The second half of the pages overwritten: the schema and meta pages at the start survive.
    std::fstream f(path_, std::ios::in | std::ios::out | std::ios::binary);
    auto from = size / 2 / 4096 * 4096;
    std::string garbage(size - from - 4096, '\xAB');
    f.seekp(static_cast<std::streamoff>(from));
    f.write(garbage.data(), static_cast<std::streamsize>(garbage.size()));
  }
  try {
    ResultStore store(path_);
    FAIL() << "a damaged DB was opened for writing";
  } catch (const StoreError& e) {
    EXPECT_NE(std::string(e.what()).find("quick_check"), std::string::npos) << e.what();
  }
  EXPECT_NO_THROW(ResultStore(path_, ResultStore::Mode::read_only)) << "kbv report may still read what is left";
}

TEST_F(StoreRobustness, UnreadableRowsAreNamedAndSkipped) {
  {
    ResultStore store(path_);
    for (int i = 0; i < 3; ++i) put(store, i);
  }
  sql("UPDATE verdicts SET verdict_json = '{oops' WHERE sample_id = 0");
  sql("UPDATE verdicts SET verdict_json = json_set(verdict_json, '$.outcome', 'exploded') WHERE sample_id = 1");
  ResultStore store(path_, ResultStore::Mode::read_only);
  std::vector<UnreadableRow> bad;
  auto records = store.verdicts({}, &bad);
  ASSERT_EQ(records.size(), 1u);
  EXPECT_EQ(records[0].sample.sample_id, 2);
  ASSERT_EQ(bad.size(), 2u);
  EXPECT_EQ(bad[0].sample.sample_id, 0);
  EXPECT_EQ(bad[0].protocol, "") << "invalid JSON: not even the protocol";
  EXPECT_GT(bad[0].id, 0);
  EXPECT_EQ(bad[1].sample.sample_id, 1);
  EXPECT_EQ(bad[1].protocol, "verified");
  EXPECT_NE(bad[1].error.find("unknown outcome 'exploded'"), std::string::npos) << bad[1].error;
  EXPECT_EQ(store.verdicts().size(), 1u) << "without the list the rows are still skipped, never a failure";
}

TEST_F(StoreRobustness, VerdictWithoutKeyPartsIsRefused) {
  ResultStore store(path_);
  FakeVerdict f;
  Verdict v = make_verdict(f);
  v.protocol.clear();
  EXPECT_THROW(store.put_verdict(make_sample(f), v), StoreError);
  v = make_verdict(f);
  v.candidate.sha256.clear();
  EXPECT_THROW(store.put_verdict(make_sample(f), v), StoreError);
  v = make_verdict(f);
  v.device = DeviceInfo{};  // would be keyed cpu:::0
  EXPECT_THROW(store.put_verdict(make_sample(f), v), StoreError);
  EXPECT_EQ(store.verdict_count(), 0);
}

TEST_F(StoreRobustness, StoredSummaryCarriesOutcomeStageAndLimits) {
  ResultStore store(path_);
  FakeVerdict f;
  f.outcome = Outcome::timeout;
  f.stage = "correctness";
  Verdict v = make_verdict(f);
  v.limits = VerdictLimits{900, 5};
  store.put_verdict(make_sample(f), v);
  auto s = store.stored_summary(ResultStore::key_of(make_sample(f), v));
  ASSERT_TRUE(s.has_value());
  EXPECT_EQ(s->outcome, "timeout");
  EXPECT_EQ(s->stage, "correctness");
  ASSERT_TRUE(s->limits.has_value());
  EXPECT_DOUBLE_EQ(s->limits->run_timeout_seconds, 5);
  EXPECT_DOUBLE_EQ(s->limits->compile_timeout_seconds, 900);
  FakeVerdict other = f;
  other.sample = 7;
  EXPECT_FALSE(store.stored_summary(ResultStore::key_of(make_sample(other), make_verdict(other))).has_value());
}

TEST_F(StoreRobustness, RunningRowOfADeadProcessIsMarkedInterruptedOnOpen) {
  { ResultStore store(path_); }
  pid_t child = ::fork();
  if (child == 0) {  // a kbv run that dies without closing its run
    ResultStore store(path_);
    store.begin_run(RunRecord{});
    ::_exit(0);
  }
  int status = 0;
  ::waitpid(child, &status, 0);
  ResultStore store(path_);
  std::int64_t live = store.begin_run(RunRecord{});  // this process: alive
  RunRecord elsewhere;
  elsewhere.hostname = "another-host";
  store.begin_run(elsewhere);
  ResultStore reopened(path_);
  auto runs = reopened.runs();
  ASSERT_EQ(runs.size(), 3u);
  EXPECT_EQ(runs[0].status, "interrupted") << "its process is gone";
  EXPECT_EQ(runs[0].options.value("pid", 0), child);
  EXPECT_FALSE(runs[0].finished_at.empty());
  EXPECT_TRUE(runs[0].options.contains("marked_interrupted"));
  EXPECT_EQ(runs[1].id, live);
  EXPECT_EQ(runs[1].status, "running") << "a live process's run is left alone";
  EXPECT_EQ(runs[2].status, "running") << "another host's process cannot be checked from here";
}

TEST(ProcessIdentity, TellsThisProcessFromAGoneOne) {
  auto me = this_process();
  EXPECT_TRUE(process_is_running(me.pid, me.start_ticks));
  EXPECT_FALSE(process_is_running(me.pid, me.start_ticks + 1)) << "same pid, other start: a reused pid";
  pid_t child = ::fork();
  if (child == 0) ::_exit(0);
  int status = 0;
  ::waitpid(child, &status, 0);
  EXPECT_FALSE(process_is_running(child, 0));
}

// Another connection holding the write lock for `seconds`.
std::thread hold_write_lock(const std::string& path, double seconds, std::atomic<bool>& held) {
  return std::thread([path, seconds, &held] {
    sqlite3* h = nullptr;
    sqlite3_open(path.c_str(), &h);
    sqlite3_exec(h, "BEGIN IMMEDIATE", nullptr, nullptr, nullptr);
    held = true;
    std::this_thread::sleep_for(std::chrono::duration<double>(seconds));
    sqlite3_exec(h, "ROLLBACK", nullptr, nullptr, nullptr);
    sqlite3_close(h);
  });
}

TEST_F(StoreRobustness, WriterRetriesALockedDbUntilItIsFree) {
  ResultStore store(path_, ResultStore::Mode::read_write, 100);  // SQLite gives up after 0.1 s...
  VerdictSpill spill(path_, "");
  VerdictWriter writer(store, spill, WriteRetry{10, 0.05, 0.2});  // ...the writer keeps trying
  std::atomic<bool> held{false};
  auto other = hold_write_lock(path_, 0.6, held);
  while (!held) std::this_thread::sleep_for(std::chrono::milliseconds(5));
  FakeVerdict f;
  EXPECT_EQ(writer.put(make_sample(f), make_verdict(f), 0), VerdictWriter::Where::db);
  other.join();
  EXPECT_FALSE(writer.db_failed());
  EXPECT_EQ(store.verdict_count(), 1);
  EXPECT_EQ(spill.count(), 0u);
}

TEST_F(StoreRobustness, WriterSpillsWhenTheDbStaysLockedAndImportBringsItBack) {
  FakeVerdict f;
  {
    ResultStore store(path_, ResultStore::Mode::read_write, 50);
    VerdictSpill spill(path_, "");
    VerdictWriter writer(store, spill, WriteRetry{0.3, 0.05, 0.1});
    std::atomic<bool> held{false};
    auto other = hold_write_lock(path_, 2.0, held);
    while (!held) std::this_thread::sleep_for(std::chrono::milliseconds(5));
    EXPECT_EQ(writer.put(make_sample(f), make_verdict(f), 0), VerdictWriter::Where::spill);
    EXPECT_TRUE(writer.db_failed());
    EXPECT_NE(writer.db_error().find("locked"), std::string::npos) << writer.db_error();
    f.sample = 1;
    EXPECT_EQ(writer.put(make_sample(f), make_verdict(f), 0), VerdictWriter::Where::spill) << "no more waiting on the DB";
    other.join();
    EXPECT_EQ(spill.files(), std::vector<std::string>{path_ + ".spill.jsonl"});
    EXPECT_EQ(store.verdict_count(), 0);
  }
  std::ofstream(path_ + ".spill.jsonl", std::ios::app) << "{half a line\n";
  ResultStore store(path_);
  auto imported = import_spills(store, path_, "");
  EXPECT_EQ(imported.imported, 2u);
  EXPECT_EQ(imported.unreadable_lines, 1u);
  EXPECT_EQ(store.verdict_count(), 2);
  EXPECT_FALSE(fs::exists(path_ + ".spill.jsonl"));
  EXPECT_TRUE(fs::exists(path_ + ".spill.jsonl.bad")) << "a line that cannot be read is kept aside, not dropped";
  auto back = store.verdicts();
  ASSERT_EQ(back.size(), 2u);
  EXPECT_EQ(back[0].sample.sample_id, 0);
  EXPECT_EQ(back[1].sample.sample_id, 1);
}

TEST_F(StoreRobustness, SpillFallsBackWhenTheDbFolderCannotTakeIt) {
  // A spill path that cannot be a file (a folder of that name) stands in for a full disk.
  fs::create_directories(path_ + ".spill.jsonl");
  VerdictSpill spill(path_, (dir_ / "fallback").string());
  FakeVerdict f;
  std::string where = spill.append({make_sample(f), make_verdict(f), 0});
  EXPECT_EQ(fs::path(where).parent_path(), dir_ / "fallback");
  EXPECT_EQ(spill_paths(path_, (dir_ / "fallback").string()).back(), where) << "where the next run looks";
  fs::remove_all(path_ + ".spill.jsonl");
  EXPECT_EQ(pending_spills(path_, (dir_ / "fallback").string()), std::vector<std::string>{where});
}

TEST_F(StoreRobustness, SecondRunLockIsRefusedUntilTheFirstIsReleased) {
  {
    DbRunLock first(path_);
    try {
      DbRunLock second(path_);
      FAIL() << "two run locks on one DB";
    } catch (const DbBusyError& e) {
      EXPECT_NE(std::string(e.what()).find("pid " + std::to_string(::getpid())), std::string::npos) << e.what();
    }
  }
  EXPECT_NO_THROW(DbRunLock again(path_)) << "released when the first ends";
}

}  // namespace
}  // namespace kbv
