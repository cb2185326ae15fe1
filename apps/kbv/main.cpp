// kbv: KernelBench-Verified in C++. The CLI is torch-free; evaluations run in kbv-worker
// children (see src/orchestrate/evaluation_run.hpp).
#include <unistd.h>

#include <algorithm>
#include <csignal>
#include <functional>
#include <optional>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <random>

#include <CLI/CLI.hpp>

#include "core/defaults.hpp"
#include "core/errors.hpp"
#include "core/job.hpp"
#include "core/protocol.hpp"
#include "core/version.hpp"
#include "generate/generate_command.hpp"
#include "orchestrate/audit_command.hpp"
#include "orchestrate/device_lock.hpp"
#include "orchestrate/device_spec.hpp"
#include "orchestrate/evaluation_run.hpp"
#include "orchestrate/host.hpp"
#include "orchestrate/option_checks.hpp"
#include "orchestrate/run_command.hpp"
#include "orchestrate/merge_command.hpp"
#include "orchestrate/shard.hpp"
#include "orchestrate/slurm_command.hpp"
#include "report/report_command.hpp"
#include "report/verdict_text.hpp"
#include "scan/check_command.hpp"

namespace fs = std::filesystem;

namespace {

std::uint64_t fresh_secret() {
  std::random_device rd;
  return (static_cast<std::uint64_t>(rd()) << 32) ^ rd();
}

void require_file(const std::string& path, const char* what) {
  if (!fs::is_regular_file(path))
    throw kbv::UsageError(std::string(what) + " '" + path + "' is not a readable file");
}

struct EvalOptions {
  std::string problem;
  std::vector<std::string> candidates;
  std::string protocol = "verified";
  std::string precision = "fp32";
  std::string device = "auto";
  std::string size = "auto";
  std::string json_path;
  std::string jsonl_path;
  std::string build_dir;
  std::optional<double> tolerance;
  double compile_timeout = kbv::defaults::kCompileTimeoutSeconds;
  double run_timeout = kbv::defaults::kRunTimeoutSeconds;
  double sandbox_memory_gib = kbv::defaults::kSandboxMemoryGiB;
  double time_budget = kbv::defaults::kEvalTimeBudgetSeconds;
  bool no_timing = false;
  std::string hidden_test;
  bool torch_compile = false;
  bool quiet = false;
  std::vector<std::string> hide_from_candidates;  // the batch's other folders (the Python API's)
};

// Every value that cannot work is a usage error before the worker starts.
void check_eval_options(const EvalOptions& o) {
  require_file(o.problem, "problem");
  for (const auto& candidate : o.candidates) require_file(candidate, "candidate");
  if (!o.json_path.empty() && o.candidates.size() > 1)
    throw kbv::UsageError("--json writes one verdict; with " + std::to_string(o.candidates.size()) +
                          " candidates use --jsonl (one verdict per line, in their order)");
  if (!o.hidden_test.empty()) require_file(o.hidden_test, "--hidden-test");
  kbv::protocol_by_name(o.protocol);      // validates
  kbv::precision_from_name(o.precision);  // validates
  kbv::check_positive("--compile-timeout", o.compile_timeout);
  kbv::check_positive("--run-timeout", o.run_timeout);
  kbv::check_positive("--time-budget", o.time_budget);
  if (o.tolerance) kbv::check_non_negative("--tolerance", *o.tolerance);
  if (!o.json_path.empty()) kbv::check_output_writable("--json", o.json_path);
  if (!o.jsonl_path.empty()) kbv::check_output_writable("--jsonl", o.jsonl_path);
  if (!o.build_dir.empty()) kbv::check_folder_writable("--build-dir", o.build_dir);
  for (const auto& folder : o.hide_from_candidates)
    if (!fs::is_directory(folder)) throw kbv::UsageError("--hide-from-candidates: '" + folder + "' is not a folder");
}

// What no candidate of this batch may see into: every candidate's folder, and the folders the
// caller names (a Python batch split over several kbv processes names all of its own).
std::vector<std::string> batch_folders(const EvalOptions& o) {
  std::vector<std::string> folders;
  auto add = [&](const fs::path& folder) {
    const std::string f = fs::absolute(folder).lexically_normal().string();
    if (std::find(folders.begin(), folders.end(), f) == folders.end()) folders.push_back(f);
  };
  for (const auto& candidate : o.candidates) {
    add(fs::absolute(candidate).parent_path());
    std::error_code ec;  // a linked file: where it really lies, too
    if (const fs::path real = fs::weakly_canonical(fs::absolute(candidate), ec); !ec) add(real.parent_path());
  }
  for (const auto& folder : o.hide_from_candidates) add(folder);
  return folders;
}

// The evaluation of `candidate` as `o` says, with a fresh secret.
kbv::EvaluationRun eval_run(const EvalOptions& o, const std::string& candidate, const std::vector<std::string>& argv,
                            const std::string& device) {
  kbv::EvaluationRun run;
  run.worker_path = kbv::find_worker_executable();
  run.argv = argv;
  auto& job = run.job;
  job.problem_path = fs::absolute(o.problem).string();
  job.candidate_path = fs::absolute(candidate).string();
  job.batch_folders = batch_folders(o);
  job.protocol = o.protocol;
  job.precision = o.precision;
  job.device = device;
  job.size = o.size == "auto" ? (job.device == "cpu" ? "small" : "default") : o.size;
  job.build_root = o.build_dir.empty() ? kbv::default_cache_dir() + "/builds" : o.build_dir;
  job.secret = fresh_secret();
  job.tolerance = o.tolerance;
  job.timing.enabled = !o.no_timing;
  job.timing.budget_seconds = o.time_budget;
  job.timing.torch_compile = o.torch_compile;
  if (!o.hidden_test.empty()) job.hidden_tests_path = fs::absolute(o.hidden_test).string();
  job.sandbox_memory_bytes = static_cast<std::int64_t>(o.sandbox_memory_gib * (1LL << 30));
  run.limits.compile_timeout_seconds = o.compile_timeout;
  run.limits.run_timeout_seconds = o.run_timeout;
  return run;
}

kbv::Verdict turn_not_taken(const kbv::EvaluationRun& run, const std::string& reason) {
  kbv::Verdict verdict;
  verdict.protocol = run.job.protocol;
  verdict.outcome = kbv::Outcome::internal_error;
  verdict.reason = reason;
  return verdict;
}

// One candidate: one judge, as always.
kbv::Verdict eval_one(kbv::EvaluationRun run, bool quiet) {
  // Other kbv processes' evaluations on this device take turns with this one (device_lock.hpp).
  kbv::EvalDeviceTurn turn = kbv::take_eval_turn(run, quiet ? nullptr : &std::cerr);
  if (turn.gave_up) return turn_not_taken(run, *turn.gave_up);
  kbv::Verdict verdict = kbv::run_evaluation(run);
  if (auto why = turn.gave_up_reason(run.job.device); why && verdict.outcome == kbv::Outcome::internal_error) verdict.reason = *why;
  return verdict;
}

// Several candidates of one problem: one judge kept warm across them (run_evaluation_batch), the
// device's turn taken once per candidate (take_batch_turns). A candidate the judge never began (it
// ended after one it could not say was wholly gone) goes to a fresh judge with the rest. `done(i,
// verdict)` as each is known.
void eval_batch(std::vector<kbv::EvaluationRun> runs, bool quiet, const std::function<void(std::size_t, kbv::Verdict)>& done) {
  std::vector<std::size_t> pending(runs.size());
  for (std::size_t i = 0; i < runs.size(); ++i) pending[i] = i;
  while (!pending.empty()) {
    std::vector<kbv::EvaluationRun> round;
    for (auto i : pending) round.push_back(runs[i]);
    kbv::EvalDeviceTurn turn = kbv::take_batch_turns(round, quiet ? nullptr : &std::cerr);
    if (turn.gave_up) {
      for (auto i : pending) done(i, turn_not_taken(runs[i], *turn.gave_up));
      return;
    }
    const std::string& device = round.front().job.device;
    std::vector<std::size_t> left;
    auto results = kbv::run_evaluation_batch(round, [&](std::size_t k, const std::vector<kbv::Verdict>& verdicts) {
      kbv::Verdict v = verdicts.front();
      if (auto why = turn.gave_up_reason(device); why && v.outcome == kbv::Outcome::internal_error) v.reason = *why;
      done(pending[k], std::move(v));
    });
    for (std::size_t k = 0; k < results.size(); ++k)
      if (results[k].empty()) left.push_back(pending[k]);
    // The device stayed another's past the wait's limit: the rest would wait as long again.
    if (auto why = turn.gave_up_reason(device)) {
      for (auto i : left) done(i, turn_not_taken(runs[i], *why));
      return;
    }
    pending = std::move(left);
  }
}

int run_eval(const EvalOptions& o, const std::vector<std::string>& argv) {
  check_eval_options(o);
  std::string device = kbv::normalize_device(o.device);
  if (device == "auto") {
    device = kbv::default_device();
    if (device == "cpu" && !o.quiet) std::cerr << "kbv: no GPU found; running the CPU path (CPU timing, no device memory)\n";
  }
  std::vector<kbv::EvaluationRun> runs;
  for (const auto& candidate : o.candidates) runs.push_back(eval_run(o, candidate, argv, device));

  // Verdicts are printed and written in the candidates' order, each as soon as those before it are.
  std::ofstream jsonl;
  if (!o.jsonl_path.empty()) jsonl.open(o.jsonl_path, std::ios::trunc);
  std::vector<std::optional<kbv::Verdict>> verdicts(runs.size());
  std::size_t written = 0;
  auto done = [&](std::size_t i, kbv::Verdict verdict) {
    verdict.limits = kbv::VerdictLimits{o.compile_timeout, o.run_timeout};
    verdicts[i] = std::move(verdict);
    for (; written < verdicts.size() && verdicts[written]; ++written) {
      if (!o.quiet) std::cout << kbv::format_verdict(*verdicts[written]) << std::flush;
      if (jsonl.is_open()) {
        jsonl << nlohmann::json(*verdicts[written]).dump() << "\n" << std::flush;
        if (!jsonl) throw std::runtime_error("could not write '" + o.jsonl_path + "' (disk full?)");
      }
    }
  };
  if (runs.size() == 1) done(0, eval_one(runs.front(), o.quiet));
  else eval_batch(runs, o.quiet, done);
  if (!o.json_path.empty()) {
    std::ofstream out(o.json_path);
    out << nlohmann::json(*verdicts.front()).dump(2) << "\n";
    if (!out) throw std::runtime_error("could not write '" + o.json_path + "' (disk full?)");
  }
  return 0;
}

// CLI11 reports its own parse errors with codes 104-114; every usage error of kbv exits 2.
int exit_for_parse_error(const CLI::App& app, const CLI::ParseError& err) {
  int code = app.exit(err);  // prints the message (and "Run with --help for more information.")
  return code == 0 ? 0 : 2;  // --help and --version are successes
}

void check_generate_options(const kbv::gen::GenerateOptions& g) {
  kbv::check_at_least_one("--samples", g.samples);
  kbv::check_at_least_one("--concurrency", g.concurrency);
  kbv::check_at_least_one("--max-tokens", g.max_tokens);
  kbv::check_non_negative("--temperature", g.temperature);
  kbv::check_positive("--timeout", g.timeout_seconds);
  kbv::check_positive("--connect-timeout", g.connect_timeout_seconds);
  kbv::check_non_negative("--backoff", g.backoff_base_seconds);
  kbv::check_non_negative("--backoff-max", g.backoff_max_seconds);
  if (g.retries < 0) throw kbv::UsageError("--retries " + std::to_string(g.retries) + " must be 0 or more");
}

}  // namespace

