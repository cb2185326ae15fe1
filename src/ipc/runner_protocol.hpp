#pragma once
// The messages between the judge and a runner (the candidate's sandbox, or the trusted twin that
// gives baselines the same context switches a candidate call pays). The judge asks, the runner
// answers; a runner never starts a conversation, and nothing it says is more than data: the
// judge validates every field (message_fields.hpp) and decides everything itself.
//
//   judge -> runner                               runner -> judge
//   hello {device, precision, tf32,               imported {extensions}     (the twin: ready)
//          candidate {path, module}, build {...}, | built {extensions}            (build_only)
//          build_only, arena_bytes}               | failed {stage, kind, message, detail}
//                          + fds: hop page, arena
//   construct {init_inputs, model_seed, tf32}     constructed {state: [{name, shape}]} | failed
//     (again for each protocol the sandbox serves: a fresh ModelNew under that protocol's TF32)
//   weights {block}        + fd (CPU)             weights_loaded {copied, entries, unmatched}
//   bind {slot, block, args: [{tensor: i} |       bound {slot}
//         {value: json}]}  + fd (CPU)
//   call {seq, slot, trace?}                      called {seq, status: ok|error, outputs | error}
//                                                 completed {seq, error, unjoined?}  (after its
//                                                   device work; unjoined: when traced, the
//                                                   kernels of other streams still running at
//                                                   the call's end, sandbox/call_trace.hpp)
//   memory {slot}                                 memory {peak_allocated, peak_device, method}
//   bye                                           (exits)
//
// On the GPU a call also crosses the shared hop page (hop_words.hpp): the runner's current
// stream waits for `start` >= seq before forward() and writes `done` = seq after it.
#include <cstdint>

namespace kbv::ipc {

inline constexpr int kRunnerChannelFd = 3;  // where the runner finds its end of the channel
inline constexpr std::uint32_t kMaxSlots = 8;
// The runner's exit code after it reported a CUDA error at synchronisation (its context is lost).
inline constexpr int kRunnerExitAfterDeviceError = 6;

}  // namespace kbv::ipc
