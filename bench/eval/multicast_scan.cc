#include "bench/eval/multicast_scan.h"

#include <unistd.h>

#include <algorithm>
#include <array>
#include <cctype>
#include <cstdlib>
#include <fstream>
#include <optional>

#include <fmt/format.h>

#include "bench/digest.h"
#include "config/paths.h"
#include "config/read_file.h"
#include "sandbox/process.h"

namespace pk::bench {

namespace fs = std::filesystem;

namespace {

bool word_char(char c) { return std::isalnum(static_cast<unsigned char>(c)) || c == '_'; }

// The identifier-ish token that starts at `pos` (letters, digits, '_' and, for PTX, '.').
std::string token_at(std::string_view s, std::size_t pos, bool dots) {
  std::size_t end = pos;
  while (end < s.size() && end - pos < 80 && (word_char(s[end]) || (dots && s[end] == '.'))) ++end;
  return std::string(s.substr(pos, end - pos));
}

// A switch of NVLS at `pos` (its name starts there): the value after '=' / ':' / ',' (quotes and
// brackets allowed in between, as in os.environ["X"] = "1" or setenv("X", "1")), or nullopt.
std::optional<std::string> switch_value(std::string_view s, std::size_t pos, std::size_t name_len) {
  std::size_t i = pos + name_len;
  int skipped = 0;
  while (i < s.size() && skipped < 6 && (s[i] == '"' || s[i] == '\'' || s[i] == ']' || s[i] == ')' || s[i] == ' '))
    ++i, ++skipped;
  if (i >= s.size() || (s[i] != '=' && s[i] != ':' && s[i] != ',')) return std::nullopt;
  ++i;
  while (i < s.size() && (s[i] == ' ' || s[i] == '"' || s[i] == '\'')) ++i;
  std::string v = token_at(s, i, false);
  std::transform(v.begin(), v.end(), v.begin(), [](unsigned char c) { return std::tolower(c); });
  if (v.empty()) return std::nullopt;
  return v;
}

struct needle {
  std::string_view text;
  const char* what;
};

// What multicast looks like by name. Each needle must start an identifier (no word character
// before it), which keeps "nvshmemx_multimem..." style names found by their own needle only.
constexpr std::array<needle, 7> needles{{
    {"multimem.", "PTX multimem instruction"},
    {"cuMulticast", "CUDA driver multicast API"},
    {"CU_MULTICAST_", "CUDA multicast constant"},
    {"CU_DEVICE_ATTRIBUTE_MULTICAST_SUPPORTED", "CUDA multicast capability query"},
    {"multicast_ptr", "PyTorch symmetric-memory multicast pointer"},
    {"get_multicast_ptr", "PyTorch symmetric-memory multicast pointer"},
    {"multimem_", "PyTorch symmetric-memory multimem operation"},
}};

// NVLS switches and the values that turn multicast ON.
struct nvls_switch {
  std::string_view name;
  bool on_when_truthy;  ///< NCCL_NVLS_ENABLE=1 turns it on; *_DISABLE_*=0 turns it on
};
constexpr std::array<nvls_switch, 3> switches{{
    {"NCCL_NVLS_ENABLE", true},
    {"NVSHMEM_DISABLE_NVLS", false},
    {"TORCH_SYMM_MEM_DISABLE_MULTICAST", false},
}};

bool truthy(const std::string& v) { return v != "0" && v != "false" && v != "no" && v != "off"; }

std::optional<std::string> read_span(const fs::path& p, std::uintmax_t size, std::uintmax_t full) {
  if (size <= full) return try_read_file(p);
  std::ifstream in(p, std::ios::binary);
  if (!in) return std::nullopt;
  // Huge file: its head and tail (headers, symbol and string tables sit there in ELF files).
  const std::size_t part = 64u << 20;
  std::string s(2 * part, '\0');
  in.read(s.data(), static_cast<std::streamsize>(part));
  in.seekg(static_cast<std::streamoff>(size - part));
  in.read(s.data() + part, static_cast<std::streamsize>(part));
  return s;
}

bool is_elf(std::string_view data) { return data.substr(0, 4) == std::string_view("\x7f" "ELF", 4); }

// A CUDA binary: a cubin (ELF machine EM_CUDA = 190) or a host ELF carrying a fatbin.
bool has_device_code(std::string_view data) {
  if (!is_elf(data)) return false;
  if (data.size() > 19 && static_cast<unsigned char>(data[18]) == 190 && data[19] == 0) return true;
  return data.find(".nv_fatbin") != std::string_view::npos || data.find("__nv_relfatbin") != std::string_view::npos;
}

// The SASS opcode of a multimem load-reduce: LDGMC (and any *GMC form), as a whole opcode.
std::optional<std::string> sass_multicast(std::string_view sass) {
  for (std::size_t pos = sass.find("GMC"); pos != std::string_view::npos; pos = sass.find("GMC", pos + 3)) {
    std::size_t start = pos;
    while (start > 0 && std::isupper(static_cast<unsigned char>(sass[start - 1]))) --start;
    const bool starts_opcode = start == 0 || sass[start - 1] == ' ' || sass[start - 1] == '\t' || sass[start - 1] == '}';
    const std::size_t end = pos + 3;
    const bool ends_opcode = end >= sass.size() || sass[end] == '.' || sass[end] == ' ' || sass[end] == ';';
    if (starts_opcode && ends_opcode) return token_at(sass, start, true);
  }
  return std::nullopt;
}

std::vector<multicast_finding> disassemble(const fs::path& file, const std::string& name, const fs::path& tool) {
  std::vector<multicast_finding> out;
  sandbox::process_spec ps;
  ps.argv = {tool.string(), "-ptx", "-sass", file.string()};
  if (const char* path = std::getenv("PATH")) ps.env["PATH"] = path;
  ps.timeout = std::chrono::seconds(120);
  ps.output_cap = 1ull << 30;
  const auto r = sandbox::run_process(ps);
  if (!r.ok()) return out;  // not a CUDA binary after all, or nothing cuobjdump can read
  const std::string& text = r.out.text;
  for (auto& f : scan_multicast_bytes(text, name, "ptx")) out.push_back(std::move(f));
  if (auto op = sass_multicast(text)) out.push_back({name, "SASS multicast instruction", *op, "sass", 0});
  return out;
}

}  // namespace

std::vector<multicast_finding> scan_multicast_bytes(std::string_view data, const std::string& file,
                                                    const std::string& where) {
  std::vector<multicast_finding> out;
  const bool text = where == "source" || where == "text";
  auto line_of = [&](std::size_t pos) {
    return text ? 1 + static_cast<int>(std::count(data.begin(), data.begin() + static_cast<std::ptrdiff_t>(pos), '\n'))
                : 0;
  };
  auto found = [&](const char* what) {
    return std::any_of(out.begin(), out.end(), [&](const multicast_finding& f) { return f.what == what; });
  };
  for (const needle& n : needles) {
    if (found(n.what)) continue;
    for (std::size_t pos = data.find(n.text); pos != std::string_view::npos; pos = data.find(n.text, pos + 1)) {
      if (pos > 0 && word_char(data[pos - 1])) continue;
      const bool ptx = n.text == "multimem.";
      if (ptx && (pos + n.text.size() >= data.size() || !std::islower(static_cast<unsigned char>(data[pos + n.text.size()]))))
        continue;  // "multimem." at the end of a sentence, not an instruction
      out.push_back({file, n.what, token_at(data, pos, ptx), where, line_of(pos)});
      break;
    }
  }
  for (const nvls_switch& s : switches) {
    for (std::size_t pos = data.find(s.name); pos != std::string_view::npos; pos = data.find(s.name, pos + 1)) {
      const auto v = switch_value(data, pos, s.name.size());
      if (!v || truthy(*v) != s.on_when_truthy) continue;
      out.push_back({file, "NVLS switched on", fmt::format("{}={}", s.name, *v), where, line_of(pos)});
      break;
    }
  }
  return out;
}

fs::path find_cuobjdump() {
  std::vector<fs::path> dirs;
  if (const char* path = std::getenv("PATH")) {
    std::string_view p = path;
    for (std::size_t start = 0; start <= p.size();) {
      const std::size_t end = std::min(p.find(':', start), p.size());
      if (end > start) dirs.emplace_back(std::string(p.substr(start, end - start)));
      start = end + 1;
    }
  }
  for (const char* var : {"CUDA_HOME", "CUDA_PATH"})
    if (const char* v = std::getenv(var); v && *v) dirs.push_back(fs::path(v) / "bin");
  dirs.emplace_back("/usr/local/cuda/bin");
  // Triton's wheel ships one: <prefix>/lib/python3.X/site-packages/triton/backends/nvidia/bin.
  std::error_code ec;
  const fs::path lib = fs::path(config::python()).parent_path().parent_path() / "lib";
  for (const auto& e : fs::directory_iterator(lib, ec))
    if (e.path().filename().string().rfind("python3", 0) == 0)
      dirs.push_back(e.path() / "site-packages/triton/backends/nvidia/bin");
  for (const fs::path& d : dirs)
    if (::access((d / "cuobjdump").c_str(), X_OK) == 0) return d / "cuobjdump";
  return {};
}

std::vector<multicast_finding> scan_multicast_tree(const std::vector<scan_root>& roots, const std::set<fs::path>& skip,
                                                   const multicast_scan_options& o) {
  const fs::path tool = o.disassemble ? find_cuobjdump() : fs::path();
  std::vector<multicast_finding> out;
  auto scan_file = [&](const fs::path& file, const std::string& name) {
    std::error_code ec;
    const auto size = fs::file_size(file, ec);
    const std::optional<std::string> read = ec ? std::nullopt : read_span(file, size, o.full_scan_bytes);
    if (!read) {
      // A scan that cannot read a file cannot clear it (a candidate could make its binary unreadable).
      out.push_back({name, "a file the scan cannot read", "unreadable", "file", 0});
      return;
    }
    const std::string& data = *read;
    const bool binary = is_elf(data) || data.find('\0') != std::string::npos;
    auto found = scan_multicast_bytes(data, name, binary ? "bytes" : "text");
    if (!tool.empty() && has_device_code(data)) {
      const std::string key = digest().add(data).hex();
      const fs::path marker = o.clean_cache.empty() ? fs::path() : o.clean_cache / key;
      if (marker.empty() || !fs::exists(marker)) {
        auto dis = disassemble(file, name, tool);
        for (auto& f : dis)
          if (std::none_of(found.begin(), found.end(), [&](const auto& g) { return g.what == f.what; }))
            found.push_back(std::move(f));
        if (dis.empty() && !marker.empty()) {
          fs::create_directories(o.clean_cache, ec);
          std::ofstream(marker) << name << "\n";
        }
      }
    }
    for (auto& f : found) out.push_back(std::move(f));
  };
  for (const scan_root& root : roots) {
    std::error_code ec;
    const auto st = fs::symlink_status(root.path, ec);
    if (ec || !fs::exists(st)) continue;
    if (fs::is_regular_file(st)) {
      if (!skip.count(root.path)) scan_file(root.path, root.label);
      continue;
    }
    if (!fs::is_directory(st)) continue;
    for (auto it = fs::recursive_directory_iterator(root.path, fs::directory_options::skip_permission_denied, ec);
         !ec && it != fs::recursive_directory_iterator(); it.increment(ec)) {
      if (it->is_symlink(ec) || !it->is_regular_file(ec) || skip.count(it->path())) continue;
      scan_file(it->path(), (fs::path(root.label) / fs::relative(it->path(), root.path)).string());
    }
  }
  return out;
}

std::string describe_multicast(const std::vector<multicast_finding>& findings) {
  std::string s =
      "NVLink multicast (NVLS) is forbidden on this host: a multicast object or multimem instruction can put the "
      "machine's GPUs out of service for every user. Found:";
  for (const auto& f : findings)
    s += fmt::format("\n  {}{}: {} '{}' ({})", f.file, f.line ? fmt::format(":{}", f.line) : "", f.what, f.match,
                     f.where);
  s += "\nMove data with peer loads/stores, TMA or the copy engine instead (kernels_runtime, "
       "docs/kernels_runtime.md), and keep NCCL_NVLS_ENABLE=0.";
  return s;
}

}  // namespace pk::bench
