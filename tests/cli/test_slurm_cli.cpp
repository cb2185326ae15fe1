// kbv slurm through the real binary, against a stand-in sbatch on PATH that logs its arguments
// (the real Slurm is tests/slurm/): what is submitted, in which order, and --dry-run.
#include <gtest/gtest.h>

#include <cstdlib>
#include <fstream>

#include "cli_harness.hpp"

namespace kbv::testing {
namespace {

// An sbatch that logs "<args>" per call and answers job ids 41, 42... as --parsable does.
void fake_sbatch(Scratch& s) {
  s.write("bin/sbatch",
          "#!/bin/sh\n"
          "n=$(($(wc -l < \"" + s.path("sbatch.log") + "\" 2>/dev/null || echo 0) + 41))\n"
          "echo \"$*\" >> \"" + s.path("sbatch.log") + "\"\n"
          "echo \"$n;cluster\"\n");
  fs::permissions(s.path("bin/sbatch"), fs::perms::owner_all);
  s.set_env("PATH", s.path("bin") + ":" + std::getenv("PATH"));
}

std::vector<std::string> lines(const std::string& path) {
  std::vector<std::string> out;
  std::ifstream in(path);
  for (std::string l; std::getline(in, l);) out.push_back(l);
  return out;
}

std::vector<std::string> slurm_args(const Scratch& s, const std::vector<std::string>& extra = {}) {
  std::vector<std::string> a{"slurm", "--shards", "3", "--db", s.path("all.db"), "--work-dir", s.path("w")};
  a.insert(a.end(), extra.begin(), extra.end());
  for (const char* r : {"--", "--problems", "suite", "--runs", "runs", "--protocol", "standard,strict"}) a.push_back(r);
  return a;
}

TEST(SlurmCli, SubmitsTheArrayThenTheMergeAfterIt) {
  Scratch s("slurm-submit");
  fake_sbatch(s);
  auto r = s.kbv(slurm_args(s, {"--gpus-per-shard", "1"}));
  ASSERT_EQ(r.exit_code, 0) << r.output;
  EXPECT_EQ(lines(s.path("sbatch.log")),
            (std::vector<std::string>{"--parsable --export=ALL " + s.path("w/shards.sbatch"),
                                      "--parsable --export=ALL --dependency=afterok:41 " + s.path("w/merge.sbatch")}));
  EXPECT_NE(r.output.find("kbv slurm: array job 41, merge job 42"), std::string::npos) << r.output;
  auto shards = lines(s.path("w/shards.sbatch"));
  EXPECT_NE(std::find(shards.begin(), shards.end(), "#SBATCH --array=0-2"), shards.end());
  EXPECT_NE(std::find(shards.begin(), shards.end(), "#SBATCH --gres=gpu:1"), shards.end());
  auto merge = lines(s.path("w/merge.sbatch"));
  EXPECT_NE(merge.back().find(" merge " + s.path("all.db") + " " + s.path("w/kbv-shard-0-of-3.db")), std::string::npos)
      << merge.back();
}

TEST(SlurmCli, DryRunPrintsTheScriptsAndSubmitsNothing) {
  Scratch s("slurm-dry");
  fake_sbatch(s);
  auto r = s.kbv(slurm_args(s, {"--dry-run"}));
  ASSERT_EQ(r.exit_code, 0) << r.output;
  EXPECT_FALSE(fs::exists(s.path("sbatch.log")));
  EXPECT_FALSE(fs::exists(s.path("w")));
  for (const char* text : {"#SBATCH --array=0-2", "--shard \"$i/3\"", "kbv-shard-2-of-3.db",
                           "'--dependency=afterok:<array job id>'"})
    EXPECT_NE(r.output.find(text), std::string::npos) << text << " not in:\n" << r.output;
}

TEST(SlurmCli, RefusedSubmissionAndBadArgumentsSayWhy) {
  Scratch s("slurm-bad");
  s.write("bin/sbatch", "#!/bin/sh\necho 'sbatch: error: invalid partition specified: nope' >&2\nexit 1\n");
  fs::permissions(s.path("bin/sbatch"), fs::perms::owner_all);
  s.set_env("PATH", s.path("bin") + ":" + std::getenv("PATH"));
  auto refused = s.kbv(slurm_args(s));
  EXPECT_EQ(refused.exit_code, 1);
  EXPECT_NE(refused.output.find("invalid partition"), std::string::npos) << refused.output;

  auto no_runs = s.kbv({"slurm", "--shards", "2", "--db", s.path("all.db"), "--", "--problems", "suite"});
  EXPECT_EQ(no_runs.exit_code, 2) << no_runs.output;
  auto own_db = s.kbv({"slurm", "--shards", "2", "--db", s.path("all.db"), "--", "--problems", "p", "--runs", "r", "--db", "x.db"});
  EXPECT_EQ(own_db.exit_code, 2) << own_db.output;
  EXPECT_NE(own_db.output.find("--db after --"), std::string::npos) << own_db.output;
  auto zero = s.kbv({"slurm", "--shards", "0", "--db", s.path("all.db"), "--", "--problems", "p", "--runs", "r"});
  EXPECT_EQ(zero.exit_code, 2) << zero.output;
}

}  // namespace
}  // namespace kbv::testing
