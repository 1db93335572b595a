// Test helper: writes result files in the rank workers' layout (bench/worker/tensor_file.py).
#pragma once

#include <cstdint>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

namespace pk::bench::testing {

struct raw_tensor {
  std::string name, dtype;
  std::vector<std::int64_t> shape;
  std::string bytes;
};

template <class T>
raw_tensor make_tensor(const std::string& name, const std::string& dtype, std::vector<std::int64_t> shape,
                       const std::vector<T>& values) {
  raw_tensor t{name, dtype, std::move(shape), std::string(values.size() * sizeof(T), '\0')};
  std::memcpy(t.bytes.data(), values.data(), t.bytes.size());
  return t;
}

inline void write_result_file(const std::filesystem::path& path, const nlohmann::json& trees,
                              const std::vector<raw_tensor>& tensors) {
  nlohmann::json header = {{"__metadata__", {{"tree", trees.dump()}}}};
  std::string body;
  for (const auto& t : tensors) {
    header[t.name] = {{"dtype", t.dtype}, {"shape", t.shape}, {"data_offsets", {body.size(), body.size() + t.bytes.size()}}};
    body += t.bytes;
  }
  std::string head = header.dump();
  head.resize((head.size() + 7) / 8 * 8, ' ');
  const std::uint64_t n = head.size();
  std::ofstream out(path, std::ios::binary);
  out.write(reinterpret_cast<const char*>(&n), 8);
  out << head << body;
}

}  // namespace pk::bench::testing
