// Hidden-test distributions among the protocol's (src/judge/hidden_tests.*): the protocol keeps
// its order, the file's lists land anywhere (so a candidate counting its calls cannot know which
// they are), the same secret gives the same order; and which lists share get_inputs()'s layout.
#include <ATen/ATen.h>
#include <gtest/gtest.h>

#include <set>

#include "judge/hidden_tests.hpp"

namespace kbv::judge {
namespace {

std::vector<DistributionSpec> named(std::initializer_list<const char*> names, DistributionKind kind) {
  std::vector<DistributionSpec> out;
  for (const char* n : names) out.push_back({n, kind, 1.0, 0, 0});
  return out;
}

std::vector<std::string> names_of(const std::vector<DistributionSpec>& specs) {
  std::vector<std::string> out;
  for (const auto& s : specs) out.push_back(s.name);
  return out;
}

TEST(HiddenInterleave, TheProtocolKeepsItsOrderAndTheFilesListsLandAnywhere) {
  const auto protocol = named({"D1_x1", "D2_x3", "D3_x0.01", "D4_neg"}, DistributionKind::scaled);
  const auto hidden = named({"hidden_1", "hidden_2", "hidden_3"}, DistributionKind::hidden_file);
  std::set<std::size_t> places_of_hidden_2;
  std::set<std::vector<std::string>> orders;
  for (std::uint64_t secret = 1; secret <= 2000; ++secret) {
    auto all = interleave(protocol, hidden, secret);
    ASSERT_EQ(all.size(), 7u);
    std::vector<std::string> protocol_part, hidden_part;
    for (std::size_t i = 0; i < all.size(); ++i) {
      (all[i].kind == DistributionKind::hidden_file ? hidden_part : protocol_part).push_back(all[i].name);
      if (all[i].name == "hidden_2") places_of_hidden_2.insert(i);
    }
    EXPECT_EQ(protocol_part, names_of(protocol));
    EXPECT_EQ(std::set<std::string>(hidden_part.begin(), hidden_part.end()).size(), 3u);
    orders.insert(names_of(all));
  }
  EXPECT_EQ(places_of_hidden_2.size(), 7u) << "every place, first to last";
  EXPECT_GT(orders.size(), 100u);
  EXPECT_EQ(names_of(interleave(protocol, hidden, 42)), names_of(interleave(protocol, hidden, 42)));
  EXPECT_EQ(names_of(interleave(protocol, {}, 42)), names_of(protocol)) << "no file: the protocol as it is";
}

torch_host::Arg tensor_arg(const at::Tensor& t) {
  torch_host::Arg a;
  a.is_tensor = true;
  a.tensor = t;
  return a;
}

TEST(HiddenLayout, SameSizesStridesAndDtypesOnly) {
  ArgList like{tensor_arg(at::zeros({64, 64}))};
  EXPECT_TRUE(same_layout({tensor_arg(at::randn({64, 64}) * 1000)}, like));
  EXPECT_FALSE(same_layout({tensor_arg(at::zeros({32, 16}))}, like));
  EXPECT_FALSE(same_layout({tensor_arg(at::zeros({64, 128}).narrow(1, 0, 64))}, like)) << "other strides";
  EXPECT_FALSE(same_layout({tensor_arg(at::zeros({64, 64}, at::kDouble))}, like));
  EXPECT_FALSE(same_layout({tensor_arg(at::zeros({64, 64})), tensor_arg(at::zeros({64, 64}))}, like));
}

}  // namespace
}  // namespace kbv::judge
