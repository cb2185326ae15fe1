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
// How: the gated stream waits (cuStreamWaitValue32) until a mapped pinned word reaches this
// gate's value; open() stores it from the host, and the GPU, polling the word, sees it within
// microseconds. (A first version blocked a cudaLaunchHostFunc on a condition variable: on the
// H200 the stream got going 50-200 us after open(), long enough for a side kernel that does
// not wait for the current stream to finish unseen; bench/RESULTS.md, session 4.)
// The timeout keeps a forward() that synchronises the gated stream (`.item()`,
// `torch.cuda.synchronize()`) from deadlocking: a watchdog thread opens the gate when it
// passes, and timed_out() says so, so the caller knows the host decided the timing after all.
// One gate at a time: opening a gate also opens any older one still closed.
#include <chrono>
#include <memory>
#include <string>

namespace kbv::cuda {

class StreamGate {
 public:
  explicit StreamGate(std::chrono::milliseconds timeout);
  // Opens the gate and joins the watchdog. The word the stream waits on is never freed, so a
  // stream that has not reached its wait yet (or never will, under a sticky error) is harmless.
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
  struct State;  // what the watchdog thread shares with the gate

  std::shared_ptr<State> state_;
  std::string error_;
};

}  // namespace kbv::cuda
