// kbv slurm's batch scripts: a job array of kbv run --shard, and the merge that follows it.
#include <gtest/gtest.h>
#include <unistd.h>

#include <array>
#include <cstdio>
#include <filesystem>
#include <fstream>

#include "orchestrate/slurm_script.hpp"

namespace fs = std::filesystem;

namespace kbv {
namespace {

SlurmPlan plan(int shards) {
  SlurmPlan p;
  p.kbv_exe = "/opt/kbv/bin/kbv";
  p.shards = shards;
  p.work_dir = "/scratch/w";
  p.merged_db = "/scratch/all.db";
  p.submit_dir = "/home/u";
  p.run_args = {"--problems", "problems", "--runs", "runs", "--protocol", "standard,verified"};
  return p;
}

std::string output_of(const std::string& command) {
  std::string out;
  FILE* f = ::popen(command.c_str(), "r");
  std::array<char, 4096> buf{};
  while (f && std::fgets(buf.data(), buf.size(), f)) out += buf.data();
  if (f) ::pclose(f);
  return out;
}

TEST(SlurmScript, ArrayHasOneTaskPerShardEachWithItsOwnDb) {
  SlurmPlan p = plan(4);
  p.partition = "gpu";
  p.time_limit = "02:00:00";
  p.gpus_per_shard = 1;
  p.sbatch_options = {"--account=kb"};
  std::string s = shard_array_script(p);
  for (const char* line : {"#!/bin/bash\n", "#SBATCH --array=0-3\n", "#SBATCH --partition=gpu\n", "#SBATCH --time=02:00:00\n",
                           "#SBATCH --gres=gpu:1\n", "#SBATCH --account=kb\n", "#SBATCH --chdir=/home/u\n",
                           "#SBATCH --output=/scratch/w/shard-%a-of-4.log\n"})
    EXPECT_NE(s.find(line), std::string::npos) << line << "\nin:\n" << s;
  EXPECT_NE(s.find("exec /opt/kbv/bin/kbv run --problems problems --runs runs --protocol standard,verified --shard \"$i/4\" "
                   "--db /scratch/w\"/kbv-shard-$i-of-4.db\"\n"),
            std::string::npos)
      << s;
  // #SBATCH lines must come before the first command, or sbatch ignores them.
  EXPECT_LT(s.rfind("#SBATCH"), s.find("set -euo pipefail"));
}

TEST(SlurmScript, MergeJoinsEveryShardDbIntoTheMergedDb) {
  std::string s = merge_script(plan(3));
  EXPECT_NE(s.find("exec /opt/kbv/bin/kbv merge /scratch/all.db /scratch/w/kbv-shard-0-of-3.db /scratch/w/kbv-shard-1-of-3.db "
                   "/scratch/w/kbv-shard-2-of-3.db\n"),
            std::string::npos)
      << s;
  EXPECT_EQ(s.find("--array"), std::string::npos);
}

// The script is run by bash on the cluster: every argument must reach kbv as it was given.
TEST(SlurmScript, ArgumentsReachKbvUnchangedThroughBash) {
  fs::path dir = fs::temp_directory_path() / ("kbv-slurm-script-" + std::to_string(::getpid()));
  fs::remove_all(dir);
  fs::create_directories(dir);
  std::string echo = (dir / "print args").string();  // a "kbv" that prints its arguments, one a line
  std::ofstream(echo) << "#!/bin/sh\nfor a in \"$@\"; do printf '[%s]\\n' \"$a\"; done\n";
  fs::permissions(echo, fs::perms::owner_all);
  SlurmPlan p = plan(2);
  p.kbv_exe = echo;
  p.work_dir = (dir / "w").string();
  p.run_args = {"--runs", "a b", "--problems", "it's", "--ids", "$HOME", "--run", "x\"y;z"};
  std::ofstream(dir / "shards.sbatch") << shard_array_script(p);
  std::string out = output_of("SLURM_ARRAY_TASK_ID=1 bash " + (dir / "shards.sbatch").string());
  EXPECT_EQ(out, "[run]\n[--runs]\n[a b]\n[--problems]\n[it's]\n[--ids]\n[$HOME]\n[--run]\n[x\"y;z]\n[--shard]\n[1/2]\n[--db]\n[" +
                     p.work_dir + "/kbv-shard-1-of-2.db]\n");
  // Outside a job array it says so instead of evaluating shard "".
  EXPECT_EQ(output_of("env -u SLURM_ARRAY_TASK_ID bash " + (dir / "shards.sbatch").string() + " 2>&1").find("[run]"),
            std::string::npos);
  fs::remove_all(dir);
}

}  // namespace
}  // namespace kbv
