#pragma once
// tampering: remembers the identity of the torch, timing and comparison functions a harness
// could rely on (and the TF32 switches and RNG seeds) and reports what a candidate changed.
// kbv's own evaluation does not use those Python functions, so its results stay right; the
// flag says the candidate tried.
#include <cstdint>
#include <string>
#include <vector>

#include <pybind11/pybind11.h>

#include "worker/device.hpp"

namespace kbv::worker {

class TamperWatch {
 public:
  TamperWatch();  // takes the snapshot: call before the candidate is imported
  // Attributes that no longer are what they were at the snapshot, e.g. "torch.allclose replaced".
  std::vector<std::string> changed_attributes() const;

 private:
  pybind11::object snapshot_fn_;
  pybind11::dict before_;
};

// Seeds the default CPU and CUDA generators with `seed` and returns it, so that after a
// candidate's call `reseeded(seed)` can tell whether it called manual_seed itself.
std::uint64_t seed_default_generators(std::uint64_t seed);
bool default_generators_reseeded(std::uint64_t seed);

}  // namespace kbv::worker
