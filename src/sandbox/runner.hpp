#pragma once
// The runner's side of ipc/runner_protocol.hpp: answers hello, then serves the judge's requests
// until bye. Role "candidate" hosts the candidate (CandidateHost); role "twin" is the judge's own
// trusted stand-in that runs one tiny kernel per call, so baselines cross the same number of
// context switches as a candidate call (docs/architecture.md).
#include <string>

#include "ipc/channel.hpp"

namespace kbv::sandbox {

// Returns the process's exit code.
int serve(const std::string& role, ipc::Channel& channel);

}  // namespace kbv::sandbox
