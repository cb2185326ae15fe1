#pragma once
// A mock LLM server for tests: HTTP/1.1 on 127.0.0.1 (ephemeral port) speaking the OpenAI Chat
// Completions and Anthropic Messages dialects, misbehaving on purpose when the prompt carries a
// marker (KBV_T429, KBV_T500, KBV_TCUT, KBV_TBADJSON, KBV_TNOCODE, KBV_TSLOW, KBV_TAUTH,
// KBV_TECHO, KBV_TDELAY). Shared by the unit tests of kbv generate and the integration test.
#include <netinet/in.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <map>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include <nlohmann/json.hpp>

namespace kbv::testing {

// A small HTTP/1.1 server: one thread accepts (polling, so it notices stop), one thread per
// connection; every connection is closed after one response. Stops by itself after 60 s.
class MockLlmServer {
 public:
  // `code` is the ModelNew source every well-behaved reply carries in its code block.
  explicit MockLlmServer(std::string code) : code_(std::move(code)) {
    listen_fd_ = ::socket(AF_INET, SOCK_STREAM, 0);
    int one = 1;
    ::setsockopt(listen_fd_, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
    sockaddr_in addr{};
    addr.sin_family = AF_INET;
    addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    addr.sin_port = 0;
    if (::bind(listen_fd_, reinterpret_cast<sockaddr*>(&addr), sizeof addr) != 0 ||
        ::listen(listen_fd_, 64) != 0)
      throw std::runtime_error("mock server: bind/listen failed");
    socklen_t len = sizeof addr;
    ::getsockname(listen_fd_, reinterpret_cast<sockaddr*>(&addr), &len);
    port_ = ntohs(addr.sin_port);
    acceptor_ = std::thread([this] { accept_loop(); });
  }
  ~MockLlmServer() {
    stop_ = true;
    acceptor_.join();
    for (auto& t : handlers_) t.join();
    ::close(listen_fd_);
  }
  std::string endpoint() const { return "http://127.0.0.1:" + std::to_string(port_) + "/v1"; }
  int requests() const { return requests_; }
  int max_in_flight() const { return max_in_flight_; }
  int count(const std::string& marker) {
    std::lock_guard lock(mu_);
    return per_marker_[marker];
  }
  std::vector<std::string> paths() {
    std::lock_guard lock(mu_);
    return paths_;
  }
  std::vector<std::string> header_lines() {
    std::lock_guard lock(mu_);
    return header_lines_;
  }

 private:
  void accept_loop() {
    auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(60);
    while (!stop_ && std::chrono::steady_clock::now() < deadline && handlers_.size() < 500) {
      pollfd p{listen_fd_, POLLIN, 0};
      if (::poll(&p, 1, 20) <= 0) continue;
      int fd = ::accept(listen_fd_, nullptr, nullptr);
      if (fd < 0) continue;
      handlers_.emplace_back([this, fd] { handle(fd); });
    }
  }

  static void send_all(int fd, const std::string& data) {
    size_t sent = 0;
    while (sent < data.size()) {
      ssize_t n = ::send(fd, data.data() + sent, data.size() - sent, MSG_NOSIGNAL);
      if (n <= 0) return;
      sent += static_cast<size_t>(n);
    }
  }

  static std::string http(int status, const std::string& body, const std::string& extra = "") {
    return "HTTP/1.1 " + std::to_string(status) + " X\r\nContent-Type: application/json\r\n" +
           extra + "Content-Length: " + std::to_string(body.size()) +
           "\r\nConnection: close\r\n\r\n" + body;
  }

  static std::string reply(bool anthropic, const std::string& text) {
    nlohmann::json j = anthropic ? nlohmann::json{{"content", {{{"type", "text"}, {"text", text}}}},
                              {"stop_reason", "end_turn"},
                              {"usage", {{"input_tokens", 11}, {"output_tokens", 22}}}}
                       : nlohmann::json{{"choices",
                               {{{"index", 0},
                                 {"message", {{"role", "assistant"}, {"content", text}}},
                                 {"finish_reason", "stop"}}}},
                              {"usage", {{"prompt_tokens", 11}, {"completion_tokens", 22}}}};
    return j.dump();
  }

  void handle(int fd) {
    timeval tv{5, 0};
    ::setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof tv);
    std::string data;
    char buf[65536];
    size_t header_end = std::string::npos, content_length = 0;
    for (int guard = 0; guard < 10000; ++guard) {  // bounded read loop
      if (header_end == std::string::npos &&
          (header_end = data.find("\r\n\r\n")) != std::string::npos) {
        std::string lower = data.substr(0, header_end);
        std::transform(lower.begin(), lower.end(), lower.begin(), ::tolower);
        auto cl = lower.find("content-length:");
        if (cl != std::string::npos) content_length = std::stoul(lower.substr(cl + 15));
      }
      if (header_end != std::string::npos && data.size() >= header_end + 4 + content_length) break;
      ssize_t n = ::recv(fd, buf, sizeof buf, 0);
      if (n <= 0) break;
      data.append(buf, static_cast<size_t>(n));
    }
    if (header_end == std::string::npos) {
      ::close(fd);
      return;
    }
    int now = ++in_flight_;
    for (int m = max_in_flight_; now > m && !max_in_flight_.compare_exchange_weak(m, now);) {
    }
    ++requests_;
    std::string head = data.substr(0, header_end), body = data.substr(header_end + 4);
    std::string path = head.substr(0, head.find("\r\n"));
    bool anthropic = path.find("/v1/messages") != std::string::npos;
    std::string marker = "NORMAL";
    for (const char* m : {"KBV_T429", "KBV_T500", "KBV_TCUT", "KBV_TBADJSON", "KBV_TNOCODE",
                          "KBV_TSLOW", "KBV_TAUTH", "KBV_TECHO", "KBV_TDELAY"})
      if (body.find(m) != std::string::npos) marker = m;
    int nth = 0;
    {
      std::lock_guard lock(mu_);
      nth = ++per_marker_[marker];
      paths_.push_back(path);
      std::istringstream hs(head);
      for (std::string line; std::getline(hs, line);) header_lines_.push_back(line);
    }
    std::string fenced = "Here is the kernel.\n\n```python\n" + code_ + "```\n\nDone.\n";
    std::string out;
    if (marker == "KBV_T429" && nth == 1) {
      out = http(429, R"({"error":{"message":"rate limited"}})", "Retry-After: 1\r\n");
    } else if (marker == "KBV_T500" && nth == 1) {
      out = http(500, R"({"error":{"message":"boom"}})");
    } else if (marker == "KBV_TCUT" && nth == 1) {
      out = "";  // close without a response
    } else if (marker == "KBV_TBADJSON") {
      out = http(200, R"({"choices": [{"message": {"content": "```python)");
    } else if (marker == "KBV_TNOCODE") {
      out = http(200, reply(anthropic, "I would fuse the operators, but here is only prose."));
    } else if (marker == "KBV_TSLOW" && nth == 1) {
      std::this_thread::sleep_for(std::chrono::milliseconds(1600));  // client limit is 1 s
      out = http(200, reply(anthropic, fenced));
    } else if (marker == "KBV_TAUTH") {
      out = http(401, R"({"error":{"message":"invalid key"}})");
    } else if (marker == "KBV_TECHO") {
      std::string echoed = "# the request carried: " + head + "\n";
      std::replace(echoed.begin(), echoed.end(), '\r', ' ');
      std::string text = "```python\n" + echoed + code_ + "```\n";
      nlohmann::json j = nlohmann::json::parse(reply(anthropic, text));
      j["echo"] = head;  // the key in the raw body too
      out = http(200, j.dump());
    } else {
      if (marker == "KBV_TDELAY") std::this_thread::sleep_for(std::chrono::milliseconds(250));
      out = http(200, reply(anthropic, fenced));
    }
    // Out of flight before the reply leaves: once the client has the reply it may send its next
    // request, which must not find this one still counted.
    --in_flight_;
    if (!out.empty()) send_all(fd, out);
    ::close(fd);
  }

  std::string code_;
  int listen_fd_ = -1;
  int port_ = 0;
  std::atomic<bool> stop_{false};
  std::atomic<int> requests_{0}, in_flight_{0}, max_in_flight_{0};
  std::mutex mu_;
  std::map<std::string, int> per_marker_;
  std::vector<std::string> paths_, header_lines_;
  std::thread acceptor_;
  std::vector<std::thread> handlers_;
};

}  // namespace kbv::testing
