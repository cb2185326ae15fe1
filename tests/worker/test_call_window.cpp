// The call window's poison (judge/call_window.hpp): what the judge leaves in the shared inputs
// and in a call's outputs between calls, and the evidence it reads from a wrong output.
#include <gtest/gtest.h>

#include <ATen/ATen.h>

#include "judge/call_window.hpp"

namespace kbv::judge {
namespace {

TEST(InputPoison, FloatsBecomeNaNIntegersAndBoolsZero) {
  at::Tensor f = at::rand({4, 5});
  at::Tensor h = at::rand({7}).to(at::kHalf);
  at::Tensor i = at::randint(1, 100, {6}, at::kLong);
  at::Tensor b = at::ones({3}, at::kBool);
  for (at::Tensor* t : {&f, &h, &i, &b}) fill_input_poison(*t);
  EXPECT_TRUE(at::isnan(f).all().item<bool>());
  EXPECT_TRUE(at::isnan(h).all().item<bool>());
  EXPECT_EQ(i.abs().sum().item<std::int64_t>(), 0);  // an index of 0 is in range for any kernel
  EXPECT_FALSE(b.any().item<bool>());
}

TEST(InputPoison, EmptyAndUndefinedTensorsAreLeftAlone) {
  at::Tensor empty = at::empty({0, 3});
  at::Tensor undefined;
  fill_input_poison(empty);
  fill_input_poison(undefined);
  EXPECT_EQ(empty.numel(), 0);
  EXPECT_FALSE(undefined.defined());
}

TEST(OutputPoison, EveryElementDiffersFromWhatTheOutputHeld) {
  // An output handed back again without being written must never equal the right answer.
  at::Tensor i = at::randint(-50, 50, {64}, at::kInt);
  at::Tensor u = at::randint(0, 255, {64}, at::kByte);
  at::Tensor b = at::rand({64}).gt(0.5);
  for (at::Tensor* t : {&i, &u, &b}) {
    at::Tensor was = t->clone();
    fill_output_poison(*t, was);
    EXPECT_FALSE(t->eq(was).any().item<bool>()) << t->scalar_type();
  }
  at::Tensor f = at::rand({8, 8});
  fill_output_poison(f, f.clone());
  EXPECT_TRUE(at::isnan(f).all().item<bool>());
}

TEST(OutputPoison, AnExpandedViewIsPoisonedWhereItLies) {
  // Floats: a fill writes the memory the view covers (the base's elements), nothing beyond it.
  at::Tensor base = at::rand({1, 4});
  at::Tensor view = base.expand({8, 4});
  fill_output_poison(view, view.clone());
  EXPECT_TRUE(at::isnan(base).all().item<bool>());
  // Integers: the complement is a copy, which refuses overlapping elements; close_call leaves
  // such a view as it is (its memory is the sandbox's).
  at::Tensor ints = at::randint(0, 9, {1, 4}, at::kInt).expand({8, 4});
  EXPECT_THROW(fill_output_poison(ints, ints.clone()), c10::Error);
}

TEST(PoisonEvidence, NaNWhereTheReferenceIsFiniteIsNamed) {
  at::Tensor ref = at::rand({100});
  at::Tensor out = at::full({100}, std::numeric_limits<float>::quiet_NaN());
  EXPECT_NE(poison_evidence({ref}, {out}).find("NaN in 100 of 100"), std::string::npos);
}

TEST(PoisonEvidence, AWrongButFiniteOutputIsNotPoison) {
  at::Tensor ref = at::rand({100});
  EXPECT_EQ(poison_evidence({ref}, {ref + 1}), "");
  // NaN where the reference is NaN too is the problem's, not poison.
  at::Tensor nan_ref = at::full({100}, std::numeric_limits<float>::quiet_NaN());
  EXPECT_EQ(poison_evidence({nan_ref}, {nan_ref.clone()}), "");
  // A few NaNs are a kernel's own bug, not a whole output computed from poison.
  at::Tensor few = ref.clone();
  few.narrow(0, 0, 10).fill_(std::numeric_limits<float>::quiet_NaN());
  EXPECT_EQ(poison_evidence({ref}, {few}), "");
}

TEST(ComputedFromPoison, AKernelThatTurnsNaNIntoZerosIsNamed) {
  // fmaxf(NaN, 0) is 0: a ReLU that read the poison returns zeros, not NaN.
  at::Tensor ref = at::rand({100}) + 0.5;
  at::Tensor zeros = at::zeros({100});
  EXPECT_EQ(poison_evidence({ref}, {zeros}), "");
  EXPECT_NE(computed_from_poison({ref}, {zeros}, {zeros.clone()}, 1e-3, 1e-3).find("100 of its 100 wrong"), std::string::npos);
  // Most of the wrong elements are what it returns for poison: still named.
  at::Tensor mostly = zeros.clone();
  mostly.narrow(0, 0, 30).fill_(7.0);
  EXPECT_NE(computed_from_poison({ref}, {mostly}, {zeros}, 1e-3, 1e-3), "");
  // NaN from poison matches NaN.
  at::Tensor nan = at::full({100}, std::numeric_limits<float>::quiet_NaN());
  EXPECT_NE(computed_from_poison({ref}, {nan}, {nan.clone()}, 1e-3, 1e-3), "");
}

TEST(ComputedFromPoison, WrongElementsUnlikeThePoisonsOutputAreNotNamed) {
  at::Tensor ref = at::rand({100}) + 0.5;
  // A flaky kernel's garbage is not what the kernel returns for poison.
  EXPECT_EQ(computed_from_poison({ref}, {ref + 1}, {at::zeros({100})}, 1e-3, 1e-3), "");
  // A right output has nothing wrong to explain.
  EXPECT_EQ(computed_from_poison({ref}, {ref.clone()}, {ref.clone()}, 1e-3, 1e-3), "");
  // Only a minority of the wrong elements match: not named.
  at::Tensor some = ref + 1;
  some.narrow(0, 0, 40).zero_();
  EXPECT_EQ(computed_from_poison({ref}, {some}, {at::zeros({100})}, 1e-3, 1e-3), "");
  // Shapes that differ are skipped, not thrown on.
  EXPECT_EQ(computed_from_poison({ref}, {at::zeros({100})}, {at::zeros({50})}, 1e-3, 1e-3), "");
}

TEST(UnjoinedKernels, TheSandboxsTraceNamesTheKernelsItSaw) {
  nlohmann::json completed{{"type", "completed"}, {"unjoined", {{{"kernel", "relu_side_kernel(float const*, float*, long)"}, {"stream", 13}, {"ms_after", 0.8}}}}};
  auto why = unjoined_kernels(ipc::Fields(completed, "completed"));
  ASSERT_TRUE(why.has_value());
  EXPECT_NE(why->find("relu_side_kernel"), std::string::npos);
  EXPECT_NE(why->find("stream 13"), std::string::npos);
}

TEST(UnjoinedKernels, NoTraceOrAnEmptyOneFindsNothing) {
  EXPECT_FALSE(unjoined_kernels(ipc::Fields(nlohmann::json{{"type", "completed"}}, "completed")).has_value());
  EXPECT_FALSE(unjoined_kernels(ipc::Fields(nlohmann::json{{"unjoined", nlohmann::json::array()}}, "completed")).has_value());
}

TEST(UnjoinedKernels, AMalformedTraceIsAProtocolError) {
  EXPECT_THROW(unjoined_kernels(ipc::Fields(nlohmann::json{{"unjoined", "all fine"}}, "completed")), ipc::ProtocolError);
  EXPECT_THROW(unjoined_kernels(ipc::Fields(nlohmann::json{{"unjoined", {{{"kernel", 3}}}}}, "completed")), ipc::ProtocolError);
}

}  // namespace
}  // namespace kbv::judge
