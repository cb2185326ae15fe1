#pragma once
// Holds a CUDA stream at one point until the host opens the gate (or a timeout passes), so the
// work a caller queues behind it starts all at once, at a moment the host chooses.
//
// Why the strict audit needs it: the audit asks whether side-stream work is still running when
// the current stream is done with forward(). Without a gate the current stream runs as the host
// queues it, so the answer depends on host latency: a 0.13 ms side kernel that waits for the
// current stream and is never joined had finished before the audit's marker was even queued
// (measured on the H200, bench/RESULTS.md). With the current stream gated until forward() has
// returned and the marker is queued, side work that waits for the current stream is released
// together with the marker, whatever the host's speed.
//
// How: a host function on a private non-blocking stream waits on a condition variable; an event
// recorded after it is what the gated stream waits for. Runtime API only, no device code.
// The timeout keeps a forward() that synchronises the gated stream (`.item()`,
// `torch.cuda.synchronize()`) from deadlocking: it waits out the timeout, and timed_out() says
// the gate opened by itself, so the caller knows the host decided the timing after all.
// While the gate is closed, CUDA's host-function thread is blocked: a candidate's own
// cudaLaunchHostFunc callbacks wait behind it (at most the timeout).
#include <chrono>
#include <memory>
#include <string>

namespace kbv::cuda {

class StreamGate {
 public:
  explicit StreamGate(std::chrono::milliseconds timeout);
  // Opens the gate and waits for its host function. Even when that wait fails (a sticky CUDA
  // error), the host function only touches state it co-owns, so nothing dangles.
  ~StreamGate();
  StreamGate(const StreamGate&) = delete;
  StreamGate& operator=(const StreamGate&) = delete;

  // Makes `cuda_stream` (a cudaStream_t as void*) wait at its current end until open(). False,
  // with error() saying why, if CUDA refused (the stream then is not gated).
  bool close(void* cuda_stream);
  // Releases whatever waits on the gate. Idempotent.
  void open();
  // The gate opened by itself, before open() was called.
  bool timed_out() const;
  std::string error() const { return error_; }

 private:
  struct State;  // what the host function shares with the gate
  static void wait_for_open(void* state);  // the host function, on CUDA's callback thread

  std::shared_ptr<State> state_;
  void* gate_stream_ = nullptr;   // cudaStream_t
  void* opened_event_ = nullptr;  // cudaEvent_t
  std::string error_;
};

}  // namespace kbv::cuda
