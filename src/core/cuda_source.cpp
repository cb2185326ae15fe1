#include "core/cuda_source.hpp"

#include <fstream>
#include <iterator>
#include <regex>

namespace kbv {

bool source_needs_cuda(const std::string& source_text) {
  static const std::regex cuda_source(R"(cuda_sources|__global__|with_cuda|\.cuh?['"])");
  return std::regex_search(source_text, cuda_source);
}

bool file_needs_cuda(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return false;
  std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  return source_needs_cuda(text);
}

}  // namespace kbv
