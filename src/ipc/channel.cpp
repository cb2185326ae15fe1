#include "ipc/channel.hpp"

#include <fcntl.h>
#include <poll.h>
#include <sys/socket.h>

#include <algorithm>
#include <cerrno>
#include <cstring>

namespace kbv::ipc {
namespace {

std::string errno_text(const char* what) { return std::string(what) + ": " + std::strerror(errno); }

// The deepest nesting of arrays and objects outside strings.
int json_depth(const std::string& text) {
  int depth = 0, deepest = 0;
  bool in_string = false, escaped = false;
  for (char c : text) {
    if (in_string) {
      if (escaped) escaped = false;
      else if (c == '\\') escaped = true;
      else if (c == '"') in_string = false;
    } else if (c == '"') {
      in_string = true;
    } else if (c == '[' || c == '{') {
      deepest = std::max(deepest, ++depth);
    } else if (c == ']' || c == '}') {
      --depth;
    }
  }
  return deepest;
}

}  // namespace

std::pair<Channel, Channel> Channel::make_pair() {
  int sv[2];
  if (::socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, sv) != 0)
    throw ChannelError(ChannelError::Kind::io, errno_text("socketpair"));
  return {Channel(UniqueFd(sv[0])), Channel(UniqueFd(sv[1]))};
}

void Channel::send(const nlohmann::json& body, const std::vector<int>& fds) {
  if (!body.is_object() || !body.contains("type") || !body["type"].is_string())
    throw ChannelError(ChannelError::Kind::malformed, "a message must be an object with a string \"type\"");
  if (fds.size() > kMaxFdsPerMessage) throw ChannelError(ChannelError::Kind::too_large, "too many fds in one message");
  std::string text = body.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
  if (text.size() > kMaxMessageBytes)
    throw ChannelError(ChannelError::Kind::too_large, "message of " + std::to_string(text.size()) + " bytes");
  iovec iov{text.data(), text.size()};
  msghdr msg{};
  msg.msg_iov = &iov;
  msg.msg_iovlen = 1;
  std::vector<char> control;
  if (!fds.empty()) {
    control.resize(CMSG_SPACE(sizeof(int) * fds.size()));
    msg.msg_control = control.data();
    msg.msg_controllen = control.size();
    cmsghdr* c = CMSG_FIRSTHDR(&msg);
    c->cmsg_level = SOL_SOCKET;
    c->cmsg_type = SCM_RIGHTS;
    c->cmsg_len = CMSG_LEN(sizeof(int) * fds.size());
    std::memcpy(CMSG_DATA(c), fds.data(), sizeof(int) * fds.size());
  }
  for (;;) {
    ssize_t n = ::sendmsg(fd_.get(), &msg, MSG_NOSIGNAL);
    if (n >= 0) return;
    if (errno == EINTR) continue;
    if (errno == EPIPE || errno == ECONNRESET) throw ChannelError(ChannelError::Kind::closed, "the peer closed the channel");
    throw ChannelError(ChannelError::Kind::io, errno_text("sendmsg"));
  }
}

bool Channel::pending() const {
  pollfd p{fd_.get(), POLLIN, 0};
  return ::poll(&p, 1, 0) > 0 && (p.revents & POLLIN);
}

Message Channel::receive(Clock::time_point deadline, const std::function<bool()>& alive) {
  for (;;) {
    auto left = std::chrono::duration_cast<std::chrono::milliseconds>(deadline - Clock::now()).count();
    if (left <= 0) throw ChannelError(ChannelError::Kind::timeout, "no message before the deadline");
    pollfd p{fd_.get(), POLLIN, 0};
    int r = ::poll(&p, 1, static_cast<int>(std::min<long long>(left, 50)));
    if (r < 0 && errno != EINTR) throw ChannelError(ChannelError::Kind::io, errno_text("poll"));
    if (r <= 0) {
      if (alive && !alive()) throw ChannelError(ChannelError::Kind::closed, "the peer exited");
      continue;
    }
    break;
  }
  // One byte more than allowed tells an oversized packet from a full-size one (MSG_TRUNC).
  std::string text(kMaxMessageBytes + 1, '\0');
  iovec iov{text.data(), text.size()};
  std::vector<char> control(CMSG_SPACE(sizeof(int) * kMaxFdsPerMessage));
  msghdr msg{};
  msg.msg_iov = &iov;
  msg.msg_iovlen = 1;
  msg.msg_control = control.data();
  msg.msg_controllen = control.size();
  ssize_t n;
  do {
    n = ::recvmsg(fd_.get(), &msg, MSG_CMSG_CLOEXEC);
  } while (n < 0 && errno == EINTR);
  if (n < 0) throw ChannelError(ChannelError::Kind::io, errno_text("recvmsg"));
  Message out;
  // Take ownership of any fds first, so they are closed whatever happens next.
  for (cmsghdr* c = CMSG_FIRSTHDR(&msg); c; c = CMSG_NXTHDR(&msg, c)) {
    if (c->cmsg_level != SOL_SOCKET || c->cmsg_type != SCM_RIGHTS) continue;
    std::size_t count = (c->cmsg_len - CMSG_LEN(0)) / sizeof(int);
    for (std::size_t i = 0; i < count; ++i) {
      int fd;
      std::memcpy(&fd, CMSG_DATA(c) + i * sizeof(int), sizeof(int));
      out.fds.emplace_back(fd);
    }
  }
  if (n == 0) throw ChannelError(ChannelError::Kind::closed, "the peer closed the channel");
  if ((msg.msg_flags & MSG_CTRUNC) != 0) throw ChannelError(ChannelError::Kind::too_large, "too many fds in one message");
  if ((msg.msg_flags & MSG_TRUNC) != 0 || static_cast<std::size_t>(n) > kMaxMessageBytes)
    throw ChannelError(ChannelError::Kind::too_large, "a message over " + std::to_string(kMaxMessageBytes) + " bytes");
  text.resize(static_cast<std::size_t>(n));
  if (json_depth(text) > kMaxJsonDepth)
    throw ChannelError(ChannelError::Kind::malformed, "a message nested deeper than " + std::to_string(kMaxJsonDepth));
  out.body = nlohmann::json::parse(text, nullptr, false);
  if (out.body.is_discarded() || !out.body.is_object() || !out.body.contains("type") || !out.body["type"].is_string())
    throw ChannelError(ChannelError::Kind::malformed, "not a JSON object with a string \"type\": " + text.substr(0, 120));
  return out;
}

}  // namespace kbv::ipc
