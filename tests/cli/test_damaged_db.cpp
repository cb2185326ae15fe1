// Results DBs that are not in a state to be written: in a read-only place (report and export
// still read them, immutable), with damaged pages (kbv run refuses to write into them), with a
// row whose verdict cannot be read (the report names the row and goes on without it; an unknown
// outcome is that row's error, never read as crashed).
#include <sys/mount.h>

#include <cerrno>
#include <cstring>

#include "cli_harness.hpp"
#include "core/sha256.hpp"
#include "db_peek.hpp"

namespace kbv {
namespace {

using testing::execute;
using testing::query;
using testing::Scratch;

// A DB written by a real kbv run: three samples of one problem.
void fill_db(Scratch& s, const std::string& db, int samples = 3, int print_kb = 0) {
  s.problem(1);
  for (int i = 0; i < samples; ++i)
    s.candidate("m", 1, i, print_kb ? std::vector<std::string>{"print_kb=" + std::to_string(print_kb)}
                                    : std::vector<std::string>{});
  auto args = s.run_args();
  args[6] = db;
  auto r = s.kbv(args);
  ASSERT_EQ(r.exit_code, 0) << r.output;
}

struct Mount {
  std::string at;
  ~Mount() {
    if (!at.empty()) ::umount2(at.c_str(), MNT_DETACH);
  }
};

TEST(ReadOnlyDb, ReportAndExportReadADbInAReadOnlyPlace) {
  Scratch s("read-only");
  Mount place{s.path("ro")};
  fs::create_directories(place.at);
  if (::mount("tmpfs", place.at.c_str(), "tmpfs", 0, "size=16m") != 0) {
    std::string why = std::strerror(errno);
    place.at.clear();
    GTEST_SKIP() << "cannot mount a tmpfs to make read-only (" << why << "): needs root or CAP_SYS_ADMIN";
  }
  const std::string db = place.at + "/kbv.db";
  fill_db(s, db);
  fs::remove(db + ".lock");
  ASSERT_EQ(::mount("tmpfs", place.at.c_str(), "tmpfs", MS_REMOUNT | MS_RDONLY, nullptr), 0) << std::strerror(errno);

  auto report = s.kbv({"report", "--db", db});
  EXPECT_EQ(report.exit_code, 0) << report.output;
  EXPECT_NE(report.output.find("| m | all | 1 | 3 |"), std::string::npos) << report.output;
  EXPECT_NE(report.output.find("read-only and immutable"), std::string::npos) << "the report says how it read the DB\n"
                                                                             << report.output;
  auto exported = s.kbv({"export", "--db", db, "--out", s.path("export")});
  EXPECT_EQ(exported.exit_code, 0) << exported.output;
  EXPECT_TRUE(fs::exists(s.path("export/m/eval_results.json"))) << exported.output;
}

TEST(DamagedDb, RunRefusesToWriteIntoADbWithDamagedPages) {
  Scratch s("damaged");
  fill_db(s, s.db(), 8, 20);  // overflow pages of output_tail: a file of many pages
  const auto size = fs::file_size(s.db());
  ASSERT_GT(size, 16u * 4096) << "no -wal left: the clean close merged it";
  {
    // Every page after the second overwritten with garbage: b-tree and overflow pages alike.
    std::fstream f(s.db(), std::ios::in | std::ios::out | std::ios::binary);
    std::string garbage(size - 2 * 4096 - 4096, '\xAB');
    f.seekp(2 * 4096);
    f.write(garbage.data(), static_cast<std::streamsize>(garbage.size()));
  }
  const std::string before = sha256_file(s.db());
  s.candidate("m", 1, 99);
  s.clear_worker_log();
  auto r = s.kbv(s.run_args());
  EXPECT_EQ(r.exit_code, 1) << r.output;
  EXPECT_NE(r.output.find("is damaged (PRAGMA quick_check"), std::string::npos) << r.output;
  EXPECT_NE(r.output.find(".recover"), std::string::npos) << "the message says how to salvage it\n" << r.output;
  EXPECT_EQ(sha256_file(s.db()), before) << "kbv wrote into the damaged DB";
  EXPECT_EQ(s.worker_calls("eval"), 0u);
}

TEST(UnreadableRow, ReportNamesTheRowAndSkipsIt) {
  Scratch s("unreadable-row");
  fill_db(s, s.db());
  execute(s.db(), "UPDATE verdicts SET verdict_json = '{\"outcome\": \"correct\", truncated' WHERE sample_id = 0");
  execute(s.db(), "UPDATE verdicts SET verdict_json = json_set(verdict_json, '$.outcome', 'exploded') WHERE sample_id = 1");
  auto ids = query(s.db(), "SELECT id FROM verdicts ORDER BY sample_id");
  ASSERT_EQ(ids.size(), 3u);

  auto report = s.kbv({"report", "--db", s.db()});
  EXPECT_EQ(report.exit_code, 0) << report.output;
  EXPECT_NE(report.output.find("## Unreadable rows"), std::string::npos) << report.output;
  EXPECT_NE(report.output.find("| " + ids[0] + " | m | 1 | 1 | 0 |"), std::string::npos) << report.output;
  EXPECT_NE(report.output.find("| " + ids[1] + " | m | 1 | 1 | 1 | standard | unknown outcome 'exploded'"), std::string::npos)
      << report.output;
  EXPECT_NE(report.output.find("| m | all | 1 | 1 | 100.0% | 100.0% |"), std::string::npos)
      << "the one readable sample is scored; the unknown outcome is not read as crashed\n"
      << report.output;
  EXPECT_EQ(report.output.find("crashed"), std::string::npos) << report.output;

  auto exported = s.kbv({"export", "--db", s.db(), "--out", s.path("export")});
  EXPECT_EQ(exported.exit_code, 0) << exported.output;
  EXPECT_NE(exported.output.find("skipped row " + ids[1]), std::string::npos) << exported.output;
}

}  // namespace
}  // namespace kbv
