// The judge's multicast scanner on real text and real files: what it must find (PTX multimem, the
// driver's cuMulticast*, symmetric-memory multicast, NVLS switched on), what it must leave alone
// (NVLS kept off, mangled names, prose), and, where nvcc and cuobjdump exist, compiled objects
// whose PTX sits in a compressed fatbin that no byte scan can read.
#include "bench/eval/multicast_scan.h"

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <set>
#include <string>

#include <gtest/gtest.h>

#include "sandbox/process.h"

namespace pk::bench {
namespace {

namespace fs = std::filesystem;

std::vector<multicast_finding> scan(const std::string& text) { return scan_multicast_bytes(text, "f.py", "source"); }

TEST(multicast_scan, finds_multicast_by_name) {
  auto f = scan(R"(asm volatile("multimem.ld_reduce.relaxed.sys.global.add.f32 %0, [%1];");)");
  ASSERT_EQ(f.size(), 1u);
  EXPECT_EQ(f[0].what, "PTX multimem instruction");
  EXPECT_EQ(f[0].match, "multimem.ld_reduce.relaxed.sys.global.add.f32");
  EXPECT_EQ(f[0].file, "f.py");
  EXPECT_EQ(scan("lib.cuMulticastBindMem(h, 0, mem, 0, size, 0)").at(0).match, "cuMulticastBindMem");
  EXPECT_EQ(scan("ptr = handle.multicast_ptr").at(0).what, "PyTorch symmetric-memory multicast pointer");
  EXPECT_EQ(scan("torch.ops.symm_mem.multimem_all_reduce_(t, 'sum', name)").at(0).match, "multimem_all_reduce_");
  EXPECT_EQ(scan("prop.handleTypes = CU_MULTICAST_GRANULARITY_RECOMMENDED").at(0).what, "CUDA multicast constant");
}

TEST(multicast_scan, finds_nvls_switched_on_but_not_kept_off) {
  EXPECT_EQ(scan(R"(os.environ["NCCL_NVLS_ENABLE"] = "1")").at(0).match, "NCCL_NVLS_ENABLE=1");
  EXPECT_EQ(scan("setenv(\"NVSHMEM_DISABLE_NVLS\", \"0\", 1);").at(0).what, "NVLS switched on");
  EXPECT_EQ(scan("TORCH_SYMM_MEM_DISABLE_MULTICAST=false python x.py").size(), 1u);
  EXPECT_TRUE(scan(R"(os.environ["NCCL_NVLS_ENABLE"] = "0")").empty());
  EXPECT_TRUE(scan("export NVSHMEM_DISABLE_NVLS=1 TORCH_SYMM_MEM_DISABLE_MULTICAST=1").empty());
}

TEST(multicast_scan, leaves_ordinary_code_alone) {
  EXPECT_TRUE(scan("import torch.distributed as dist\nout = tensor.clone()\ndist.all_reduce(out)\n").empty());
  // A C++ symbol whose mangled name contains the word (a length prefix precedes it).
  EXPECT_TRUE(scan("_ZN4c10d15symmetric_memory17get_multicast_ptrEv").empty());
  EXPECT_TRUE(scan("has_multicast_support() is false here; we never touch multimem.").empty());
}

fs::path scratch(const std::string& name) {
  const fs::path d = fs::path(::testing::TempDir()) / ("pk_mc_scan_" + name);
  fs::remove_all(d);
  fs::create_directories(d);
  return d;
}

TEST(multicast_scan, scans_a_tree_and_skips_what_it_is_told_to) {
  const fs::path d = scratch("tree");
  fs::create_directories(d / "rank0" / "triton");
  std::ofstream(d / "rank0" / "triton" / "k.ptx") << "    multimem.st.relaxed.sys.global.f32 [%rd1], %f1;\n";
  std::ofstream(d / "rank0" / "clean.cu") << "__global__ void k(float* p) { p[0] = 1; }\n";
  std::ofstream(d / "ours.json") << "{\"note\": \"cuMulticastCreate\"}";
  {  // a binary: the name among raw bytes, as in a dynamic string table
    std::ofstream b(d / "rank0" / "lib.so", std::ios::binary);
    const std::string bytes = std::string("\x7f" "ELF\2\1\1", 7) + std::string(64, '\0') + "cuMulticastCreate" +
                              std::string(8, '\0');
    b.write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
  }
  multicast_scan_options o;
  o.disassemble = false;
  const auto f = scan_multicast_tree({{d, "jit"}}, {d / "ours.json"}, o);
  ASSERT_EQ(f.size(), 2u);
  std::set<std::string> got;
  for (const auto& x : f) got.insert(x.file + " " + x.what + " " + x.match + " " + x.where);
  EXPECT_TRUE(got.count("jit/rank0/triton/k.ptx PTX multimem instruction multimem.st.relaxed.sys.global.f32 text"));
  EXPECT_TRUE(got.count("jit/rank0/lib.so CUDA driver multicast API cuMulticastCreate bytes"));
  const std::string msg = describe_multicast(f);
  EXPECT_NE(msg.find("jit/rank0/lib.so: CUDA driver multicast API 'cuMulticastCreate' (bytes)"), std::string::npos);
  EXPECT_NE(msg.find("out of service"), std::string::npos);
}

// Compiles `src` with nvcc for sm_90 into `out`; false (with the reason in `why`) when it cannot.
bool nvcc(const fs::path& src, const fs::path& out, const std::vector<std::string>& flags, std::string& why) {
  sandbox::process_spec ps;
  fs::create_directories(out.parent_path());
  ps.argv = {"nvcc", "-arch=sm_90", "-c", src.string(), "-o", out.string()};
  ps.argv.insert(ps.argv.end(), flags.begin(), flags.end());
  if (const char* p = std::getenv("PATH")) ps.env["PATH"] = std::string(p) + ":/usr/local/cuda/bin";
  ps.timeout = std::chrono::seconds(120);
  try {
    const auto r = sandbox::run_process(ps);
    why = r.err.text;
    return r.ok();
  } catch (const std::exception& e) {
    why = e.what();
    return false;
  }
}

TEST(multicast_scan, finds_multimem_in_a_compressed_fatbin_through_cuobjdump) {
  if (find_cuobjdump().empty()) GTEST_SKIP() << "no cuobjdump on PATH, $CUDA_HOME/bin or /usr/local/cuda/bin";
  const fs::path d = scratch("nvcc");
  // The instruction is built from pieces so that the source itself holds no multimem name.
  std::ofstream(d / "k.cu") << "#define MM(op) \"multi\" \"mem.\" #op\n"
                               "__global__ void k(const float* p, float* o) {\n"
                               "  float v; asm volatile(MM(ld_reduce) \".relaxed.sys.global.add.f32 %0, [%1];\" "
                               ": \"=f\"(v) : \"l\"(p) : \"memory\"); o[0] = v; }\n";
  std::string why;
  if (!nvcc(d / "k.cu", d / "bin" / "k.o", {"-Xfatbin", "-compress-all"}, why))
    GTEST_SKIP() << "nvcc cannot compile for sm_90 here: " << why;
  multicast_scan_options o;
  o.clean_cache = d / "clean";
  const auto f = scan_multicast_tree({{d / "bin", "bin"}}, {}, o);
  bool ptx = false, sass = false;
  for (const auto& x : f) {
    ptx = ptx || (x.where == "ptx" && x.match.rfind("multimem.ld_reduce", 0) == 0);
    sass = sass || (x.where == "sass" && x.match.find("GMC") != std::string::npos);
  }
  EXPECT_TRUE(ptx) << describe_multicast(f);
  EXPECT_TRUE(sass) << describe_multicast(f);
  // A clean object is disassembled once, then remembered as clean by its content.
  std::ofstream(d / "c.cu") << "__global__ void c(float* o) { o[0] = 1; }\n";
  ASSERT_TRUE(nvcc(d / "c.cu", d / "clean_bin" / "c.o", {}, why)) << why;
  EXPECT_TRUE(scan_multicast_tree({{d / "clean_bin", "bin"}}, {}, o).empty());
  EXPECT_FALSE(fs::is_empty(d / "clean"));
}

}  // namespace
}  // namespace pk::bench
