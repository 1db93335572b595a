// Reads the files rank workers write (bench/worker/tensor_file.py): the safetensors layout, with
// the nesting of the recorded values (tuples, lists, dicts, plain values) as JSON in the header's
// __metadata__.tree. Candidate processes write these files, so every offset and size is checked
// before use; nothing is unpickled.
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

  /// The recorded tree named `name` ("output", "inputs"); throws when absent.
  const nlohmann::json& tree(const std::string& name) const;
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
/// Element i of a complex tensor as (real, imaginary).
std::pair<double, double> element_complex(const tensor_view& t, std::uint64_t i);

}  // namespace pk::bench
