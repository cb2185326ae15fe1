#pragma once
// One blocking HTTPS POST over libcurl, with a time limit. Transport failures (refused,
// reset, timed out) come back as a result with `transport_error` set, never as an exception,
// so the retry policy (llm_client.hpp) can decide what to do with them.
#include <map>
#include <string>
#include <vector>

namespace kbv::gen {

struct HttpRequest {
  std::string url;
  std::vector<std::string> headers;  // "Name: value"; may hold secrets: never logged or saved
  std::string body;
  double timeout_seconds = 600;         // whole request (CURLOPT_TIMEOUT_MS)
  double connect_timeout_seconds = 30;  // TCP + TLS handshake (CURLOPT_CONNECTTIMEOUT_MS)
};

struct HttpResponse {
  long status = 0;                             // HTTP status; 0 when no response arrived
  std::string body;                            // raw response body
  std::map<std::string, std::string> headers;  // names lower-cased; last value wins
  std::string transport_error;                 // "" when a response arrived
  bool timed_out = false;                      // the request hit one of its time limits
};

// POSTs `request.body`; thread-safe (one curl handle per call).
HttpResponse http_post(const HttpRequest& request);

}  // namespace kbv::gen
