#include "generate/code_extract.hpp"

#include <string_view>

namespace kbv::gen {
namespace {

// A fence line: up to 3 spaces, then ``` (Markdown's rule); returns the text after the fence.
std::optional<std::string_view> fence(std::string_view line) {
  size_t i = 0;
  while (i < line.size() && i < 3 && line[i] == ' ') ++i;
  if (line.substr(i, 3) != "```") return std::nullopt;
  return line.substr(i + 3);
}

}  // namespace

std::optional<std::string> extract_first_code_block(const std::string& text) {
  std::string_view all(text);
  bool inside = false;
  std::string body;
  size_t pos = 0;
  while (pos < all.size()) {
    size_t end = all.find('\n', pos);
    std::string_view line = all.substr(pos, end == std::string_view::npos ? all.npos : end - pos);
    pos = end == std::string_view::npos ? all.size() : end + 1;
    if (!line.empty() && line.back() == '\r') line.remove_suffix(1);
    auto f = fence(line);
    if (!inside) {
      if (f) inside = true;  // language tag (python, py, or none) is not checked
      continue;
    }
    if (f && f->find_first_not_of(" \t") == std::string_view::npos) return body;
    body.append(line);
    body.push_back('\n');
  }
  return std::nullopt;
}

}  // namespace kbv::gen
