#include "torch_host/py_json.hpp"

#include <stdexcept>
#include <string>

namespace py = pybind11;

namespace kbv::torch_host {
namespace {

constexpr int kMaxDepth = 8;

nlohmann::json to_json(const py::handle& v, int depth) {
  if (depth > kMaxDepth) throw std::runtime_error("a value nested more than 8 deep");
  if (v.is_none()) return nullptr;
  if (py::isinstance<py::bool_>(v)) return v.cast<bool>();
  if (py::isinstance<py::int_>(v)) return v.cast<std::int64_t>();
  if (py::isinstance<py::float_>(v)) return v.cast<double>();
  if (py::isinstance<py::str>(v)) return v.cast<std::string>();
  if (py::isinstance<py::list>(v) || py::isinstance<py::tuple>(v)) {
    nlohmann::json out = nlohmann::json::array();
    for (auto item : v) out.push_back(to_json(item, depth + 1));
    return out;
  }
  if (py::isinstance<py::dict>(v)) {
    nlohmann::json out = nlohmann::json::object();
    for (auto item : v.cast<py::dict>()) {
      if (!py::isinstance<py::str>(item.first)) throw std::runtime_error("a dict with a non-string key");
      out[item.first.cast<std::string>()] = to_json(item.second, depth + 1);
    }
    return out;
  }
  throw std::runtime_error("a value of type " + py::str(py::type::handle_of(v).attr("__name__")).cast<std::string>() +
                           " (only None, bool, int, float, str and lists/dicts of them cross to the sandbox)");
}

py::object to_python(const nlohmann::json& v, int depth) {
  if (depth > kMaxDepth) throw std::runtime_error("a value nested more than 8 deep");
  if (v.is_null()) return py::none();
  if (v.is_boolean()) return py::bool_(v.get<bool>());
  if (v.is_number_integer()) return py::int_(v.get<std::int64_t>());
  if (v.is_number_float()) return py::float_(v.get<double>());
  if (v.is_string()) return py::str(v.get<std::string>());
  if (v.is_array()) {
    py::list out;
    for (const auto& item : v) out.append(to_python(item, depth + 1));
    return out;
  }
  if (v.is_object()) {
    py::dict out;
    for (const auto& [k, item] : v.items()) out[py::str(k)] = to_python(item, depth + 1);
    return out;
  }
  throw std::runtime_error("an unsupported JSON value");
}

}  // namespace

nlohmann::json python_to_json(const py::handle& value) { return to_json(value, 0); }
py::object json_to_python(const nlohmann::json& value) { return to_python(value, 0); }

}  // namespace kbv::torch_host
