#include "sandbox/own_libraries.h"

#include <link.h>

#include <algorithm>

namespace pk::sandbox {

namespace fs = std::filesystem;

namespace {

int add_object(dl_phdr_info* info, std::size_t, void* data) {
  auto& objects = *static_cast<std::vector<fs::path>*>(data);
  if (info->dlpi_name && info->dlpi_name[0] == '/') objects.emplace_back(info->dlpi_name);
  return 0;
}

// `p` is `root` or inside it, both absolute and lexically normal.
bool is_under(const fs::path& p, const fs::path& root) {
  auto [r, q] = std::mismatch(root.begin(), root.end(), p.begin(), p.end());
  return r == root.end() || (std::next(r) == root.end() && r->empty());  // "/a/b/" as a root
}

}  // namespace

std::vector<fs::path> loaded_shared_objects() {
  std::vector<fs::path> objects;
  dl_iterate_phdr(add_object, &objects);
  return objects;
}

std::vector<fs::path> library_dirs_under(const std::vector<fs::path>& objects, const std::vector<fs::path>& hidden) {
  std::vector<fs::path> roots;
  for (const auto& h : hidden)
    if (!h.empty()) roots.push_back(fs::absolute(h).lexically_normal());
  std::vector<fs::path> dirs;
  for (const auto& object : objects) {
    const fs::path dir = fs::absolute(object).lexically_normal().parent_path();
    const bool is_hidden = std::any_of(roots.begin(), roots.end(), [&](const fs::path& r) { return is_under(dir, r); });
    if (is_hidden && std::find(dirs.begin(), dirs.end(), dir) == dirs.end()) dirs.push_back(dir);
  }
  return dirs;
}

}  // namespace pk::sandbox
