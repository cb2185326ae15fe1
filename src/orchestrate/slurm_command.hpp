#pragma once
// `kbv slurm --shards N --db OUT [sbatch choices] [--dry-run] -- <kbv run arguments>`: writes
// the shard array and merge scripts (slurm_script.hpp) under --work-dir and submits them with
// sbatch (the merge with --dependency=afterok on the array), or with --dry-run only prints
// them. Slurm does the scheduling; kbv only partitions the work (shard.hpp) and merges.
#include <iosfwd>
#include <string>
#include <vector>

namespace kbv {

struct SlurmOptions {
  int shards = 2;
  std::string db;                 // the merged DB
  std::string work_dir;           // default: <db>.slurm
  std::string partition;
  std::string time_limit;
  int gpus_per_shard = 0;
  int cpus_per_shard = 0;
  std::vector<std::string> sbatch_options;
  std::vector<std::string> run_args;  // after `--`
  bool dry_run = false;
};

// Throws UsageError for options that cannot work (before writing or submitting anything);
// returns 0, or 1 when sbatch refuses a job (its message printed).
int run_slurm_command(const SlurmOptions& options, std::ostream& out);

}  // namespace kbv
