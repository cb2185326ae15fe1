// kbv run when its results DB fails under it: a write lock held by another program for longer
// than kbv waits, a full disk. The run stops cleanly (exit 74) with every finished verdict kept in
// a spill file, and the next run imports them: nothing evaluated twice, nothing lost.
#include <sys/mount.h>

#include <cerrno>
#include <cstring>

#include "cli_harness.hpp"
#include "db_peek.hpp"

namespace kbv {
namespace {

using testing::eventually;
using testing::query;
using testing::Scratch;
using testing::WriteLockHolder;

std::size_t lines_in(const std::string& path) {
  std::ifstream in(path);
  std::size_t n = 0;
  for (std::string line; std::getline(in, line);) n += !line.empty();
  return n;
}

std::size_t spilled_lines(const Scratch& s, const std::string& db) {
  std::size_t n = lines_in(db + ".spill.jsonl");
  for (const auto& e : fs::directory_iterator(s.path("cache"))) {
    if (e.path().filename() != "spill") continue;
    for (const auto& f : fs::directory_iterator(e.path())) n += lines_in(f.path().string());
  }
  return n;
}

TEST(RunStoreFailure, LockedDbStopsTheRunAndKeepsFinishedVerdictsInTheSpillFile) {
  Scratch s("locked");
  s.problem(1);
  s.candidate("m", 1, 0, {"wait_for=" + s.path("go")});
  s.candidate("m", 1, 1);
  auto run = s.start(s.run_args({"--store-wait", "1", "--jobs", "1"}));
  // Once kbv has recorded its run and its first evaluation is under way, another program takes
  // the write lock and keeps it.
  ASSERT_TRUE(eventually([&] { return s.worker_calls("eval") == 1; }));
  WriteLockHolder other(s.db());
  s.write("go", "");
  auto stopped = Scratch::wait(run);
  other.release();

  EXPECT_EQ(stopped.exit_code, 74) << stopped.output;
  EXPECT_NE(stopped.output.find("stopped: the results DB"), std::string::npos) << stopped.output;
  EXPECT_NE(stopped.output.find(s.db() + ".spill.jsonl"), std::string::npos) << "the message names the spill file\n"
                                                                            << stopped.output;
  EXPECT_EQ(lines_in(s.db() + ".spill.jsonl"), 1u) << "the verdict finished while the DB was locked";
  EXPECT_EQ(s.worker_calls("eval"), 1u) << "the run stops instead of evaluating more";

  s.clear_worker_log();
  auto resumed = s.kbv(s.run_args());
  EXPECT_EQ(resumed.exit_code, 0) << resumed.output;
  EXPECT_NE(resumed.output.find("1 verdict(s) imported"), std::string::npos) << resumed.output;
  EXPECT_FALSE(fs::exists(s.db() + ".spill.jsonl"));
  EXPECT_EQ(s.worker_calls("eval"), 1u) << "only the sample never evaluated";
  EXPECT_EQ(query(s.db(), "SELECT COUNT(*) FROM verdicts"), std::vector<std::string>{"2"});
  EXPECT_EQ(query(s.db(), "SELECT status FROM runs ORDER BY id"), (std::vector<std::string>{"interrupted", "finished"}))
      << "the stopped run could not close its row in the locked DB; the next open marks it";
}

// Unmounts on the way out, whatever the test did.
struct Mount {
  std::string at;
  ~Mount() {
    if (!at.empty()) ::umount2(at.c_str(), MNT_DETACH);
  }
};

TEST(RunStoreFailure, FullDiskStopsTheRunAndKeepsEveryFinishedVerdict) {
  Scratch s("fulldisk");
  Mount small{s.path("small")};
  fs::create_directories(small.at);
  if (::mount("tmpfs", small.at.c_str(), "tmpfs", 0, "size=1m") != 0) {
    std::string why = std::strerror(errno);
    small.at.clear();
    GTEST_SKIP() << "cannot mount a 1 MiB tmpfs for the DB (" << why << "): needs root or CAP_SYS_ADMIN";
  }
  const std::string db = small.at + "/kbv.db";
  s.problem(1);
  for (int i = 0; i < 40; ++i) s.candidate("m", 1, i, {"print_kb=40"});  // ~36 KiB of output_tail per verdict
  auto args = s.run_args({"--store-wait", "1", "--jobs", "2"});
  args[6] = db;  // --db
  auto stopped = s.kbv(args);
  EXPECT_EQ(stopped.exit_code, 74) << stopped.output;
  EXPECT_NE(stopped.output.find("spill"), std::string::npos) << stopped.output;
  auto evaluated = s.worker_calls("eval");
  auto stored = std::stoul(query(db, "SELECT COUNT(*) FROM verdicts").at(0));
  EXPECT_LT(stored, 40u) << "the disk was meant to fill up";
  EXPECT_EQ(stored + spilled_lines(s, db), evaluated) << "every finished verdict is in the DB or a spill file";

  // Room again: the next run imports the spilled verdicts and evaluates only the rest.
  ASSERT_EQ(::mount("tmpfs", small.at.c_str(), "tmpfs", MS_REMOUNT, "size=64m"), 0) << std::strerror(errno);
  s.clear_worker_log();
  auto resumed = s.kbv(args);
  EXPECT_EQ(resumed.exit_code, 0) << resumed.output;
  EXPECT_EQ(s.worker_calls("eval"), 40u - evaluated);
  EXPECT_EQ(query(db, "SELECT COUNT(*) FROM verdicts"), std::vector<std::string>{"40"});
  EXPECT_EQ(spilled_lines(s, db), 0u) << "imported spill files are removed";
}

TEST(RunLock, SecondRunOnTheSameDbIsRefusedWithTheFirstOnesPid) {
  Scratch s("two-runs");
  s.problem(1);
  s.candidate("m", 1, 0, {"build_wait_for=" + s.path("go")});
  auto first = s.start(s.run_args());
  ASSERT_TRUE(eventually([&] { return s.worker_calls("build") == 1; }));
  auto second = s.kbv(s.run_args(), 20);
  s.write("go", "");
  auto done = Scratch::wait(first);
  EXPECT_EQ(second.exit_code, 75) << second.output;
  EXPECT_NE(second.output.find("another kbv run is writing to"), std::string::npos) << second.output;
  EXPECT_NE(second.output.find("pid " + std::to_string(first.pid)), std::string::npos) << second.output;
  EXPECT_EQ(done.exit_code, 0) << done.output;
  EXPECT_EQ(s.worker_calls("build"), 1u) << "the second run started no worker";
  EXPECT_EQ(s.worker_calls("eval"), 1u);
}

}  // namespace
}  // namespace kbv
