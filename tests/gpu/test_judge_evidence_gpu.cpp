// Issue 34 on the GPU: the candidate's memory figure is the driver's per-process reading (a relay
// that rewrites the sandbox's `memory` answer to 0 changes nothing but the cross-check), and a
// candidate that takes the device's memory so that the judge runs short gets its own outcome,
// never problem_error or internal_error. The CPU halves are in
// tests/integration/test_judge_evidence_cli.cpp.
#include <gtest/gtest.h>

#include <fstream>
#include <iostream>

#include "fresh_temp_dir.hpp"
#include "gpu_eval.hpp"

namespace kbv {
namespace {

const std::string kAttacks = testing::kSource + "/examples/attacks/";

std::set<std::string> all_flags(const CliResult& r) {
  std::set<std::string> names;
  if (r.verdict.is_object())
    for (const auto& f : r.verdict["flags"]) names.insert(f["name"].get<std::string>());
  return names;
}

TEST(GpuJudgeEvidence, StarvingTheJudgeOfDeviceMemoryIsTheCandidatesOutcome) {
  for (const std::string protocol : {"verified", "strict"}) {
    SCOPED_TRACE(protocol);
    auto r = eval_gpu(kAttacks + "starve_judge_device_memory.py", protocol);
    ASSERT_TRUE(r.verdict.is_object()) << r.context();
    EXPECT_NE(r.outcome(), "problem_error") << r.context();
    EXPECT_NE(r.outcome(), "internal_error") << r.context();
    EXPECT_NE(r.outcome(), "correct") << r.context();
    // Where the judge itself ran short, the verdict names it; where it did not (its allocator's
    // cache served it), the zeros are simply incorrect.
    if (r.outcome() == "runtime_error") EXPECT_TRUE(all_flags(r).count("judge_starved")) << r.context();
    else EXPECT_EQ(r.outcome(), "incorrect") << r.context();
  }
}

TEST(GpuJudgeEvidence, ARelaysZeroMemoryIsNotTheFigure) {
  auto r = eval_gpu(testing::bundled_attack("relay_forges_answers"), "strict");
  ASSERT_TRUE(r.verdict.is_object()) << r.context();
  EXPECT_FALSE(r.verdict["custom_kernel"].get<bool>()) << r.context();
  EXPECT_TRUE(all_flags(r).count("sandbox_account_differs")) << r.context();
  ASSERT_TRUE(r.verdict.contains("memory")) << r.context();
  const auto& candidate = r.verdict["memory"]["candidate"];
  EXPECT_EQ(candidate["peak_device_bytes"].get<std::int64_t>(), 0) << "the relay's figure, kept as the sandbox's account";
  ASSERT_TRUE(candidate.contains("process_bytes")) << r.context();
  EXPECT_GT(candidate["process_bytes"].get<std::int64_t>(), 0) << "the driver's figure\n" << r.context();
}

TEST(GpuJudgeEvidence, HonestCudaCandidatesKeepTheirFiguresAndNoNewFlag) {
  for (const std::string candidate : {"relu_cuda.py", "relu_raw_scratch.py"}) {
    SCOPED_TRACE(candidate);
    auto r = eval_gpu(testing::example_candidate(candidate), "strict");
    EXPECT_EQ(r.outcome(), "correct") << r.context();
    EXPECT_TRUE(r.verdict["custom_kernel"].get<bool>()) << r.context();
    const auto flags = all_flags(r);
    EXPECT_FALSE(flags.count("sandbox_account_differs")) << r.context();
    EXPECT_FALSE(flags.count("lower_precision")) << r.context();
    EXPECT_FALSE(flags.count("judge_starved")) << r.context();
    ASSERT_TRUE(r.verdict.contains("memory")) << r.context();
    EXPECT_TRUE(r.verdict["memory"]["candidate"].contains("process_bytes")) << r.context();
  }
}

// At KernelBench's sizes a tensor is a large part of the device (Softmax's input and output are
// 6 GiB each, a thirteenth of an H100), and the judge's own checks used to take several more
// copies (a second snapshot, a bool mask, its int64 sum: twice the output): honest kernels ended
// internal_error "CUDA out of memory" (bench/RESULTS.md, session 27). Here the problem sizes its
// tensors to a twelfth of the device, so the test fails on any device when the judge's working
// set grows back past what it holds now.
// A ReLU problem whose input and output are each 1/`divisor` of the device's memory.
std::filesystem::path write_device_sized_relu(const testing::FreshTempDir& dir, int divisor,
                                              const std::string& forward = "torch.relu(x)") {
  const auto problem = dir.path / "large_relu.py";
  std::ofstream(problem) << R"(import torch
import torch.nn as nn


class Model(nn.Module):
    def forward(self, x):
        return )" << forward << R"(


n = torch.cuda.get_device_properties(0).total_memory // )"
                         << divisor << R"( // 4


def get_inputs():
    return [torch.randn(n)]


def get_init_inputs():
    return []
)";
  return problem;
}

TEST(GpuJudgeEvidence, AnHonestKernelOnAProblemSizedToTheDeviceIsCorrectNotOutOfMemory) {
  testing::FreshTempDir dir("kbv-large-problem");
  const auto problem = write_device_sized_relu(dir, 12);
  const auto candidate = dir.path / "relu_torch.py";
  std::ofstream(candidate) << R"(import torch
import torch.nn as nn


class ModelNew(nn.Module):
    def forward(self, x):
        return torch.relu(x)
)";
  for (const std::string protocol : {"standard", "strict"}) {
    SCOPED_TRACE(protocol);
    auto r = testing::run_kbv_eval({problem.string(), candidate.string(), "--protocol", protocol, "--time-budget", "1",
                                    "--run-timeout", "300"},
                                   "cuda:0");
    EXPECT_EQ(r.outcome(), "correct") << r.context();
  }
}

