#pragma once
// Memory a model holds between calls: every tensor reachable from the model object and from the
// globals of the module that defines it (attributes, lists, dicts, nested objects), each
// storage counted once. A candidate that keeps a transposed weight copy, a scratch buffer or a
// cache in a plain attribute or a module-level dict holds that memory even though it is neither
// a parameter nor part of one forward's peak. Blind spot: memory held inside C++ (extension
// statics, raw cudaMalloc kept across calls), objects with __slots__ only.
#include <cstdint>
#include <vector>

#include <ATen/ATen.h>
#include <pybind11/pybind11.h>

namespace kbv::judge {

struct HeldMemory {
  std::int64_t bytes = 0;  // distinct tensor storages on the device
  bool truncated = false;  // the object graph was larger than the walk's cap: bytes is a floor
};

// The tensors on `device` reachable from `roots` (objects, or modules: their globals).
// Also walked: class attributes of classes and closures/defaults of functions defined in a root
// module. Not seen: __slots__-only objects, memory held in C++.
HeldMemory held_tensor_bytes(const std::vector<pybind11::object>& roots, const at::Device& device);

}  // namespace kbv::judge
