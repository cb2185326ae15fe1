#pragma once
// Errors of kbv itself (bad flags, unreadable files). A candidate's failure is never one of
// these: it becomes a recorded Outcome with a reason.
#include <stdexcept>
#include <string>

namespace kbv {

// The user asked for something kbv cannot do; the message says what to do instead.
struct UsageError : std::runtime_error {
  using std::runtime_error::runtime_error;
};

}  // namespace kbv
