#pragma once
#include <stdexcept>
#include <string>

namespace kr::host {

/// Setup and teardown failures of the host layer (bad arguments, a peer that never showed up, a
/// CUDA call that failed). The message names the call and what to check.
class error : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

}  // namespace kr::host
