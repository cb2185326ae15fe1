#include "judge/hidden_tests.hpp"

#include <random>
#include <stdexcept>

#include "torch_host/py_json.hpp"

namespace py = pybind11;

namespace kbv::judge {
namespace {

// Every input list of the file, drawn under `seed` on the evaluation device.
py::list all_lists(const HiddenTests& hidden, const InputSource& source, std::uint64_t seed) {
  py::object drawn = call_on_device(hidden.get_hidden_inputs, source.device, seed);
  if (!py::isinstance<py::list>(drawn) && !py::isinstance<py::tuple>(drawn))
    throw std::runtime_error("get_hidden_inputs() must return a list of input lists, not " +
                             py::str(py::type::of(drawn).attr("__name__")).cast<std::string>());
  return py::list(drawn);
}

}  // namespace

HiddenTests load_hidden_tests(const std::string& path, const py::module_& problem) {
  py::module_ util = py::module_::import("importlib.util");
  py::object spec = util.attr("spec_from_file_location")("kbv_hidden_tests", path);
  if (spec.is_none()) throw std::runtime_error("cannot import hidden-test file '" + path + "' as a Python module");
  py::object module = util.attr("module_from_spec")(spec);
  py::dict names = module.attr("__dict__");
  for (auto item : py::dict(problem.attr("__dict__"))) {
    std::string name = py::str(item.first).cast<std::string>();
    if (!name.empty() && name[0] != '_') names[item.first] = item.second;
  }
  spec.attr("loader").attr("exec_module")(module);
  if (!py::hasattr(module, "get_hidden_inputs"))
    throw std::runtime_error("hidden-test file '" + path + "' defines no get_hidden_inputs()");
  return HiddenTests{module.attr("get_hidden_inputs"), 0, {}};
}

std::vector<ArgList> hidden_input_lists(const HiddenTests& hidden, const InputSource& source, std::uint64_t seed) {
  py::list lists = all_lists(hidden, source, seed);
  if (lists.empty()) throw std::runtime_error("get_hidden_inputs() returned no input list");
  std::vector<ArgList> out;
  for (std::size_t i = 0; i < lists.size(); ++i) {
    if (!py::isinstance<py::list>(lists[i]) && !py::isinstance<py::tuple>(lists[i]))
      throw std::runtime_error("get_hidden_inputs(): item " + std::to_string(i) + " is not a list of inputs");
    out.push_back(args_on_device(lists[i], source));
  }
  return out;
}

std::vector<DistributionSpec> hidden_distributions(const HiddenTests& hidden, std::uint64_t seed) {
  std::vector<DistributionSpec> out;
  for (int i = 0; i < hidden.sets; ++i)
    out.push_back({"hidden_" + std::to_string(i + 1), DistributionKind::hidden_file, 1.0, seed, i});
  return out;
}

std::vector<DistributionSpec> interleave(std::vector<DistributionSpec> protocol, const std::vector<DistributionSpec>& hidden,
                                         std::uint64_t secret) {
  std::mt19937_64 rng(secret ^ 0x68696464656eULL);
  for (const auto& h : hidden) {
    // Any of the places from the first to after the last, as evenly as a modulo allows.
    auto at = static_cast<std::ptrdiff_t>(rng() % (protocol.size() + 1));
    protocol.insert(protocol.begin() + at, h);
  }
  return protocol;
}

bool same_layout(const ArgList& a, const ArgList& b) {
  if (a.size() != b.size()) return false;
  for (std::size_t i = 0; i < a.size(); ++i) {
    if (a[i].is_tensor != b[i].is_tensor) return false;
    if (a[i].is_tensor) {
      const auto &x = a[i].tensor, &y = b[i].tensor;
      if (x.defined() != y.defined()) return false;
      if (x.defined() && (x.sizes() != y.sizes() || x.strides() != y.strides() || x.scalar_type() != y.scalar_type()))
        return false;
    } else if (torch_host::python_to_json(a[i].value) != torch_host::python_to_json(b[i].value)) {
      return false;
    }
  }
  return true;
}

ArgList hidden_inputs(const HiddenTests& hidden, const InputSource& source, const DistributionSpec& spec) {
  py::list lists = all_lists(hidden, source, spec.seed);
  if (spec.input_set >= static_cast<int>(lists.size()))
    throw std::runtime_error("get_hidden_inputs() returned " + std::to_string(lists.size()) + " lists this time, " +
                             std::to_string(hidden.sets) + " before");
  return args_on_device(lists[static_cast<std::size_t>(spec.input_set)], source);
}

}  // namespace kbv::judge
