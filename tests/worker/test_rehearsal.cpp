// The judge's rehearsal of its own first-use device work (judge/rehearsal.hpp), on the CPU with
// the embedded interpreter: it runs every step on a problem, leaves the switches a Model may turn
// (TF32, cuDNN benchmarking) and the judge's own problem module as they were, and says what
// stopped it rather than throwing.
#include <gtest/gtest.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>

#include <pybind11/embed.h>

#include "judge/rehearsal.hpp"
#include "torch_host/backend_state.hpp"
#include "torch_host/device.hpp"
#include "torch_host/python_runtime.hpp"

namespace py = pybind11;
namespace fs = std::filesystem;

namespace kbv::judge {
namespace {

torch_host::PythonRuntime& runtime() {
  static auto* python = new torch_host::PythonRuntime();  // one interpreter per process, never torn down
  return *python;
}

// A problem with parameters and a BatchNorm in training mode, whose Model turns switches the
// judge must find as they were, and whose get_inputs counts its calls in a module global.
constexpr const char* kProblem = R"(
import torch, torch.nn as nn
DRAWS = 0

class Model(nn.Module):
    def __init__(self, features):
        super().__init__()
        self.linear = nn.Linear(features, features)
        self.norm = nn.BatchNorm1d(features)
        torch.backends.cudnn.benchmark = not torch.backends.cudnn.benchmark
        torch.set_float32_matmul_precision("medium")

    def forward(self, x):
        return torch.relu(self.norm(self.linear(x)))

def get_inputs():
    global DRAWS
    DRAWS += 1
    return [torch.randn(16, 32)]

def get_init_inputs():
    return [32]
)";

std::string write_problem(const std::string& name, const std::string& text) {
  fs::path dir = fs::temp_directory_path() / ("kbv-rehearsal-" + std::to_string(::getpid()));
  fs::create_directories(dir);
  fs::path path = dir / name;
  std::ofstream(path) << text;
  return path.string();
}

RehearsalPlan plan_for(const std::string& problem) {
  RehearsalPlan plan;
  plan.problem_path = problem;
  plan.device = at::Device(at::kCPU);
  for (const char* name : {"strict", "verified", "standard"}) plan.protocols.push_back(&protocol_by_name(name));
  plan.model_seed = 42;
  return plan;
}

TEST(Rehearsal, RunsEveryStepAndPutsBackTheSwitchesAModelTurns) {
  runtime();
  torch_host::set_tf32(false);
  const auto tf32 = torch_host::read_tf32();
  const auto backend = torch_host::capture_backend_state();
  auto stopped = rehearse_device_work(plan_for(write_problem("linear_bn.py", kProblem)));
  EXPECT_FALSE(stopped.has_value()) << *stopped;
  EXPECT_EQ(torch_host::read_tf32(), tf32);
  EXPECT_EQ(torch_host::capture_backend_state().cudnn_benchmark, backend.cudnn_benchmark);
  EXPECT_FALSE(py::module_::import("sys").attr("modules").contains("kbv_problem_rehearsal")) << "its module stays loaded";
}

TEST(Rehearsal, LeavesTheJudgesOwnProblemModuleAlone) {
  runtime();
  const std::string path = write_problem("counting.py", kProblem);
  py::module_ judges = torch_host::import_file(path, "kbv_problem");
  ASSERT_FALSE(rehearse_device_work(plan_for(path)).has_value());
  EXPECT_EQ(judges.attr("DRAWS").cast<int>(), 0) << "the rehearsal drew from the judge's problem module";
  EXPECT_TRUE(py::object(py::module_::import("sys").attr("modules")["kbv_problem"]).is(judges));
}

TEST(Rehearsal, SaysWhatStoppedItAndStillPutsTheSwitchesBack) {
  runtime();
  std::string text = kProblem;
  text += "\ndef get_inputs():\n    torch.set_float32_matmul_precision('medium')\n    raise RuntimeError('no inputs today')\n";
  torch_host::set_tf32(false);
  const auto tf32 = torch_host::read_tf32();
  auto plan = plan_for(write_problem("raises.py", text));
  auto stopped = rehearse_device_work(plan);
  ASSERT_TRUE(stopped.has_value());
  EXPECT_NE(stopped->find("no inputs today"), std::string::npos) << *stopped;
  EXPECT_EQ(torch_host::read_tf32(), tf32);
}

// A step that overruns the budget is the last: the rest are skipped, and it says so.
TEST(Rehearsal, StopsBetweenStepsOnceItsBudgetIsSpent) {
  runtime();
  std::string text = kProblem;
  text += "\nimport time\ntime.sleep(0.3)\n";
  auto plan = plan_for(write_problem("slow.py", text));
  plan.budget_seconds = 0.1;
  int steps = 0;
  plan.after_step = [&] { ++steps; };
  auto stopped = rehearse_device_work(plan);
  ASSERT_TRUE(stopped.has_value());
  EXPECT_NE(stopped->find("time budget ran out before rehearsal.draws"), std::string::npos) << *stopped;
  EXPECT_EQ(steps, 1);
}

TEST(Rehearsal, WantedOnCudaUnlessTurnedOffAndOnTheCpuOnlyWhenAskedFor) {
  const at::Device cpu(at::kCPU), cuda(at::kCUDA, 0);
  ::unsetenv("KBV_JUDGE_REHEARSAL");
  EXPECT_TRUE(rehearsal_wanted(cuda));
  EXPECT_FALSE(rehearsal_wanted(cpu));
  ::setenv("KBV_JUDGE_REHEARSAL", "off", 1);
  EXPECT_FALSE(rehearsal_wanted(cuda));
  EXPECT_FALSE(rehearsal_wanted(cpu));
  ::setenv("KBV_JUDGE_REHEARSAL", "on", 1);
  EXPECT_TRUE(rehearsal_wanted(cuda));
  EXPECT_TRUE(rehearsal_wanted(cpu));
  ::unsetenv("KBV_JUDGE_REHEARSAL");
}

}  // namespace
}  // namespace kbv::judge
