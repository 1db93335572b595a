#include "agent/prompts.h"

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "config/read_file.h"

namespace pk::agent {
namespace {

std::vector<llm::tool_spec> load_tools(const std::filesystem::path& file) {
  const std::string text = read_file(file, "the tool definitions");
  nlohmann::json j;
  try {
    j = nlohmann::json::parse(text);
  } catch (const nlohmann::json::exception& e) {
    throw template_error(fmt::format("{}: not valid JSON: {}", file.string(), e.what()));
  }
  std::vector<llm::tool_spec> tools;
  for (const auto& t : j) {
    if (!t.is_object() || !t.contains("name") || !t.contains("description") ||
        !t.contains("parameters"))
      throw template_error(fmt::format(
          "{}: every tool needs \"name\", \"description\" and \"parameters\"", file.string()));
    tools.push_back({t["name"], t["description"], t["parameters"]});
  }
  auto has = [&](const std::string& n) {
    for (const auto& t : tools)
      if (t.name == n) return true;
    return false;
  };
  if (!has("bash") || !has("submit") || tools.size() != 2)
    throw template_error(
        fmt::format("{}: must define exactly the tools \"bash\" and \"submit\"", file.string()));
  return tools;
}

}  // namespace

prompt_set prompt_set::load(const std::filesystem::path& dir) {
  auto p = [&](const char* name, std::set<std::string> vars) {
    return prompt_template::load(dir / name, vars);
  };
  return prompt_set{
      p("system.md", {"workspace", "tools_format", "text_format", "step_limit"}),
      p("task.md", {"task", "workspace"}),
      p("observation.md", {"exit_code", "stdout", "stderr", "timed_out", "timeout_seconds",
                           "oom_killed", "signal", "note"}),
      p("truncated.md", {"omitted_bytes", "total_bytes", "stream"}),
      p("format_error.md", {"text_format", "tools_format", "none", "several", "count",
                            "unknown_tool", "bad_arguments", "cut"}),
      p("limit_warning.md", {"limit", "used", "limit_value", "next_step"}),
      load_tools(dir / "tools.json"),
  };
}

}  // namespace pk::agent
