#include "bench/eval/seeds.h"

#include <sys/random.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <fstream>
#include <stdexcept>

#include <fmt/format.h>

#include "bench/digest.h"
#include "config/read_file.h"

namespace pk::bench {

namespace fs = std::filesystem;

namespace {

std::uint64_t random_word() {
  std::uint64_t v = 0;
  std::size_t got = 0;
  auto* bytes = reinterpret_cast<unsigned char*>(&v);
  while (got < sizeof v) {
    const ssize_t n = ::getrandom(bytes + got, sizeof v - got, 0);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) throw std::runtime_error(fmt::format("getrandom failed: {}", std::strerror(errno)));
    got += static_cast<std::size_t>(n);
  }
  return v;
}

}  // namespace

seed_source seed_source::from_base(long long base, std::string key) { return seed_source(base, std::move(key)); }

seed_source seed_source::secret() { return seed_source(std::nullopt, {}); }

seed_source seed_source::derive(std::uint64_t stream) const {
  if (!base_) return secret();
  seed_source named(base_, key_);
  named.stream_ = stream + 1;  // 0 is the sequence from_base() gives
  return named;
}

std::int64_t seed_source::next() {
  const std::uint64_t v = base_ ? digest()
                                      .add(key_)
                                      .add(std::to_string(*base_))
                                      .add(std::to_string(stream_))
                                      .add(std::to_string(counter_++))
                                      .value()
                                : random_word();
  return static_cast<std::int64_t>(v >> 1);
}

std::string judge_seed_key(const fs::path& dir) {
  const fs::path file = dir / "seed-key";
  if (auto key = try_read_file(file); key && key->size() == 64) return *key;
  std::string key;
  for (int i = 0; i < 4; ++i) key += fmt::format("{:016x}", random_word());
  fs::create_directories(dir);
  // Written whole under a private name, then linked into place only if no key is there yet:
  // evaluations that start together all keep whichever key landed first.
  const fs::path tmp = dir / fmt::format("seed-key.tmp{}", ::getpid());
  std::ofstream(tmp) << key;
  std::error_code ec;
  fs::permissions(tmp, fs::perms::owner_read | fs::perms::owner_write, ec);
  (void)::link(tmp.c_str(), file.c_str());
  fs::remove(tmp, ec);
  if (auto kept = try_read_file(file); kept && kept->size() == 64) return *kept;
  throw std::runtime_error(fmt::format("cannot keep the judge's seed key in {}", file.string()));
}

std::string seed_key_id(const std::string& key) { return digest().add(key).hex().substr(0, 12); }

}  // namespace pk::bench
