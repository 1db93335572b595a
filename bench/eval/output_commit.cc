#include "bench/eval/output_commit.h"

#include <array>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

namespace pk::bench {

namespace {

using json = nlohmann::json;

constexpr std::array<std::uint32_t, 2> salts = {0x2545F491, 0x9E3779B9};

// counter_fill.py's _mix32: xor-shift-multiply, every step mod 2^32.
std::uint32_t mix32(std::uint32_t x) {
  x ^= x >> 16;
  x *= 0x7FEB352Du;
  x ^= x >> 15;
  x *= 0x846CA68Bu;
  return x ^ (x >> 16);
}

void output_tensors(const json& node, std::vector<std::string>& names) {
  if (!node.is_object() || node.size() != 1) return;
  const std::string& k = node.begin().key();
  const json& v = node.begin().value();
  if (k == "tensor" && v.is_string()) {
    names.push_back(v.get<std::string>());
  } else if (k == "sparse_coo" && v.is_object()) {
    output_tensors(v.value("indices", json()), names);
    output_tensors(v.value("values", json()), names);
  } else if ((k == "tuple" || k == "list") && v.is_array()) {
    for (const json& item : v) output_tensors(item, names);
  } else if (k == "dict" && v.is_array()) {
    for (const json& pair : v) {
      if (!pair.is_array() || pair.size() != 2) continue;
      output_tensors(pair[0], names);
      output_tensors(pair[1], names);
    }
  }
}

}  // namespace

tensor_commit commit_of(std::string_view bytes) {
  tensor_commit c;
  c.bytes = bytes.size();
  const std::size_t words = (bytes.size() + 1) / 2;
  for (std::size_t j = 0; j < words; ++j) {
    std::uint16_t w = static_cast<unsigned char>(bytes[2 * j]);
    if (2 * j + 1 < bytes.size()) w |= static_cast<std::uint16_t>(static_cast<unsigned char>(bytes[2 * j + 1]) << 8);
    const auto term = [&](std::uint32_t salt) {
      const auto key = static_cast<std::uint16_t>(mix32(static_cast<std::uint32_t>(j) ^ salt));
      return static_cast<std::int64_t>(static_cast<std::int16_t>(w ^ key));
    };
    c.s0 += term(salts[0]);
    c.s1 += term(salts[1]);
  }
  return c;
}

std::vector<tensor_commit> output_commits(const tensor_file& f) {
  std::vector<std::string> names;
  output_tensors(f.tree("output"), names);
  std::vector<tensor_commit> out;
  for (const auto& name : names) out.push_back(commit_of(f.tensor(name).bytes));
  return out;
}

std::optional<std::vector<tensor_commit>> commits_from_json(const json& call) {
  if (!call.is_array()) return std::nullopt;
  std::vector<tensor_commit> out;
  for (const json& t : call) {
    if (!t.is_array() || t.size() != 3 || !t[0].is_number_unsigned() || !t[1].is_number_integer() ||
        !t[2].is_number_integer())
      return std::nullopt;
    out.push_back({t[0].get<std::uint64_t>(), t[1].get<std::int64_t>(), t[2].get<std::int64_t>()});
  }
  return out;
}

std::optional<std::string> commit_mismatch(const tensor_file& recorded, const std::vector<tensor_commit>& committed) {
  const std::vector<tensor_commit> got = output_commits(recorded);
  if (got.size() != committed.size())
    return fmt::format("its timing block committed to {} output tensor(s) for this call, but {} were recorded",
                       committed.size(), got.size());
  for (std::size_t i = 0; i < got.size(); ++i)
    if (!(got[i] == committed[i]))
      return fmt::format("output tensor {} of the recorded call is not the one its timing block committed to ({} "
                         "bytes committed, {} recorded{})",
                         i, committed[i].bytes, got[i].bytes,
                         committed[i].bytes == got[i].bytes ? ", other contents" : "");
  return std::nullopt;
}

}  // namespace pk::bench
