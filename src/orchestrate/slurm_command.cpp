#include "orchestrate/slurm_command.hpp"

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <ostream>

#include <fmt/format.h>

#include "core/errors.hpp"
#include "orchestrate/slurm_script.hpp"
#include "orchestrate/subprocess.hpp"

namespace fs = std::filesystem;

namespace kbv {
namespace {

bool has_flag(const std::vector<std::string>& args, const std::string& flag) {
  return std::any_of(args.begin(), args.end(), [&](const std::string& a) { return a == flag || a.rfind(flag + "=", 0) == 0; });
}

void check_slurm_options(const SlurmOptions& o) {
  if (o.shards < 1) throw UsageError(fmt::format("--shards {} must be at least 1", o.shards));
  if (o.db.empty()) throw UsageError("--db: the merged DB's path is needed");
  for (const char* need : {"--problems", "--runs"})
    if (!has_flag(o.run_args, need))
      throw UsageError(fmt::format("kbv run's arguments (after --) need {}: kbv slurm -- --problems DIR --runs DIR ...", need));
  for (const char* own : {"--db", "--shard", "--list"})
    if (has_flag(o.run_args, own))
      throw UsageError(fmt::format("{} after -- is kbv slurm's to set (each shard gets --shard I/N and its own --db); leave it out",
                                   own));
  if (o.gpus_per_shard < 0 || o.cpus_per_shard < 0) throw UsageError("--gpus-per-shard and --cpus-per-shard must be 0 or more");
}

// #SBATCH lines are split on blanks by sbatch: paths in them must have none.
void check_sbatch_path(const std::string& flag, const std::string& path) {
  if (path.find_first_of(" \t\n\"'") != std::string::npos)
    throw UsageError(fmt::format("{} '{}': #SBATCH lines cannot hold a path with blanks or quotes; pick another folder", flag, path));
}

std::string kbv_executable() {
  std::error_code ec;
  fs::path self = fs::read_symlink("/proc/self/exe", ec);
  if (ec) throw std::runtime_error("cannot tell where kbv is (/proc/self/exe): " + ec.message());
  return self.string();
}

void write_file(const std::string& path, const std::string& text) {
  std::ofstream f(path);
  f << text;
  if (!f) throw std::runtime_error("cannot write '" + path + "'");
  fs::permissions(path, fs::perms::owner_exec | fs::perms::group_exec | fs::perms::others_exec, fs::perm_options::add);
}

// sbatch --parsable prints "<job id>" or "<job id>;<cluster>"; nullopt (and the message on
// stderr) when it refused the job.
std::optional<std::string> submit(const std::vector<std::string>& argv) {
  ProcessSpec spec;
  spec.argv = argv;
  ProcessResult r = run_process(spec, Clock::now() + std::chrono::seconds(120));
  std::string text = r.output_head + r.output_tail;
  std::string last;
  for (std::size_t start = 0; start < text.size();) {
    auto end = text.find('\n', start);
    std::string line = text.substr(start, end == std::string::npos ? std::string::npos : end - start);
    if (!line.empty()) last = line;
    if (end == std::string::npos) break;
    start = end + 1;
  }
  std::string id = last.substr(0, last.find(';'));
  bool numeric = !id.empty() && std::all_of(id.begin(), id.end(), [](unsigned char c) { return std::isdigit(c); });
  if (r.exited && r.exit_code == 0 && numeric) return id;
  std::string command;
  for (const auto& a : argv) command += (command.empty() ? "" : " ") + a;
  std::cerr << fmt::format("kbv slurm: `{}` {}: {}\n", command, r.describe(), text.substr(0, 2000));
  return std::nullopt;
}

}  // namespace

int run_slurm_command(const SlurmOptions& o, std::ostream& out) {
  check_slurm_options(o);
  SlurmPlan plan;
  plan.kbv_exe = kbv_executable();
  plan.shards = o.shards;
  plan.merged_db = fs::absolute(o.db).lexically_normal().string();
  plan.work_dir = fs::absolute(o.work_dir.empty() ? o.db + ".slurm" : o.work_dir).lexically_normal().string();
  plan.submit_dir = fs::current_path().string();
  plan.run_args = o.run_args;
  plan.partition = o.partition;
  plan.time_limit = o.time_limit;
  plan.gpus_per_shard = o.gpus_per_shard;
  plan.cpus_per_shard = o.cpus_per_shard;
  plan.sbatch_options = o.sbatch_options;
  check_sbatch_path("--work-dir", plan.work_dir);
  check_sbatch_path("the current folder", plan.submit_dir);

  const std::string array_path = plan.work_dir + "/shards.sbatch";
  const std::string merge_path = plan.work_dir + "/merge.sbatch";
  const std::string array_text = shard_array_script(plan);
  const std::string merge_text = merge_script(plan);
  const std::vector<std::string> array_submit{"sbatch", "--parsable", "--export=ALL", array_path};
  auto merge_submit = [&](const std::string& array_id) {
    return std::vector<std::string>{"sbatch", "--parsable", "--export=ALL", "--dependency=afterok:" + array_id, merge_path};
  };

  if (o.dry_run) {
    out << "# " << array_path << "\n" << array_text << "\n# " << merge_path << "\n" << merge_text << "\n# kbv slurm would run:\n";
    for (const auto& cmd : {array_submit, merge_submit("<array job id>")}) {
      std::string line;
      for (const auto& a : cmd) line += (line.empty() ? "" : " ") + shell_quoted(a);
      out << line << "\n";
    }
    return 0;
  }

  fs::create_directories(plan.work_dir);
  write_file(array_path, array_text);
  write_file(merge_path, merge_text);
  out << fmt::format("kbv slurm: wrote {} and {}\n", array_path, merge_path);
  auto array_id = submit(array_submit);
  if (!array_id) return 1;
  out << fmt::format("kbv slurm: array job {0}: {1} shard(s), shard I into {2}/kbv-shard-I-of-{1}.db, log {2}/shard-I-of-{1}.log\n",
                     *array_id, o.shards, plan.work_dir);
  out << std::flush;
  auto merge_id = submit(merge_submit(*array_id));
  if (!merge_id) {
    std::cerr << fmt::format("kbv slurm: the shards run (array job {}) but no merge follows them; once they end, run `bash {}`\n",
                             *array_id, merge_path);
    return 1;
  }
  out << fmt::format("kbv slurm: merge job {} (after array job {} ends well) into {}, log {}/merge.log\n", *merge_id, *array_id,
                     plan.merged_db, plan.work_dir);
  out << fmt::format("kbv slurm: array job {}, merge job {}\n", *array_id, *merge_id);
  return 0;
}

}  // namespace kbv
