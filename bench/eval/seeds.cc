#include "bench/eval/seeds.h"

#include <sys/random.h>

#include <cerrno>
#include <cstring>
#include <stdexcept>

#include <fmt/format.h>

namespace pk::bench {

seed_source seed_source::from_base(long long base) {
  // Mixed once so that neighbouring base seeds start far apart.
  return seed_source(static_cast<std::uint64_t>(base) * 0x9e3779b97f4a7c15ULL ^ 0x5eed5eed5eed5eedULL);
}

seed_source seed_source::secret() { return seed_source(std::nullopt); }

seed_source seed_source::derive(std::uint64_t stream) const {
  if (!origin_) return secret();
  seed_source named(*origin_ ^ (stream + 1) * 0xd1b54a32d192ed03ULL);
  named.next();  // one round of mixing, so that nearby stream names start far apart
  named.origin_ = named.state_;
  return named;
}

std::int64_t seed_source::next() {
  std::uint64_t v = 0;
  if (state_) {
    // splitmix64 (Steele, Lea, Flood): a stateless mix of a counter, fast and well distributed;
    // written out because the standard engines do not promise the same stream on every library.
    std::uint64_t z = (*state_ += 0x9e3779b97f4a7c15ULL);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
    v = z ^ (z >> 31);
  } else {
    std::size_t got = 0;
    auto* bytes = reinterpret_cast<unsigned char*>(&v);
    while (got < sizeof v) {
      const ssize_t n = ::getrandom(bytes + got, sizeof v - got, 0);
      if (n < 0 && errno == EINTR) continue;
      if (n < 0) throw std::runtime_error(fmt::format("getrandom failed: {}", std::strerror(errno)));
      got += static_cast<std::size_t>(n);
    }
  }
  return static_cast<std::int64_t>(v >> 1);
}

}  // namespace pk::bench
