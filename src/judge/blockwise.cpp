#include "judge/blockwise.hpp"

#include <algorithm>

namespace kbv::judge {
namespace {

std::vector<at::Tensor> narrowed(const std::vector<at::Tensor>& ts, std::int64_t begin, std::int64_t length) {
  std::vector<at::Tensor> out;
  out.reserve(ts.size());
  for (const auto& t : ts) out.push_back(t.narrow(0, begin, length));
  return out;
}

}  // namespace

void for_each_block(const std::vector<at::Tensor>& same_shaped, const std::function<void(const std::vector<at::Tensor>&)>& f,
                    std::int64_t max_elements) {
  if (same_shaped.empty()) return;
  const at::Tensor& first = same_shaped.front();
  max_elements = std::max<std::int64_t>(1, max_elements);
  if (first.numel() <= max_elements || first.dim() == 0) {
    f(same_shaped);
    return;
  }
  // Along the first dimension: narrow() is a view whatever the strides, so no block is a copy.
  const std::int64_t rows = first.size(0);
  const std::int64_t per_row = first.numel() / rows;
  if (per_row > max_elements) {
    for (std::int64_t r = 0; r < rows; ++r) {
      std::vector<at::Tensor> row;
      row.reserve(same_shaped.size());
      for (const auto& t : same_shaped) row.push_back(t.select(0, r));
      for_each_block(row, f, max_elements);
    }
    return;
  }
  const std::int64_t step = max_elements / per_row;
  for (std::int64_t begin = 0; begin < rows; begin += step) f(narrowed(same_shaped, begin, std::min(step, rows - begin)));
}

std::int64_t count_blockwise(const std::vector<at::Tensor>& same_shaped,
                             const std::function<at::Tensor(const std::vector<at::Tensor>&)>& mask_of, std::int64_t max_elements) {
  at::Tensor total;
  for_each_block(
      same_shaped,
      [&](const std::vector<at::Tensor>& block) {
        at::Tensor n = mask_of(block).sum();
        total = total.defined() ? total.add_(n) : n;
      },
      max_elements);
  return total.defined() ? total.item<std::int64_t>() : 0;
}

std::int64_t count_different(const at::Tensor& a, const at::Tensor& b, std::int64_t max_elements) {
  return count_blockwise(
      {a, b},
      [](const std::vector<at::Tensor>& block) {
        const at::Tensor &x = block[0], &y = block[1];
        at::Tensor differ = x.ne(y);
        if (x.is_floating_point() || x.is_complex()) differ.logical_and_(x.isnan().logical_and_(y.isnan()).logical_not_());
        return differ;
      },
      max_elements);
}

}  // namespace kbv::judge
