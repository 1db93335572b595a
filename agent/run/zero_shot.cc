#include "agent/run/zero_shot.h"

#include <chrono>
#include <fstream>
#include <regex>

#include <fmt/format.h>

#include "agent/host_facts.h"
#include "agent/model_choice.h"
#include "agent/transcript.h"
#include "pkagent/build_info.h"

namespace pk::run {
namespace fs = std::filesystem;
using json = nlohmann::json;

std::string extract_solution(const std::string& reply) {
  static const std::regex python(R"(```[ \t]*(?:python|py)[ \t]*\r?\n([\s\S]*?)```)");
  static const std::regex bare(R"(```[ \t]*\r?\n([\s\S]*?)```)");
  std::smatch m;
  if (std::regex_search(reply, m, python)) return m[1].str();
  if (std::regex_search(reply, m, bare)) return m[1].str();
  return reply;
}

zero_shot_outcome run_zero_shot(llm::client& client, const llm::model_config& model, const std::string& task_id,
                                const std::string& system, const std::string& user, const fs::path& ep_dir) {
  const fs::path file = ep_dir / "transcript.jsonl";
  zero_shot_outcome out;
  std::optional<llm::response> reply;
  double wall_before = 0;
  if (fs::exists(file)) {
    const agent::transcript_file old = agent::read_transcript(file);
    for (const json& e : old.events) {
      if (e.value("type", "") == "response") reply = agent::response_from_json(e["response"]);
      if (e.contains("t") && e["t"].is_number()) wall_before = std::max(wall_before, e["t"].get<double>());
    }
  }
  const auto start = std::chrono::steady_clock::now();
  auto elapsed = [&] { return wall_before + std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count(); };
  if (!reply) {
    // A fresh transcript: an unfinished one without a reply holds nothing worth keeping.
    agent::transcript_writer log(file, agent::secrets_from_environment(), /*fresh=*/true);
    llm::request req;
    req.messages = {llm::system_message(system), llm::user_message(user)};
    log.write({{"type", "header"}, {"format", agent::transcript_format}, {"version", agent::transcript_version},
               {"mode", "zeroshot"},
               {"pkagent", {{"version", build_info::version}, {"commit", build_info::git_commit}}},
               {"model", agent::model_record(model)}, {"task", {{"id", task_id}, {"text", user}}},
               {"host", agent::host_facts()}, {"started_at", agent::utc_now()}, {"t", 0}});
    json msgs = json::array();
    for (const auto& m : req.messages) msgs.push_back(agent::to_json(m));
    log.write({{"type", "request"}, {"step", 1}, {"new_messages", msgs}, {"messages_total", msgs.size()},
               {"t", elapsed()}});
    try {
      reply = client.complete(req);
      log.write({{"type", "response"}, {"step", 1}, {"response", agent::to_json(*reply)}, {"t", elapsed()}});
    } catch (const llm::llm_error& e) {
      out.end_reason = "model_error";
      out.message = fmt::format("{} ({})", e.what(), llm::to_string(e.what_kind()));
    }
    out.used.wall_seconds = elapsed();
    if (reply) {
      out.used.input_tokens = reply->tokens.input;
      out.used.output_tokens = reply->tokens.output;
      out.used.dollars = reply->cost_usd;
      out.used.steps = 1;
    }
    log.write({{"type", "outcome"}, {"reason", reply ? "submitted" : out.end_reason},
               {"message", reply ? "one completion" : out.message}, {"steps", out.used.steps},
               {"totals", agent::to_json(out.used)}, {"t", elapsed()}});
  } else {
    out.used = {1, 0, reply->tokens.input, reply->tokens.output, reply->cost_usd, wall_before, 0};
  }
  if (reply) {
    out.end_reason = "submitted";
    out.message = "one completion";
    fs::create_directories(ep_dir / "workspace");
    std::ofstream(ep_dir / "workspace" / "solution.py", std::ios::trunc) << extract_solution(reply->text);
  }
  return out;
}

}  // namespace pk::run
