#include "kr/host/session_key.h"

#include <fstream>

#include "kr/host/error.h"

namespace kr::host {

std::string random_session_key() {
  std::ifstream urandom("/dev/urandom", std::ios::binary);
  unsigned char bytes[16];
  if (!urandom.read(reinterpret_cast<char*>(bytes), sizeof(bytes)))
    throw error("kr: cannot read /dev/urandom for a session key");
  static const char digits[] = "0123456789abcdef";
  std::string key;
  for (unsigned char b : bytes) {
    key += digits[b >> 4];
    key += digits[b & 15];
  }
  return key;
}

}  // namespace kr::host
