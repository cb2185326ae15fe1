#pragma once
// The strict checks that look only at what the judge itself observed (docs/checks.md): its own
// pristine inputs against the shared ones after a call, and its own copies of an output. Each
// returns evidence text when it finds something, std::nullopt when clean.
#include <optional>
#include <string>
#include <vector>

#include <ATen/ATen.h>

#include "torch_host/forward.hpp"

namespace kbv::judge {

// The judge's own copies of a call's outputs. On the GPU a kernel, not a copy-engine memcpy: it
// runs in the judge's time slice, right after the end of the call, before the sandbox's context
// can run again.
std::vector<at::Tensor> snapshot_outputs(const std::vector<at::Tensor>& views);

// input_mutated: the shared inputs after the candidate's call vs the judge's pristine copy
// (`after_call`: one tensor per argument, undefined for non-tensor ones).
std::optional<std::string> find_input_mutation(const torch_host::ArgList& pristine, const std::vector<at::Tensor>& after_call);

// unsynchronized_work: the outputs as they are now vs the judge's copies taken right after the
// call ended; a difference means something wrote them after forward()'s stream was done.
std::optional<std::string> find_late_writes(const std::vector<at::Tensor>& at_end, const std::vector<at::Tensor>& now);

// Before each timed sample: persisting-L2 lines back to normal and the carve-out given back, so
// no sample inherits another's L2 state (the flush then evicts everything).
void reset_persisting_l2(const at::Device& device);

}  // namespace kbv::judge
