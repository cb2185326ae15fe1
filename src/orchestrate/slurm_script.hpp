#pragma once
// The two batch scripts of `kbv slurm` (docs/scale.md): a job array whose task I runs
// `kbv run ... --shard I/N --db <work>/kbv-shard-I-of-N.db`, and a merge job, submitted with
// --dependency=afterok:<array job id>, that runs `kbv merge <db> <every shard DB>`. Plain text,
// so `--dry-run` shows exactly what would be submitted and a failed shard can be resubmitted by
// hand (sbatch --array=I <work>/shards.sbatch): each shard resumes from its own DB.
#include <string>
#include <vector>

namespace kbv {

struct SlurmPlan {
  std::string kbv_exe;           // absolute path of kbv on the cluster's shared file system
  int shards = 2;
  std::string work_dir;          // absolute: scripts, shard DBs, logs
  std::string merged_db;         // absolute
  std::string submit_dir;        // absolute: the jobs' working folder (relative paths of run_args)
  std::vector<std::string> run_args;  // `kbv run` arguments, without --db and --shard
  std::string partition;         // sbatch --partition; "" for the default
  std::string time_limit;        // sbatch --time; "" for the partition's
  int gpus_per_shard = 0;        // sbatch --gres=gpu:N; 0 for none
  int cpus_per_shard = 0;        // sbatch --cpus-per-task; 0 for Slurm's default
  std::vector<std::string> sbatch_options;  // more #SBATCH lines for the shard jobs, verbatim
};

// <work_dir>/kbv-shard-<index>-of-<count>.db
std::string shard_db_path(const std::string& work_dir, int index, int count);
std::string shard_array_script(const SlurmPlan& plan);
std::string merge_script(const SlurmPlan& plan);
// One word for bash: single-quoted unless it needs no quotes.
std::string shell_quoted(const std::string& word);

}  // namespace kbv
