// The results store: schema, round trip, natural-key idempotence, reopen, migration.
#include <gtest/gtest.h>
#include <sqlite3.h>
#include <unistd.h>

#include <cmath>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <thread>

#include "../support/report_fixtures.hpp"
#include "store/result_store.hpp"

namespace kbv {
namespace {

namespace fs = std::filesystem;
using testing::FakeVerdict;
using testing::make_sample;
using testing::make_verdict;

// A fresh DB path per test, removed afterwards.
class StoreTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::temp_directory_path() /
           ("kbv-store-test-" + std::to_string(::getpid()) + "-" + ::testing::UnitTest::GetInstance()->current_test_info()->name());
    fs::remove_all(dir_);
    fs::create_directories(dir_);
    path_ = (dir_ / "results.db").string();
  }
  void TearDown() override { fs::remove_all(dir_); }

  // Runs SQL on the file directly (as another tool would) and returns the first column of each row.
  std::vector<std::string> raw(const std::string& sql) {
    SqliteDb db(path_, SqliteDb::Mode::read_write, 1000);
    auto st = db.prepare(sql);
    std::vector<std::string> out;
    while (st.step()) out.push_back(st.column_count() ? st.column_text(0) : "");
    return out;
  }

  fs::path dir_;
  std::string path_;
};

FakeVerdict fake(int sample = 0, const std::string& protocol = "verified") {
  FakeVerdict f;
  f.sample = sample;
  f.protocol = protocol;
  f.speedup_off = 2.5;
  f.speedup_on = 1.25;
  f.memory = std::make_pair<std::int64_t, std::int64_t>(1000, 2000);
  return f;
}

TEST_F(StoreTest, NewDbHasSchemaVersionAndWal) {
  ResultStore store(path_);
  EXPECT_EQ(store.schema_version(), kStoreSchemaVersion);
  EXPECT_EQ(raw("SELECT value FROM meta WHERE key = 'schema_version'"), std::vector<std::string>{std::to_string(kStoreSchemaVersion)});
  EXPECT_EQ(raw("PRAGMA journal_mode"), std::vector<std::string>{"wal"});
  for (const char* table : {"meta", "runs", "verdicts"})
    EXPECT_EQ(raw(std::string("SELECT name FROM sqlite_master WHERE type='table' AND name='") + table + "'").size(), 1u) << table;
}

TEST_F(StoreTest, ColumnsComeFromTheFieldList) {
  ResultStore store(path_);
  auto cols = raw("SELECT name FROM pragma_table_info('verdicts') ORDER BY cid");
  std::vector<std::string> expected{"id", "run_id", "created_at", "updated_at"};
  for (const auto& f : result_fields()) expected.push_back(f.name);
  expected.push_back("verdict_json");
  EXPECT_EQ(cols, expected);
  // The UNIQUE index covers exactly the key fields.
  auto idx = raw("SELECT name FROM pragma_index_list('verdicts') WHERE \"unique\" = 1");
  ASSERT_EQ(idx.size(), 1u);
  auto key_cols = raw("SELECT name FROM pragma_index_info('" + idx[0] + "') ORDER BY seqno");
  std::vector<std::string> key_fields;
  for (const auto& f : result_fields())
    if (f.key) key_fields.push_back(f.name);
  EXPECT_EQ(key_cols, key_fields);
}

TEST_F(StoreTest, VerdictRoundTripsWithEveryPart) {
  auto f = fake();
  Verdict v = make_verdict(f);
  v.warnings = {"parameter bias not copied"};
  v.output_tail = "line 1\nline 2\xff\xfe";  // invalid UTF-8 from a candidate's print must not break the store
  {
    ResultStore store(path_);
    store.put_verdict(make_sample(f), v);
  }
  ResultStore store(path_, ResultStore::Mode::read_only);
  auto all = store.verdicts();
  ASSERT_EQ(all.size(), 1u);
  const auto& r = all[0];
  EXPECT_EQ(r.sample.run_name, "model-a");
  EXPECT_EQ(r.sample.sample_id, 0);
  EXPECT_EQ(r.run_id, 0);
  EXPECT_FALSE(r.created_at.empty());
  Verdict expected = v;
  expected.output_tail = "line 1\nline 2\xEF\xBF\xBD\xEF\xBF\xBD";  // replaced by U+FFFD
  EXPECT_EQ(nlohmann::json(r.verdict), nlohmann::json(expected));
  // The raw samples are kept inside the verdict JSON; reports can drop them.
  ASSERT_TRUE(r.verdict.timing);
  EXPECT_EQ(r.verdict.timing->series[0].samples_ms.size(), 4u);
  VerdictQuery q;
  q.keep_samples = false;
  EXPECT_TRUE(store.verdicts(q)[0].verdict.timing->series[0].samples_ms.empty());
  // Columns hold the extracted values.
  auto speed = raw("SELECT speedup FROM verdicts");
  ASSERT_EQ(speed.size(), 1u);
  EXPECT_DOUBLE_EQ(std::stod(speed[0]), 1.25);
  EXPECT_EQ(raw("SELECT flags FROM verdicts"), std::vector<std::string>{"[]"});
  EXPECT_EQ(raw("SELECT candidate_peak_device_bytes FROM verdicts"), std::vector<std::string>{"1000"});
}

