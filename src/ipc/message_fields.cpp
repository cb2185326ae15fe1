#include "ipc/message_fields.hpp"

#include <cmath>

namespace kbv::ipc {

Fields::Fields(const nlohmann::json& j, std::string where) : j_(j), where_(std::move(where)) {
  if (!j_.is_object()) throw ProtocolError(where_ + ": expected an object");
}

void Fields::fail(const char* key, const std::string& why) const {
  throw ProtocolError(where_ + "." + key + ": " + why);
}

const nlohmann::json& Fields::at(const char* key) const {
  auto it = j_.find(key);
  if (it == j_.end()) fail(key, "missing");
  return *it;
}

std::string Fields::str(const char* key, std::size_t max_len) const {
  const auto& v = at(key);
  if (!v.is_string()) fail(key, "not a string");
  const auto& s = v.get_ref<const std::string&>();
  if (s.size() > max_len) fail(key, "longer than " + std::to_string(max_len) + " bytes");
  return s;
}

std::int64_t Fields::integer(const char* key, std::int64_t lo, std::int64_t hi) const {
  const auto& v = at(key);
  if (!v.is_number_integer()) fail(key, "not an integer");
  std::int64_t x = v.is_number_unsigned() && v.get<std::uint64_t>() > static_cast<std::uint64_t>(INT64_MAX)
                       ? INT64_MAX
                       : v.get<std::int64_t>();
  if (x < lo || x > hi) fail(key, std::to_string(x) + " is outside [" + std::to_string(lo) + ", " + std::to_string(hi) + "]");
  return x;
}

double Fields::number(const char* key) const {
  const auto& v = at(key);
  if (!v.is_number()) fail(key, "not a number");
  double x = v.get<double>();
  if (!std::isfinite(x)) fail(key, "not finite");
  return x;
}

bool Fields::boolean(const char* key) const {
  const auto& v = at(key);
  if (!v.is_boolean()) fail(key, "not a boolean");
  return v.get<bool>();
}

const nlohmann::json& Fields::array(const char* key, std::size_t max_items) const {
  const auto& v = at(key);
  if (!v.is_array()) fail(key, "not an array");
  if (v.size() > max_items) fail(key, "more than " + std::to_string(max_items) + " items");
  return v;
}

Fields Fields::object(const char* key) const { return Fields(at(key), where_ + "." + key); }

}  // namespace kbv::ipc
