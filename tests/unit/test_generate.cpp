// kbv generate against a local mock LLM server (127.0.0.1, ephemeral port) that speaks the
// OpenAI and Anthropic dialects and misbehaves on purpose, keyed by a marker in the prompt:
// 429 with Retry-After, 500, a cut connection, malformed JSON, no code block, a slow reply,
// 401, an echo of the key, a delayed reply (for concurrency).
#include <gtest/gtest.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <map>
#include <mutex>
#include <nlohmann/json.hpp>
#include <sstream>
#include <thread>
#include <vector>

#include "core/errors.hpp"
#include "generate/api_dialect.hpp"
#include "generate/code_extract.hpp"
#include "generate/generate_command.hpp"
#include "generate/llm_client.hpp"
#include "generate/prompt_builder.hpp"
#include "mock_llm_server.hpp"

namespace fs = std::filesystem;
using nlohmann::json;

namespace kbv::gen {
namespace {

const char* kKey = "sk-kbv-test-5ecret-0123456789";
const std::string kCode =
    "import torch\nimport torch.nn as nn\n\n\nclass ModelNew(nn.Module):\n"
    "    def forward(self, x):\n        return x  # ```not a fence\n";

std::string read_all(const fs::path& p) {
  std::ifstream in(p, std::ios::binary);
  std::ostringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

using kbv::testing::MockLlmServer;

class GenerateTest : public ::testing::Test {
 protected:
  void SetUp() override {
    root_ = fs::temp_directory_path() /
            ("kbv-generate-" + std::to_string(::getpid()) + "-" +
             ::testing::UnitTest::GetInstance()->current_test_info()->name());
    fs::remove_all(root_);
    ::setenv("KBV_TEST_LLM_KEY", kKey, 1);
    // The mock server is on the loopback: never route it through a proxy from the environment.
    ::setenv("NO_PROXY", "127.0.0.1,localhost", 1);
    ::setenv("no_proxy", "127.0.0.1,localhost", 1);
  }
  void TearDown() override { fs::remove_all(root_); }

  // A problem whose source carries `marker`, so the server knows how to misbehave.
  void add_problem(int id, const std::string& marker) {
    fs::path p =
        root_ / "suite" / "level1" / (std::to_string(id) + "_P" + std::to_string(id) + ".py");
    fs::create_directories(p.parent_path());
    std::ofstream(p) << "import torch\nimport torch.nn as nn\n\n# " << marker
                     << "\nclass Model(nn.Module):\n    def forward(self, x):\n        return x\n\n"
                        "N = 4\nKBV_SMALL = {\n    \"N\": 2,\n}\n\n\ndef get_inputs():\n"
                        "    return [torch.rand(N)]\n\n\ndef get_init_inputs():\n    return []\n";
  }

  GenerateOptions options(const MockLlmServer& server, const std::string& provider = "openai") {
    GenerateOptions o;
    o.problems_dir = (root_ / "suite").string();
    o.model = "mock-model";
    o.provider = provider;
    o.endpoint = server.endpoint();
    o.api_key_env = "KBV_TEST_LLM_KEY";
    o.run = "mock_run";
    o.runs_dir = (root_ / "runs").string();
    o.prompts_dir = std::string(KBV_SOURCE_DIR) + "/prompts";
    o.timeout_seconds = 1.0;
    o.connect_timeout_seconds = 1.0;
    o.retries = 2;
    o.backoff_base_seconds = 0.01;
    o.backoff_max_seconds = 0.05;
    o.concurrency = 4;
    o.quiet = true;
    return o;
  }
  fs::path sample(int id, int s, const std::string& suffix) const {
    return root_ / "runs" / "mock_run" /
           ("level_1_problem_" + std::to_string(id) + "_sample_" + std::to_string(s) + suffix);
  }
  json read_json(const fs::path& p) const { return json::parse(read_all(p)); }

  fs::path root_;
};

TEST_F(GenerateTest, EverySampleEndsAsKernelOrRecordedFailureAndResumeAsksNothing) {
  MockLlmServer server{kCode};
  std::map<int, std::string> markers = {{1, "NORMAL"},    {2, "KBV_T429"},     {3, "KBV_T500"},
                                        {4, "KBV_TCUT"},  {5, "KBV_TBADJSON"}, {6, "KBV_TNOCODE"},
                                        {7, "KBV_TSLOW"}, {8, "KBV_TAUTH"}};
  for (auto& [id, m] : markers) add_problem(id, m);
  std::ostringstream log;
  GenerateSummary s = generate_run(options(server), log);
  EXPECT_EQ(s.selected, 8);
  EXPECT_EQ(s.kernels, 5);
  EXPECT_EQ(s.failures, 3);

  for (auto& [id, m] : markers) {
    bool kernel = fs::exists(sample(id, 0, "_kernel.py"));
    bool failure = fs::exists(sample(id, 0, "_failure.json"));
    EXPECT_NE(kernel, failure) << m;  // exactly one of the two
    EXPECT_TRUE(fs::exists(sample(id, 0, "_prompt.txt"))) << m;
    EXPECT_TRUE(fs::exists(sample(id, 0, "_meta.json"))) << m;
    if (kernel) {
      EXPECT_EQ(read_all(sample(id, 0, "_kernel.py")), kCode) << m;
      json meta = read_json(sample(id, 0, "_meta.json"));
      EXPECT_EQ(meta["prompt_tokens"], 11) << m;
      EXPECT_EQ(meta["completion_tokens"], 22) << m;
      EXPECT_EQ(meta["status"], "kernel");
    }
  }
  EXPECT_EQ(read_json(sample(2, 0, "_meta.json"))["attempts"], 2);                 // 429 then ok
  EXPECT_GE(read_json(sample(2, 0, "_meta.json"))["total_s"].get<double>(), 0.9);  // Retry-After: 1
  EXPECT_EQ(read_json(sample(3, 0, "_meta.json"))["attempts"], 2);                 // 500 then ok
  EXPECT_EQ(read_json(sample(4, 0, "_meta.json"))["attempts"], 2);                 // cut then ok
  EXPECT_EQ(read_json(sample(7, 0, "_meta.json"))["attempts"], 2);  // timeout then ok
  json bad = read_json(sample(5, 0, "_failure.json"));
  EXPECT_EQ(bad["reason"], "malformed_response");
  EXPECT_EQ(bad["attempts"], 3);                            // 1 + --retries 2
  EXPECT_TRUE(fs::exists(sample(5, 0, "_response.json")));  // raw body kept
  EXPECT_EQ(read_json(sample(6, 0, "_failure.json"))["reason"], "no_code_block");
  EXPECT_TRUE(fs::exists(sample(6, 0, "_response.json")));
  json auth = read_json(sample(8, 0, "_failure.json"));
  EXPECT_EQ(auth["reason"], "http_error");
  EXPECT_EQ(auth["http_status"], 401);
  EXPECT_EQ(auth["attempts"], 1);  // a 401 is not retried
  EXPECT_EQ(server.count("KBV_TBADJSON"), 3);
  EXPECT_EQ(server.count("KBV_TAUTH"), 1);

  json gen = read_json(root_ / "runs" / "mock_run" / "generation.json");
  EXPECT_EQ(gen["samples"].size(), 8u);
  EXPECT_EQ(gen["counts"]["kernels"], 5);
  EXPECT_EQ(gen["usage"]["prompt_tokens"], 11 * 6);  // every parsed reply, the no-code one too

  // Resume: nothing is asked again, failures included.
  int before = server.requests();
  GenerateSummary again = generate_run(options(server), log);
  EXPECT_EQ(server.requests(), before);
  EXPECT_EQ(again.skipped, 8);
  EXPECT_EQ(again.kernels + again.failures, 0);

  // --retry-failures asks again for the three failures only (3 + 1 + 1 requests).
  GenerateOptions retry = options(server);
  retry.retry_failures = true;
  GenerateSummary third = generate_run(retry, log);
  EXPECT_EQ(server.requests(), before + 5);
  EXPECT_EQ(third.skipped, 5);
  EXPECT_EQ(third.failures, 3);
}

TEST_F(GenerateTest, AnthropicDialectHeadersPathAndUsage) {
  MockLlmServer server{kCode};
  add_problem(1, "NORMAL");
  add_problem(2, "KBV_T500");
  add_problem(3, "KBV_TNOCODE");
  GenerateOptions o = options(server, "anthropic");
  o.samples = 2;
  std::ostringstream log;
  GenerateSummary s = generate_run(o, log);
  EXPECT_EQ(s.kernels, 4);
  EXPECT_EQ(s.failures, 2);
  EXPECT_EQ(read_all(sample(2, 1, "_kernel.py")), kCode);
  EXPECT_EQ(read_json(sample(1, 0, "_meta.json"))["completion_tokens"], 22);
  for (const auto& p : server.paths()) EXPECT_EQ(p, "POST /v1/messages HTTP/1.1");
  auto lines = server.header_lines();
  auto has = [&](const std::string& prefix) {
    return std::any_of(lines.begin(), lines.end(),
                       [&](const std::string& l) { return l.rfind(prefix, 0) == 0; });
  };
  EXPECT_TRUE(has(std::string("x-api-key: ") + kKey));
  EXPECT_TRUE(has("anthropic-version: 2023-06-01"));
  EXPECT_FALSE(has("Authorization:"));
}

TEST_F(GenerateTest, OpenAiSendsBearerAndKeyNeverReachesAFile) {
  MockLlmServer server{kCode};
  add_problem(1, "KBV_TECHO");  // the server echoes the request headers into its answer
  add_problem(2, "KBV_TAUTH");
  std::ostringstream log;
  generate_run(options(server), log);
  auto lines = server.header_lines();
  EXPECT_TRUE(std::any_of(lines.begin(), lines.end(), [](const std::string& l) {
    return l.rfind(std::string("Authorization: Bearer ") + kKey, 0) == 0;
  }));
  ASSERT_TRUE(fs::exists(sample(1, 0, "_kernel.py")));
  EXPECT_NE(read_all(sample(1, 0, "_kernel.py")).find("[redacted]"), std::string::npos);
  int files = 0;
  for (const auto& e : fs::recursive_directory_iterator(root_ / "runs")) {
    if (!e.is_regular_file()) continue;
    ++files;
    EXPECT_EQ(read_all(e.path()).find(kKey), std::string::npos) << e.path();
  }
  EXPECT_GE(files, 8);
  EXPECT_EQ(log.str().find(kKey), std::string::npos);
}

TEST_F(GenerateTest, ConcurrencyIsBounded) {
  MockLlmServer server{kCode};
  add_problem(1, "KBV_TDELAY");  // 250 ms per reply
  GenerateOptions o = options(server);
  o.samples = 8;
  o.concurrency = 2;
  std::ostringstream log;
  GenerateSummary s = generate_run(o, log);
  EXPECT_EQ(s.kernels, 8);
  EXPECT_EQ(server.requests(), 8);
  EXPECT_LE(server.max_in_flight(), 2);
  EXPECT_EQ(server.max_in_flight(), 2);  // and the pool does run requests side by side
}

TEST_F(GenerateTest, InputBlindAndBf16Prompts) {
  MockLlmServer server{kCode};
  add_problem(1, "NORMAL");
  GenerateOptions o = options(server);
  o.input_blind = true;
  o.precision = "bf16";
  std::ostringstream log;
  generate_run(o, log);
  std::string prompt = read_all(sample(1, 0, "_prompt.txt"));
  EXPECT_EQ(prompt.find("get_inputs"), std::string::npos);
  EXPECT_EQ(prompt.find("get_init_inputs"), std::string::npos);
  EXPECT_EQ(prompt.find("KBV_SMALL"), std::string::npos);
  EXPECT_NE(prompt.find("class Model(nn.Module)"), std::string::npos);
  EXPECT_NE(prompt.find("class ModelNew"), std::string::npos);  // the one-shot example
  EXPECT_NE(prompt.find("bfloat16"), std::string::npos);
  EXPECT_EQ(prompt.find("{{"), std::string::npos);
}

TEST_F(GenerateTest, DefaultPromptShowsTheWholeProblem) {
  MockLlmServer server{kCode};
  add_problem(1, "NORMAL");
  std::ostringstream log;
  generate_run(options(server), log);
  std::string prompt = read_all(sample(1, 0, "_prompt.txt"));
  std::string source = read_all(root_ / "suite" / "level1" / "1_P1.py");
  EXPECT_NE(prompt.find(source), std::string::npos);
  EXPECT_EQ(prompt.find("bfloat16"), std::string::npos);
}

TEST_F(GenerateTest, MissingKeyIsAUsageError) {
  MockLlmServer server{kCode};
  add_problem(1, "NORMAL");
  GenerateOptions o = options(server);
  o.api_key_env = "KBV_TEST_NO_SUCH_KEY_VAR";
  std::ostringstream log;
  EXPECT_THROW(generate_run(o, log), UsageError);
  o = options(server);
  o.ids = {42};
  EXPECT_THROW(generate_run(o, log), UsageError);
  EXPECT_EQ(server.requests(), 0);
}

TEST(InputBlindFilter, Swish) {
  std::string src = read_all(std::string(KBV_SOURCE_DIR) + "/problems/level1/9_Swish.py");
  std::string out = strip_problem_inputs(src);
  for (const char* gone :
       {"get_inputs", "get_init_inputs", "KBV_SMALL", "batch_size = 4096", "dim = 32768"})
    EXPECT_EQ(out.find(gone), std::string::npos) << gone;
  for (const char* kept : {"import torch\nimport torch.nn as nn\n",
                           "class Model(nn.Module):", "(default 4096 x 32768, beta = 1.5)",
                           "return x * torch.sigmoid(self.beta * x)"})
    EXPECT_NE(out.find(kept), std::string::npos) << kept;
  EXPECT_EQ(out.find("\n\n\n\n"), std::string::npos);
  EXPECT_EQ(out.back(), '\n');
}

TEST(InputBlindFilter, Level3TransformerLayer) {
  std::string src =
      read_all(std::string(KBV_SOURCE_DIR) + "/problems/level3/5_Transformer_Layer.py");
  std::string out = strip_problem_inputs(src);
  for (const char* gone :
       {"get_inputs", "get_init_inputs", "KBV_SMALL", "seq_len = 512", "ffn_dim = 4096"})
    EXPECT_EQ(out.find(gone), std::string::npos) << gone;
  for (const char* kept :
       {"import torch.nn.functional as F", "self.fc2 = nn.Linear(ffn_dim, embed_dim)",
        "return h + self.fc2(F.gelu(self.fc1(self.norm2(h))))"})
    EXPECT_NE(out.find(kept), std::string::npos) << kept;
}

TEST(InputBlindFilter, MultiLineLiteralsDocstringsAndNonLiterals) {
  std::string src =
      "\"\"\"Module doc.\nx = 1 inside a docstring\n\"\"\"\nimport torch\n"
      "sizes = [\n    1,\n    2,\n]\nKBV_SMALL = dict(n=2)\nscale: float = -1.5e-3\n"
      "dtype = torch.float16\ntable = make_table()\nn2 = 2 * sizes\n"
      "def get_inputs():\n    x = 1\n\n    return [x]\n# tail comment\n"
      "def get_init_inputs_extra():\n    return []\n";
  std::string out = strip_problem_inputs(src);
  EXPECT_NE(out.find("x = 1 inside a docstring"), std::string::npos);
  EXPECT_EQ(out.find("sizes"), std::string::npos);
  EXPECT_EQ(out.find("KBV_SMALL"), std::string::npos);
  EXPECT_EQ(out.find("scale"), std::string::npos);
  EXPECT_NE(out.find("dtype = torch.float16"), std::string::npos);
  EXPECT_NE(out.find("table = make_table()"), std::string::npos);
  EXPECT_EQ(out.find("return [x]"), std::string::npos);
  EXPECT_NE(out.find("# tail comment"), std::string::npos);
  EXPECT_NE(out.find("def get_init_inputs_extra"), std::string::npos);  // a different name
}

TEST(CodeExtract, FirstBlockExactly) {
  EXPECT_EQ(extract_first_code_block("a\n```python\nx = 1\n\ny = 2\n```\nb\n```\nz\n```\n"),
            "x = 1\n\ny = 2\n");
  EXPECT_EQ(extract_first_code_block("```\nbare\n```"), "bare\n");
  EXPECT_EQ(extract_first_code_block("```py\r\nwin\r\n```\r\n"), "win\n");
  EXPECT_EQ(extract_first_code_block("no block here"), std::nullopt);
  EXPECT_EQ(extract_first_code_block("```python\ncut at max_tokens"), std::nullopt);
  EXPECT_EQ(extract_first_code_block("```python\ns = '```x'\n```"), "s = '```x'\n");
}

TEST(PromptTemplate, RendersAndRejectsUnknownPlaceholders) {
  EXPECT_EQ(render_template("a {{x}} b {{ y }}{{x}}", {{"x", "1"}, {"y", "{{x}}"}}),
            "a 1 b {{x}}1");
  EXPECT_THROW(render_template("{{missing}}", {{"x", "1"}}), UsageError);
}

TEST(RetryPolicy, BackoffGrowsIsCappedAndHonoursRetryAfter) {
  RetryPolicy p;
  p.backoff_base_seconds = 1;
  p.backoff_max_seconds = 8;
  EXPECT_DOUBLE_EQ(retry_wait_seconds(p, 0, std::nullopt, 0.5), 1.0);
  EXPECT_DOUBLE_EQ(retry_wait_seconds(p, 2, std::nullopt, 0.5), 4.0);
  EXPECT_DOUBLE_EQ(retry_wait_seconds(p, 10, std::nullopt, 0.5), 8.0);
  EXPECT_DOUBLE_EQ(retry_wait_seconds(p, 0, std::nullopt, 0.0), 0.5);
  EXPECT_DOUBLE_EQ(retry_wait_seconds(p, 0, 30.0, 0.5), 30.0);
  EXPECT_DOUBLE_EQ(retry_wait_seconds(p, 0, 1e6, 0.5), p.retry_after_max_seconds);
}

TEST(ApiDialects, ParseNeverThrowsOnGarbage) {
  for (const ApiDialect* d : {&openai_dialect(), &anthropic_dialect()}) {
    for (const char* body :
         {"", "{", "[]", "null", R"({"choices": 3})", R"({"content": [{"type": 1}]})"}) {
      ParsedReply r = d->parse(body);
      EXPECT_FALSE(r.ok) << d->name << " " << body;
      EXPECT_FALSE(r.error.empty());
    }
  }
  EXPECT_THROW(dialect_by_name("gemini"), UsageError);
}

}  // namespace
}  // namespace kbv::gen
