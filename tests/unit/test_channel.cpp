// The judge <-> sandbox channel and the field checks on what a sandbox sends: whatever arrives,
// the judge gets a message or a ChannelError / ProtocolError it can turn into an outcome.
#include <gtest/gtest.h>
#include <sys/socket.h>

#include <cstring>
#include <string>

#include "ipc/channel.hpp"
#include "ipc/message_fields.hpp"
#include "ipc/shared_memory.hpp"

namespace kbv::ipc {
namespace {

auto soon(int ms) { return Clock::now() + std::chrono::milliseconds(ms); }

ChannelError::Kind receive_error(Channel& c, int ms = 500) {
  try {
    c.receive(soon(ms));
  } catch (const ChannelError& e) {
    return e.kind;
  }
  ADD_FAILURE() << "receive() returned a message";
  return ChannelError::Kind::io;
}

TEST(Channel, CarriesOneObjectAndItsFds) {
  auto [a, b] = Channel::make_pair();
  auto shared = SharedMemory::create(4096, "kbv-test");
  std::strcpy(static_cast<char*>(shared.data()), "through the fd");
  a.send({{"type", "block"}, {"n", 7}}, {shared.fd()});
  Message m = b.receive(soon(1000));
  EXPECT_EQ(m.type(), "block");
  EXPECT_EQ(m.body["n"], 7);
  ASSERT_EQ(m.fds.size(), 1u);
  auto mapped = SharedMemory::attach(std::move(m.fds[0]), 4096);
  EXPECT_STREQ(static_cast<const char*>(mapped.data()), "through the fd");
}

TEST(Channel, MessagesNeverMerge) {
  auto [a, b] = Channel::make_pair();
  a.send({{"type", "one"}});
  a.send({{"type", "two"}});
  EXPECT_EQ(b.receive(soon(500)).type(), "one");
  EXPECT_EQ(b.receive(soon(500)).type(), "two");
}

TEST(Channel, InvalidJsonIsMalformed) {
  auto [a, b] = Channel::make_pair();
  const char junk[] = "{not json";
  ASSERT_GT(::send(a.fd(), junk, sizeof junk - 1, 0), 0);
  EXPECT_EQ(receive_error(b), ChannelError::Kind::malformed);
}

TEST(Channel, AnObjectWithoutAStringTypeIsMalformed) {
  auto [a, b] = Channel::make_pair();
  const char msg[] = R"({"type": 1})";
  ASSERT_GT(::send(a.fd(), msg, sizeof msg - 1, 0), 0);
  EXPECT_EQ(receive_error(b), ChannelError::Kind::malformed);
}

TEST(Channel, OversizedIsRefusedNotBuffered) {
  auto [a, b] = Channel::make_pair();
  int size = 4 << 20;
  ::setsockopt(a.fd(), SOL_SOCKET, SO_SNDBUF, &size, sizeof size);
  std::string big(kMaxMessageBytes + 100, 'x');
  ASSERT_GT(::send(a.fd(), big.data(), big.size(), 0), 0);
  EXPECT_EQ(receive_error(b), ChannelError::Kind::too_large);
}

TEST(Channel, DeepNestingIsMalformedNotAStackOverflow) {
  auto [a, b] = Channel::make_pair();
  std::string deep = "{\"type\": \"x\", \"v\": " + std::string(100000, '[') + std::string(100000, ']') + "}";
  ASSERT_GT(::send(a.fd(), deep.data(), deep.size(), 0), 0);
  EXPECT_EQ(receive_error(b), ChannelError::Kind::malformed);
}

TEST(Channel, BracketsInsideStringsDoNotCount) {
  auto [a, b] = Channel::make_pair();
  a.send({{"type", "x"}, {"text", std::string(1000, '[')}});
  EXPECT_EQ(b.receive(soon(500)).body["text"].get<std::string>().size(), 1000u);
}

TEST(Channel, SaysWhenAMessageIsWaiting) {
  auto [a, b] = Channel::make_pair();
  EXPECT_FALSE(b.pending());
  a.send({{"type", "unasked"}});
  EXPECT_TRUE(b.pending());
}

TEST(Channel, SilenceIsATimeout) {
  auto [a, b] = Channel::make_pair();
  EXPECT_EQ(receive_error(b, 100), ChannelError::Kind::timeout);
}

TEST(Channel, AClosedPeerIsClosed) {
  auto [a, b] = Channel::make_pair();
  ::close(a.release());
  EXPECT_EQ(receive_error(b), ChannelError::Kind::closed);
}

TEST(Channel, ADeadPeerEndsTheWaitBeforeTheDeadline) {
  auto [a, b] = Channel::make_pair();
  auto start = Clock::now();
  EXPECT_THROW(b.receive(soon(10000), [] { return false; }), ChannelError);
  EXPECT_LT(Clock::now() - start, std::chrono::seconds(2));
}

TEST(MessageFields, NameTheFieldThatIsWrong) {
  nlohmann::json j{{"seq", "seven"}, {"status", "ok"}, {"n", 1LL << 40}, {"x", NAN}};
  Fields f(j, "called");
  try {
    f.integer("seq", 0, 10);
    FAIL() << "a string is not an integer";
  } catch (const ProtocolError& e) {
    EXPECT_NE(std::string(e.what()).find("called.seq"), std::string::npos) << e.what();
  }
  EXPECT_THROW(f.integer("n", 0, 1000), ProtocolError);
  EXPECT_THROW(f.str("missing"), ProtocolError);
  EXPECT_THROW(f.str("status", 1), ProtocolError);  // longer than allowed
  EXPECT_EQ(f.str("status"), "ok");
  EXPECT_THROW(Fields(nlohmann::json::array(), "x"), ProtocolError);
}

TEST(SharedMemory, TheOtherSideCannotShrinkIt) {
  auto shared = SharedMemory::create(1 << 20, "kbv-test");
  UniqueFd theirs(::dup(shared.fd()));
  EXPECT_NE(::ftruncate(theirs.get(), 0), 0) << "a shrunk memfd would SIGBUS the judge on its next read";
  EXPECT_NE(::ftruncate(theirs.get(), 2 << 20), 0);
  static_cast<volatile char*>(shared.data())[(1 << 20) - 1] = 1;  // still all there
}

TEST(SharedMemory, RefusesToMapMoreThanTheFileHolds) {
  auto shared = SharedMemory::create(4096, "kbv-test");
  UniqueFd copy(::dup(shared.fd()));
  EXPECT_THROW(SharedMemory::attach(std::move(copy), 1 << 20), std::runtime_error);
}

}  // namespace
}  // namespace kbv::ipc
