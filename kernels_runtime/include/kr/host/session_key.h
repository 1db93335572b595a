#pragma once
#include <string>

namespace kr::host {

/// A fresh random session key for kr::host::rendezvous (32 hex digits from /dev/urandom).
std::string random_session_key();

}  // namespace kr::host
