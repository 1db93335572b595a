#include "agent/run/zero_shot.h"

#include <fstream>
#include <regex>

#include <fmt/format.h>

#include "agent/host_facts.h"
#include "agent/model_choice.h"
#include "agent/transcript.h"

namespace pk::run {
namespace fs = std::filesystem;

constexpr const char* one_completion = "one completion";

std::string extract_solution(const std::string& reply) {
  static const std::regex python(R"(```[ \t]*(?:python|py)[ \t]*\r?\n([\s\S]*?)```)");
  static const std::regex bare(R"(```[ \t]*\r?\n([\s\S]*?)```)");
  std::smatch m;
  if (std::regex_search(reply, m, python)) return m[1].str();
  if (std::regex_search(reply, m, bare)) return m[1].str();
  return reply;
}

namespace {

// The reply recorded by an earlier invocation, if it got one.
std::optional<llm::response> recorded_reply(const agent::transcript_file& old) {
  const auto first = old.steps.find(1);
  if (first == old.steps.end() || first->second.response.is_null()) return std::nullopt;
  return agent::event_as<agent::response_event>(first->second.response).response;
}

agent::header_event zero_shot_header(const llm::model_config& model, const std::string& task_id,
                                     const std::string& user) {
  agent::header_event h;
  h.mode = agent::episode_mode::zeroshot;
  h.pkagent = agent::this_build();
  h.model = agent::model_record(model);
  h.task = {task_id, user, std::nullopt};
  h.host = agent::host_facts();
  h.started_at = agent::utc_now();
  return h;
}

}  // namespace

zero_shot_outcome run_zero_shot(llm::client& client, const llm::model_config& model, const std::string& task_id,
                                const std::string& system, const std::string& user, const fs::path& ep_dir) {
  const fs::path file = ep_dir / "transcript.jsonl";
  zero_shot_outcome out;
  std::optional<llm::response> reply;
  double seconds_before = 0;
  if (fs::exists(file)) {
    const agent::transcript_file old = agent::read_transcript(file);
    reply = recorded_reply(old);
    seconds_before = old.seconds();
  }
  if (!reply) {
    // A fresh transcript: an unfinished one without a reply holds nothing worth keeping.
    agent::transcript_writer log(file, agent::secrets_from_environment(), /*fresh=*/true, seconds_before);
    log.write(zero_shot_header(model, task_id, user));
    llm::request req;
    req.messages = {llm::system_message(system), llm::user_message(user)};
    log.write(agent::request_event{1, std::nullopt, req.messages, req.messages.size(), {}});
    std::int64_t cached_tokens = 0;
    try {
      reply = client.complete(req);
      log.write(agent::response_event{1, false, *reply, std::nullopt});
      out.used.steps = 1;
      out.used.input_tokens = reply->tokens.input;
      out.used.output_tokens = reply->tokens.output;
      out.used.dollars = reply->cost_usd;
      cached_tokens = reply->tokens.cached_input;
    } catch (const llm::llm_error& e) {
      out.reason = agent::end_reason::model_error;
      out.message = fmt::format("{} ({})", e.what(), llm::to_string(e.what_kind()));
    }
    out.used.wall_seconds = log.seconds();
    log.write(agent::outcome_event{reply ? agent::end_reason::submitted : out.reason,
                                   reply ? one_completion : out.message, std::nullopt, out.used, cached_tokens});
  } else {
    out.used = {1, 0, reply->tokens.input, reply->tokens.output, reply->cost_usd, seconds_before, 0};
  }
  if (reply) {
    out.reason = agent::end_reason::submitted;
    out.message = one_completion;
    fs::create_directories(ep_dir / "workspace");
    std::ofstream(ep_dir / "workspace" / "solution.py", std::ios::trunc) << extract_solution(reply->text);
  }
  return out;
}

}  // namespace pk::run
