#include "agent/action.h"

#include <array>

#include <fmt/format.h>

#include "config/enum_names.h"

namespace pk::agent {
namespace {

template_vars problem_vars(action_format f, std::size_t count) {
  return {{"text_format", f == action_format::text ? "1" : ""},
          {"tools_format", f == action_format::tools ? "1" : ""},
          {"none", count == 0 ? "1" : ""},
          {"several", count > 1 ? "1" : ""},
          {"count", std::to_string(count)},
          {"unknown_tool", ""},
          {"bad_arguments", ""},
          {"cut", ""}};
}

std::string trim(const std::string& s) {
  auto b = s.find_first_not_of(" \t\r\n");
  if (b == std::string::npos) return {};
  return s.substr(b, s.find_last_not_of(" \t\r\n") - b + 1);
}

}  // namespace

// A fence opens at the start of a line (after optional indentation) and closes at the next line
// that is only ``` .
std::vector<std::string> fenced_bash_blocks(const std::string& text, bool* last_open) {
  std::vector<std::string> blocks;
  std::size_t pos = 0;
  bool in_block = false, wanted = false;
  std::string body;
  while (pos <= text.size()) {
    std::size_t eol = text.find('\n', pos);
    if (eol == std::string::npos) eol = text.size();
    std::string line = text.substr(pos, eol - pos);
    std::string t = trim(line);
    if (!in_block && t.rfind("```", 0) == 0) {
      std::string lang = trim(t.substr(3));
      in_block = true;
      wanted = lang == "bash" || lang == "sh" || lang == "shell";
      body.clear();
    } else if (in_block && t == "```") {
      in_block = false;
      if (wanted) blocks.push_back(body);
    } else if (in_block) {
      body += line;
      body += '\n';
    }
    pos = eol + 1;
  }
  if (in_block && wanted) blocks.push_back(body);  // an unclosed last block still counts
  if (last_open) *last_open = in_block && wanted;
  return blocks;
}

namespace {

action parse_tools(const llm::response& reply) {
  action a;
  for (const auto& c : reply.tool_calls) a.call_ids.push_back(c.id);
  if (reply.tool_calls.size() != 1) {
    a.problem = problem_vars(action_format::tools, reply.tool_calls.size());
    return a;
  }
  const llm::tool_call& call = reply.tool_calls.front();
  a.problem = problem_vars(action_format::tools, 1);
  if (call.name == "submit") {
    a.kind = action::submit;
  } else if (call.name != "bash") {
    a.problem["unknown_tool"] = call.name;
  } else if (!call.arguments_valid()) {
    a.problem["bad_arguments"] = call.arguments_error;
  } else if (!call.arguments.is_object() || !call.arguments.contains("command") ||
             !call.arguments["command"].is_string()) {
    a.problem["bad_arguments"] = "expected {\"command\": \"...\"} with a string command";
  } else if (trim(call.arguments["command"].get<std::string>()).empty()) {
    a.problem["bad_arguments"] = "the command is empty";
  } else {
    a.kind = action::bash;
    a.command = call.arguments["command"].get<std::string>();
  }
  return a;
}

action parse_text(const llm::response& reply) {
  action a;
  bool open = false;
  std::vector<std::string> blocks = fenced_bash_blocks(reply.text, &open);
  a.problem = problem_vars(action_format::text, blocks.size());
  // Tool calls in text mode are answered too, so the conversation stays valid for the provider.
  for (const auto& c : reply.tool_calls) a.call_ids.push_back(c.id);
  if (blocks.size() != 1) return a;
  // A block the output limit cut off is a command cut short: running it could do half of it.
  if (open && reply.finish == llm::finish_reason::length) return a;
  std::string cmd = trim(blocks.front());
  if (cmd == "submit") {
    a.kind = action::submit;
  } else if (cmd.empty()) {
    a.problem["none"] = "1";
    a.problem["count"] = "0";
  } else {
    a.kind = action::bash;
    a.command = blocks.front();
  }
  return a;
}

}  // namespace

constexpr std::array<pk::config::enum_name<enum action::kind>, 3> action_kind_names = {{
    {action::bash, "bash"},
    {action::submit, "submit"},
    {action::invalid, "invalid"},
}};

std::string to_string(enum action::kind k) { return std::string(pk::config::enum_to_string(action_kind_names, k)); }

action parse_action(const llm::response& reply, action_format format) {
  action a = format == action_format::tools ? parse_tools(reply) : parse_text(reply);
  if (a.kind == action::invalid && reply.finish == llm::finish_reason::length) a.problem["cut"] = "1";
  return a;
}

std::string render_format_error(const action& a, const prompt_set& prompts) {
  return prompts.format_error.render(a.problem);
}

nlohmann::json to_json(const action& a) {
  nlohmann::json j = {{"kind", to_string(a.kind)}};
  if (a.kind == action::bash) j["command"] = a.command;
  if (a.kind == action::invalid) {
    nlohmann::json p = nlohmann::json::object();
    for (const auto& [k, v] : a.problem)
      if (!v.empty() && k != "text_format" && k != "tools_format") p[k] = v;
    j["problem"] = p;
  }
  return j;
}

}  // namespace pk::agent
