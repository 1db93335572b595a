#include "agent/run/zero_shot.h"

#include <fstream>
#include <tuple>
#include <utility>

#include <fmt/format.h>

#include "agent/host_summary.h"
#include "agent/model_choice.h"
#include "agent/transcript.h"

namespace pk::run {
namespace fs = std::filesystem;

constexpr const char* one_completion = "one completion";

namespace {

std::string_view trimmed(std::string_view s) {
  const auto b = s.find_first_not_of(" \t\r");
  if (b == std::string_view::npos) return {};
  return s.substr(b, s.find_last_not_of(" \t\r") - b + 1);
}

bool defines_solution(const std::string& text) {
  for (auto at = text.find("def solution"); at != std::string::npos; at = text.find("def solution", at + 1)) {
    const auto next = text.find_first_not_of(" \t", at + 12);
    if (next != std::string::npos && text[next] == '(') return true;
  }
  return false;
}

}  // namespace

// Fences are read line by line (a fence opens a line and closes on a line of its own), without
// std::regex, whose backtracking recurses per character and could overflow on a long reply.
std::optional<std::string> extract_solution(const std::string& reply) {
  std::optional<std::string> python, bare;
  std::string body;
  bool in_block = false, is_python = false, is_bare = false;
  std::size_t pos = 0;
  while (pos <= reply.size() && !python) {
    std::size_t eol = reply.find('\n', pos);
    if (eol == std::string::npos) eol = reply.size();
    const std::string_view line(reply.data() + pos, eol - pos);
    const std::string_view t = trimmed(line);
    if (!in_block && t.starts_with("```")) {
      const std::string_view lang = trimmed(t.substr(3));
      in_block = true;
      is_python = lang == "python" || lang == "py";
      is_bare = lang.empty();
      body.clear();
    } else if (in_block && t == "```") {
      in_block = false;
      if (is_python) python = body;
      else if (is_bare && !bare) bare = body;
    } else if (in_block) {
      body.append(line);
      body += '\n';
    }
    pos = eol + 1;
  }
  if (!python && in_block && is_python) python = body;  // cut off by the output limit: to the end
  if (python) return python;
  if (bare) return bare;
  if (defines_solution(reply)) return reply;
  return std::nullopt;
}

namespace {

// How a reply ends the episode, and the message the outcome records.
std::pair<agent::end_reason, std::string> reply_outcome(const llm::response& reply) {
  const bool code = extract_solution(reply.text).has_value();
  if (reply.finish == llm::finish_reason::length)
    return {agent::end_reason::output_token_limit,
            fmt::format("one completion, cut at the output token limit per reply (finish=length, {} output tokens){}",
                        reply.tokens.output, code ? "" : "; it holds no code")};
  if (!code) return {agent::end_reason::no_code_block, "one completion holding no code block"};
  return {agent::end_reason::submitted, one_completion};
}

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
  h.host = agent::host_summary();
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
    if (reply) std::tie(out.reason, out.message) = reply_outcome(*reply);
    log.write(agent::outcome_event{out.reason, out.message, std::nullopt, out.used, cached_tokens});
  } else {
    out.used = {1, 0, reply->tokens.input, reply->tokens.output, reply->cost_usd, seconds_before, 0};
    std::tie(out.reason, out.message) = reply_outcome(*reply);
  }
  if (reply) {
    const fs::path solution = ep_dir / "workspace" / "solution.py";
    fs::create_directories(solution.parent_path());
    if (const auto code = extract_solution(reply->text)) std::ofstream(solution, std::ios::trunc) << *code;
    else fs::remove(solution);
  }
  return out;
}

}  // namespace pk::run
