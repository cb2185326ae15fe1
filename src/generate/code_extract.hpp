#pragma once
// The kernel inside an LLM's answer: the first fenced code block.
#include <optional>
#include <string>

namespace kbv::gen {

// The body of the first fenced block (```python ... ```, ```py, or a bare ```), exactly as
// written between the fence lines (each line ending in '\n'). nullopt when there is no
// block, or when the opening fence is never closed (a reply cut at max_tokens).
std::optional<std::string> extract_first_code_block(const std::string& text);

}  // namespace kbv::gen
