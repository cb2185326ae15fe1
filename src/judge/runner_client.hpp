#pragma once
// The judge's handle on one runner process (the candidate's sandbox, or the trusted twin): starts
// it through the isolation launcher, talks to it over the channel with a deadline on every wait,
// checks the type of every reply, and owns the pages it shares with it (the hop words, the CPU
// output arena). A runner that dies, stalls or says something malformed becomes a RunnerError
// the evaluation turns into an outcome; nothing it does can reach past this class.
#include <sys/types.h>

#include <cstdint>
#include <memory>
#include <mutex>
#include <optional>
#include <random>
#include <stdexcept>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "ipc/channel.hpp"
#include "ipc/hop_words.hpp"
#include "ipc/shared_memory.hpp"
#include "isolation/launch.hpp"

namespace kbv::judge {

struct RunnerError : std::runtime_error {
  enum class Kind {
    died,      // the process ended (crash, exit, killed by a limit)
    timeout,   // no answer before the deadline
    protocol,  // a malformed, oversized or unexpected message
  };
  RunnerError(Kind k, const std::string& what) : std::runtime_error(what), kind(k) {}
  Kind kind;
};

class RunnerClient {
 public:
  // Starts `program role` under `spec` with its channel on fd 3; CPU outputs come back through an
  // arena of `arena_bytes` (sparse). Throws std::runtime_error when it cannot start at all.
  static std::unique_ptr<RunnerClient> start(const std::string& role, isolation::SandboxSpec spec,
                                             std::size_t arena_bytes);
  ~RunnerClient();
  RunnerClient(const RunnerClient&) = delete;
  RunnerClient& operator=(const RunnerClient&) = delete;

  // Registers the hop page with CUDA; call once the judge's CUDA context exists. False (with the
  // reason) when the device cannot map it.
  bool attach_cuda(std::string* error);

  // One request, one reply of type `expect` (or "failed", returned as is). Throws RunnerError.
  // Every request sent carries a fresh random token (the field "token"), and every message
  // received must carry the token of the last request (a call's answers: that call's, checked by
  // receive_answer): any other is a protocol RunnerError.
  nlohmann::json request(const nlohmann::json& body, const std::vector<int>& fds, const std::string& expect,
                         ipc::Clock::time_point deadline);
  void send(const nlohmann::json& body, const std::vector<int>& fds = {});
  // The next message, which must be of type `expect`. Throws RunnerError.
  nlohmann::json receive(const std::string& expect, ipc::Clock::time_point deadline);
  // A message is waiting (receive() would not block).
  bool pending() const { return channel_.pending(); }

  std::uint32_t next_seq() { return ++seq_; }
  // Asks for call `seq` on `slot` with a fresh random token the answers must carry back: an
  // answer written before the call was made cannot know it. Returns the token.
  std::string call(std::uint32_t seq, std::uint32_t slot, bool trace = false);
  // The answer of type `expect` ("called" or "completed") to call `seq`: anything else, another
  // call's number or a wrong token is a protocol RunnerError. A "failed" message is one too.
  nlohmann::json receive_answer(const std::string& expect, std::uint32_t seq, const std::string& token,
                                ipc::Clock::time_point deadline);
  // GPU hop (stream is a cudaStream_t): the judge's stream lets the runner start call `seq`, or
  // waits until the runner's stream has finished it. False with `error` set when CUDA refuses.
  bool queue_start(void* stream, std::uint32_t seq, std::string* error);
  bool queue_wait_done(void* stream, std::uint32_t seq, std::string* error);
  // Writes both words from the host: releases a judge stream waiting on a runner that failed.
  void release(std::uint32_t seq);
  bool has_cuda_words() const { return device_words_ != 0; }
  // The runner's `done` word (host view) is below `seq`: it has not claimed to finish a call it
  // was not asked for yet.
  bool done_is_before(std::uint32_t seq) const;

  const ipc::SharedMemory& arena() const { return arena_; }
  int hop_fd() const { return hop_page_.fd(); }
  const isolation::IsolationReport& isolation() const { return launched_.report; }
  pid_t pid() const { return launched_.pid; }
  const isolation::Launched& launched() const { return launched_; }
  bool alive();
  // How the process ended, for a verdict ("killed by signal 9 (SIGKILL)", "exited with code 3").
  std::string describe_exit();
  // Asks for Python's stacks (SIGUSR1, dumped by faulthandler into the output), waits `grace`
  // seconds, then ends the process and everything it started.
  void stop(double grace_seconds = 0);
  // SIGKILL to the runner's processes, from any thread (the judge's watchdog); stop() still reaps.
  void kill_now();
  // From any thread, without reaping: the wait status once the runner has exited; nullopt while
  // it runs or once it has been reaped (whoever reaped it has noticed).
  std::optional<int> ended_status() const;

 private:
  RunnerClient() = default;
  [[noreturn]] void fail(const ipc::ChannelError& e);

  isolation::Launched launched_;
  int watch_pidfd_ = -1;  // the launcher's pidfd, open for the object's life (ended_status)
  std::mutex kill_mutex_;  // kill_now() on another thread against stop() closing the pidfd
  ipc::Channel channel_;
  ipc::SharedMemory hop_page_;
  ipc::SharedMemory arena_;
  std::uintptr_t device_words_ = 0;  // device address of the hop page once registered
  std::uint32_t seq_ = 0;
  std::mt19937_64 tokens_{std::random_device{}()};
  std::string token_;  // the last request's; empty before the first and after "bye"
  std::string fresh_token();
};

// "exited with code 3", "killed by signal 11 (SIGSEGV)" for a wait status (the launcher's helper
// reports a signal N as exit code 128 + N).
std::string describe_wait_status(int status);

}  // namespace kbv::judge
