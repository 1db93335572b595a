#include "agent/check.h"

#include <fmt/format.h>

#include "config/read_file.h"

namespace pk::agent {

evaluator check_script_evaluator(const std::filesystem::path& script, const sandbox::spec& base,
                                 double timeout_seconds) {
  return [body = read_file(script, "the check script"), base, timeout_seconds](const std::filesystem::path& workspace) {
    sandbox::spec s = base;
    s.workspace = workspace;
    s.stdin_data = body;
    s.limits.wall = std::chrono::milliseconds(static_cast<std::int64_t>(timeout_seconds * 1000));
    sandbox::result r = sandbox::run(s, "bash -s");
    evaluation e;
    e.passed = r.ok();
    e.score = e.passed ? 1 : 0;
    e.details = {{"check", "script"}, {"exit_code", r.exit_code}, {"timed_out", r.timed_out},
                 {"stdout", r.out.text}, {"stderr", r.err.text}};
    return e;
  };
}

}  // namespace pk::agent
