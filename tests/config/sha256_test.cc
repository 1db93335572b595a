#include "config/sha256.h"

#include <string>

#include <gtest/gtest.h>

namespace pk {
namespace {

TEST(sha256, matches_the_fips_vectors) {
  sha256 empty;
  EXPECT_EQ(empty.hex(), "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855");
  sha256 two_blocks;
  two_blocks.update("abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq");
  EXPECT_EQ(two_blocks.hex(), "248d6a61d20638b8e5c026930c3e6039a33ce45964ff2167f6ecedd419db06c1");
  sha256 million;  // 1000-byte pieces: most updates start and end inside a block
  for (int i = 0; i < 1000; ++i) million.update(std::string(1000, 'a'));
  EXPECT_EQ(million.hex(), "cdc76e5c9914fb9281a1c7e284d73e67f1809a48a497200e046d39ccc7112cd0");
}

TEST(sha256, bytes_are_the_hex_digits) {
  sha256 abc;
  abc.update("abc");
  const auto bytes = abc.bytes();
  EXPECT_EQ(bytes[0], 0xba);
  EXPECT_EQ(bytes[31], 0xad);  // ba7816bf...f20015ad
}

}  // namespace
}  // namespace pk
