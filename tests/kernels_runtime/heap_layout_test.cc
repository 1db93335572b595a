#include "kr/host/heap_layout.h"

#include <gtest/gtest.h>

#include "kr/host/error.h"
#include "kr/types/comm.cuh"

namespace {

TEST(heap_layout, allocations_are_aligned_and_in_call_order) {
  kr::host::heap_layout a(1 << 20, 4096), b(1 << 20, 4096);
  // Two ranks making the same calls get the same offsets: the whole point of a symmetric heap.
  for (std::size_t bytes : {1u, 100u, 4096u, 3u, 70000u}) {
    const std::size_t oa = a.allocate(bytes, 256), ob = b.allocate(bytes, 256);
    EXPECT_EQ(oa, ob);
    EXPECT_EQ(oa % 256, 0u);
    EXPECT_GE(oa, 4096u);
  }
  EXPECT_EQ(a.allocate(16, 1 << 16) % (1 << 16), 0u);
}

TEST(heap_layout, blocks_do_not_overlap) {
  kr::host::heap_layout h(1 << 16);
  const std::size_t x = h.allocate(1000, 16), y = h.allocate(1000, 16);
  EXPECT_GE(y, x + 1000);
  EXPECT_EQ(h.used(), y + 1000);
}

TEST(heap_layout, full_heap_and_bad_alignment_throw_with_a_reason) {
  kr::host::heap_layout h(1024);
  EXPECT_EQ(h.allocate(1000, 8), 0u);
  try {
    h.allocate(100, 8);
    FAIL() << "allocation past the end succeeded";
  } catch (const kr::host::error& e) {
    EXPECT_NE(std::string(e.what()).find("cannot allocate 100 bytes"), std::string::npos) << e.what();
  }
  EXPECT_THROW(h.allocate(1, 3), kr::host::error);
  EXPECT_THROW(kr::host::heap_layout(10, 11), kr::host::error);
  EXPECT_EQ(kr::host::round_up(5, 4), 8u);
  EXPECT_EQ(kr::host::round_up(8, 4), 8u);
}

TEST(comm_table, peer_translation_keeps_offsets) {
  static char heaps[3][4096];
  kr::comm c;
  c.rank = 1;
  c.world = 3;
  for (int r = 0; r < 3; ++r) c.base[r] = heaps[r];
  float* mine = reinterpret_cast<float*>(heaps[1] + 512);
  EXPECT_EQ(reinterpret_cast<char*>(c.peer(mine, 0)), heaps[0] + 512);
  EXPECT_EQ(reinterpret_cast<char*>(c.peer(mine, 2)), heaps[2] + 512);
  EXPECT_EQ(c.peer(mine, 1), mine);
  EXPECT_EQ(c.offset_of(mine), 512u);
}

TEST(comm_table, signal_slots_are_distinct_and_inside_the_control_region) {
  static std::uint64_t region[kr::control_layout::bytes / 8];
  kr::comm c;
  c.world = 2;
  c.base[0] = c.base[1] = reinterpret_cast<char*>(region);
  const char* lo = reinterpret_cast<char*>(region);
  const char* hi = lo + kr::control_layout::bytes;
  auto inside = [&](const void* p) { return p >= lo && p < hi; };
  EXPECT_NE(c.slot(0, 0, 0, 1), c.slot(0, 0, 1, 0));
  EXPECT_NE(c.slot(0, 1, 0, 0), c.slot(0, 0, 0, 0));
  EXPECT_TRUE(inside(c.slot(0, kr::channels - 1, kr::max_world - 1, kr::max_blocks - 1)));
  EXPECT_TRUE(inside(c.grid_release(kr::channels - 1)));
  // Local generations sit after the pad, so peers' signals never land on them.
  EXPECT_GT(static_cast<void*>(c.generation(0, 0)), static_cast<void*>(c.slot(0, kr::channels - 1, kr::max_world - 1, kr::max_blocks - 1)));
  EXPECT_NE(c.grid_arrive(0), c.grid_release(0));
}

}  // namespace
