#pragma once
// The worker's line-oriented JSON channel to the CLI (fd 3). Stages are announced before they
// start so that, if the worker dies or hangs, the CLI knows where and applies the right limit.
#include <mutex>
#include <string_view>

#include <nlohmann/json.hpp>

namespace kbv::judge {

class ReportChannel {
 public:
  explicit ReportChannel(int fd);  // fd < 0: messages are dropped (e.g. run by hand)
  void stage(std::string_view name);
  // A judge serving several candidates (--serve) begins the `index`th of its jobs: what follows is
  // that one's, and the candidates before it are finished.
  void job(std::size_t index);
  // The judge begins the evaluation under another protocol (one sandbox serves several): the
  // stages from here on are that protocol's.
  void protocol(std::string_view name);
  void verdict(const nlohmann::json& verdict);
  void device(const nlohmann::json& device);
  // Sent after the verdicts once the sandbox and the twin have ended and the judge's own device
  // work is done: kbv may give the device's next turn now, without waiting for this process's exit.
  void released();

 private:
  void send(nlohmann::json message);  // stamped with when it was sent ("at_us")
  int fd_;
  std::mutex mutex_;  // the watchdog's thread may report too (SandboxWatchdog's stuck trigger): whole lines
};

}  // namespace kbv::judge
