#pragma once
// KernelBench-Verified's hidden-test files (hidden_tests/level1/7_hidden.py): a module whose
// get_hidden_inputs() returns a list of input lists, one per configuration. The judge runs such a
// file as trusted input, like the problem itself, and checks the candidate on each list as one
// more correctness distribution, "hidden_1".."hidden_N". The file is no secret (a candidate may
// read it), so its lists must not be told apart from the rest: they run at secret places among
// the protocol's distributions, and those shaped like get_inputs() are drawn in one timed round
// in four too, always checked and never counted (timing_phase.cpp).
#include <cstdint>
#include <string>
#include <vector>

#include <pybind11/pybind11.h>

#include "core/protocol.hpp"
#include "judge/inputs.hpp"

namespace kbv::judge {

struct HiddenTests {
  pybind11::object get_hidden_inputs;  // the file's function; none when no file was given
  int sets = 0;                        // how many input lists it returns (the same under every seed)
  std::vector<bool> timeable;          // per list: shaped like get_inputs() (same sizes, strides, dtypes, values)
};

// Whether two argument lists bind to the same shared input slot: same tensors' sizes, strides
// and dtypes, same plain values.
bool same_layout(const ArgList& a, const ArgList& b);

// Imports `path` with the problem module's public names already in its namespace (a hidden-test
// file written next to its problem may use the problem's size constants). Throws
// std::runtime_error (a problem_error) when the file defines no get_hidden_inputs(); `sets` and
// `timeable` are the caller's to fill from hidden_input_lists().
HiddenTests load_hidden_tests(const std::string& path, const pybind11::module_& problem);

// Every list get_hidden_inputs() returns under `seed`, as arguments on the device (cast like
// get_inputs()'s). Throws std::runtime_error unless it returns a non-empty list of lists.
std::vector<ArgList> hidden_input_lists(const HiddenTests& hidden, const InputSource& source, std::uint64_t seed);

// One distribution per input list, named hidden_1..hidden_N, all drawn under `seed`.
std::vector<DistributionSpec> hidden_distributions(const HiddenTests& hidden, std::uint64_t seed);

// `protocol`'s distributions in their order, with `hidden` inserted at places drawn from
// `secret` (a candidate that counts its calls cannot tell which are the file's).
std::vector<DistributionSpec> interleave(std::vector<DistributionSpec> protocol, const std::vector<DistributionSpec>& hidden,
                                         std::uint64_t secret);

// The arguments of one hidden distribution: get_hidden_inputs() again under spec.seed (so no
// list stays in memory between distributions), list spec.input_set, moved to the device and
// cast like get_inputs()'s.
ArgList hidden_inputs(const HiddenTests& hidden, const InputSource& source, const DistributionSpec& spec);

}  // namespace kbv::judge
