#include "bench/eval/tensor_file.h"

#include <bit>
#include <cmath>
#include <cstring>
#include <limits>
#include <system_error>

#include <fmt/format.h>

#include "config/read_file.h"

namespace pk::bench {

namespace {

struct dtype_info {
  std::string_view code, torch_name;
  int size;
  char kind;
};
constexpr dtype_info dtypes[] = {
    {"BOOL", "bool", 1, 'i'},   {"U8", "uint8", 1, 'i'},          {"I8", "int8", 1, 'i'},
    {"I16", "int16", 2, 'i'},   {"U16", "uint16", 2, 'i'},        {"I32", "int32", 4, 'i'},
    {"U32", "uint32", 4, 'i'},  {"I64", "int64", 8, 'i'},         {"U64", "uint64", 8, 'i'},
    {"F16", "float16", 2, 'f'}, {"BF16", "bfloat16", 2, 'f'},     {"F32", "float32", 4, 'f'},
    {"F64", "float64", 8, 'f'}, {"F8_E4M3", "float8_e4m3fn", 1, 'f'}, {"F8_E5M2", "float8_e5m2", 1, 'f'},
    {"C64", "complex64", 8, 'c'}, {"C128", "complex128", 16, 'c'},
};

const dtype_info* info(std::string_view code) {
  for (const auto& d : dtypes)
    if (d.code == code) return &d;
  return nullptr;
}

template <class T>
T load(const char* p) {
  T v;
  std::memcpy(&v, p, sizeof v);
  return v;
}

// IEEE half to double (no _Float16 on every compiler we build with).
double half_to_double(std::uint16_t h) {
  const int sign = h >> 15, exp = (h >> 10) & 0x1f, mant = h & 0x3ff;
  double v;
  if (exp == 0) v = std::ldexp(mant, -24);
  else if (exp == 31) v = mant ? std::numeric_limits<double>::quiet_NaN() : INFINITY;
  else v = std::ldexp(1024 + mant, exp - 25);
  return sign ? -v : v;
}

// float8 e4m3fn (no infinities; S.1111.111 is NaN) and e5m2 (IEEE-like) to double.
double fp8_to_double(std::uint8_t b, bool e4m3) {
  const int sign = b >> 7;
  const int exp_bits = e4m3 ? 4 : 5, mant_bits = e4m3 ? 3 : 2, bias = e4m3 ? 7 : 15;
  const int exp = (b >> mant_bits) & ((1 << exp_bits) - 1), mant = b & ((1 << mant_bits) - 1);
  double v;
  if (e4m3 && exp == 15 && mant == 7) v = std::numeric_limits<double>::quiet_NaN();
  else if (!e4m3 && exp == 31) v = mant ? std::numeric_limits<double>::quiet_NaN() : INFINITY;
  else if (exp == 0) v = std::ldexp(mant, 1 - bias - mant_bits);
  else v = std::ldexp((1 << mant_bits) + mant, exp - bias - mant_bits);
  return sign ? -v : v;
}

}  // namespace

std::uint64_t tensor_view::numel() const {
  std::uint64_t n = 1;
  for (auto d : shape) n *= static_cast<std::uint64_t>(d);
  return n;
}

int element_size(std::string_view code) {
  const dtype_info* d = info(code);
  return d ? d->size : 0;
}

std::string torch_dtype_name(std::string_view code) {
  const dtype_info* d = info(code);
  return d ? std::string(d->torch_name) : std::string(code);
}

char dtype_kind(std::string_view code) {
  const dtype_info* d = info(code);
  return d ? d->kind : '?';
}

namespace {

using decoder = double (*)(const char*);

decoder decoder_for(std::string_view c) {
  if (c == "BF16")
    return [](const char* p) -> double {
      return std::bit_cast<float>(static_cast<std::uint32_t>(load<std::uint16_t>(p)) << 16);
    };
  if (c == "F16") return [](const char* p) { return half_to_double(load<std::uint16_t>(p)); };
  if (c == "F32") return [](const char* p) -> double { return load<float>(p); };
  if (c == "F64") return [](const char* p) { return load<double>(p); };
  if (c == "F8_E4M3") return [](const char* p) { return fp8_to_double(load<std::uint8_t>(p), true); };
  if (c == "F8_E5M2") return [](const char* p) { return fp8_to_double(load<std::uint8_t>(p), false); };
  if (c == "BOOL" || c == "U8") return [](const char* p) -> double { return load<std::uint8_t>(p); };
  if (c == "I8") return [](const char* p) -> double { return load<std::int8_t>(p); };
  if (c == "I16") return [](const char* p) -> double { return load<std::int16_t>(p); };
  if (c == "U16") return [](const char* p) -> double { return load<std::uint16_t>(p); };
  if (c == "I32") return [](const char* p) -> double { return load<std::int32_t>(p); };
  if (c == "U32") return [](const char* p) -> double { return load<std::uint32_t>(p); };
  if (c == "I64") return [](const char* p) { return static_cast<double>(load<std::int64_t>(p)); };
  if (c == "U64") return [](const char* p) { return static_cast<double>(load<std::uint64_t>(p)); };
  throw tensor_file_error(fmt::format("no real elements in a {} tensor", c));
}

}  // namespace

element_reader::element_reader(const tensor_view& t)
    : decode_(decoder_for(t.dtype)),
      base_(t.bytes.data()),
      size_(static_cast<std::uint64_t>(element_size(t.dtype))) {}

double element(const tensor_view& t, std::uint64_t i) { return element_reader(t)(i); }

std::pair<double, double> element_complex(const tensor_view& t, std::uint64_t i) {
  if (t.dtype == "C64") {
    const char* p = t.bytes.data() + i * 8;
    return {load<float>(p), load<float>(p + 4)};
  }
  if (t.dtype == "C128") {
    const char* p = t.bytes.data() + i * 16;
    return {load<double>(p), load<double>(p + 8)};
  }
  return {element(t, i), 0.0};
}

std::int64_t ordered_code(const tensor_view& t, std::uint64_t i) {
  const int es = element_size(t.dtype);
  if (dtype_kind(t.dtype) != 'f') {
    if (dtype_kind(t.dtype) != 'i') throw tensor_file_error(fmt::format("no ordered codes for a {} tensor", t.dtype));
    return static_cast<std::int64_t>(element(t, i));
  }
  std::uint64_t bits = 0;
  std::memcpy(&bits, t.bytes.data() + i * static_cast<std::uint64_t>(es), static_cast<std::size_t>(es));
  const std::uint64_t sign = 1ull << (8 * es - 1);
  const auto magnitude = static_cast<std::int64_t>(bits & (sign - 1));
  return (bits & sign) ? -magnitude : magnitude;
}

tensor_digest digest_of(const nlohmann::json& node) {
  try {
    const nlohmann::json& d = node.at("digest");
    tensor_digest out{d.at("dtype").get<std::string>(), d.at("shape").get<std::vector<std::int64_t>>(),
                      d.at("hash").get<std::string>()};
    if (element_size(out.dtype) == 0 || out.hash.empty())
      throw tensor_file_error(fmt::format("a digest record has dtype '{}' and hash '{}'", out.dtype, out.hash));
    return out;
  } catch (const nlohmann::json::exception& e) {
    throw tensor_file_error(fmt::format("a malformed digest record: {}", e.what()));
  }
}

tensor_file tensor_file::read(const std::filesystem::path& path) {
  std::string bytes;
  try {
    bytes = read_file(path);
  } catch (const std::system_error& e) {
    throw tensor_file_error(e.what());
  }
  return parse(std::move(bytes), path);
}

tensor_file tensor_file::parse(std::string bytes, const std::filesystem::path& path) {
  tensor_file f;
  f.path_ = path;
  f.data_ = std::make_unique<std::string>(std::move(bytes));
  const std::string& data = *f.data_;
  auto bad = [&](std::string_view why) {
    return tensor_file_error(fmt::format("{}: not a valid result file: {}", path.string(), why));
  };
  if (data.size() < 8) throw bad("shorter than its 8-byte header length");
  const auto header_len = load<std::uint64_t>(data.data());
  if (header_len > data.size() - 8) throw bad("header length beyond the end of the file");
  nlohmann::json header;
  try {
    header = nlohmann::json::parse(data.begin() + 8, data.begin() + 8 + static_cast<long>(header_len));
    f.trees_ = nlohmann::json::parse(header.at("__metadata__").at("tree").get<std::string>());
  } catch (const nlohmann::json::exception& e) {
    throw bad(fmt::format("header: {}", e.what()));
  }
  if (!f.trees_.is_object()) throw bad("the tree is not an object");
  const std::uint64_t body = 8 + header_len, body_len = data.size() - body;
  for (const auto& [name, desc] : header.items()) {
    if (name == "__metadata__") continue;
    tensor_view t;
    try {
      t.dtype = desc.at("dtype").get<std::string>();
      t.shape = desc.at("shape").get<std::vector<std::int64_t>>();
      const auto offsets = desc.at("data_offsets").get<std::vector<std::uint64_t>>();
      if (offsets.size() != 2 || offsets[0] > offsets[1] || offsets[1] > body_len)
        throw bad(fmt::format("tensor {}: byte range outside the file", name));
      const int es = element_size(t.dtype);
      if (es == 0) throw bad(fmt::format("tensor {}: unknown dtype {}", name, t.dtype));
      std::uint64_t bytes = static_cast<std::uint64_t>(es);
      for (auto d : t.shape)
        if (d < 0 || __builtin_mul_overflow(bytes, static_cast<std::uint64_t>(d), &bytes))
          throw bad(fmt::format("tensor {}: impossible shape", name));
      if (bytes != offsets[1] - offsets[0])
        throw bad(fmt::format("tensor {}: {} bytes do not hold its shape", name, offsets[1] - offsets[0]));
      t.bytes = std::string_view(data).substr(body + offsets[0], offsets[1] - offsets[0]);
    } catch (const nlohmann::json::exception& e) {
      throw bad(fmt::format("tensor {}: {}", name, e.what()));
    }
    f.tensors_.emplace(name, std::move(t));
  }
  return f;
}

const nlohmann::json& tensor_file::tree(const std::string& name) const {
  auto it = trees_.find(name);
  if (it == trees_.end())
    throw tensor_file_error(fmt::format("{}: records no '{}'", path_.string(), name));
  return *it;
}

const tensor_view& tensor_file::tensor(const std::string& name) const {
  auto it = tensors_.find(name);
  if (it == tensors_.end())
    throw tensor_file_error(fmt::format("{}: refers to a tensor '{}' it does not hold", path_.string(), name));
  return it->second;
}

}  // namespace pk::bench
