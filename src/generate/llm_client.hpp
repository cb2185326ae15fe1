#pragma once
// One completion with retries: exponential back-off with jitter on 429, 5xx, connection
// errors, timeouts and unreadable 2xx bodies, honouring Retry-After (seconds). Every attempt
// ends the same way — a reply or a recorded failure — never an exception.
#include <functional>
#include <optional>
#include <string>

#include "generate/api_dialect.hpp"

namespace kbv::gen {

struct RetryPolicy {
  int retries = 4;                       // attempts after the first
  double backoff_base_seconds = 2;       // wait before retry n: base * 2^n, jittered x[0.5, 1.5)
  double backoff_max_seconds = 60;       // cap of the back-off (Retry-After may exceed it...)
  double retry_after_max_seconds = 300;  // ...up to this
  double timeout_seconds = 600;          // per request
  double connect_timeout_seconds = 30;
};

struct CallResult {
  bool ok = false;  // a reply was read (it may still hold no code block)
  ParsedReply reply;
  std::string
      failure_reason;  // when !ok: http_error | transport_error | timeout | malformed_response
  std::string failure_detail;
  long http_status = 0;  // of the last attempt
  std::string raw_body;  // of the last attempt that returned a body
  int attempts = 0;
  double latency_seconds = 0;  // of the last attempt
  double total_seconds = 0;    // all attempts and waits
};

// `sleep_for` is injectable so tests can observe the waits; default: std::this_thread::sleep_for.
CallResult call_with_retries(const ApiDialect& dialect, const std::string& endpoint,
                             const std::string& key, const Completion& completion,
                             const RetryPolicy& policy,
                             const std::function<void(double)>& sleep_for = {});

// The wait before retry `attempt` (0-based) given an optional Retry-After value; exposed for tests.
double retry_wait_seconds(const RetryPolicy& policy, int attempt, std::optional<double> retry_after,
                          double jitter01);

}  // namespace kbv::gen
