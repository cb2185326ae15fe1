#pragma once
// Reading a message from the sandbox without trusting it: each accessor checks presence, type
// and range, and throws ProtocolError naming the field. The judge turns a ProtocolError into the
// outcome protocol_violation; it never reaches the orchestrator as an exception.
#include <cstddef>
#include <cstdint>
#include <stdexcept>
#include <string>

#include <nlohmann/json.hpp>

namespace kbv::ipc {

struct ProtocolError : std::runtime_error {
  using std::runtime_error::runtime_error;
};

class Fields {
 public:
  Fields(const nlohmann::json& j, std::string where);  // throws unless `j` is an object

  bool has(const char* key) const { return j_.contains(key); }
  std::string str(const char* key, std::size_t max_len = 4096) const;
  std::int64_t integer(const char* key, std::int64_t lo, std::int64_t hi) const;
  double number(const char* key) const;  // finite
  bool boolean(const char* key) const;
  const nlohmann::json& array(const char* key, std::size_t max_items) const;
  Fields object(const char* key) const;
  const nlohmann::json& json() const { return j_; }

 private:
  [[noreturn]] void fail(const char* key, const std::string& why) const;
  const nlohmann::json& at(const char* key) const;
  const nlohmann::json& j_;
  std::string where_;
};

}  // namespace kbv::ipc