TEST_F(StoreTest, AbsentPartsAreNullNotZero) {
  auto f = fake(0, "standard");
  f.outcome = Outcome::compile_error;
  f.memory.reset();
  ResultStore store(path_);
  store.put_verdict(make_sample(f), make_verdict(f));
  EXPECT_EQ(raw("SELECT COUNT(*) FROM verdicts WHERE speedup IS NULL AND candidate_peak_device_bytes IS NULL AND compiled = 0"),
            std::vector<std::string>{"1"});
}

TEST_F(StoreTest, PutTwiceKeepsOneRowAndUpdatesIt) {
  ResultStore store(path_);
  auto f = fake();
  Verdict v = make_verdict(f);
  auto run1 = store.begin_run(RunRecord{});
  store.put_verdict(f.run, "a.py", f.level, f.problem, f.sample, v, run1);
  v.outcome = Outcome::incorrect;
  v.reason = "D4_neg mismatched";
  auto run2 = store.begin_run(RunRecord{});
  store.put_verdict(f.run, "a.py", f.level, f.problem, f.sample, v, run2);
  EXPECT_EQ(store.verdict_count(), 1);
  auto all = store.verdicts();
  ASSERT_EQ(all.size(), 1u);
  EXPECT_EQ(all[0].verdict.outcome, Outcome::incorrect);
  EXPECT_EQ(all[0].run_id, run2);
  EXPECT_TRUE(store.has_verdict(ResultStore::key_of(make_sample(f), v)));
}

TEST_F(StoreTest, KeyDistinguishesSamplesProtocolsAndDevices) {
  ResultStore store(path_);
  auto a = fake(0), b = fake(1), c = fake(0, "strict");
  store.put_verdict(make_sample(a), make_verdict(a));
  store.put_verdict(make_sample(b), make_verdict(b));
  store.put_verdict(make_sample(c), make_verdict(c));
  auto d = fake(0);
  d.device = "NVIDIA A100";
  store.put_verdict(make_sample(d), make_verdict(d));
  // The same candidate file in two runs (two models wrote the same code) is two rows.
  auto e = fake(0);
  e.run = "model-b";
  e.candidate_sha = make_verdict(a).candidate.sha256;
  store.put_verdict(make_sample(e), make_verdict(e));
  EXPECT_EQ(store.verdict_count(), 5);
  auto key = ResultStore::key_of(make_sample(a), make_verdict(a));
  EXPECT_TRUE(store.has_verdict(key));
  key.protocol_version = 2;
  EXPECT_FALSE(store.has_verdict(key));
  EXPECT_FALSE(store.get_verdict(key).has_value());
}

TEST_F(StoreTest, EditedCandidateReplacesTheStaleVerdict) {
  ResultStore store(path_);
  auto f = fake();
  store.put_verdict(make_sample(f), make_verdict(f));
  f.candidate_sha = "edited";
  store.put_verdict(make_sample(f), make_verdict(f));
  auto all = store.verdicts();
  ASSERT_EQ(all.size(), 1u);
  EXPECT_EQ(all[0].verdict.candidate.sha256, "edited");
}

TEST_F(StoreTest, WritesFromSeveralThreadsAllLand) {
  ResultStore store(path_);
  std::vector<std::thread> threads;
  for (int t = 0; t < 4; ++t)
    threads.emplace_back([&store, t] {
      for (int i = 0; i < 25; ++i) {
        auto f = fake(i);
        f.problem = t + 1;
        store.put_verdict(make_sample(f), make_verdict(f));
      }
    });
  for (auto& th : threads) th.join();
  EXPECT_EQ(store.verdict_count(), 100);
}

TEST_F(StoreTest, ReopenKeepsVerdictsAndRuns) {
  auto f = fake();
  {
    ResultStore store(path_);
    RunRecord run;
    run.argv = {"kbv", "run", "runs/", "--protocol", "verified"};
    run.protocol = "verified";
    run.options = {{"runs_dir", "runs/"}};
    auto id = store.begin_run(run);
    store.put_verdict(make_sample(f), make_verdict(f), id);
    store.finish_run(id);
  }
  ResultStore store(path_);
  EXPECT_EQ(store.verdict_count(), 1);
  auto runs = store.runs();
  ASSERT_EQ(runs.size(), 1u);
  EXPECT_EQ(runs[0].argv.size(), 5u);
  EXPECT_EQ(runs[0].status, "finished");
  EXPECT_FALSE(runs[0].finished_at.empty());
  EXPECT_EQ(runs[0].options["runs_dir"], "runs/");
  auto g = fake(1);
  store.put_verdict(make_sample(g), make_verdict(g));
  EXPECT_EQ(store.verdict_count(), 2);
  auto got = store.get_verdict(ResultStore::key_of(make_sample(f), make_verdict(f)));
  ASSERT_TRUE(got.has_value());
  EXPECT_EQ(got->run_id, runs[0].id);
}

