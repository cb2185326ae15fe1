#include "worker/tamper_watch.hpp"

#include <ATen/CPUGeneratorImpl.h>
#include <ATen/Context.h>
#include <pybind11/eval.h>

namespace py = pybind11;

namespace kbv::worker {
namespace {

constexpr const char* kSnapshotSource = R"PY(
import builtins, importlib

WATCHED = [
    "torch.allclose", "torch.isclose", "torch.equal", "torch.testing.assert_close",
    "torch.Tensor.__eq__", "torch.Tensor.allclose", "torch.Tensor.equal", "torch.Tensor.sub",
    "torch.Tensor.abs", "torch.Tensor.max", "torch.abs", "torch.max",
    "torch.cuda.synchronize", "torch.cuda.Event", "torch.cuda.Event.record",
    "torch.cuda.Event.elapsed_time", "torch.cuda.current_stream", "torch.cuda.Stream",
    "torch.cuda.Stream.synchronize", "torch.cuda.memory_allocated", "torch.cuda.max_memory_allocated",
    "torch.cuda.reset_peak_memory_stats", "torch.cuda.empty_cache",
    "torch.manual_seed", "torch.cuda.manual_seed", "torch.cuda.manual_seed_all", "torch.seed",
    "torch.rand", "torch.randn", "torch.randint", "torch.empty", "torch.zeros", "torch.ones",
    "torch.nn.Module.__call__", "torch.nn.Module._call_impl", "torch.Tensor.to", "torch.Tensor.cuda",
    "torch.Tensor.clone", "torch.Tensor.copy_", "torch.set_float32_matmul_precision",
    "torch.nn.functional.relu", "torch.relu", "torch.matmul", "torch.Tensor.__matmul__",
    "time.perf_counter", "time.time", "time.monotonic",
]

def _resolve(path):
    parts = path.split(".")
    obj = importlib.import_module(parts[0])
    for p in parts[1:]:
        obj = getattr(obj, p)
    return obj

def snapshot():
    out = {}
    for path in WATCHED:
        try:
            out[path] = id(_resolve(path))
        except Exception:
            out[path] = None
    return out
)PY";

}  // namespace

TamperWatch::TamperWatch() {
  py::dict scope;
  scope["__builtins__"] = py::module_::import("builtins");
  py::exec(kSnapshotSource, scope);
  snapshot_fn_ = scope["snapshot"];
  before_ = snapshot_fn_();
}

std::vector<std::string> TamperWatch::changed_attributes() const {
  std::vector<std::string> changed;
  py::dict now = snapshot_fn_();
  for (auto item : before_) {
    py::object before = py::reinterpret_borrow<py::object>(item.second);
    if (!now.contains(item.first) || !py::reinterpret_borrow<py::object>(now[item.first]).equal(before))
      changed.push_back(py::str(item.first).cast<std::string>() + " replaced");
  }
  return changed;
}

std::uint64_t seed_default_generators(std::uint64_t seed) {
  at::manual_seed(seed);
  return seed;
}

bool default_generators_reseeded(std::uint64_t seed) {
  auto gen = at::detail::getDefaultCPUGenerator();
  std::lock_guard<std::mutex> lock(gen.mutex());
  return gen.current_seed() != seed;
}

}  // namespace kbv::worker
