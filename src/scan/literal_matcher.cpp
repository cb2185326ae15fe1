#include "scan/literal_matcher.hpp"

#include <cctype>
#include <deque>
#include <stdexcept>

namespace kbv::scan::detail {

namespace {
unsigned char fold(unsigned char c) { return static_cast<unsigned char>(std::tolower(c)); }
}  // namespace

LiteralMatcher::LiteralMatcher(const std::vector<std::string_view>& literals) {
  // Alphabet: one class per distinct folded byte used by some literal; both cases share it.
  class_of_.fill(0);
  std::uint32_t classes = 1;
  for (auto lit : literals)
    for (unsigned char c : lit) {
      unsigned char f = fold(c);
      if (class_of_[f] == 0) class_of_[f] = static_cast<std::uint8_t>(classes++);
    }
  for (int c = 0; c < 256; ++c) class_of_[c] = class_of_[fold(static_cast<unsigned char>(c))];
  classes_ = classes;

  // Trie; goto_ entries of -1 are missing edges.
  std::vector<std::vector<std::int32_t>> go(1, std::vector<std::int32_t>(classes_, -1));
  std::vector<std::vector<std::uint32_t>> outputs(1);
  for (std::uint32_t id = 0; id < literals.size(); ++id) {
    std::int32_t s = 0;
    for (unsigned char c : literals[id]) {
      auto k = class_of_[c];
      if (go[s][k] < 0) {
        go[s][k] = static_cast<std::int32_t>(go.size());
        go.emplace_back(classes_, -1);
        outputs.emplace_back();
      }
      s = go[s][k];
    }
    outputs[s].push_back(id);
  }

  // Breadth-first failure links, folded into a full transition table.
  const std::size_t states = go.size();
  if (states > 0xFFFF) throw std::length_error("LiteralMatcher: too many literals");
  std::vector<std::uint32_t> fail(states, 0);
  next_.assign(states * classes_, 0);
  std::deque<std::uint32_t> queue;
  for (std::uint32_t k = 0; k < classes_; ++k) {
    if (k != 0 && go[0][k] >= 0) {
      next_[k] = static_cast<std::uint16_t>(go[0][k]);
      queue.push_back(next_[k]);
    }
  }
  while (!queue.empty()) {
    std::uint32_t s = queue.front();
    queue.pop_front();
    const auto& f_out = outputs[fail[s]];
    outputs[s].insert(outputs[s].end(), f_out.begin(), f_out.end());
    for (std::uint32_t k = 0; k < classes_; ++k) {
      std::uint32_t via_fail = next_[fail[s] * classes_ + k];
      if (k != 0 && go[s][k] >= 0) {
        auto t = static_cast<std::uint32_t>(go[s][k]);
        fail[t] = via_fail;
        next_[s * classes_ + k] = static_cast<std::uint16_t>(t);
        queue.push_back(t);
      } else {
        next_[s * classes_ + k] = static_cast<std::uint16_t>(k == 0 ? 0 : via_fail);
      }
    }
  }

  out_begin_.assign(states + 1, 0);
  out_.clear();
  for (std::size_t s = 0; s < states; ++s) {
    out_begin_[s] = static_cast<std::uint32_t>(out_.size());
    out_.insert(out_.end(), outputs[s].begin(), outputs[s].end());
  }
  out_begin_[states] = static_cast<std::uint32_t>(out_.size());
}

}  // namespace kbv::scan::detail
