// held_tensor_bytes (src/worker/held_memory.*): memory a model keeps between calls, found by
// walking the model object and its module's globals, on the CPU with the embedded interpreter.
#include <gtest/gtest.h>

#include <pybind11/embed.h>

#include "judge/held_memory.hpp"
#include "torch_host/python_runtime.hpp"

namespace py = pybind11;

namespace kbv::judge {
using namespace kbv::torch_host;
namespace {

PythonRuntime& runtime() {
  static PythonRuntime* python = new PythonRuntime();  // one interpreter per process, never torn down
  return *python;
}

// Runs `source` as a fresh module named `name` and returns it.
py::module_ module_from(const std::string& name, const std::string& source) {
  runtime();
  py::module_ m = py::module_::import("types").attr("ModuleType")(name);
  py::exec(source, m.attr("__dict__"));
  return m;
}

const at::Device kCpu{at::kCPU};

TEST(HeldMemory, CountsParametersPlainAttributesContainersAndGlobalsOnce) {
  py::module_ m = module_from("held_a", R"(
import torch, torch.nn as nn
_cache = {"wt": torch.zeros(1000)}                 # 4000 bytes in a module-level dict

class Holder:
    def __init__(self):
        self.scratch = [torch.zeros(500)]           # 2000 bytes inside a plain object's list

class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()
        self.linear = nn.Linear(10, 10)             # 440 bytes of parameters
        self.wt = self.linear.weight.t().contiguous()   # 400 bytes, a plain attribute
        self.view = self.wt[:5]                     # same storage: not counted again
        self.holder = Holder()
        self.pair = (torch.zeros(250), 3)           # 1000 bytes in a tuple
model = ModelNew()
)");
  std::int64_t with_globals = held_tensor_bytes({m.attr("model"), m}, kCpu).bytes;
  EXPECT_EQ(with_globals, 440 + 400 + 2000 + 1000 + 4000);
  EXPECT_EQ(held_tensor_bytes({m.attr("model")}, kCpu).bytes, 440 + 400 + 2000 + 1000);
}

TEST(HeldMemory, RunsNoCandidateCode) {
  // Properties, __getattr__ and custom iteration are not invoked by the walk.
  py::module_ m = module_from("held_b", R"(
import torch, torch.nn as nn
calls = []
class Sneaky(list):
    def __iter__(self):
        calls.append("iter")
        return iter([])
class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()
        self.items = Sneaky([torch.zeros(100)])      # walked through its __dict__, not __iter__
    @property
    def expensive(self):
        calls.append("property")
        return torch.zeros(10**6)
    def __getattr__(self, name):
        calls.append("getattr " + name)
        return super().__getattr__(name)
    def __getattribute__(self, name):
        if name == "__class__":
            calls.append("__class__")
        return super().__getattribute__(name)
model = ModelNew()
calls.clear()
)");
  EXPECT_EQ(held_tensor_bytes({m.attr("model"), m}, kCpu).bytes, 400) << "the list subclass's items are read directly";
  EXPECT_EQ(py::len(m.attr("calls")), 0u) << py::str(m.attr("calls")).cast<std::string>();
}

TEST(HeldMemory, FindsCachesOnClassesAndInClosures) {
  py::module_ m = module_from("held_d", R"(
import torch, torch.nn as nn
def make_forward():
    cache = {"w": torch.zeros(300)}                  # 1200 bytes captured by a closure
    def forward(self, x):
        return cache["w"]
    return forward
class ModelNew(nn.Module):
    table = [torch.zeros(200)]                        # 800 bytes on the class
    forward = make_forward()
model = ModelNew()
)");
  EXPECT_EQ(held_tensor_bytes({m.attr("model"), m}, kCpu).bytes, 1200 + 800);
}

TEST(HeldMemory, SkipsTensorsWithoutRealStorage) {
  // A fake tensor (python-dispatch subclass) holds no device memory and must not throw.
  py::module_ m = module_from("held_e", R"(
import torch
from torch._subclasses.fake_tensor import FakeTensorMode
with FakeTensorMode():
    fake = torch.zeros(1000)
real = torch.zeros(10)
)");
  EXPECT_EQ(held_tensor_bytes({m}, kCpu).bytes, 40);
}

TEST(HeldMemory, OnlyCountsTheAskedDevice) {
  py::module_ m = module_from("held_c", "import torch\nx = torch.zeros(100)\n");
  EXPECT_EQ(held_tensor_bytes({m}, kCpu).bytes, 400);
  EXPECT_EQ(held_tensor_bytes({m}, at::Device(at::kCUDA, 0)).bytes, 0);
}

}  // namespace
}  // namespace kbv::judge
