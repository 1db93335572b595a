// Reads the files rank workers write (bench/worker/tensor_file.py): the safetensors layout, with
// the nesting of the recorded values (tuples, lists, dicts, plain values) as JSON in the header's
// __metadata__.tree. Candidate processes write these files, so every offset and size is checked
// before use; nothing is unpickled.
//
// Tree nodes: {"tensor": NAME} (bytes in the file), {"digest": {"dtype", "shape", "hash"}} (a large
// input recorded by its digest only), {"sparse_coo": {"size", "indices", "values"}}, {"tuple": [...]},
// {"list": [...]}, {"dict": [[key, value] ...]}, {"size": [...]}, {"group": [ranks]}, {"value": V},
// {"float": "nan"}, {"repr": TEXT}.
#pragma once

#include <cstdint>
#include <filesystem>
#include <map>
#include <memory>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

namespace pk::bench {

/// The file is missing, truncated or malformed; the message says which and where.
class tensor_file_error : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

struct tensor_view {
  std::string dtype;                ///< safetensors code: BF16, F32, I64, C64 ...
  std::vector<std::int64_t> shape;
  std::string_view bytes;           ///< into the owning tensor_file
  std::uint64_t numel() const;
};

class tensor_file {
 public:
  static tensor_file read(const std::filesystem::path& path);
  /// Parses a file's bytes (read by the caller, e.g. with read_untrusted); `path` names it in messages.
  static tensor_file parse(std::string bytes, const std::filesystem::path& path);
  tensor_file(tensor_file&&) noexcept = default;
  tensor_file& operator=(tensor_file&&) noexcept = default;

  /// The recorded tree named `name` ("output", "inputs", "in_place", "judge"); throws when absent.
  const nlohmann::json& tree(const std::string& name) const;
  bool has_tree(const std::string& name) const { return trees_.contains(name); }
  /// The tensor a {"tensor": NAME} leaf refers to; throws when absent.
  const tensor_view& tensor(const std::string& name) const;
  const std::filesystem::path& path() const { return path_; }

 private:
  tensor_file() = default;
  std::filesystem::path path_;
  std::unique_ptr<std::string> data_;  ///< on the heap: views stay valid when the file moves
  nlohmann::json trees_;
  std::map<std::string, tensor_view, std::less<>> tensors_;
};

/// Bytes per element of a safetensors dtype code; 0 when unknown.
int element_size(std::string_view code);
/// The torch name of a safetensors dtype code (BF16 -> bfloat16), for messages.
std::string torch_dtype_name(std::string_view code);
/// Kind of a dtype code: 'f' floating, 'c' complex, 'i' integer or bool.
char dtype_kind(std::string_view code);
/// Element i of a real tensor as a double (complex: use element_complex).
double element(const tensor_view& t, std::uint64_t i);
/// The elements of one real tensor as doubles, its dtype's decoding chosen once: what a loop
/// over millions of elements uses, where element() would look the dtype up for every one.
class element_reader {
 public:
  explicit element_reader(const tensor_view& t);
  double operator()(std::uint64_t i) const { return decode_(base_ + i * size_); }

 private:
  double (*decode_)(const char*);
  const char* base_;
  std::uint64_t size_;
};
/// Element i of a complex tensor as (real, imaginary).
std::pair<double, double> element_complex(const tensor_view& t, std::uint64_t i);
/// Element i's bits as an integer that orders like the value: for floating dtypes adjacent
/// representable values differ by 1 (+0 and -0 are both 0), so a difference counts ulps; for
/// integer dtypes the value itself.
std::int64_t ordered_code(const tensor_view& t, std::uint64_t i);

/// A large input recorded by its digest instead of its bytes (bench/worker/problem_api.py).
struct tensor_digest {
  std::string dtype;                ///< safetensors code
  std::vector<std::int64_t> shape;
  std::string hash;
  bool operator==(const tensor_digest&) const = default;
};
/// The digest a {"digest": ...} node holds; throws tensor_file_error when it is malformed.
tensor_digest digest_of(const nlohmann::json& node);

}  // namespace pk::bench
