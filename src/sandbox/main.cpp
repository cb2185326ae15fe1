// kbv-sandbox: one candidate (or the judge's twin) in its own process, started by kbv-judge
// through the isolation launcher with its end of the channel on fd 3. It only answers the
// judge's requests; everything that ends up in a verdict is decided on the judge's side.
#include <csignal>
#include <cstdio>
#include <string>

#include "ipc/channel.hpp"
#include "ipc/runner_protocol.hpp"
#include "sandbox/runner.hpp"

int main(int argc, char** argv) {
  // The judge sends SIGUSR1 at a deadline for Python's stacks (faulthandler takes it over once
  // the interpreter is up); before that it must not kill us early.
  std::signal(SIGUSR1, SIG_IGN);
  std::string role = argc > 1 ? argv[1] : "candidate";
  kbv::ipc::Channel channel{kbv::ipc::UniqueFd(kbv::ipc::kRunnerChannelFd)};
  try {
    int code = kbv::sandbox::serve(role, channel);
    std::fflush(nullptr);
    std::_Exit(code);  // no interpreter or CUDA teardown: the judge has what it needs
  } catch (const std::exception& e) {
    std::fprintf(stderr, "kbv-sandbox: %s\n", e.what());
    std::fflush(nullptr);
    std::_Exit(3);
  }
}
