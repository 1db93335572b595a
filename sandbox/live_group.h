// A running sandbox as one thing a caller outside it can stop and continue: the judge stops a
// whole process set between its turns. Signals to the pids it knows (the ranks) leave running
// what those started: a child, a daemon in its own session, a process forked while the others
// were being stopped. The sandbox's cgroup freezer stops every one of them, and the kernel
// freezes whatever is forked into a freezing cgroup.
//
// Shared between the thread that runs the sandbox (sandbox::execute attaches the cgroup while
// the command runs, and releases it before anything is killed: a v1-frozen process does not die)
// and the caller that freezes it.
#pragma once

#include <mutex>
#include <string>

namespace pk::sandbox {

class sandbox_cgroup;

class live_group {
 public:
  /// Stops (true) or continues (false) every process of the sandbox; returns at once (a process
  /// stops at its next return to user space). False where it cannot: the command is not running
  /// (yet, or any more), the host gives it no cgroup freezer (why_not() says which), or the
  /// sandbox is being ended.
  bool freeze(bool frozen);
  /// Whether freeze() can work now.
  bool can_freeze() const;
  /// Why freeze() cannot work ("" when it can).
  std::string why_not() const;

  // For sandbox::execute only.
  /// The sandbox's cgroup from now on (null: none, for `why_not`).
  void attach(sandbox_cgroup* cgroup, std::string why_not);
  /// Thaws and refuses every later freeze: the sandbox is about to be killed.
  void release();
  /// The sandbox has ended: its cgroup is about to go.
  void detach();

 private:
  bool usable() const;  ///< with mutex_ held

  mutable std::mutex mutex_;
  sandbox_cgroup* cgroup_ = nullptr;
  bool released_ = false;
  bool failed_ = false;  ///< a freeze or thaw was refused: signals to the ranks only from then on
  bool frozen_ = false;
  std::string why_not_ = "the sandbox is not running";
};

}  // namespace pk::sandbox
