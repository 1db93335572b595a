#include "agent/scripted_client.h"

#include <algorithm>
#include <fstream>
#include <sstream>

#include <fmt/format.h>

#include "agent/action.h"

namespace pk::agent {

scripted_client::scripted_client(std::vector<std::string> replies, std::string name)
    : replies_(std::move(replies)), name_(std::move(name)) {}

scripted_client scripted_client::from_file(const std::filesystem::path& file) {
  std::ifstream in(file);
  if (!in) throw std::runtime_error(fmt::format("{}: cannot read the demo script", file.string()));
  std::vector<std::string> replies(1);
  std::string line;
  while (std::getline(in, line)) {
    if (line == "<!-- reply -->") replies.emplace_back();
    else replies.back() += line + "\n";
  }
  std::erase_if(replies, [](const std::string& r) { return r.find_first_not_of(" \n\t") == std::string::npos; });
  if (replies.empty())
    throw std::runtime_error(fmt::format("{}: the demo script holds no reply", file.string()));
  return scripted_client(std::move(replies), fmt::format("demo:{}", file.string()));
}

llm::response scripted_client::complete(const llm::request& req) {
  auto turn = static_cast<std::size_t>(std::count_if(req.messages.begin(), req.messages.end(),
      [](const llm::message& m) { return m.role == llm::role::assistant; }));
  if (turn >= replies_.size())
    throw llm::llm_error(llm::llm_error::kind::protocol,
                         fmt::format("the demo script {} has {} replies and turn {} asks for one more",
                                     name_, replies_.size(), turn + 1));
  llm::response r;
  r.text = replies_[turn];
  r.model = name_;
  r.finish = llm::finish_reason::stop;
  r.finish_raw = "scripted";
  std::vector<std::string> blocks = fenced_bash_blocks(r.text);
  if (!req.tools.empty() && blocks.size() == 1) {
    // Keep the prose as the text, the block as the call.
    std::string prose = r.text.substr(0, r.text.find("```"));
    prose.erase(prose.find_last_not_of(" \n\t") + 1);
    std::string cmd = blocks.front();
    while (!cmd.empty() && cmd.back() == '\n') cmd.pop_back();
    llm::tool_call call;
    call.id = fmt::format("call_{}", turn + 1);
    call.name = cmd == "submit" ? "submit" : "bash";
    call.arguments = cmd == "submit" ? nlohmann::json::object() : nlohmann::json{{"command", cmd}};
    call.arguments_text = call.arguments.dump();
    r.text = prose;
    r.tool_calls.push_back(call);
    r.finish = llm::finish_reason::tool_calls;
  }
  r.raw = {{"scripted_reply", turn + 1}};
  return r;
}

}  // namespace pk::agent
