#pragma once
// The judge <-> sandbox message channel: a SOCK_SEQPACKET socket pair, one JSON object per
// packet (a message never arrives torn or merged with the next), at most kMaxMessageBytes, with
// file descriptors attached where a message hands over shared memory (SCM_RIGHTS).
//
// The sandbox runs untrusted code, so everything the judge receives is suspect: receive() never
// trusts a size, a type or a count it did not check, and every failure is a ChannelError whose
// kind the judge turns into an outcome (closed: the sandbox died; timeout; malformed and
// too_large: protocol_violation). Hot-path calls do not use this channel (call_page.hpp).
#include <chrono>
#include <cstddef>
#include <functional>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

#include <nlohmann/json.hpp>

#include "ipc/unique_fd.hpp"

namespace kbv::ipc {

inline constexpr std::size_t kMaxMessageBytes = 1 << 20;
inline constexpr std::size_t kMaxFdsPerMessage = 16;
// Deeper nesting is refused before parsing (a recursive parser would run out of stack on
// "[[[[...": 1 MiB of brackets).
inline constexpr int kMaxJsonDepth = 32;

using Clock = std::chrono::steady_clock;

struct ChannelError : std::runtime_error {
  enum class Kind { closed, timeout, malformed, too_large, io };
  ChannelError(Kind k, const std::string& what) : std::runtime_error(what), kind(k) {}
  Kind kind;
};

struct Message {
  nlohmann::json body;          // always an object with a string "type"
  std::vector<UniqueFd> fds;    // in the order the sender attached them
  std::string type() const { return body.at("type").get<std::string>(); }
};

class Channel {
 public:
  Channel() = default;
  explicit Channel(UniqueFd fd) : fd_(std::move(fd)) {}
  // A connected pair; each end is close-on-exec (the launcher moves the sandbox's end on
  // purpose to a fixed fd number).
  static std::pair<Channel, Channel> make_pair();

  // Sends one message; `body` must be an object with a string "type". Throws ChannelError.
  void send(const nlohmann::json& body, const std::vector<int>& fds = {});
  // Waits until `deadline` for one message. `alive` (optional) is asked every 50 ms whether the
  // peer still lives, so a dead peer ends the wait at once rather than at the deadline.
  Message receive(Clock::time_point deadline, const std::function<bool()>& alive = {});

  // A message is waiting (the peer spoke without being asked, when the caller expected silence).
  bool pending() const;

  int fd() const { return fd_.get(); }
  int release() { return fd_.release(); }
  explicit operator bool() const { return static_cast<bool>(fd_); }

 private:
  UniqueFd fd_;
};

}  // namespace kbv::ipc