int main(int argc, char** argv) {
  // A worker that dies closes its pipes; writing to them must not kill kbv.
  std::signal(SIGPIPE, SIG_IGN);
  std::vector<std::string> args(argv, argv + argc);

  CLI::App app{"kbv: is an LLM-written GPU kernel correct, really faster than realistic PyTorch, "
               "and no hungrier for memory?"};
  app.set_version_flag("--version", std::string("kbv ") + kbv::kVersion + " (" + kbv::kGitCommit + ")");
  app.require_subcommand(1);

  EvalOptions eval;
  auto* e = app.add_subcommand("eval", "Evaluate candidates (ModelNew) against one problem (Model)");
  e->add_option("problem", eval.problem, "KernelBench problem file (defines Model, get_inputs, get_init_inputs)")->required();
  e->add_option("candidates", eval.candidates,
                "Candidate files (define ModelNew); several are evaluated one after the other by one judge kept warm")
      ->required();
  e->add_option("--protocol", eval.protocol, "standard | verified | strict")->capture_default_str()
      ->check(CLI::IsMember({"standard", "verified", "strict"}));
  e->add_option("--precision", eval.precision, "fp32 | bf16 | fp16")->capture_default_str()
      ->check(CLI::IsMember({"fp32", "bf16", "fp16"}));
  e->add_option("--device", eval.device, "cuda:N | cuda | cpu | auto (a GPU when one is present)")->capture_default_str();
  e->add_option("--size", eval.size, "default | small (the problem's KBV_SMALL) | auto (small on the CPU)")
      ->capture_default_str()->check(CLI::IsMember({"auto", "default", "small"}));
  e->add_option("--json", eval.json_path, "Also write the verdict as JSON (schema: docs/verdict-schema.md); one candidate only");
  e->add_option("--jsonl", eval.jsonl_path, "Also write the verdicts as JSON Lines, one per candidate in their order, each as it is known");
  e->add_option("--build-dir", eval.build_dir, "Where candidate extensions are built (default $KBV_CACHE/builds or ~/.cache/kbv/builds)");
  e->add_option("--tolerance", eval.tolerance, "atol = rtol, overriding the protocol's (1e-3 fp32, 1e-2 bf16/fp16)");
  e->add_option("--compile-timeout", eval.compile_timeout, "Seconds allowed to import the candidate and build its extensions")->capture_default_str();
  e->add_option("--run-timeout", eval.run_timeout, "Seconds allowed for everything else")->capture_default_str();
  e->add_option("--time-budget", eval.time_budget, "Seconds of timing before giving up on a +-1% CI")->capture_default_str();
  e->add_flag("--no-timing", eval.no_timing, "Check correctness only");
  e->add_option("--hidden-test", eval.hidden_test,
                "KernelBench-Verified hidden-test file ({id}_hidden.py, get_hidden_inputs()): its inputs are checked too");
  e->add_flag("--torch-compile", eval.torch_compile,
              "Also time torch.compile(Model) as a baseline (its first call, ~10 s on an H200, is reported apart)");
  e->add_option("--sandbox-memory", eval.sandbox_memory_gib, "GiB of host memory the candidate's sandbox may use (0: no limit)")
      ->capture_default_str()->check(CLI::NonNegativeNumber);
  e->add_flag("--quiet", eval.quiet, "Print nothing; use with --json or --jsonl");
  e->add_option("--hide-from-candidates", eval.hide_from_candidates,
                "Folders no candidate's sandbox may see into (beside every candidate's own folder): the rest of a batch "
                "split over several kbv processes; repeat for several");

  kbv::RunOptions runopt;
  auto* rn = app.add_subcommand("run", "Evaluate every candidate of a runs folder into the results DB (resumable)");
  rn->add_option("--problems", runopt.problems_dir, "KernelBench-layout suite: level1/{id}_{Name}.py ...")->required();
  rn->add_option("--runs", runopt.runs_dir, "Runs folder: {run}/level_L_problem_P_sample_S_kernel.py (or one run folder)")->required();
  rn->add_option("--db", runopt.db_path, "Results DB (SQLite); a re-run resumes")->capture_default_str();
  rn->add_option("--protocol", runopt.protocols, "standard | verified | strict; repeat or comma-separate for several")
      ->delimiter(',')->check(CLI::IsMember({"standard", "verified", "strict"}));
  rn->add_option("--precision", runopt.precision, "fp32 | bf16 | fp16")->capture_default_str()
      ->check(CLI::IsMember({"fp32", "bf16", "fp16"}));
  std::vector<std::string> run_devices;
  rn->add_option("--device", run_devices, "Devices: cuda:N (repeat or comma-separate), cuda, cpu, auto (default: every GPU, else the CPU)")
      ->delimiter(',');
  // The older spelling, still accepted (kbv run --gpus 0,1); not in --help.
  rn->add_option("--gpus", run_devices, "Same as --device")->delimiter(',')->group("");
  rn->add_option("--jobs", runopt.jobs, "Parallel builds (default: the number of cores)");
  std::optional<int> run_level;
  rn->add_option("--level", run_level, "Only candidates of this level");
  std::vector<int> run_ids;
  rn->add_option("--ids", run_ids, "Only these problem ids, e.g. 1,2,19")->delimiter(',');
  std::vector<std::string> run_names;
  rn->add_option("--run", run_names, "Only these runs (runs/<run> folder names); repeat or comma-separate")->delimiter(',');
  std::string run_shard;
  rn->add_option("--shard", run_shard,
                 "I/N: only shard I of N (0 <= I < N), a stable partition by candidate (docs/scale.md); one --db per shard");
  rn->add_option("--hidden-tests", runopt.hidden_tests_dir,
                 "KernelBench-Verified hidden_tests folder: level<L>/<id>_hidden.py inputs are checked too");
  rn->add_flag("--torch-compile", runopt.torch_compile,
               "Also time torch.compile(Model) as a baseline (off by default: its first call costs ~10 s an evaluation on an H200)");
  rn->add_option("--torch-pch", runopt.torch_pch,
                 "Precompile torch/extension.h for the builds: auto (GPU runs with 4 or more sources to build), on, off")
      ->capture_default_str()->check(CLI::IsMember({"auto", "on", "off"}));
  rn->add_option("--prestart", runopt.prestart,
                 "Judges started ahead per GPU: their start-up (interpreters, sandboxes) runs while the device evaluates "
                 "another candidate, and each waits for its turn; -1: 2 on a GPU, 0 on the CPU")
      ->capture_default_str();
  rn->add_flag("--sandbox-per-protocol", runopt.sandbox_per_protocol,
               "Each protocol of a candidate in a judge and sandbox of its own (by default one sandbox serves all of them, "
               "strict first): slower; for comparisons");
  auto* overlap_on = rn->add_flag_callback("--overlap-builds", [&] { runopt.overlap_builds = true; },
                                           "Evaluate each candidate as soon as its build ends while the others build (niced, "
                                           "without the GPU; the default on a GPU with Landlock ABI 5: 1.36x the cold verdicts an "
                                           "hour on the H200, bench/RESULTS.md); with this flag kbv says why when it cannot");
  rn->add_flag_callback("--no-overlap-builds", [&] { runopt.overlap_builds = false; }, "Build every candidate before evaluating any")
      ->excludes(overlap_on);
  rn->add_flag("--list", runopt.list, "Print what would be evaluated (and what the DB already holds), evaluate nothing");
  rn->add_option("--store-wait", runopt.store_wait,
                 "Seconds to keep retrying a failing DB write before stopping (verdicts then go to <db>.spill.jsonl)")
      ->capture_default_str();
  rn->add_option("--size", runopt.size, "default | small | auto (small on the CPU)")->capture_default_str()
      ->check(CLI::IsMember({"auto", "default", "small"}));
  rn->add_option("--build-dir", runopt.build_dir, "Build cache (default $KBV_CACHE/builds or ~/.cache/kbv/builds)");
  rn->add_option("--time-budget", runopt.time_budget, "Seconds of timing per evaluation")->capture_default_str();
  rn->add_option("--compile-timeout", runopt.compile_timeout, "Seconds per candidate build")->capture_default_str();
  rn->add_option("--run-timeout", runopt.run_timeout, "Seconds per evaluation after the build")->capture_default_str();
  rn->add_option("--sandbox-memory", runopt.sandbox_memory_gib, "GiB of host memory each candidate's sandbox may use (0: no limit)")
      ->capture_default_str()->check(CLI::NonNegativeNumber);
  rn->add_flag("--quiet", runopt.quiet, "No progress output");

  kbv::MergeOptions merge;
  auto* mg = app.add_subcommand("merge", "Merge results DBs (e.g. kbv run --shard DBs) into OUT by natural key; idempotent (docs/scale.md)");
  mg->add_option("out", merge.out_db, "The merged DB (created when missing)")->required();
  mg->add_option("inputs", merge.inputs, "DBs to merge in (read only, never written)")->required();
  mg->add_flag("--quiet", merge.quiet, "Print only conflicts");

  kbv::SlurmOptions slurm;
  auto* sl = app.add_subcommand("slurm", "Write and submit a Slurm job array of kbv run --shard I/N and a dependent kbv merge "
                                         "(kbv slurm --shards N --db OUT -- <kbv run arguments>)");
  sl->add_option("--shards", slurm.shards, "Shards: array tasks 0..N-1, one DB each")->required();
  sl->add_option("--db", slurm.db, "The merged DB the merge job writes")->required();
  sl->add_option("--work-dir", slurm.work_dir, "Scripts, shard DBs and logs (default <db>.slurm)");
  sl->add_option("--partition", slurm.partition, "sbatch --partition");
  sl->add_option("--time", slurm.time_limit, "sbatch --time for each job");
  sl->add_option("--gpus-per-shard", slurm.gpus_per_shard, "sbatch --gres=gpu:N for each shard (kbv run uses what Slurm makes visible)");
  sl->add_option("--cpus-per-shard", slurm.cpus_per_shard, "sbatch --cpus-per-task for each shard (parallel builds)");
  sl->add_option("--sbatch-option", slurm.sbatch_options, "One more #SBATCH line for the shards, e.g. --sbatch-option=--account=x");
  sl->add_flag("--dry-run", slurm.dry_run, "Print the scripts and the sbatch commands; submit nothing");
  sl->add_option("run-args", slurm.run_args, "After --: the kbv run arguments (--problems, --runs, --protocol...), without --db")
      ->required();

  kbv::AuditOptions audit;
  auto* au = app.add_subcommand("audit", "Check problems alone: finite reference, some distribution discriminates (not degenerate)");
  au->add_option("paths", audit.paths, "Problem files or suites (folders with level1/...)")->required();
  au->add_option("--device", audit.device, "cuda:N | cuda | cpu | auto")->capture_default_str();
  au->add_option("--size", audit.size, "default | small | auto (small on the CPU)")->capture_default_str()
      ->check(CLI::IsMember({"auto", "default", "small"}));
  au->add_option("--precision", audit.precision, "fp32 | bf16 | fp16")->capture_default_str()
      ->check(CLI::IsMember({"fp32", "bf16", "fp16"}));
  au->add_option("--jobs", audit.jobs, "Problems audited at once")->capture_default_str();
  au->add_option("--json", audit.json_path, "Also write every problem's audit verdict as JSON");

  kbv::ReportCommand report;
  auto* r = app.add_subcommand("report", "Leaderboard from a results DB: Markdown on stdout, --html/--csv/--json side by side");
  r->add_option("--db", report.db, "Results DB written by `kbv run`");
  r->add_option("--md", report.md, "Write the Markdown here instead of stdout");
  r->add_option("--html", report.html, "Also write one self-contained HTML file (plots, sortable tables)");
  r->add_option("--csv", report.csv, "Also write every verdict as CSV (columns: docs/store.md)");
  r->add_option("--json", report.json, "Also write the report as JSON (docs/report.md)");
  r->add_option("--protocol", report.protocol, "Headline protocol (default: the strictest in the DB)");
  r->add_flag("--fields", report.fields, "Print the result-field table and exit");
  r->add_flag("--quiet", report.quiet, "No Markdown on stdout");

  kbv::ExportCommand exp;
  auto* x = app.add_subcommand("export", "Write KernelBench's eval_results.json (and KernelBench-Verified's eval_results_hidden.json) at DIR/<run>/, one level per file (docs/report.md)");
  x->add_option("--db", exp.db, "Results DB written by `kbv run`")->required();
  x->add_option("--out", exp.out, "Output folder")->required();
  x->add_option("--protocol", exp.protocol, "Protocol of eval_results.json (default: the strictest in the DB; standard for kernelbench-verified)");
  x->add_option("--format", exp.format, "kernelbench | kernelbench-verified (flat {pid}_{sid} keys, peak_memory, eval_results_hidden.json)")
      ->capture_default_str();
  x->add_option("--level", exp.level, "Only this level: KernelBench's file holds one, so a run of several levels is exported one at a time");
  x->add_flag("--force", exp.force, "Replace eval_results.json files kbv did not write (KernelBench's own); refused without it");

  kbv::scan::CheckCommand check;
  auto* c = app.add_subcommand("check", "Static scan of candidates for known hacks, without importing them (docs/static-scan.md)");
  c->add_option("files", check.paths, "Candidate .py files (or folders of them; .cu/.cpp sources too)")->required();
  c->add_option("--json", check.json, "Also write every finding as JSON");
  c->add_flag("--quiet", check.quiet, "Print only the per-rule summary");

  kbv::gen::GenerateOptions gen;
  std::string gen_db = "kbv.db";
  std::vector<std::string> gen_protocols = {"verified"};
  bool gen_then_run = false;
  auto* g = app.add_subcommand("generate", "Ask an LLM API for kernels, one prompt per problem and sample, into runs/<run>/ (resumable; docs/generate.md)");
  g->add_option("--problems", gen.problems_dir, "KernelBench-layout suite: level1/{id}_{Name}.py ...")->required();
  g->add_option("--level", gen.level, "Only this level (default: all)");
  g->add_option("--ids", gen.ids, "Only these problem ids, e.g. 1,2,19")->delimiter(',');
  g->add_option("--model", gen.model, "Model name as the API knows it")->required();
  g->add_option("--provider", gen.provider, "openai (Chat Completions, any compatible server) | anthropic (Messages)")
      ->capture_default_str()->check(CLI::IsMember({"openai", "anthropic"}));
  g->add_option("--endpoint", gen.endpoint, "API base URL (default https://api.openai.com/v1 or https://api.anthropic.com/v1)");
  g->add_option("--api-key-env", gen.api_key_env, "Environment variable holding the key (default OPENAI_API_KEY / ANTHROPIC_API_KEY)");
  g->add_option("--samples", gen.samples, "Samples per problem (sample ids 0..K-1)")->capture_default_str();
  g->add_option("--temperature", gen.temperature, "Sampling temperature")->capture_default_str();
  g->add_option("--max-tokens", gen.max_tokens, "Completion token limit per answer")->capture_default_str();
  g->add_option("--concurrency", gen.concurrency, "Requests in flight at most")->capture_default_str();
  g->add_option("--run", gen.run, "Run folder name under --runs-dir (e.g. the model's name)")->required();
  g->add_option("--runs-dir", gen.runs_dir, "Runs folder")->capture_default_str();
  g->add_option("--precision", gen.precision, "fp32 | bf16 (adds the bf16 note to the prompt)")->capture_default_str()
      ->check(CLI::IsMember({"fp32", "bf16"}));
  g->add_flag("--input-blind", gen.input_blind, "Hide get_inputs, get_init_inputs, KBV_SMALL and shape constants from the prompt");
  g->add_option("--prompts", gen.prompts_dir, "Prompt templates folder (default $KBV_PROMPTS or the source tree's prompts/)");
  g->add_option("--timeout", gen.timeout_seconds, "Seconds per request")->capture_default_str();
  g->add_option("--connect-timeout", gen.connect_timeout_seconds, "Seconds to connect per request")->capture_default_str();
  g->add_option("--retries", gen.retries, "Retries per sample on 429, 5xx, connection errors, timeouts, malformed bodies")->capture_default_str();
  g->add_option("--backoff", gen.backoff_base_seconds, "First retry wait in seconds; doubles per retry, jittered x0.5-1.5 (Retry-After wins when longer)")->capture_default_str();
  g->add_option("--backoff-max", gen.backoff_max_seconds, "Cap of the back-off in seconds")->capture_default_str();
  g->add_flag("--retry-failures", gen.retry_failures, "Ask again for samples that have a _failure.json");
  g->add_flag("--then-run", gen_then_run, "Then `kbv run` the run folder into --db and print `kbv report`");
  g->add_option("--db", gen_db, "Results DB for --then-run")->capture_default_str();
  g->add_option("--protocol", gen_protocols, "Protocols for --then-run (standard | verified | strict)")
      ->delimiter(',')->check(CLI::IsMember({"standard", "verified", "strict"}));
  g->add_flag("--quiet", gen.quiet, "No progress output");

  try {
    app.parse(argc, argv);
    if (*e) return run_eval(eval, args);
    if (*au) {
      audit.device = kbv::normalize_device(audit.device);
      kbv::check_at_least_one("--jobs", audit.jobs);
      kbv::check_positive("--timeout", audit.timeout);
      if (!audit.json_path.empty()) kbv::check_output_writable("--json", audit.json_path);
      return kbv::run_audit_command(audit, std::cout);
    }
    if (*rn) {
      runopt.devices = kbv::normalize_devices(run_devices);
      if (rn->count("--jobs")) kbv::check_at_least_one("--jobs", runopt.jobs);
      if (run_level) kbv::check_at_least_one("--level", *run_level);
      runopt.filter.level = run_level;
      runopt.filter.problem_ids.insert(run_ids.begin(), run_ids.end());
      runopt.filter.runs.insert(run_names.begin(), run_names.end());
      if (!run_shard.empty()) runopt.filter.shard = kbv::parse_shard(run_shard);
      return kbv::run_command(runopt, args, std::cout);
    }
    if (*mg) return kbv::run_merge_command(merge, std::cout);
    if (*sl) return kbv::run_slurm_command(slurm, std::cout);
    if (*c) {
      if (!check.json.empty()) kbv::check_output_writable("--json", check.json);
      return kbv::scan::run_check_command(check, std::cout);
    }
    if (*r) {
      for (const auto& [flag, path] : {std::pair{"--md", report.md}, {"--html", report.html}, {"--csv", report.csv},
                                       {"--json", report.json}})
        if (!path.empty()) kbv::check_output_writable(flag, path);
      report.spill_fallback_dir = kbv::spill_fallback_dir();
      return kbv::run_report_command(report, std::cout);
    }
    if (*x) return kbv::run_export_command(exp, std::cout);
    if (*g) {
      check_generate_options(gen);
      int rc = kbv::gen::run_generate_command(gen, std::cout);
      if (rc != 0 || !gen_then_run) return rc;
      // --then-run: evaluate the run folder just written, then the leaderboard of the DB.
      kbv::RunOptions ro;
      ro.problems_dir = gen.problems_dir;
      ro.runs_dir = (fs::path(gen.runs_dir) / gen.run).string();
      ro.db_path = gen_db;
      ro.protocols = gen_protocols;
      ro.precision = gen.precision;
      ro.quiet = gen.quiet;
      rc = kbv::run_command(ro, args, std::cout);
      if (rc != 0) return rc;
      kbv::ReportCommand rep;
      rep.db = gen_db;
      rep.spill_fallback_dir = kbv::spill_fallback_dir();
      return kbv::run_report_command(rep, std::cout);
    }
  } catch (const CLI::ParseError& err) {
    return exit_for_parse_error(app, err);
  } catch (const kbv::UsageError& err) {
    std::cerr << "kbv: " << err.what() << "\n";
    return 2;
  } catch (const std::exception& err) {
    std::cerr << "kbv: " << err.what() << "\n";
    return 1;
  }
  return 0;
}
