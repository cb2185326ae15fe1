#include "generate/generate_command.hpp"

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdlib>
#include <ctime>
#include <exception>
#include <filesystem>
#include <fstream>
#include <mutex>
#include <nlohmann/json.hpp>
#include <ostream>
#include <set>
#include <thread>

#include "core/errors.hpp"
#include "core/utc_time.hpp"
#include "core/version.hpp"
#include "generate/api_dialect.hpp"
#include "generate/code_extract.hpp"
#include "generate/llm_client.hpp"
#include "generate/prompt_builder.hpp"
#include "orchestrate/run_scan.hpp"

namespace fs = std::filesystem;
using nlohmann::json;

namespace kbv::gen {
namespace {

// Every byte kbv writes goes through here: the key must never reach a file, even when a
// server echoes it back.
std::string redact(std::string text, const std::string& key) {
  if (key.empty()) return text;
  for (size_t pos = 0; (pos = text.find(key, pos)) != std::string::npos;)
    text.replace(pos, key.size(), "[redacted]"), pos += 10;
  return text;
}

// Write-then-rename, so a kill mid-write never leaves a partial file that resume would trust.
void write_file(const fs::path& path, const std::string& content, const std::string& key) {
  fs::path tmp = path;
  tmp += ".tmp";
  {
    std::ofstream out(tmp, std::ios::binary | std::ios::trunc);
    if (!out) throw UsageError("cannot write '" + tmp.string() + "'");
    out << redact(content, key);
  }
  fs::rename(tmp, path);
}

struct Task {
  ProblemFile problem;
  int sample = 0;
  std::string prefix;  // run_dir/level_L_problem_P_sample_S
  const std::string* prompt = nullptr;
};

std::string sample_prefix(const fs::path& run_dir, int level, int id, int sample) {
  return (run_dir / ("level_" + std::to_string(level) + "_problem_" + std::to_string(id) +
                     "_sample_" + std::to_string(sample)))
      .string();
}

json optional_long(const std::optional<long>& v) {
  return v ? json(*v) : json(nullptr);
}

// One sample, start to end; returns true when it produced a kernel.
bool generate_sample(const Task& task, const GenerateOptions& o, const ApiDialect& dialect,
                     const std::string& endpoint, const std::string& key, json& meta) {
  write_file(task.prefix + "_prompt.txt", *task.prompt, key);
  RetryPolicy policy;
  policy.retries = o.retries;
  policy.backoff_base_seconds = o.backoff_base_seconds;
  policy.backoff_max_seconds = o.backoff_max_seconds;
  policy.timeout_seconds = o.timeout_seconds;
  policy.connect_timeout_seconds = o.connect_timeout_seconds;
  Completion completion{o.model, *task.prompt, o.temperature, o.max_tokens};

  std::string started = utc_now_iso();
  CallResult call = call_with_retries(dialect, endpoint, key, completion, policy);
  if (!call.raw_body.empty()) write_file(task.prefix + "_response.json", call.raw_body, key);

  std::optional<std::string> code;
  std::string reason = call.failure_reason, detail = call.failure_detail;
  if (call.ok) {
    code = extract_first_code_block(call.reply.text);
    if (!code) {
      reason = "no_code_block";
      detail = call.reply.stop_reason == "length" || call.reply.stop_reason == "max_tokens"
                   ? "the answer was cut at --max-tokens before its code block closed; raise "
                     "--max-tokens"
                   : "the answer holds no fenced code block (see the _response.json)";
    }
  }
  meta = {
      {"level", task.problem.level},
      {"problem_id", task.problem.id},
      {"problem_name", task.problem.name},
      {"sample_id", task.sample},
      {"model", o.model},
      {"provider", dialect.name},
      {"status", code ? "kernel" : "failure"},
      {"reason", code ? json(nullptr) : json(reason)},
      {"detail", code ? json(nullptr) : json(detail)},
      {"http_status", call.http_status},
      {"attempts", call.attempts},
      {"latency_s", call.latency_seconds},
      {"total_s", call.total_seconds},
      {"prompt_tokens", optional_long(call.reply.prompt_tokens)},
      {"completion_tokens", optional_long(call.reply.completion_tokens)},
      {"stop_reason", call.reply.stop_reason},
      {"started_at", started},
      {"finished_at", utc_now_iso()},
  };
  write_file(task.prefix + "_meta.json", meta.dump(2) + "\n", key);
  // The kernel or the failure record goes last: its presence is what resume trusts.
  if (code) {
    write_file(task.prefix + "_kernel.py", *code, key);
  } else {
    json failure = {{"reason", reason},
                    {"detail", detail},
                    {"http_status", call.http_status},
                    {"attempts", call.attempts},
                    {"stop_reason", call.reply.stop_reason},
                    {"at", utc_now_iso()}};
    write_file(task.prefix + "_failure.json", failure.dump(2) + "\n", key);
  }
  return code.has_value();
}

std::string trim_trailing_slashes(std::string s) {
  while (!s.empty() && s.back() == '/') s.pop_back();
  return s;
}

}  // namespace

std::string default_prompts_dir() {
  if (const char* env = std::getenv("KBV_PROMPTS"); env && *env) return env;
  return KBV_DEFAULT_PROMPTS_DIR;
}

GenerateSummary generate_run(const GenerateOptions& o, std::ostream& out) {
  if (o.run.empty() || o.run.find('/') != std::string::npos || o.run == "." || o.run == "..")
    throw UsageError("--run must be a plain folder name, e.g. --run gpt-5.5_level1");
  if (o.model.empty()) throw UsageError("--model is required");
  if (o.samples < 1) throw UsageError("--samples must be at least 1");
  if (o.concurrency < 1) throw UsageError("--concurrency must be at least 1");
  if (o.retries < 0) throw UsageError("--retries must be 0 or more");
  if (o.precision != "fp32" && o.precision != "bf16")
    throw UsageError("--precision must be fp32 or bf16");
  const ApiDialect& dialect = dialect_by_name(o.provider);
  std::string endpoint =
      trim_trailing_slashes(o.endpoint.empty() ? dialect.default_endpoint : o.endpoint);
  std::string key_env = o.api_key_env.empty() ? dialect.key_env : o.api_key_env;
  const char* key_value = std::getenv(key_env.c_str());
  if (!key_value || !*key_value)
    throw UsageError("set " + key_env + " to your " + dialect.name +
                     " API key (any non-empty value for a local server), or name another "
                     "variable with --api-key-env");
  const std::string key = key_value;

  // The selection.
  auto all = scan_problems(o.problems_dir);
  std::vector<ProblemFile> problems;
  std::set<int> wanted(o.ids.begin(), o.ids.end()), found;
  for (const auto& [lid, p] : all) {
    if (o.level != 0 && p.level != o.level) continue;
    if (!wanted.empty() && !wanted.count(p.id)) continue;
    problems.push_back(p);
    found.insert(p.id);
  }
  for (int id : wanted)
    if (!found.count(id))
      throw UsageError("no problem with id " + std::to_string(id) +
                       (o.level ? " in level " + std::to_string(o.level) : std::string()) +
                       " under '" + o.problems_dir + "'");
  if (problems.empty()) throw UsageError("no problem matches --level / --ids");

  PromptSettings ps{o.prompts_dir.empty() ? default_prompts_dir() : o.prompts_dir, o.precision,
                    o.input_blind};
  std::vector<std::string> prompts;  // one per problem; every sample of it gets the same prompt
  prompts.reserve(problems.size());
  for (const auto& p : problems) prompts.push_back(build_prompt(ps, read_text_file(p.path)));

  GenerateSummary summary;
  fs::path run_dir = fs::path(o.runs_dir) / o.run;
  fs::create_directories(run_dir);
  summary.run_dir = run_dir.string();
  std::vector<Task> tasks;
  for (size_t i = 0; i < problems.size(); ++i) {
    for (int s = 0; s < o.samples; ++s) {
      Task t{problems[i], s, sample_prefix(run_dir, problems[i].level, problems[i].id, s),
             &prompts[i]};
      ++summary.selected;
      if (fs::exists(t.prefix + "_kernel.py")) {
        ++summary.skipped;
        continue;
      }
      if (fs::exists(t.prefix + "_failure.json")) {
        if (!o.retry_failures) {
          ++summary.skipped;
          continue;
        }
        fs::remove(t.prefix + "_failure.json");
      }
      tasks.push_back(std::move(t));
    }
  }

  std::string started = utc_now_iso();
  if (!o.quiet)
    out << "kbv generate: " << tasks.size() << " of " << summary.selected << " samples to ask "
        << dialect.name << " (" << o.model << "), " << summary.skipped << " already done, into "
        << run_dir.string() << "\n";

  std::atomic<size_t> next{0};
  std::mutex mu;
  std::exception_ptr error;  // kbv's own failure (e.g. a full disk): stop and rethrow
  auto worker = [&] {
    for (size_t i; (i = next.fetch_add(1)) < tasks.size();) {
      const Task& t = tasks[i];
      json meta;
      bool ok = false;
      try {
        ok = generate_sample(t, o, dialect, endpoint, key, meta);
      } catch (...) {
        std::lock_guard lock(mu);
        if (!error) error = std::current_exception();
        next = tasks.size();
        return;
      }
      std::lock_guard lock(mu);
      (ok ? summary.kernels : summary.failures)++;
      if (!o.quiet) {
        out << "  level " << t.problem.level << " problem " << t.problem.id << " sample "
            << t.sample << ": "
            << (ok ? std::string("kernel") : "failure (" + meta["reason"].get<std::string>() + ")")
            << ", " << meta["attempts"] << " attempt(s), "
            << static_cast<int>(meta["total_s"].get<double>() * 1000) << " ms\n";
        out.flush();
      }
    }
  };
  std::vector<std::thread> pool;
  int n_threads = static_cast<int>(std::min<size_t>(o.concurrency, tasks.size()));
  for (int i = 0; i < n_threads; ++i) pool.emplace_back(worker);
  for (auto& th : pool) th.join();
  if (error) std::rethrow_exception(error);

  // generation.json: the last invocation's settings, and every selected sample's meta on disk.
  json samples = json::array();
  long prompt_tokens = 0, completion_tokens = 0;
  for (const auto& p : problems) {
    for (int s = 0; s < o.samples; ++s) {
      std::string prefix = sample_prefix(run_dir, p.level, p.id, s);
      if (fs::exists(prefix + "_kernel.py")) ++summary.kernels_total;
      std::ifstream in(prefix + "_meta.json");
      if (!in) continue;
      json meta = json::parse(in, nullptr, false);
      if (meta.is_discarded()) continue;
      if (meta.value("prompt_tokens", json()).is_number_integer())
        prompt_tokens += meta["prompt_tokens"].get<long>();
      if (meta.value("completion_tokens", json()).is_number_integer())
        completion_tokens += meta["completion_tokens"].get<long>();
      samples.push_back(std::move(meta));
    }
  }
  json ids = o.ids;
  json generation = {
      {"schema", "kbv.generation/1"},
      {"kbv_version", std::string(kVersion) + " (" + kGitCommit + ")"},
      {"run", o.run},
      {"model", o.model},
      {"provider", dialect.name},
      {"endpoint", endpoint},
      {"settings",
       {{"problems_dir", o.problems_dir},
        {"level", o.level},
        {"ids", ids},
        {"samples", o.samples},
        {"temperature", o.temperature},
        {"max_tokens", o.max_tokens},
        {"concurrency", o.concurrency},
        {"precision", o.precision},
        {"input_blind", o.input_blind},
        {"prompts_dir", ps.prompts_dir},
        {"timeout_s", o.timeout_seconds},
        {"retries", o.retries},
        {"backoff_base_s", o.backoff_base_seconds},
        {"retry_failures", o.retry_failures}}},
      {"started_at", started},
      {"finished_at", utc_now_iso()},
      {"counts",
       {{"selected", summary.selected},
        {"skipped", summary.skipped},
        {"new_kernels", summary.kernels},
        {"new_failures", summary.failures},
        {"kernels", summary.kernels_total}}},
      {"usage", {{"prompt_tokens", prompt_tokens}, {"completion_tokens", completion_tokens}}},
      {"samples", samples},
  };
  write_file(run_dir / "generation.json", generation.dump(2) + "\n", key);
  return summary;
}

int run_generate_command(const GenerateOptions& options, std::ostream& out) {
  GenerateSummary s = generate_run(options, out);
  if (!options.quiet)
    out << "kbv generate: " << s.kernels << " new kernel(s), " << s.failures << " new failure(s), "
        << s.skipped << " skipped; " << s.kernels_total << " of " << s.selected
        << " samples have a kernel (" << s.run_dir << "/generation.json)\n";
  return 0;
}

}  // namespace kbv::gen
