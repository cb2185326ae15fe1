#include "torch_host/models.hpp"

#include <map>

#include <torch/csrc/autograd/grad_mode.h>
#include <torch/csrc/autograd/python_variable.h>
#include <torch/csrc/utils/pybind.h>

namespace py = pybind11;

namespace kbv::torch_host {
namespace {

std::string device_string(const at::Device& d) { return d.str(); }

py::object torch_dtype(at::ScalarType t) {
  py::module_ torch = py::module_::import("torch");
  switch (t) {
    case at::kBFloat16: return torch.attr("bfloat16");
    case at::kHalf: return torch.attr("float16");
    default: return torch.attr("float32");
  }
}

}  // namespace

py::object construct_model(const py::object& cls, const py::object& init_inputs, std::uint64_t seed,
                           const at::Device& device, std::optional<at::ScalarType> dtype) {
  py::module_ torch = py::module_::import("torch");
  at::manual_seed(seed);
  py::object device_ctx = torch.attr("device")(device_string(device));
  device_ctx.attr("__enter__")();
  py::object model;
  try {
    model = cls(*init_inputs);
  } catch (...) {
    device_ctx.attr("__exit__")(py::none(), py::none(), py::none());
    throw;
  }
  device_ctx.attr("__exit__")(py::none(), py::none(), py::none());
  model = model.attr("to")(device_string(device));
  if (dtype) model = model.attr("to")(py::arg("dtype") = torch_dtype(*dtype));
  return model;
}

std::vector<std::pair<std::string, at::Tensor>> state_entries(const py::object& model) {
  std::vector<std::pair<std::string, at::Tensor>> out;
  if (!py::hasattr(model, "state_dict")) return out;
  py::dict state = model.attr("state_dict")();
  for (auto item : state) {
    if (!THPVariable_Check(item.second.ptr())) continue;
    out.emplace_back(py::str(item.first).cast<std::string>(), THPVariable_Unpack(item.second.ptr()));
  }
  return out;
}

WeightCopy copy_named_weights(const std::vector<std::pair<std::string, at::Tensor>>& from, const py::object& to) {
  WeightCopy result;
  if (!py::hasattr(to, "state_dict")) {
    result.note = "ModelNew is not an nn.Module; weights not copied";
    return result;
  }
  std::map<std::string, at::Tensor> source(from.begin(), from.end());
  torch::autograd::AutoGradMode no_grad(false);
  std::vector<std::string> unmatched;
  for (auto& [name, dst] : state_entries(to)) {
    ++result.candidate_entries;
    auto it = source.find(name);
    if (it == source.end() || it->second.sizes() != dst.sizes()) {
      unmatched.push_back(name);
      continue;
    }
    dst.copy_(it->second);
    ++result.copied;
  }
  result.unmatched = unmatched;
  if (!unmatched.empty()) {
    result.note = "ModelNew state entries without a same-named, same-shaped Model entry (" +
                  std::to_string(unmatched.size()) + ", first '" + unmatched.front() +
                  "'): they keep their seeded initialisation";
  }
  return result;
}

std::vector<std::pair<std::string, at::Tensor>> named_parameters(const py::object& model) {
  std::vector<std::pair<std::string, at::Tensor>> out;
  if (!py::hasattr(model, "named_parameters")) return out;
  for (auto item : model.attr("named_parameters")()) {
    py::tuple pair = item.cast<py::tuple>();
    out.emplace_back(pair[0].cast<std::string>(), THPVariable_Unpack(pair[1].ptr()));
  }
  return out;
}

}  // namespace kbv::torch_host
