#include "judge/held_memory.hpp"

#include <deque>
#include <string>
#include <unordered_set>

#include <torch/csrc/autograd/python_variable.h>

namespace py = pybind11;

namespace kbv::judge {
namespace {

// Enough for any real model; a candidate that builds a huge object graph is not walked forever.
constexpr std::size_t kMaxObjects = 200000;

// Scalars and strings hold no model state.
bool is_scalar(PyObject* o) {
  return o == Py_None || PyUnicode_Check(o) || PyBytes_Check(o) || PyLong_Check(o) || PyFloat_Check(o) || PyBool_Check(o);
}

// A string entry of a dict (a type's `__module__`, a module's `__name__`), without attribute
// lookups; "" when absent or not a string.
std::string string_item(PyObject* dict, const char* key) {
  if (dict == nullptr || !PyDict_Check(dict)) return {};
  PyObject* name = PyDict_GetItemString(dict, key);  // borrowed; no code runs for str keys
  if (name == nullptr || !PyUnicode_Check(name)) return {};
  const char* text = PyUnicode_AsUTF8(name);
  if (text == nullptr) {
    PyErr_Clear();
    return {};
  }
  return text;
}

// Turns the interpreter's cyclic GC off for a scope: a collection could run finalizers
// (candidate code) and free objects the walk holds borrowed pointers to.
class GcPause {
 public:
  GcPause() : was_enabled_(PyGC_Disable() != 0) {}
  ~GcPause() {
    if (was_enabled_) PyGC_Enable();
  }

 private:
  bool was_enabled_;
};

}  // namespace

HeldMemory held_tensor_bytes(const std::vector<py::object>& roots, const at::Device& device) {
  // Reads objects through the C API only (PyDict_Next, list/tuple item arrays, exact-set
  // iteration, instance and class dicts, function closures): no candidate code (__iter__,
  // __getattr__, properties, __class__) runs while the walk looks.
  GcPause no_gc;
  HeldMemory held;
  std::unordered_set<PyObject*> seen;
  std::unordered_set<const void*> storages;
  std::unordered_set<std::string> root_modules;  // classes and functions defined there are walked
  std::deque<PyObject*> queue;
  std::vector<py::object> keep;  // strong references to everything the walk produced itself
  auto push = [&](PyObject* o) {
    if (o != nullptr && seen.insert(o).second) queue.push_back(o);
  };
  for (const auto& r : roots) {
    if (PyModule_Check(r.ptr())) {
      PyObject* globals = PyModule_GetDict(r.ptr());  // borrowed, owned by the module
      if (const char* name = PyModule_GetName(r.ptr())) root_modules.insert(name);
      else PyErr_Clear();
      push(globals);
    } else {
      push(r.ptr());
    }
  }
  while (!queue.empty()) {
    if (seen.size() >= kMaxObjects) {
      held.truncated = true;
      break;
    }
    PyObject* o = queue.front();
    queue.pop_front();
    // A type check on the real type (THPVariable_Check would ask __class__, i.e. run code).
    if (THPVariableClass != nullptr && PyObject_TypeCheck(o, reinterpret_cast<PyTypeObject*>(THPVariableClass))) {
      try {
        const at::Tensor& t = THPVariable_Unpack(o);
        // Python-dispatch subclasses (fake or wrapper tensors) have no real storage to count.
        if (t.defined() && !t.unsafeGetTensorImpl()->is_python_dispatch() && t.has_storage() && t.device() == device &&
            storages.insert(t.storage().unsafeGetStorageImpl()).second)
          held.bytes += static_cast<std::int64_t>(t.storage().nbytes());
      } catch (const std::exception&) {
        // symbolic or otherwise unmeasurable storage: not counted
      }
      continue;
    }
    if (is_scalar(o)) continue;
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
    if (PyAnySet_CheckExact(o)) {  // built-in iteration only for exact sets
      PyObject* it = PyObject_GetIter(o);
      if (it == nullptr) {
        PyErr_Clear();
        continue;
      }
      while (PyObject* item = PyIter_Next(it)) {
        keep.push_back(py::reinterpret_steal<py::object>(item));
        push(item);
      }
      Py_DECREF(it);
      PyErr_Clear();
      continue;
    }
    if (PyModule_Check(o) || PyCFunction_Check(o)) continue;  // other modules and builtins: code
    if (PyType_Check(o)) {
      // Class attributes of classes the candidate defined (a cache on the class is held too).
      PyObject* dict = reinterpret_cast<PyTypeObject*>(o)->tp_dict;
      if (root_modules.count(string_item(dict, "__module__"))) push(dict);
      continue;
    }
    if (PyMethod_Check(o)) {
      push(PyMethod_GET_SELF(o));
      push(PyMethod_GET_FUNCTION(o));
      continue;
    }
    if (PyFunction_Check(o)) {
      // Closures and defaults of the candidate's functions (e.g. a cache captured by a lambda).
      if (!root_modules.count(string_item(PyFunction_GET_GLOBALS(o), "__name__"))) continue;
      if (PyObject* defaults = PyFunction_GET_DEFAULTS(o)) push(defaults);
      if (PyObject* kwdefaults = PyFunction_GET_KW_DEFAULTS(o)) push(kwdefaults);
      if (PyObject* closure = PyFunction_GET_CLOSURE(o)) {
        for (Py_ssize_t i = 0; i < PyTuple_GET_SIZE(closure); ++i) {
          PyObject* cell = PyTuple_GET_ITEM(closure, i);
          if (PyCell_Check(cell)) push(PyCell_GET(cell));
        }
      }
      continue;
    }
    // Any other object (nn.Module included: its _parameters, _buffers and _modules are dicts in
    // its __dict__): walk its instance dict. Objects with __slots__ only are not seen.
    PyObject* dict = PyObject_GenericGetDict(o, nullptr);
    if (dict == nullptr) {
      PyErr_Clear();
      continue;
    }
    keep.push_back(py::reinterpret_steal<py::object>(dict));
    push(dict);
  }
  return held;
}

}  // namespace kbv::judge
