// DeviceTurns (kbv run --prestart): judges started ahead wait at a gate until every earlier turn
// on the device has ended, so the device still runs one evaluation at a time.
#include <gtest/gtest.h>
#include <poll.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <optional>
#include <thread>
#include <vector>

#include "orchestrate/device_turns.hpp"
#include "orchestrate/evaluation_queue.hpp"

namespace kbv {
namespace {

bool gate_open(const DeviceTurns::Turn& t) {
  pollfd p{t.gate_fd(), POLLIN, 0};
  return ::poll(&p, 1, 0) == 1 && (p.revents & POLLIN);
}

TEST(DeviceTurns, TheFirstTurnIsOpenAndTheNextWaitsForIt) {
  DeviceTurns turns;
  auto a = turns.take();
  auto b = turns.take();
  auto c = turns.take();
  EXPECT_TRUE(gate_open(a));
  EXPECT_FALSE(gate_open(b));
  EXPECT_FALSE(gate_open(c));
  EXPECT_TRUE(a.opened_at().has_value());
  EXPECT_FALSE(b.opened_at().has_value()) << "start-up before its gate opens is done ahead";
  a.end();
  EXPECT_TRUE(gate_open(b));
  ASSERT_TRUE(b.opened_at().has_value());
  EXPECT_FALSE(gate_open(c)) << "only one turn at a time";
  char byte = 0;
  EXPECT_EQ(::read(b.gate_fd(), &byte, 1), 1);
  b.end();
  EXPECT_TRUE(gate_open(c));
}

// A judge that dies before its turn (its interpreter failed) ends its turn early: that must not
// let the one after it in while an earlier evaluation still has the device.
TEST(DeviceTurns, ATurnEndedEarlyDoesNotOpenTheDeviceToTheNext) {
  DeviceTurns turns;
  auto a = turns.take();
  auto b = turns.take();
  auto c = turns.take();
  b.end();
  EXPECT_FALSE(gate_open(c)) << "a still has the device";
  a.end();
  EXPECT_TRUE(gate_open(c)) << "b is skipped once a ends";
}

TEST(DeviceTurns, ATurnTakenWhenTheDeviceIsFreeIsOpenAtOnce) {
  DeviceTurns turns;
  turns.take().end();
  auto b = turns.take();
  EXPECT_TRUE(gate_open(b));
}

// Many threads, each taking turns as kbv run's evaluators do: no two ever hold the device at once,
// and every turn gets it.
TEST(DeviceTurns, ThreadsNeverHoldTheDeviceTogether) {
  DeviceTurns turns;
  std::atomic<int> holding{0}, most{0}, served{0};
  std::vector<std::thread> threads;
  for (int t = 0; t < 3; ++t)
    threads.emplace_back([&] {
      for (int i = 0; i < 40; ++i) {
        auto turn = turns.take();
        char byte;
        ASSERT_EQ(::read(turn.gate_fd(), &byte, 1), 1);
        int now = ++holding;
        int seen = most.load();
        while (now > seen && !most.compare_exchange_weak(seen, now)) {
        }
        std::this_thread::sleep_for(std::chrono::microseconds(200));
        --holding;
        ++served;
        turn.end();
      }
    });
  for (auto& t : threads) t.join();
  EXPECT_EQ(most.load(), 1);
  EXPECT_EQ(served.load(), 120);
}

TEST(EvaluationQueue, ACandidatesJobsAreHandedOutTogetherAndEachOnce) {
  // jobs 0..7: candidates a, b, c, d with two protocols each, interleaved
  std::vector<std::string> group{"a", "b", "a", "c", "b", "d", "c", "d"};
  std::vector<std::size_t> jobs{0, 1, 2, 3, 4, 5, 6, 7};
  EvaluationQueue q(jobs, group);
  std::vector<std::vector<std::size_t>> handed;
  while (auto g = q.next_group()) handed.push_back(*g);
  std::vector<std::vector<std::size_t>> expected{{0, 2}, {1, 4}, {3, 6}, {5, 7}};
  EXPECT_EQ(handed, expected);
  EXPECT_FALSE(q.next_group());
}

TEST(EvaluationQueue, SkipsJobsNotListed) {
  std::vector<std::string> group{"a", "a", "b"};
  EvaluationQueue q({0, 2}, group);
  EXPECT_EQ(q.next_group(), (std::vector<std::size_t>{0}));
  EXPECT_EQ(q.next_group(), (std::vector<std::size_t>{2}));
  EXPECT_FALSE(q.next_group());
}

// --overlap-builds: a candidate still building is held back; the others go first, in order.
TEST(EvaluationQueue, APendingCandidateWaitsForItsBuild) {
  std::vector<std::string> group{"a", "b", "c"};
  EvaluationQueue q({0, 1, 2}, group, {"a", "c"});
  EXPECT_EQ(q.next_group(), (std::vector<std::size_t>{1}));
  std::optional<std::vector<std::size_t>> waited;
  std::thread waiter([&] { waited = q.next_group(); });
  std::this_thread::sleep_for(std::chrono::milliseconds(150));
  EXPECT_FALSE(waited) << "handed out before its build was ready";
  q.ready("c");
  waiter.join();
  EXPECT_EQ(waited, (std::vector<std::size_t>{2}));
  q.ready("a");
  EXPECT_EQ(q.next_group(), (std::vector<std::size_t>{0}));
  EXPECT_FALSE(q.next_group());
}

TEST(EvaluationQueue, AFailedBuildIsNeverHandedOut) {
  std::vector<std::string> group{"a", "a", "b"};
  EvaluationQueue q({0, 1, 2}, group, {"a", "b"});
  std::optional<std::vector<std::size_t>> waited;
  std::thread waiter([&] { waited = q.next_group(); });
  q.dropped("a");
  q.ready("b");
  waiter.join();
  EXPECT_EQ(waited, (std::vector<std::size_t>{2}));
  EXPECT_FALSE(q.next_group());
}

// Builds that stop (Ctrl-C) leave candidates pending: close() and the stop flag both end a wait.
TEST(EvaluationQueue, CloseAndStopEndAWait) {
  std::vector<std::string> group{"a", "b"};
  {
    EvaluationQueue q({0, 1}, group, {"a", "b"});
    std::optional<std::vector<std::size_t>> waited{std::vector<std::size_t>{}};
    std::thread waiter([&] { waited = q.next_group(); });
    q.close();
    waiter.join();
    EXPECT_FALSE(waited);
  }
  {
    EvaluationQueue q({0, 1}, group, {"a"});
    std::atomic<bool> stop{false};
    EXPECT_EQ(q.next_group(&stop), (std::vector<std::size_t>{1}));
    std::optional<std::vector<std::size_t>> waited{std::vector<std::size_t>{}};
    std::thread waiter([&] { waited = q.next_group(&stop); });
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
    stop = true;  // as a signal handler sets it: no notify
    waiter.join();
    EXPECT_FALSE(waited);
  }
}

}  // namespace
}  // namespace kbv
