#include "judge/runner_client.hpp"

#include <fcntl.h>
#include <signal.h>
#include <sys/random.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <cstring>
#include <thread>

#include "cuda/stream_words.hpp"
#include "ipc/message_fields.hpp"
#include "ipc/runner_protocol.hpp"
#include "isolation/peek_exit.hpp"

namespace kbv::judge {
namespace {

constexpr std::size_t kHopPageBytes = ipc::kHopPageBytes;

}  // namespace

std::string describe_wait_status(int status) {
  if (WIFSIGNALED(status)) {
    int sig = WTERMSIG(status);
    return "killed by signal " + std::to_string(sig) + " (" + (sigabbrev_np(sig) ? std::string("SIG") + sigabbrev_np(sig) : "?") + ")";
  }
  if (WIFEXITED(status)) {
    int code = WEXITSTATUS(status);
    if (code > 128 && code < 128 + 65) {
      int sig = code - 128;
      return "killed by signal " + std::to_string(sig) + " (" + (sigabbrev_np(sig) ? std::string("SIG") + sigabbrev_np(sig) : "?") + ")";
    }
    return "exited with code " + std::to_string(code);
  }
  return "ended (status " + std::to_string(status) + ")";
}

std::unique_ptr<RunnerClient> RunnerClient::start(const std::string& role, isolation::SandboxSpec spec,
                                                  std::size_t arena_bytes) {
  std::unique_ptr<RunnerClient> r(new RunnerClient());
  auto [ours, theirs] = ipc::Channel::make_pair();
  r->channel_ = std::move(ours);
  r->hop_page_ = ipc::SharedMemory::create(kHopPageBytes, "kbv-hop");
  std::memset(r->hop_page_.data(), 0, kHopPageBytes);
  r->arena_ = ipc::SharedMemory::create(arena_bytes, "kbv-arena");
  int devnull = ::open("/dev/null", O_RDONLY | O_CLOEXEC);
  spec.fds.insert(spec.fds.begin(), {{devnull, 0}, {1, 1}, {2, 2}, {theirs.fd(), ipc::kRunnerChannelFd}});
  spec.argv.push_back(role);
  try {
    r->launched_ = isolation::launch_sandbox(spec);
  } catch (...) {
    ::close(devnull);
    throw;
  }
  ::close(devnull);
  r->watch_pidfd_ = isolation::open_pidfd(r->launched_.pid);
  // The pages go with hello: the runner maps them by the fds it receives, not by inheritance.
  return r;
}

RunnerClient::~RunnerClient() {
  stop();
  if (device_words_) cuda::unregister_host_words(hop_page_.data());
  if (watch_pidfd_ >= 0) ::close(watch_pidfd_);
}

std::optional<int> RunnerClient::ended_status() const { return isolation::peek_exit_status(watch_pidfd_); }

bool RunnerClient::attach_cuda(std::string* error) {
  device_words_ = cuda::register_host_words(hop_page_.data(), hop_page_.size(), error);
  return device_words_ != 0;
}

void RunnerClient::fail(const ipc::ChannelError& e) {
  using K = ipc::ChannelError::Kind;
  if (e.kind == K::timeout) throw RunnerError(RunnerError::Kind::timeout, e.what());
  if (e.kind == K::closed || e.kind == K::io) {
    // Give the process a moment to be reaped, so the verdict can say how it ended.
    for (int i = 0; i < 50 && alive(); ++i) std::this_thread::sleep_for(std::chrono::milliseconds(10));
    throw RunnerError(RunnerError::Kind::died, alive() ? std::string(e.what()) : describe_exit());
  }
  throw RunnerError(RunnerError::Kind::protocol, e.what());
}

std::string RunnerClient::fresh_token() {
  // From the kernel's generator: a relay that has seen every earlier token (mt19937's state can
  // be rebuilt from 312 outputs) still cannot tell the next one.
  unsigned long long value = 0;
  if (::getrandom(&value, sizeof value, 0) != static_cast<ssize_t>(sizeof value)) value = tokens_();
  char token[17];
  std::snprintf(token, sizeof token, "%016llx", value);
  return token;
}

void RunnerClient::send(const nlohmann::json& body, const std::vector<int>& fds) {
  // A runner only ever answers: anything waiting now was sent out of turn.
  if (channel_.pending()) throw RunnerError(RunnerError::Kind::protocol, "the sandbox sent a message nobody asked for");
  // Every request gets a fresh token that its answers must carry back: an answer written before
  // the request (queued ahead, or kept from an earlier one) cannot know it. "bye" wants no answer:
  // after it, nothing the runner says is asked for.
  nlohmann::json stamped = body;
  token_ = body.value("type", "") == "bye" ? std::string() : fresh_token();
  if (!token_.empty()) stamped["token"] = token_;
  try {
    channel_.send(stamped, fds);
  } catch (const ipc::ChannelError& e) {
    fail(e);
  }
}

nlohmann::json RunnerClient::receive(const std::string& expect, ipc::Clock::time_point deadline) {
  ipc::Message m;
  try {
    m = channel_.receive(deadline, [this] { return alive(); });
  } catch (const ipc::ChannelError& e) {
    fail(e);
  }
  if (!m.fds.empty()) throw RunnerError(RunnerError::Kind::protocol, "a runner message carried file descriptors");
  std::string type = m.type();
  if (type != expect && type != "failed")
    throw RunnerError(RunnerError::Kind::protocol, "expected a '" + expect + "' message, got '" + type.substr(0, 40) + "'");
  // The answer to the request the judge made last, and to no other: "failed" included (a relay
  // that fakes a failure must know the request too). A call's answers are checked against that
  // call's own token by receive_answer(), so that calls may be in flight together.
  if (expect == "called" || expect == "completed") return std::move(m.body);
  auto token = m.body.find("token");
  if (token_.empty() || token == m.body.end() || !token->is_string() || token->get<std::string>() != token_)
    throw RunnerError(RunnerError::Kind::protocol, "a '" + type.substr(0, 40) + "' message that does not carry the token of the "
                                                   "judge's request (an answer nobody asked for)");
  return std::move(m.body);
}

nlohmann::json RunnerClient::request(const nlohmann::json& body, const std::vector<int>& fds, const std::string& expect,
                                     ipc::Clock::time_point deadline) {
  send(body, fds);
  return receive(expect, deadline);
}

std::string RunnerClient::call(std::uint32_t seq, std::uint32_t slot, bool trace) {
  nlohmann::json request{{"type", "call"}, {"seq", seq}, {"slot", slot}};
  if (trace) request["trace"] = true;
  send(request);
  return token_;
}

nlohmann::json RunnerClient::receive_answer(const std::string& expect, std::uint32_t seq, const std::string& token,
                                            ipc::Clock::time_point deadline) {
  nlohmann::json m = receive(expect, deadline);
  try {
    ipc::Fields f(m, expect);
    if (m["type"] != expect) throw ipc::ProtocolError("a '" + m["type"].get<std::string>() + "' message instead");
    if (f.integer("seq", 0, UINT32_MAX) != seq) throw ipc::ProtocolError("an answer to another call");
    if (f.str("token", 64) != token) throw ipc::ProtocolError("an answer that does not carry its call's token");
  } catch (const ipc::ProtocolError& e) {
    throw RunnerError(RunnerError::Kind::protocol, "call " + std::to_string(seq) + ": " + e.what());
  }
  return m;
}

bool RunnerClient::queue_start(void* stream, std::uint32_t seq, std::string* error) {
  return cuda::stream_write_word(stream, device_words_ + offsetof(ipc::HopWords, start), seq, error);
}

bool RunnerClient::queue_wait_done(void* stream, std::uint32_t seq, std::string* error) {
  // Equal, not at-least: a runner that writes a huge `done` once cannot pass every later wait.
  return cuda::stream_wait_word_equal(stream, device_words_ + offsetof(ipc::HopWords, done), seq, error);
}

bool RunnerClient::done_is_before(std::uint32_t seq) const {
  auto* words = static_cast<const ipc::HopWords*>(hop_page_.data());
  std::uint32_t done = __atomic_load_n(&words->done, __ATOMIC_SEQ_CST);
  return static_cast<std::int32_t>(done - seq) < 0;  // wrap-safe
}

void RunnerClient::release(std::uint32_t seq) {
  auto* words = static_cast<ipc::HopWords*>(hop_page_.data());
  __atomic_store_n(&words->start, seq, __ATOMIC_SEQ_CST);
  __atomic_store_n(&words->done, seq, __ATOMIC_SEQ_CST);
}

bool RunnerClient::alive() { return isolation::poll_sandbox(launched_) < 0 && !launched_.reaped; }

std::string RunnerClient::describe_exit() {
  if (!launched_.reaped) isolation::poll_sandbox(launched_);
  return launched_.reaped ? describe_wait_status(launched_.status) : "still running";
}

void RunnerClient::kill_now() {
  std::lock_guard<std::mutex> lock(kill_mutex_);
  if (launched_.inner_pidfd >= 0) ::syscall(SYS_pidfd_send_signal, launched_.inner_pidfd, SIGKILL, nullptr, 0);
  else if (launched_.pid > 0 && !launched_.reaped) ::kill(launched_.pid, SIGKILL);
}

void RunnerClient::stop(double grace_seconds) {
  std::lock_guard<std::mutex> lock(kill_mutex_);
  if (launched_.pid <= 0) return;
  if (grace_seconds > 0 && alive()) {
    ::kill(launched_.pid, SIGUSR1);  // the launcher's helper passes it on to the sandbox
    auto until = std::chrono::steady_clock::now() + std::chrono::duration<double>(grace_seconds);
    while (alive() && std::chrono::steady_clock::now() < until) std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  isolation::end_sandbox(launched_);
  // What it sent and nobody read goes with the judge's end of the channel: file descriptors passed
  // in it (its device files among them) would keep its CUDA context alive as long as they wait.
  if (const int fd = channel_.release(); fd >= 0) ::close(fd);
}

}  // namespace kbv::judge
