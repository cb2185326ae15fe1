#include "orchestrate/slurm_script.hpp"

#include <fmt/format.h>

namespace kbv {
namespace {

std::string sbatch_header(const SlurmPlan& p, const std::string& job_name, const std::string& log) {
  std::string h = "#!/bin/bash\n";
  h += fmt::format("#SBATCH --job-name={}\n#SBATCH --output={}\n#SBATCH --chdir={}\n", job_name, log, p.submit_dir);
  if (!p.partition.empty()) h += "#SBATCH --partition=" + p.partition + "\n";
  if (!p.time_limit.empty()) h += "#SBATCH --time=" + p.time_limit + "\n";
  return h;
}

}  // namespace

std::string shell_quoted(const std::string& word) {
  bool plain = !word.empty() && word.find_first_not_of("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789"
                                                        "_-+=/.,:@%") == std::string::npos;
  if (plain) return word;
  std::string out = "'";
  for (char c : word) out += c == '\'' ? std::string("'\\''") : std::string(1, c);
  return out + "'";
}

std::string shard_db_path(const std::string& work_dir, int index, int count) {
  return fmt::format("{}/kbv-shard-{}-of-{}.db", work_dir, index, count);
}

std::string shard_array_script(const SlurmPlan& p) {
  std::string s = sbatch_header(p, "kbv-shards", fmt::format("{}/shard-%a-of-{}.log", p.work_dir, p.shards));
  s += fmt::format("#SBATCH --array=0-{}\n", p.shards - 1);
  if (p.gpus_per_shard > 0) s += fmt::format("#SBATCH --gres=gpu:{}\n", p.gpus_per_shard);
  if (p.cpus_per_shard > 0) s += fmt::format("#SBATCH --cpus-per-task={}\n", p.cpus_per_shard);
  for (const auto& o : p.sbatch_options) s += "#SBATCH " + o + "\n";
  s += fmt::format(
      "# Written by kbv slurm: task I evaluates shard I of {0} into its own DB; the merge job then\n"
      "# joins them into {1}. Slurm's CUDA_VISIBLE_DEVICES (with --gres=gpu) is respected by kbv run.\n"
      "set -euo pipefail\n"
      "i=\"${{SLURM_ARRAY_TASK_ID:?submit this script with sbatch (it is a job array)}}\"\n"
      "exec {2} run",
      p.shards, p.merged_db, shell_quoted(p.kbv_exe));
  for (const auto& a : p.run_args) s += " " + shell_quoted(a);
  s += fmt::format(" --shard \"$i/{0}\" --db {1}\"/kbv-shard-$i-of-{0}.db\"\n", p.shards, shell_quoted(p.work_dir));
  return s;
}

std::string merge_script(const SlurmPlan& p) {
  std::string s = sbatch_header(p, "kbv-merge", p.work_dir + "/merge.log");
  s += fmt::format(
      "# Written by kbv slurm: runs once every shard of the array has ended well (afterok). Merging\n"
      "# again (after a failed shard was rerun) is safe: kbv merge is idempotent.\n"
      "set -euo pipefail\n"
      "exec {} merge {}",
      shell_quoted(p.kbv_exe), shell_quoted(p.merged_db));
  for (int i = 0; i < p.shards; ++i) s += " " + shell_quoted(shard_db_path(p.work_dir, i, p.shards));
  return s + "\n";
}

}  // namespace kbv
