#include "judge/report_channel.hpp"

#include <cerrno>
#include <chrono>
#include <string>

#include <unistd.h>

namespace kbv::judge {

ReportChannel::ReportChannel(int fd) : fd_(fd) {}

void ReportChannel::stage(std::string_view name) {
  send({{"event", "stage"}, {"stage", std::string(name)}});
}

void ReportChannel::job(std::size_t index) { send({{"event", "job"}, {"index", index}}); }

void ReportChannel::protocol(std::string_view name) {
  send({{"event", "protocol"}, {"protocol", std::string(name)}});
}

void ReportChannel::verdict(const nlohmann::json& verdict) {
  send({{"event", "verdict"}, {"verdict", verdict}});
}

void ReportChannel::device(const nlohmann::json& device) { send({{"event", "device"}, {"device", device}}); }

void ReportChannel::released() { send({{"event", "released"}}); }

void ReportChannel::send(nlohmann::json message) {
  if (fd_ < 0) return;
  // When it was said, on the host's monotonic clock (kbv's too): kbv times the stages by it, not by
  // when it got round to reading the message.
  message["at_us"] = std::chrono::duration_cast<std::chrono::microseconds>(
                         std::chrono::steady_clock::now().time_since_epoch())
                         .count();
  // Replace invalid UTF-8 (a candidate's printed bytes can end up in reasons) instead of throwing.
  std::string line = message.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace) + "\n";
  std::lock_guard<std::mutex> lock(mutex_);
  const char* p = line.data();
  std::size_t left = line.size();
  while (left > 0) {
    ssize_t n = ::write(fd_, p, left);
    if (n < 0) {
      if (errno == EINTR) continue;
      return;  // the CLI went away; nothing useful left to do with the message
    }
    p += n;
    left -= static_cast<std::size_t>(n);
  }
}

}  // namespace kbv::judge
