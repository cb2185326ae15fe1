#include "worker/held_memory.hpp"

#include <deque>
#include <unordered_set>

#include <torch/csrc/autograd/python_variable.h>

namespace py = pybind11;

namespace kbv::worker {
namespace {

// Enough for any real model; a candidate that builds a huge object graph is not walked forever.
constexpr std::size_t kMaxObjects = 200000;

// Code and scalars hold no model state.
bool holds_no_state(PyObject* o, PyObject* module_type) {
  return o == Py_None || PyType_Check(o) || PyObject_TypeCheck(o, reinterpret_cast<PyTypeObject*>(module_type)) ||
         PyFunction_Check(o) || PyMethod_Check(o) || PyCFunction_Check(o) || PyUnicode_Check(o) || PyBytes_Check(o) ||
         PyLong_Check(o) || PyFloat_Check(o) || PyBool_Check(o);
}

}  // namespace

std::int64_t held_tensor_bytes(const std::vector<py::object>& roots, const at::Device& device) {
  // Reads containers through the C API only (PyDict_Next, list/tuple item arrays, the
  // instance __dict__), so no candidate code (__iter__, __getattr__, properties) runs.
  py::object module_type = py::module_::import("types").attr("ModuleType");
  std::unordered_set<PyObject*> seen;
  std::unordered_set<const void*> storages;
  std::deque<PyObject*> queue;
  std::vector<py::object> keep;  // instance dicts materialised by the walk
  std::int64_t total = 0;
  auto push = [&](PyObject* o) {
    if (o != nullptr && seen.insert(o).second) queue.push_back(o);
  };
  for (const auto& r : roots) {
    if (py::isinstance(r, module_type)) {
      keep.push_back(r.attr("__dict__"));  // a module's globals
      push(keep.back().ptr());
    } else {
      push(r.ptr());
    }
  }
  while (!queue.empty() && seen.size() < kMaxObjects) {
    PyObject* o = queue.front();
    queue.pop_front();
    if (THPVariable_Check(o)) {
      const at::Tensor& t = THPVariable_Unpack(o);
      if (t.defined() && t.has_storage() && t.device() == device && storages.insert(t.storage().data()).second)
        total += static_cast<std::int64_t>(t.storage().nbytes());
      continue;
    }
    if (PyDict_Check(o)) {
      PyObject *key, *value;
      Py_ssize_t pos = 0;
      while (PyDict_Next(o, &pos, &key, &value)) push(value);
      continue;
    }
    if (PyList_Check(o) || PyTuple_Check(o)) {  // the item array itself: no __iter__ runs
      Py_ssize_t n = PySequence_Fast_GET_SIZE(o);
      PyObject** items = PySequence_Fast_ITEMS(o);
      for (Py_ssize_t i = 0; i < n; ++i) push(items[i]);
      continue;
    }
    if (holds_no_state(o, module_type.ptr())) continue;
    // Any other object (nn.Module included: its _parameters, _buffers and _modules are dicts in
    // its __dict__): walk its attributes.
    PyObject* dict = PyObject_GenericGetDict(o, nullptr);
    if (dict == nullptr) {
      PyErr_Clear();
      continue;
    }
    keep.push_back(py::reinterpret_steal<py::object>(dict));
    push(dict);
  }
  return total;
}

}  // namespace kbv::worker
