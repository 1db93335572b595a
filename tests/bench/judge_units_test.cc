// Small pieces of the judge: seeds, the JIT cache's filter and entry, commitments, process census.
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <set>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "bench/eval/output_commit.h"
#include "bench/eval/process_census.h"
#include "bench/eval/seeds.h"
#include "bench/eval/sets/jit_cache.h"
#include "config/paths.h"
#include "config/read_file.h"
#include "sandbox/process.h"

namespace pk::bench {
namespace {

namespace fs = std::filesystem;

TEST(seeds, a_base_seed_and_key_give_the_same_sequence_and_neighbours_differ) {
  seed_source a = seed_source::from_base(42, "k"), b = seed_source::from_base(42, "k"),
              c = seed_source::from_base(43, "k"), d = seed_source::from_base(42, "other key");
  std::set<std::int64_t> seen;
  for (int i = 0; i < 100; ++i) {
    const auto x = a.next();
    EXPECT_EQ(x, b.next());
    EXPECT_NE(x, c.next());
    EXPECT_NE(x, d.next()) << "the same base seed under another judge's key";
    EXPECT_GE(x, 0);
    seen.insert(x);
  }
  EXPECT_EQ(seen.size(), 100u);
  EXPECT_TRUE(a.reproducible());
}

TEST(seeds, the_judge_keeps_one_key_per_cache_directory) {
  const fs::path dir = fs::path(::testing::TempDir()) / ("seed_key_" + std::to_string(::getpid()));
  fs::remove_all(dir);
  const std::string key = judge_seed_key(dir);
  EXPECT_EQ(key.size(), 64u);
  EXPECT_EQ(judge_seed_key(dir), key) << "read back, not made anew";
  EXPECT_EQ(fs::status(dir / "seed-key").permissions() & fs::perms::others_read, fs::perms::none);
  EXPECT_NE(seed_key_id(key), seed_key_id(judge_seed_key(dir / "elsewhere")));
  fs::remove_all(dir);
}

TEST(seeds, secret_seeds_are_not_reproducible) {
  seed_source s = seed_source::secret(), t = seed_source::secret();
  EXPECT_FALSE(s.reproducible());
  EXPECT_NE(s.next(), t.next());
}

TEST(seeds, a_derived_stream_depends_on_the_base_and_its_name_alone) {
  seed_source a = seed_source::from_base(42, "k"), b = seed_source::from_base(42, "k");
  for (int i = 0; i < 37; ++i) b.next();  // e.g. the seeds of timed calls drawn before trial 1
  for (std::uint64_t stream : {0ULL, 1ULL, 7ULL}) {
    seed_source x = a.derive(stream), y = b.derive(stream);
    EXPECT_TRUE(x.reproducible());
    for (int i = 0; i < 5; ++i) EXPECT_EQ(x.next(), y.next()) << "stream " << stream;
  }
  seed_source t0 = a.derive(0), t1 = a.derive(1), other_base = seed_source::from_base(43, "k").derive(1);
  const auto first = t1.next();
  EXPECT_NE(t0.next(), first);
  EXPECT_NE(other_base.next(), first);
  EXPECT_NE(a.next(), a.derive(0).next()) << "a derived stream is not the parent's own sequence";
  seed_source s = seed_source::secret();
  EXPECT_FALSE(s.derive(1).reproducible());
}

TEST(jit_cache, keeps_build_products_only_and_is_written_once) {
  const fs::path root = fs::path(::testing::TempDir()) / ("jit_" + std::to_string(::getpid()));
  fs::remove_all(root);
  const fs::path run = root / "run1";
  fs::create_directories(run / "rank0" / "ext_abc");
  std::ofstream(run / "rank0" / "ext_abc" / "ext_abc.so") << "ELF";
  std::ofstream(run / "rank0" / "ext_abc" / "build.ninja") << "rule";
  std::ofstream(run / "rank0" / "answers.pt") << "stashed outputs";
  fs::create_symlink("/etc/hostname", run / "rank0" / "link.so");
  const jit_cache cache(root / "cache", "k1");
  cache.keep_from(run);
  EXPECT_TRUE(fs::exists(cache.path() / "rank0" / "ext_abc" / "ext_abc.so"));
  EXPECT_TRUE(fs::exists(cache.path() / "rank0" / "ext_abc" / "build.ninja"));
  EXPECT_FALSE(fs::exists(cache.path() / "rank0" / "answers.pt")) << "not a build product";
  EXPECT_FALSE(fs::exists(cache.path() / "rank0" / "link.so")) << "links are never kept";

  // A later run's leftovers never reach the entry; each run gets a fresh copy of it.
  std::ofstream(run / "rank0" / "ext_abc" / "later.so") << "ELF2";
  cache.keep_from(run);
  EXPECT_FALSE(fs::exists(cache.path() / "rank0" / "ext_abc" / "later.so"));
  const fs::path fresh = root / "run2";
  cache.copy_into(fresh);
  EXPECT_TRUE(fs::exists(fresh / "rank0" / "ext_abc" / "ext_abc.so"));
  EXPECT_EQ(fs::last_write_time(fresh / "rank0" / "ext_abc" / "ext_abc.so"),
            fs::last_write_time(cache.path() / "rank0" / "ext_abc" / "ext_abc.so"));
  fs::remove_all(root);
}

// The commitment a rank computes on its device (bench/worker/counter_fill.py) and the one the judge
// computes from the recorded file (output_commit.cc) must agree bit for bit: the rank's recorder
// writes a file of assorted outputs (odd byte counts, complex, bool, a strided view, nesting) and
// prints its commitments; the judge's are compared, and a changed byte breaks them.
TEST(output_commit, the_ranks_commitment_is_the_judges) {
  const fs::path dir = fs::path(::testing::TempDir()) / ("commit_" + std::to_string(::getpid()));
  fs::remove_all(dir);
  fs::create_directories(dir);
  const fs::path file = dir / "call.st";
  const std::string script = R"PY(
import json, sys
sys.path.insert(0, sys.argv[1])
import torch, counter_fill, tensor_file
torch.manual_seed(7)
out = (torch.randn(7, 5, dtype=torch.bfloat16),
       {"b": torch.randn(3, dtype=torch.complex64), "a": [torch.arange(13, dtype=torch.uint8), torch.randn(6, 6)[:, 1:4]]},
       None, 3, torch.tensor([True, False, True]), torch.randn(1000, dtype=torch.float64))
tensor_file.write(sys.argv[2], {"output": out, "inputs": ()})
print(json.dumps(counter_fill.commits_of([tensor_file.commitment(out)])[0]))
)PY";
  sandbox::process_spec ps;
  ps.argv = {config::python(), "-c", script, config::data_path("bench/worker").string(), file.string()};
  ps.env = {{"PATH", "/usr/bin:/bin"}, {"HOME", dir.string()}};
  const sandbox::process_result r = sandbox::run_process(ps);
  ASSERT_EQ(r.exit_code, 0) << r.err.text;
  const auto committed = commits_from_json(nlohmann::json::parse(r.out.text));
  ASSERT_TRUE(committed);
  ASSERT_EQ(committed->size(), 6u) << "every tensor leaf, None and 3 left out";
  const tensor_file recorded = tensor_file::read(file);
  EXPECT_EQ(output_commits(recorded), *committed);
  EXPECT_FALSE(commit_mismatch(recorded, *committed));

