#include "sandbox/live_group.h"

#include <cerrno>
#include <cstring>

#include <fmt/format.h>

#include "sandbox/cgroup.h"

namespace pk::sandbox {

bool live_group::usable() const { return cgroup_ && !released_ && !failed_ && cgroup_->can_freeze(); }

bool live_group::freeze(bool frozen) {
  std::lock_guard lock(mutex_);
  if (!usable()) return false;
  if (!cgroup_->freeze(frozen)) {
    failed_ = true;
    why_not_ = fmt::format("the sandbox's cgroup freezer refused: {}", std::strerror(errno));
    return false;
  }
  frozen_ = frozen;
  return true;
}

bool live_group::can_freeze() const {
  std::lock_guard lock(mutex_);
  return usable();
}

std::string live_group::why_not() const {
  std::lock_guard lock(mutex_);
  if (usable()) return "";
  return cgroup_ && released_ ? "the sandbox is ending" : why_not_;
}

void live_group::attach(sandbox_cgroup* cgroup, std::string why_not) {
  std::lock_guard lock(mutex_);
  cgroup_ = cgroup;
  released_ = false;
  failed_ = false;
  frozen_ = false;
  why_not_ = std::move(why_not);
}

void live_group::release() {
  std::lock_guard lock(mutex_);
  if (cgroup_ && frozen_) cgroup_->freeze(false);
  frozen_ = false;
  released_ = true;
}

void live_group::detach() {
  release();
  std::lock_guard lock(mutex_);
  cgroup_ = nullptr;
  why_not_ = "the sandbox has ended";
}

}  // namespace pk::sandbox
