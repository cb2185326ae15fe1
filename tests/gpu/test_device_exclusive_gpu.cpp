// GPU tests that need the device to themselves (ctest RUN_SERIAL): whether the sandbox's context
// left work on the GPU while the judge timed the baselines is judged against the null call of an
// idle device, and another evaluation on the same GPU is not idle.
#include <gtest/gtest.h>

#include <unistd.h>

#include <atomic>
#include <chrono>
#include <cstdint>
#include <thread>
#include <vector>

#include "gpu_eval.hpp"

namespace kbv {
namespace {

// A kernel left resident on the device between calls slows whatever the judge times in its own
// or the twin's context; the null call timed again once the sandbox has ended shows it.
TEST(GpuStrict, PersistentKernelIsDeviceBusy) {
  auto strict = eval_gpu(kHacks + "persistent_kernel.py", "strict");
  EXPECT_EQ(strict.outcome(), "incorrect") << strict.context();
  EXPECT_TRUE(integrity_flags(strict).count("device_busy")) << strict.context();
  auto standard = eval_gpu(kHacks + "persistent_kernel.py", "standard");
  EXPECT_EQ(standard.outcome(), "correct") << standard.context();
  bool warned = false;
  for (const auto& w : standard.verdict["warnings"]) warned |= w.get<std::string>().find("not to be trusted") != std::string::npos;
  EXPECT_TRUE(warned) << standard.context();
}

// A kbv judge kept warm between its candidates waits at its gate with a CUDA context and memory
// on the device, and runs nothing there: it is no tenant, and strict's device_busy stays the
// candidate's. Through two warm runs on one device this hack was `correct` (bench/RESULTS.md,
// session 24). The idle judge here: `kbv-judge --serve --device-gate` with two jobs, its gate
// opened for the first only.
TEST(GpuStrict, AWarmJudgeWaitingForItsTurnDoesNotExcuseABusyDevice) {
  WorkerJob job;
  job.problem_path = kRelu;
  job.candidate_path = testing::example_candidate("relu_cuda.py");
  job.protocol = "strict";
  job.device = "cuda:0";
  job.timing.enabled = false;
  job.build_root = testing::build_dir();
  int gate[2];
  ASSERT_EQ(::pipe(gate), 0);
  ProcessSpec spec;
  spec.argv = {testing::kBin + "/kbv-judge", "--serve", "--device-gate"};
  spec.stdin_data = nlohmann::json(std::vector<WorkerJob>{job, job}).dump();
  spec.fd5 = gate[0];
  std::atomic<bool> first_done{false};
  ProcessResult judge;
  std::thread waiting([&] {
    judge = run_process(spec, Clock::now() + std::chrono::minutes(10), [&](const std::string& line) -> std::optional<Clock::time_point> {
      auto m = nlohmann::json::parse(line, nullptr, false);
      if (m.is_object() && m.value("event", "") == "released") first_done = true;
      return std::nullopt;
    });
  });
  const char go = 1;
  ASSERT_EQ(::write(gate[1], &go, 1), 1);  // the first candidate's turn only
  for (int i = 0; i < 3000 && !first_done; ++i) std::this_thread::sleep_for(std::chrono::milliseconds(100));
  CliResult strict;
  if (first_done) strict = eval_gpu(kHacks + "persistent_kernel.py", "strict");
  ::close(gate[1]);  // closed unopened: the waiting judge ends
  waiting.join();
  ::close(gate[0]);
  ASSERT_TRUE(first_done) << "the warm judge did not finish its first candidate\n" << judge.output_tail;
  EXPECT_EQ(strict.outcome(), "incorrect") << strict.context();
  EXPECT_TRUE(integrity_flags(strict).count("device_busy")) << strict.context();
}

// The honest controls' hop matches the idle device's, and the sandbox was frozen around the
// baselines (no false device_busy).
TEST(GpuStrict, HonestKernelLeavesTheDeviceIdle) {
  auto r = eval_gpu(testing::example_candidate("relu_cuda.py"), "strict");
  EXPECT_EQ(r.outcome(), "correct") << r.context();
  EXPECT_TRUE(integrity_flags(r).empty()) << r.context();
  const auto& t = r.verdict["timing"];
  EXPECT_TRUE(t["sandbox_frozen"].get<bool>()) << r.context();
  ASSERT_TRUE(t.contains("busy_hop_share")) << r.context();
  EXPECT_LT(t["busy_hop_share"].get<double>(), 0.05) << r.context();
}

// Memory parked outside the model's objects is still the sandbox's device memory.
TEST(GpuStrict, MemoryParkedInTorchIsCounted) {
  auto r = eval_gpu(kHacks + "memory_parked_in_torch.py", "strict");
  EXPECT_EQ(r.outcome(), "correct") << r.context();
  ASSERT_TRUE(r.verdict.contains("memory")) << r.context();
  const auto& m = r.verdict["memory"];
  ASSERT_TRUE(m["candidate"].contains("process_bytes")) << r.context();
  EXPECT_GE(m["candidate"]["process_bytes"].get<std::int64_t>(), std::int64_t{1} << 30) << r.context();
  // 256 MiB of output against 256 MiB + the parked GiB: about 5x (candidate / baseline).
  EXPECT_GT(m["ratio_footprint"].get<double>(), 3.0) << "the gigabyte is in the footprint\n" << r.context();
}

}  // namespace
}  // namespace kbv
