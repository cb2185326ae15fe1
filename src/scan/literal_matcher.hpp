#pragma once
// One pass over a text finds every occurrence of a fixed set of literals (Aho-Corasick), so the
// scan costs O(text) however many rules there are. std::regex would cost microseconds per line
// per pattern; here regexes are replaced by small hand-written checks run only on literal hits.
#include <array>
#include <cstdint>
#include <string_view>
#include <vector>

namespace kbv::scan::detail {

class LiteralMatcher {
 public:
  LiteralMatcher() = default;
  // Literals are matched ASCII-case-insensitively; callers re-check case where it matters.
  explicit LiteralMatcher(const std::vector<std::string_view>& literals);

  // Calls on_match(literal_index, end_offset) for every occurrence, in order of end offset.
  template <typename OnMatch>
  void scan(std::string_view text, OnMatch&& on_match) const {
    std::uint32_t state = 0;
    const auto* p = reinterpret_cast<const unsigned char*>(text.data());
    for (std::size_t i = 0, n = text.size(); i < n; ++i) {
      if (state == 0) {
        // Views are mostly blanks and other bytes no literal uses: skip them at the root.
        while (i < n && class_of_[p[i]] == 0) ++i;
        if (i == n) break;
      }
      state = next_[state * classes_ + class_of_[p[i]]];
      for (std::uint32_t k = out_begin_[state], e = out_begin_[state + 1]; k < e; ++k)
        on_match(out_[k], i + 1);
    }
  }

 private:
  std::array<std::uint8_t, 256> class_of_{};  // byte -> alphabet class; 0 = not in any literal
  std::uint32_t classes_ = 1;
  std::vector<std::uint16_t> next_{0};        // full DFA: state * classes_ + class -> state
  std::vector<std::uint32_t> out_begin_{0, 0};  // literals ending in each state (CSR)
  std::vector<std::uint32_t> out_;
};

}  // namespace kbv::scan::detail
