#pragma once
// `kbv generate`: single-turn kernel generation from an LLM API into KernelBench's runs
// layout, resumable (docs/generate.md). Per sample, in <runs-dir>/<run>/:
//   level_L_problem_P_sample_S_prompt.txt     the prompt sent
//   level_L_problem_P_sample_S_response.json  the raw body of the last API response
//   level_L_problem_P_sample_S_meta.json      usage, latency, attempts, outcome
//   level_L_problem_P_sample_S_kernel.py      the first code block of the answer, or
//   level_L_problem_P_sample_S_failure.json   why there is no kernel
// and generation.json for the run (settings of the last invocation and every sample's meta).
#include <iosfwd>
#include <string>
#include <vector>

namespace kbv::gen {

struct GenerateOptions {
  std::string problems_dir;
  int level = 0;         // 0: every level
  std::vector<int> ids;  // empty: every problem of the selected levels
  std::string model;
  std::string provider = "openai";  // openai | anthropic
  std::string endpoint;             // "" = the provider's default
  std::string api_key_env;          // "" = OPENAI_API_KEY / ANTHROPIC_API_KEY
  int samples = 1;
  double temperature = 0.0;
  int max_tokens = 8192;
  int concurrency = 4;  // requests in flight at most
  std::string run;
  std::string runs_dir = "runs";
  std::string precision = "fp32";  // fp32 | bf16 (adds prompts/precision_bf16.txt)
  bool input_blind = false;
  std::string prompts_dir;       // "" = the source tree's prompts/ (or $KBV_PROMPTS)
  double timeout_seconds = 600;  // per request
  double connect_timeout_seconds = 30;
  int retries = 4;
  double backoff_base_seconds = 2;
  double backoff_max_seconds = 60;
  bool retry_failures = false;  // ask again for samples with a failure record
  bool quiet = false;
};

struct GenerateSummary {
  std::string run_dir;
  int selected = 0;       // samples in the selection
  int skipped = 0;        // already had a kernel or failure record
  int kernels = 0;        // new kernel files
  int failures = 0;       // new failure records
  int kernels_total = 0;  // kernel files of the selection now on disk
};

// Generates every missing sample. Bad flags, a missing key or template throw UsageError;
// anything an API does becomes a sample's failure record.
GenerateSummary generate_run(const GenerateOptions& options, std::ostream& out);

// The CLI entry: generate_run and a summary line; exit code 0 when every sample ended as a
// kernel or a recorded failure.
int run_generate_command(const GenerateOptions& options, std::ostream& out);

// The prompts folder used when --prompts is not given.
std::string default_prompts_dir();

}  // namespace kbv::gen
