#pragma once
// The call window: what one call of the candidate is on the device, whatever stream its work
// used (docs/timing.md, "The call window"). The judge cannot see the sandbox's streams, so it
// makes every way of working outside the window visible in the outputs it reads itself:
// - between calls the shared inputs hold poison (NaN; zeros for integers), put there and
//   finished on the device before the next call is asked for, so work that starts before the
//   window, on a stream that never waits for the caller's, reads poison, not the round's inputs
//   nor the last round's (a loss that barely moves between draws cannot pass by luck);
// - the call's outputs are poisoned after the judge's snapshot too (NaN, or the bitwise
//   complement of what they held), so an output handed back again without being written again
//   never equals the right answer;
// - the outputs read once the sandbox says its device work is over are compared with the
//   snapshot taken at the window's end: work that outlived the window changed them.
// Each of these only ever reads what the judge itself wrote and read; nothing the sandbox says
// decides them.
#include <optional>
#include <string>
#include <vector>

#include <ATen/ATen.h>

#include "ipc/message_fields.hpp"

namespace kbv::judge {

// What fills a tensor between calls: NaN for floating types; for integers and booleans, zeros
// in inputs (an index of 0 is in range for any kernel that reads it too early) and the bitwise
// complement of `was` in outputs (so it differs from what was there, element by element).
void fill_input_poison(at::Tensor& t);
void fill_output_poison(at::Tensor& t, const at::Tensor& was);

// dst <- src with a kernel in the judge's context on the GPU (a copy-engine memcpy could run beside
// the sandbox's kernels, outside the time-slicing the window relies on, so a kernel of the
// sandbox's that spins until its inputs stop being NaN could compute while they arrive); a plain
// copy on the CPU and for types no kernel below covers.
void copy_on_the_sms(at::Tensor& dst, const at::Tensor& src);

// Evidence that a wrong output was computed from poisoned inputs: NaN where the reference is
// finite, in most of an output. Empty when the output does not look like that.
std::string poison_evidence(const std::vector<at::Tensor>& reference, const std::vector<at::Tensor>& output);

// Evidence that a wrong output is what the candidate computes from the poison itself (a kernel
// that maps NaN to a number, as fmaxf(x, 0) does, leaves no NaN): most elements where `output`
// is outside the tolerance of `reference` equal `from_poison` (the candidate's settled output on
// inputs that hold only the poison; NaN equals NaN). Empty when it does not look like that.
std::string computed_from_poison(const std::vector<at::Tensor>& reference, const std::vector<at::Tensor>& output,
                                 const std::vector<at::Tensor>& from_poison, double atol, double rtol);

// The sandbox's own trace of a checked call (a "completed" answer's "unjoined", call_trace.hpp):
// kernels of other streams still running when the call's stream reached its end. Evidence the
// candidate's own process gives against it, so it can only ever add a finding; nullopt when
// there is none. Throws ipc::ProtocolError on a malformed list.
std::optional<std::string> unjoined_kernels(const ipc::Fields& completed);

}  // namespace kbv::judge
