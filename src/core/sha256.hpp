#pragma once
// Content hashes: build folders are keyed by the candidate source's hash, and the results store
// keys verdicts by problem and candidate hashes.
#include <string>
#include <string_view>

namespace kbv {

std::string sha256_hex(std::string_view data);
// Hash of a file's bytes; throws UsageError when it cannot be read.
std::string sha256_file(const std::string& path);

}  // namespace kbv
