// kbv generate against the local mock LLM server, then kbv run on the generated runs folder,
// unchanged (`--then-run`), on the CPU: the files land in the KernelBench runs layout and every
// sample gets a verdict.
#include <gtest/gtest.h>

#include <filesystem>

#include "kbv_cli.hpp"
#include "mock_llm_server.hpp"
#include "store/result_store.hpp"

namespace fs = std::filesystem;

namespace kbv {
namespace {

// What the mock model "writes": the ReLU identity shortcut (passes on non-negative inputs).
const std::string kGenerated =
    "import torch\nimport torch.nn as nn\n\n\nclass ModelNew(nn.Module):\n"
    "    def __init__(self):\n        super().__init__()\n\n"
    "    def forward(self, x):\n        return x\n";

TEST(GenerateCli, GeneratedRunIsEvaluatedByKbvRunUnchanged) {
  testing::MockLlmServer server(kGenerated);
  fs::path root = fs::temp_directory_path() / ("kbv-generate-test-" + std::to_string(::getpid()));
  fs::remove_all(root);
  fs::create_directories(root / "suite/level1");
  fs::copy_file(testing::example_problem("19_ReLU.py"), root / "suite/level1/19_ReLU.py");

  ProcessSpec spec;
  spec.argv = {testing::kBin + "/kbv", "generate", "--problems", (root / "suite").string(), "--model", "mock-model",
               "--provider", "openai", "--endpoint", server.endpoint(), "--samples", "2", "--run", "mock",
               "--runs-dir", (root / "runs").string(), "--then-run", "--db", (root / "kbv.db").string(),
               "--protocol", "standard"};
  spec.env_set = {{"OPENAI_API_KEY", "sk-test-not-a-real-key"}, {"NO_PROXY", "127.0.0.1"}, {"no_proxy", "127.0.0.1"}};
  auto result = run_process(spec, Clock::now() + std::chrono::minutes(5));
  std::string printed = result.output_head + result.output_tail;
  ASSERT_TRUE(result.exited && result.exit_code == 0) << result.describe() << "\n" << printed;
  EXPECT_EQ(server.requests(), 2);
  for (int s = 0; s < 2; ++s)
    EXPECT_TRUE(fs::exists(root / "runs/mock" / ("level_1_problem_19_sample_" + std::to_string(s) + "_kernel.py")));

  ResultStore store((root / "kbv.db").string(), ResultStore::Mode::read_only);
  auto records = store.verdicts();
  ASSERT_EQ(records.size(), 2u) << printed;
  for (const auto& r : records) {
    EXPECT_EQ(r.sample.run_name, "mock");
    EXPECT_EQ(r.verdict.outcome, Outcome::correct) << "the identity passes standard's non-negative inputs";
  }
  if (!::testing::Test::HasFailure()) fs::remove_all(root);
}

}  // namespace
}  // namespace kbv
