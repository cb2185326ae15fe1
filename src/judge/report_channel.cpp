#include "judge/report_channel.hpp"

#include <cerrno>
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

void ReportChannel::send(const nlohmann::json& message) {
  if (fd_ < 0) return;
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
