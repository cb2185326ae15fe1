#pragma once
// The strict protocol's runtime checks that inspect tensors and device state (docs/checks.md).
// Each returns evidence text when it finds something, std::nullopt when clean. The worker turns
// evidence into named flags.
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include <ATen/ATen.h>

#include "worker/forward.hpp"

namespace kbv::worker {

// input_mutated: the candidate's copy of the inputs after its call vs the pristine originals.
std::optional<std::string> find_input_mutation(const ArgList& pristine, const ArgList& after_call);

// output_aliases_input: an output's storage overlaps an input's or a parameter's.
std::optional<std::string> find_output_aliasing(
    const std::vector<at::Tensor>& outputs, const ArgList& inputs,
    const std::vector<std::pair<std::string, at::Tensor>>& parameters);

// stale_memory: every free block the caching allocator holds is filled with 0xFF bytes (NaN in
// every float format) so that memory a candidate reads without writing is poison, not an old
// result. Returns the bytes poisoned. No-op on the CPU.
std::int64_t poison_free_device_memory(const at::Device& device);

// Whether an output still holds the poison pattern in a noticeable share of its elements (it
// returned memory it never wrote).
std::optional<std::string> find_poison_in_outputs(const std::vector<at::Tensor>& outputs);

// persisting_l2: resets the persisting-L2 lines and reports a candidate-set access policy
// window on the current stream or a non-zero persisting-L2 limit.
void reset_persisting_l2(const at::Device& device);
std::optional<std::string> find_persisting_l2(const at::Device& device);

}  // namespace kbv::worker