TEST_F(StoreTest, OlderSchemaIsMigratedFromVerdictJson) {
  auto f = fake();
  {
    ResultStore store(path_);
    store.put_verdict(make_sample(f), make_verdict(f));
  }
  // Simulate a DB written before `wall_seconds` existed.
  raw("ALTER TABLE verdicts DROP COLUMN wall_seconds");
  raw("UPDATE meta SET value = '0' WHERE key = 'schema_version'");
  {
    ResultStore ro(path_, ResultStore::Mode::read_only);
    EXPECT_EQ(ro.schema_version(), 0);
    EXPECT_EQ(ro.verdicts().size(), 1u) << "an older DB stays readable without migrating";
  }
  ResultStore store(path_);
  EXPECT_EQ(store.schema_version(), kStoreSchemaVersion);
  EXPECT_EQ(raw("SELECT wall_seconds FROM verdicts"), std::vector<std::string>{"3.5"});
  EXPECT_EQ(store.verdict_count(), 1);
  EXPECT_EQ(raw("SELECT COUNT(*) FROM sqlite_master WHERE name LIKE 'verdicts_v%'"), std::vector<std::string>{"0"});
}

TEST_F(StoreTest, NewerSchemaIsRefused) {
  { ResultStore store(path_); }
  raw("UPDATE meta SET value = '99' WHERE key = 'schema_version'");
  EXPECT_THROW(ResultStore(path_, ResultStore::Mode::read_write), StoreError);
  EXPECT_THROW(ResultStore(path_, ResultStore::Mode::read_only), StoreError);
}

TEST_F(StoreTest, ForeignSqliteFileIsRefused) {
  raw("CREATE TABLE foo (x INTEGER)");
  EXPECT_THROW(ResultStore(path_, ResultStore::Mode::read_write), StoreError);
  EXPECT_THROW(ResultStore(path_, ResultStore::Mode::read_only), StoreError);
}

TEST_F(StoreTest, MissingFileReadOnlyIsAnError) {
  EXPECT_THROW(ResultStore((dir_ / "absent.db").string(), ResultStore::Mode::read_only), StoreError);
  EXPECT_FALSE(fs::exists(dir_ / "absent.db"));
}

TEST_F(StoreTest, ReadOnlyStoreCannotWrite) {
  { ResultStore store(path_); }
  ResultStore ro(path_, ResultStore::Mode::read_only);
  auto f = fake();
  EXPECT_THROW(ro.put_verdict(make_sample(f), make_verdict(f)), StoreError);
}

TEST_F(StoreTest, NonFiniteNumbersDoNotBreakReading) {
  auto f = fake();
  Verdict v = make_verdict(f);
  v.timing->speedups[0].ci_high = std::nan("");
  v.wall_seconds = INFINITY;
  ResultStore store(path_);
  store.put_verdict(make_sample(f), v);
  auto all = store.verdicts();
  ASSERT_EQ(all.size(), 1u);
  EXPECT_DOUBLE_EQ(all[0].verdict.timing->speedups[0].ci_high, 0.0) << "a NaN is stored as null and read as absent";
}

TEST(ResultFields, KeyFieldsAreNamedOnceAndDocsAreInSync) {
  std::set<std::string> names;
  for (const auto& f : result_fields()) {
    EXPECT_TRUE(names.insert(f.name).second) << "duplicate field " << f.name;
    EXPECT_FALSE(f.description.empty()) << f.name;
    EXPECT_TRUE(f.extract) << f.name;
  }
  std::ifstream in(std::string(KBV_SOURCE_DIR) + "/docs/store.md");
  ASSERT_TRUE(in) << "docs/store.md missing";
  std::stringstream ss;
  ss << in.rdbuf();
  EXPECT_NE(ss.str().find(result_fields_markdown()), std::string::npos)
      << "docs/store.md's field table is stale; regenerate it with `kbv report --fields`:\n"
      << result_fields_markdown();
}

TEST(ResultFields, KeyOfMatchesTheKeyFieldExtractors) {
  auto f = fake();
  auto r = testing::make_record(f);
  auto key = ResultStore::key_of(r.sample, r.verdict);
  EXPECT_EQ(std::get<std::string>(result_field("device_fingerprint").extract(r)), key.device_fingerprint);
  EXPECT_EQ(std::get<std::string>(result_field("candidate_sha256").extract(r)), key.candidate_sha256);
  EXPECT_EQ(std::get<std::int64_t>(result_field("sample_id").extract(r)), key.sample_id);
  EXPECT_EQ(key.device_fingerprint, "cuda:NVIDIA H200:9.0:161061273600");
}

TEST(ResultFields, CompiledFollowsTheStage) {
  Verdict v;
  v.outcome = Outcome::timeout;
  v.stage = "build";
  EXPECT_FALSE(verdict_compiled(v));
  v.stage = "timing";
  EXPECT_TRUE(verdict_compiled(v));
  v.outcome = Outcome::compile_error;
  EXPECT_FALSE(verdict_compiled(v));
  v.outcome = Outcome::incorrect;
  EXPECT_TRUE(verdict_compiled(v));
}

}  // namespace
}  // namespace kbv
