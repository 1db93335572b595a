// pkagent's own shared libraries in a sandbox where it runs itself: the directories it loaded
// them from are found (dl_iterate_phdr), kept only where the sandbox hides them, and bound back
// read-only by a real bwrap sandbox that asks for them.
#include "sandbox/own_libraries.h"

#include <dlfcn.h>

#include <algorithm>

#include <gtest/gtest.h>

#include "sandbox/mounts.h"
#include "sandbox/plan.h"
#include "sandbox/sandbox.h"
#include "temp_dir.h"

namespace pk::sandbox {
namespace {

namespace fs = std::filesystem;
using testing::temp_dir;
using paths = std::vector<fs::path>;
using namespace std::chrono_literals;

bool contains(const paths& list, const fs::path& p) { return std::find(list.begin(), list.end(), p) != list.end(); }

// A real shared library, copied to `dir/lib` and loaded from there as a package folder inside a
// checkout under /tmp would be.
class loaded_from_a_hidden_tree : public ::testing::Test {
 protected:
  void SetUp() override {
    fs::create_directories(lib_dir);
    fs::copy_file(SHARED_LIBRARY, library);
    handle = ::dlopen(library.c_str(), RTLD_NOW | RTLD_LOCAL);
    ASSERT_NE(handle, nullptr) << ::dlerror();
  }
  void TearDown() override {
    if (handle) ::dlclose(handle);
  }
  temp_dir tree;
  const fs::path lib_dir = tree.path() / "lib";
  const fs::path library = lib_dir / "libpk_own_library_test.so";
  void* handle = nullptr;
};

TEST_F(loaded_from_a_hidden_tree, the_process_lists_the_library_it_loaded_and_libc) {
  const paths objects = loaded_shared_objects();
  EXPECT_TRUE(contains(objects, library));
  EXPECT_TRUE(std::any_of(objects.begin(), objects.end(), [](const fs::path& p) {
    return p.filename().string().starts_with("libc.so");
  }));
  for (const auto& p : objects) EXPECT_TRUE(p.is_absolute()) << p;
}

TEST_F(loaded_from_a_hidden_tree, only_directories_under_hidden_paths_are_kept) {
  const paths dirs = library_dirs_under(loaded_shared_objects(), {tree.path()});
  EXPECT_EQ(dirs, paths{lib_dir});
}

TEST(own_libraries, directories_are_kept_once_and_only_under_a_hidden_path) {
  const paths objects = {"/tmp/clone/build/lib/libpk_a.so", "/usr/lib/x86_64-linux-gnu/libc.so.6",
                         "/tmp/clone/build/lib/libpk_b.so", "/home/al/pk/.deps/lib/../lib/libmuparser.so.2",
                         "/tmpfoo/lib/libz.so",             "/home/alice/lib/libother.so"};
  EXPECT_EQ(library_dirs_under(objects, {"/tmp", "/home/al/"}),
            (paths{"/tmp/clone/build/lib", "/home/al/pk/.deps/lib"}));
  EXPECT_EQ(library_dirs_under(objects, {}), paths{});
}

TEST(own_libraries, the_paths_a_sandbox_hides_include_tmp_root_home_and_the_specs) {
  const paths hidden = hidden_host_paths("/home/al", {"/work/pkagent"});
  for (const char* p : {"/tmp", "/root", "/run", "/home/al", "/work/pkagent"}) EXPECT_TRUE(contains(hidden, p)) << p;
  EXPECT_FALSE(contains(hidden_host_paths("/", {}), "/")) << "a home of / hides nothing by itself";
}

TEST_F(loaded_from_a_hidden_tree, a_plan_that_asks_binds_them_back_read_only_after_hiding) {
  temp_dir ws;
  host_facts host;
  host.bwrap = "/usr/bin/bwrap";
  host.environment = {{"PATH", "/usr/bin:/bin"}, {"HOME", "/home/alice"}};
  host.loaded_objects = {library, "/usr/lib/x86_64-linux-gnu/libc.so.6"};
  spec s;
  s.workspace = ws.path();
  s.hidden = {tree.path()};
  const std::vector<std::string> bind = {"--ro-bind", lib_dir.string(), lib_dir.string()};
  const std::vector<std::string> hide = {"--tmpfs", tree.path().string()};
  auto at = [](const plan& p, const std::vector<std::string>& needle) {
    return std::search(p.argv.begin(), p.argv.end(), needle.begin(), needle.end()) - p.argv.begin();
  };
  const plan without = make_plan(s, "true", host);
  EXPECT_EQ(at(without, bind), static_cast<std::ptrdiff_t>(without.argv.size()));
  s.own_libraries = true;
  const plan with = make_plan(s, "true", host);
  ASSERT_LT(at(with, bind), static_cast<std::ptrdiff_t>(with.argv.size()));
  EXPECT_GT(at(with, bind), at(with, hide)) << "bound after the tree is hidden";
  const std::vector<std::string> libc_bind = {"--ro-bind", "/usr/lib/x86_64-linux-gnu"};
  EXPECT_EQ(at(with, libc_bind), static_cast<std::ptrdiff_t>(with.argv.size())) << "visible already";
}

TEST_F(loaded_from_a_hidden_tree, a_real_sandbox_that_asks_sees_them_and_cannot_change_them) {
  if (auto why = unavailable_reason()) GTEST_SKIP() << "no sandbox on this host: " << *why;
  temp_dir ws;
  spec s;
  s.workspace = ws.path();
  s.limits.wall = 60s;
  const std::string probe = "test -r " + library.string() + " && echo visible || echo missing; touch " +
                            (lib_dir / "x").string() + " 2>/dev/null && echo writable || echo read-only";
  const auto hidden = run(s, probe);
  EXPECT_EQ(hidden.out.text.substr(0, 8), "missing\n") << "the control: /tmp hides the tree" << hidden.err.text;
  s.own_libraries = true;
  const auto r = run(s, probe);
  EXPECT_EQ(r.out.text, "visible\nread-only\n") << r.err.text;
  EXPECT_FALSE(fs::exists(lib_dir / "x"));
}

}  // namespace
}  // namespace pk::sandbox
