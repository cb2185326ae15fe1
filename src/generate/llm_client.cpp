#include "generate/llm_client.hpp"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <random>
#include <thread>

namespace kbv::gen {
namespace {

using Clock = std::chrono::steady_clock;

double seconds_since(Clock::time_point t) {
  return std::chrono::duration<double>(Clock::now() - t).count();
}

// Retry-After is either delta-seconds or an HTTP date; kbv honours the seconds form only
// (what OpenAI and Anthropic send) and falls back to its own back-off for a date.
std::optional<double> parse_retry_after(const HttpResponse& r) {
  auto it = r.headers.find("retry-after");
  if (it == r.headers.end()) return std::nullopt;
  try {
    size_t used = 0;
    double v = std::stod(it->second, &used);
    if (used == it->second.size() && v >= 0 && std::isfinite(v)) return v;
  } catch (...) {
  }
  return std::nullopt;
}

bool retryable_status(long status) {
  return status == 408 || status == 429 || status >= 500;
}

std::string snippet(const std::string& body) {
  return body.size() <= 300 ? body : body.substr(0, 300) + "...";
}

}  // namespace

double retry_wait_seconds(const RetryPolicy& policy, int attempt, std::optional<double> retry_after,
                          double jitter01) {
  double backoff = policy.backoff_base_seconds * std::pow(2.0, attempt);
  backoff = std::min(backoff, policy.backoff_max_seconds) * (0.5 + jitter01);
  if (retry_after) return std::max(backoff, std::min(*retry_after, policy.retry_after_max_seconds));
  return backoff;
}

CallResult call_with_retries(const ApiDialect& dialect, const std::string& endpoint,
                             const std::string& key, const Completion& completion,
                             const RetryPolicy& policy,
                             const std::function<void(double)>& sleep_for) {
  thread_local std::mt19937_64 rng{std::random_device{}()};
  std::uniform_real_distribution<double> jitter(0.0, 1.0);
  HttpRequest request = dialect.build(endpoint, key, completion);
  request.timeout_seconds = policy.timeout_seconds;
  request.connect_timeout_seconds = policy.connect_timeout_seconds;

  CallResult result;
  auto start = Clock::now();
  for (int attempt = 0;; ++attempt) {
    auto t0 = Clock::now();
    HttpResponse response = http_post(request);
    result.attempts = attempt + 1;
    result.latency_seconds = seconds_since(t0);
    result.http_status = response.status;
    if (response.status != 0) result.raw_body = response.body;

    bool retry = false;
    std::optional<double> retry_after;
    if (!response.transport_error.empty()) {
      result.failure_reason = response.timed_out ? "timeout" : "transport_error";
      result.failure_detail = response.transport_error;
      retry = true;
    } else if (response.status < 200 || response.status >= 300) {
      result.failure_reason = "http_error";
      result.failure_detail =
          "HTTP " + std::to_string(response.status) + ": " + snippet(response.body);
      retry = retryable_status(response.status);
      retry_after = parse_retry_after(response);
    } else {
      ParsedReply reply = dialect.parse(response.body);
      if (reply.ok) {
        result.ok = true;
        result.reply = std::move(reply);
        result.failure_reason.clear();
        result.failure_detail.clear();
        break;
      }
      result.failure_reason = "malformed_response";
      result.failure_detail = reply.error;
      retry = true;  // a proxy's truncated body is usually transient
    }
    if (!retry || attempt >= policy.retries) break;
    double wait = retry_wait_seconds(policy, attempt, retry_after, jitter(rng));
    if (sleep_for)
      sleep_for(wait);
    else
      std::this_thread::sleep_for(std::chrono::duration<double>(wait));
  }
  result.total_seconds = seconds_since(start);
  return result;
}

}  // namespace kbv::gen