  auto changed = *committed;
  changed[3].s0 ^= 1;
  const auto why = commit_mismatch(recorded, changed);
  ASSERT_TRUE(why);
  EXPECT_NE(why->find("output tensor 3"), std::string::npos) << *why;
  changed.pop_back();
  EXPECT_TRUE(commit_mismatch(recorded, changed));
  EXPECT_FALSE(commits_from_json(nlohmann::json::parse("[[1, 2]]")));
  EXPECT_FALSE(commits_from_json(nlohmann::json::parse("[[-1, 2, 3]]")));
  EXPECT_TRUE(commits_from_json(nlohmann::json::parse("[[1, -2, 3]]"))) << "the sums are signed";
  fs::remove_all(dir);
}

TEST(process_census, finds_a_child_left_running_by_a_rank) {
  const pid_t child = ::fork();
  if (child == 0) {
    ::execlp("sleep", "sleep", "30", nullptr);
    ::_exit(127);
  }
  // This test process plays the rank; its child is the leftover (once it has exec'd).
  for (int i = 0; i < 200; ++i) {
    if (try_read_file("/proc/" + std::to_string(child) + "/cmdline").value_or("").rfind("sleep", 0) == 0) break;
    ::usleep(10'000);
  }
  const auto stray = stray_processes({::getpid()}, false);
  ::kill(child, SIGKILL);
  ::waitpid(child, nullptr, 0);
  ASSERT_EQ(stray.size(), 1u);
  EXPECT_NE(stray[0].find("sleep 30"), std::string::npos) << stray[0];
  EXPECT_TRUE(stray_processes({0}, false).empty()) << "unknown pids: nothing to say";
}

}  // namespace
}  // namespace pk::bench
