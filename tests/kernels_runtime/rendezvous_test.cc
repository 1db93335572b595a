// The rendezvous between rank processes, with ordinary files standing in for cuMem handles.
#include "kr/host/rendezvous.h"

#include <fcntl.h>
#include <gtest/gtest.h>
#include <unistd.h>

#include <cstdlib>
#include <cstring>
#include <functional>
#include <string>
#include <vector>

#include "kr/host/error.h"
#include "kr/host/rank_processes.h"
#include "kr/host/session_key.h"

namespace {

std::vector<int> run_ranks(int world, const std::function<int(int)>& body) {
  std::vector<int> codes;
  for (const auto& e : kr::host::run_rank_processes(world, body, std::chrono::seconds(60)))
    codes.push_back(e.code);
  return codes;
}

std::span<const std::byte> bytes_of(const std::string& s) {
  return {reinterpret_cast<const std::byte*>(s.data()), s.size()};
}

TEST(rendezvous, passes_file_descriptors_between_processes) {
  const std::string session = kr::host::random_session_key();
  const int world = 3;
  auto codes = run_ranks(world, [&](int rank) {
    // Each rank writes its own temporary file and passes only the descriptor.
    char path[] = "/tmp/kr_rdv_XXXXXX";
    const int fd = mkstemp(path);
    unlink(path);
    const std::string text = "rank " + std::to_string(rank) + " was here";
    if (fd < 0 || write(fd, text.data(), text.size()) != ssize_t(text.size())) return 2;
    kr::host::rendezvous rdv(session, rank, world, std::chrono::seconds(20));
    auto got = rdv.all_gather(bytes_of("hello from " + std::to_string(rank)), fd);
    close(fd);
    for (int r = 0; r < world; ++r) {
      const std::string payload(reinterpret_cast<const char*>(got[r].payload.data()), got[r].payload.size());
      if (payload != "hello from " + std::to_string(r)) return 3;
      if (r == rank) {
        if (got[r].fd != -1) return 4;
        continue;
      }
      char buf[64] = {};
      if (got[r].fd < 0 || pread(got[r].fd, buf, sizeof(buf) - 1, 0) <= 0) return 5;
      if (std::string(buf) != "rank " + std::to_string(r) + " was here") return 6;
      close(got[r].fd);
    }
    for (int i = 0; i < 50; ++i) rdv.barrier();  // many rounds back to back stay in step
    auto again = rdv.all_gather(bytes_of(std::to_string(rank * 7)));
    for (int r = 0; r < world; ++r)
      if (std::string(reinterpret_cast<const char*>(again[r].payload.data()), again[r].payload.size()) !=
          std::to_string(r * 7))
        return 7;
    return 0;
  });
  for (int r = 0; r < world; ++r) EXPECT_EQ(codes[r], 0) << "rank " << r;
}

TEST(rendezvous, a_missing_rank_times_out_with_its_number) {
  const std::string session = kr::host::random_session_key();
  kr::host::rendezvous rdv(session, 0, 2, std::chrono::milliseconds(300));
  try {
    rdv.barrier();
    FAIL() << "barrier with an absent rank returned";
  } catch (const kr::host::error& e) {
    EXPECT_NE(std::string(e.what()).find("rank 1"), std::string::npos) << e.what();
  }
}

TEST(rendezvous, rejects_bad_arguments_and_duplicate_ranks) {
  EXPECT_THROW(kr::host::rendezvous("s", 2, 2), kr::host::error);
  EXPECT_THROW(kr::host::rendezvous("", 0, 2), kr::host::error);
  const std::string session = kr::host::random_session_key();
  kr::host::rendezvous first(session, 0, 2);
  EXPECT_THROW(kr::host::rendezvous(session, 0, 2), kr::host::error);
}

TEST(session_key, keys_are_fresh_hex) {
  const std::string a = kr::host::random_session_key(), b = kr::host::random_session_key();
  EXPECT_EQ(a.size(), 32u);
  EXPECT_NE(a, b);
  EXPECT_EQ(a.find_first_not_of("0123456789abcdef"), std::string::npos);
}

}  // namespace

namespace {

TEST(rank_processes, reports_exit_codes_and_kills_on_timeout) {
  auto codes = kr::host::run_rank_processes(3, [](int r) { return r * 10; }, std::chrono::seconds(10));
  ASSERT_EQ(codes.size(), 3u);
  for (int r = 0; r < 3; ++r) EXPECT_EQ(codes[r].code, r * 10);
  auto hung = kr::host::run_rank_processes(
      2, [](int r) { if (r == 1) pause(); return 0; }, std::chrono::milliseconds(300));
  EXPECT_FALSE(hung[0].timed_out);
  EXPECT_EQ(hung[0].code, 0);
  EXPECT_TRUE(hung[1].timed_out);
  auto thrown = kr::host::run_rank_processes(
      1, [](int) -> int { throw std::runtime_error("boom"); }, std::chrono::seconds(10));
  EXPECT_EQ(thrown[0].code, 1);
}

}  // namespace