// The share rule lets a candidate hold as much as the judge does; on a problem whose tensors are
// an eighth of the device that is enough to make the judge's next draw fail (an 80 GB H100,
// 2026-12-07: live and output held 37.2 GiB and starved the judge; cache and zombie did not, and
// were incorrect). At a seventh an honest candidate's allowance does not fit beside the judge's
// need either, and the honest ReLU itself ends internal_error there (bench/RESULTS.md, session 30). The hoard is
// read when the judge's allocation fails, wherever it lives (live tensors, the allocator's cache,
// a huge tensor behind a small output): the candidate's outcome, never kbv's internal_error.
TEST(GpuJudgeEvidence, AHoardBelowTheShareThatStarvesTheJudgeIsTheCandidatesOutcome) {
  testing::FreshTempDir dir("kbv-hoard-problem");
  const auto problem = write_device_sized_relu(dir, 8);
  std::ifstream in(kAttacks + "hoard_under_share.py");
  const std::string attack((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  int starved = 0;
  for (const std::string mode : {"live", "cache", "output"}) {
    SCOPED_TRACE(mode);
    const auto candidate = dir.path / ("hoard_" + mode + ".py");
    std::string text = attack;
    text.replace(text.find("MODE = \"live\""), std::string("MODE = \"live\"").size(), "MODE = \"" + mode + "\"");
    std::ofstream(candidate) << text;
    auto r = testing::run_kbv_eval({problem.string(), candidate.string(), "--protocol", "standard", "--time-budget", "1",
                                    "--run-timeout", "300"},
                                   "cuda:0");
    ASSERT_TRUE(r.verdict.is_object()) << r.context();
    std::cout << "hoard_under_share " << mode << ": " << r.outcome() << ": " << r.verdict.value("reason", std::string()).substr(0, 1500) << "\n";
    EXPECT_NE(r.outcome(), "internal_error") << r.context();
    EXPECT_NE(r.outcome(), "problem_error") << r.context();
    EXPECT_NE(r.outcome(), "correct") << r.context();
    if (r.outcome() == "runtime_error") {
      EXPECT_TRUE(all_flags(r).count("judge_starved")) << r.context();
      ++starved;
    } else {
      EXPECT_EQ(r.outcome(), "incorrect") << r.context();
    }
  }
  // Otherwise the problem no longer sizes the judge's need to the device, and the test shows nothing.
  EXPECT_GT(starved, 0) << "no variant made the judge run short";
}

// The degenerate audit builds full-size zeros for a reference near zero: a hoard that makes that
// allocation fail must not keep the problem from its flag while the zeros it returns are correct.
TEST(GpuJudgeEvidence, AHoardCannotKeepADegenerateProblemUnflagged) {
  testing::FreshTempDir dir("kbv-hoard-degenerate");
  const auto problem = write_device_sized_relu(dir, 8, "1e-5 * torch.tanh(x)");
  std::ifstream in(kAttacks + "hoard_under_share.py");
  const std::string attack((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  for (const std::string mode : {"live", "cache"}) {
    SCOPED_TRACE(mode);
    const auto candidate = dir.path / ("hoard_" + mode + ".py");
    std::string text = attack;
    text.replace(text.find("MODE = \"live\""), std::string("MODE = \"live\"").size(), "MODE = \"" + mode + "\"");
    std::ofstream(candidate) << text;
    auto r = testing::run_kbv_eval({problem.string(), candidate.string(), "--protocol", "strict", "--no-timing",
                                    "--run-timeout", "300"},
                                   "cuda:0");
    ASSERT_TRUE(r.verdict.is_object()) << r.context();
    std::cout << "hoard on a degenerate problem, " << mode << ": " << r.outcome() << ": "
              << r.verdict.value("reason", std::string()).substr(0, 800) << "\n";
    EXPECT_NE(r.outcome(), "internal_error") << r.context();
    EXPECT_NE(r.outcome(), "problem_error") << r.context();
    if (r.outcome() == "correct") {
      EXPECT_TRUE(all_flags(r).count("degenerate")) << r.context();
    } else if (r.outcome() == "runtime_error") {
      EXPECT_TRUE(all_flags(r).count("judge_starved")) << r.context();
    }
  }
}

// The hoard held by the sandbox's unreaped child (a zombie whose context a holder keeps): the
// driver lists the zombie's pid, which runs no more and is out of the sandbox's cgroup; its memory
// is its parent's.
TEST(GpuJudgeEvidence, AHoardHeldByAZombieChildIsTheSandboxs) {
  testing::FreshTempDir dir("kbv-zombie-hoard");
  const auto problem = write_device_sized_relu(dir, 8);
  auto r = testing::run_kbv_eval({problem.string(), kAttacks + "hoard_in_zombie.py", "--protocol", "standard", "--time-budget", "1",
                                  "--run-timeout", "300"},
                                 "cuda:0");
  ASSERT_TRUE(r.verdict.is_object()) << r.context();
  std::cout << "hoard_in_zombie: " << r.outcome() << ": " << r.verdict.value("reason", std::string()).substr(0, 1500) << "\n";
  EXPECT_NE(r.outcome(), "internal_error") << r.context();
  EXPECT_NE(r.outcome(), "problem_error") << r.context();
  if (r.outcome() == "runtime_error") EXPECT_TRUE(all_flags(r).count("judge_starved")) << r.context();
  else EXPECT_EQ(r.outcome(), "incorrect") << r.context();
}

TEST(GpuJudgeEvidence, HalfPrecisionReluIsCaughtByStrictOnTheGpu) {
  auto r = eval_gpu(kHacks + "half_precision_relu.py", "strict");
  EXPECT_EQ(r.outcome(), "incorrect") << r.context();
  EXPECT_TRUE(all_flags(r).count("lower_precision")) << r.context();
}

}  // namespace
}  // namespace kbv
