#include "agent/transcript_event.h"

#include <array>

#include <fmt/format.h>

#include "config/enum_names.h"
#include "pkagent/build_info.h"
#include "sandbox/config.h"

namespace pk::agent {
using json = nlohmann::json;
namespace {

llm::role role_from(const std::string& s) {
  if (s == "system") return llm::role::system;
  if (s == "assistant") return llm::role::assistant;
  if (s == "tool") return llm::role::tool;
  return llm::role::user;
}

llm::finish_reason finish_from(const std::string& s) {
  for (auto f : {llm::finish_reason::stop, llm::finish_reason::length, llm::finish_reason::tool_calls,
                 llm::finish_reason::content_filter})
    if (llm::to_string(f) == s) return f;
  return llm::finish_reason::other;
}

json to_json(const llm::tool_call& c) {
  json j = {{"id", c.id}, {"name", c.name}, {"arguments", c.arguments},
            {"arguments_text", c.arguments_text}};
  if (!c.arguments_valid()) j["arguments_error"] = c.arguments_error;
  return j;
}

llm::tool_call tool_call_from_json(const json& j) {
  return {j.at("id"), j.at("name"), j.value("arguments", json()), j.value("arguments_text", ""),
          j.value("arguments_error", "")};
}

std::vector<llm::tool_call> calls_from(const json& j) {
  std::vector<llm::tool_call> out;
  for (const auto& c : j) out.push_back(tool_call_from_json(c));
  return out;
}

// ---- the parts of events ----

// The LLM types' JSON, declared in the header, next to the events' own.
using agent::to_json;

std::string isolation_name(sandbox::isolation i) { return std::string(sandbox::to_string(i)); }

enum action::kind action_kind_from(const std::string& s) {
  for (auto k : {action::bash, action::submit, action::invalid})
    if (to_string(k) == s) return k;
  throw transcript_error(fmt::format("\"{}\" is not an action kind (bash, submit, invalid)", s));
}

action action_from_json(const json& j) {
  action a;
  a.kind = action_kind_from(j.at("kind"));
  a.command = j.value("command", "");
  const json problem = j.value("problem", json::object());
  for (const auto& [k, v] : problem.items()) a.problem[k] = v.is_string() ? v.get<std::string>() : v.dump();
  return a;
}

json to_json(const stream_record& s) { return {{"text", s.text}, {"bytes", s.bytes}}; }
stream_record stream_from_json(const json& j) { return {j.value("text", ""), j.value("bytes", std::uint64_t{0})}; }

json to_json(const header_event& h) {
  json task = {{"id", h.task.id}, {"text", h.task.text}};
  if (const auto& o = h.task.origin) {
    task["workspace"] = o->workspace;
    task["content_sha256"] = o->content_sha256;
    task["check"] = o->check ? json(*o->check) : json();
  }
  json j = {{"format", transcript_format},
            {"version", h.version},
            {"mode", to_string(h.mode)},
            {"pkagent", {{"version", h.pkagent.version}, {"commit", h.pkagent.commit}}},
            {"model", h.model},
            {"task", task},
            {"host", h.host},
            {"started_at", h.started_at}};
  if (const auto& s = h.setup) {
    j["config"] = to_json(s->config);
    j["seed"] = s->seed ? json(*s->seed) : json();
    j["sandbox"] = {{"isolation", isolation_name(s->isolation)}, {"gpus", s->gpus}};
    j["parent"] = s->parent;
    if (!s->tools.is_null()) j["tools"] = s->tools;
  }
  return j;
}

header_event header_from_json(const json& j) {
  if (j.value("format", "") != transcript_format)
    throw transcript_error(fmt::format("the format is not \"{}\"", transcript_format));
  header_event h;
  h.version = j.at("version");
  // Agent transcripts may leave the mode out: it was added with zero-shot ones.
  const std::string mode = j.value("mode", "agent");
  if (mode == "zeroshot") h.mode = episode_mode::zeroshot;
  else if (mode != "agent") throw transcript_error(fmt::format("\"mode\": \"{}\" is not agent or zeroshot", mode));
  const json& build = j.value("pkagent", json::object());
  h.pkagent = {build.value("version", ""), build.value("commit", "")};
  h.model = j.value("model", json::object());
  const json& task = j.at("task");
  h.task.id = task.at("id");
  h.task.text = task.at("text");
  h.host = j.value("host", json::object());
  h.started_at = j.value("started_at", "");
  if (h.mode == episode_mode::agent) {
    const json& check = task.at("check");
    h.task.origin = task_origin{task.at("workspace").get<std::string>(), task.at("content_sha256").get<std::string>(),
                                check.is_null() ? std::nullopt : std::optional(check.get<std::string>())};
    episode_setup s;
    s.config = agent_config_from_json(j.at("config"));
    if (!j.value("seed", json()).is_null()) s.seed = j["seed"].get<std::int64_t>();
    const json& box = j.at("sandbox");
    try {
      s.isolation = sandbox::parse_isolation(box.at("isolation").get<std::string>());
    } catch (const std::invalid_argument& e) {
      throw transcript_error(fmt::format("\"sandbox.isolation\": {}", e.what()));
    }
    s.gpus = box.value("gpus", std::vector<int>{});
    s.parent = j.value("parent", json());
    s.tools = j.value("tools", json());
    h.setup = std::move(s);
  }
  return h;
}

json to_json(const request_event& r) {
  json fresh = json::array();
  for (const auto& m : r.new_messages) fresh.push_back(to_json(m));
  json j = {{"step", r.step}, {"base_step", r.base_step ? json(*r.base_step) : json()},
            {"new_messages", fresh}, {"messages_total", r.messages_total}};
  if (!r.tools.empty()) {
    j["tools"] = json::array();
    for (const auto& t : r.tools)
      j["tools"].push_back({{"name", t.name}, {"description", t.description}, {"parameters", t.parameters}});
  }
  return j;
}

request_event request_from_json(const json& j) {
  request_event r;
  r.step = j.at("step");
  if (!j.value("base_step", json()).is_null()) r.base_step = j["base_step"].get<int>();
  for (const auto& m : j.at("new_messages")) r.new_messages.push_back(message_from_json(m));
  r.messages_total = j.value("messages_total", r.new_messages.size());
  for (const auto& t : j.value("tools", json::array()))
    r.tools.push_back({t.at("name"), t.value("description", ""), t.value("parameters", json::object())});
  return r;
}

json to_json(const response_event& r) {
  json j = {{"step", r.step}, {"replayed", r.replayed}, {"response", to_json(r.response)}};
  if (r.parsed_action) j["action"] = to_json(*r.parsed_action);
  return j;
}

response_event response_event_from_json(const json& j) {
  response_event r;
  r.step = j.at("step");
  r.replayed = j.value("replayed", false);
  r.response = response_from_json(j.at("response"));
  if (j.contains("action")) r.parsed_action = action_from_json(j["action"]);
  return r;
}

json to_json(const observation_event& o) {
  json j = {{"step", o.step}, {"kind", to_string(o.kind)}};
  if (const auto& c = o.command)
    j.update({{"exit_code", c->exit_code}, {"signal", c->signal}, {"timed_out", c->timed_out},
              {"oom_killed", c->oom_killed}, {"wall_seconds", c->wall_seconds},
              {"cpu_seconds", c->cpu_seconds}, {"note", c->note},
              {"stdout", to_json(c->out)}, {"stderr", to_json(c->err)}});
  if (o.text) j["text"] = *o.text;
  return j;
}

observation_event observation_from_json(const json& j) {
  observation_event o;
  o.step = j.at("step");
  o.kind = action_kind_from(j.at("kind"));
  if (j.contains("exit_code")) {
    command_record c;
    c.exit_code = j["exit_code"];
    c.signal = j.value("signal", 0);
    c.timed_out = j.value("timed_out", false);
    c.oom_killed = j.value("oom_killed", false);
    c.wall_seconds = j.value("wall_seconds", 0.0);
    c.cpu_seconds = j.value("cpu_seconds", 0.0);
    c.note = j.value("note", "");
    c.out = stream_from_json(j.value("stdout", json::object()));
    c.err = stream_from_json(j.value("stderr", json::object()));
    o.command = std::move(c);
  }
  if (j.contains("text")) o.text = j["text"].get<std::string>();
  return o;
}

json to_json(const evaluation_event& e) {
  return {{"passed", e.passed}, {"score", e.score}, {"gpu_seconds", e.gpu_seconds}, {"details", e.details}};
}

evaluation_event evaluation_from_json(const json& j) {
  return {j.at("passed"), j.value("score", 0.0), j.value("gpu_seconds", 0.0), j.value("details", json())};
}

json to_json(const outcome_event& o) {
  json totals = to_json(o.used);
  totals["cached_input_tokens"] = o.cached_input_tokens;
  return {{"reason", to_string(o.reason)}, {"message", o.message}, {"steps", o.used.steps},
          {"score", o.score ? json(*o.score) : json()}, {"totals", totals}};
}

outcome_event outcome_from_json(const json& j) {
  outcome_event o;
  const std::string reason = j.at("reason");
  const auto r = end_reason_from_string(reason);
  if (!r) throw transcript_error(fmt::format("\"reason\": \"{}\" is not an end reason", reason));
  o.reason = *r;
  o.message = j.value("message", "");
  if (!j.value("score", json()).is_null()) o.score = j["score"].get<double>();
  const json& t = j.value("totals", json::object());
  o.used.steps = t.value("steps", j.value("steps", std::int64_t{0}));
  o.used.input_tokens = t.value("input_tokens", std::int64_t{0});
  o.used.output_tokens = t.value("output_tokens", std::int64_t{0});
  o.used.dollars = t.value("dollars", 0.0);
  o.used.wall_seconds = t.value("wall_seconds", 0.0);
  o.used.gpu_seconds = t.value("gpu_seconds", 0.0);
  o.cached_input_tokens = t.value("cached_input_tokens", std::int64_t{0});
  return o;
}

// The "type" of each alternative, in the variant's order.
constexpr const char* type_names[] = {"header", "request", "response", "observation", "evaluation", "outcome"};
static_assert(std::size(type_names) == std::variant_size_v<transcript_event>);

}  // namespace

constexpr std::array<pk::config::enum_name<episode_mode>, 2> episode_mode_names = {{
    {episode_mode::zeroshot, "zeroshot"},
    {episode_mode::agent, "agent"},
}};

std::string_view to_string(episode_mode m) { return pk::config::enum_to_string(episode_mode_names, m); }

build_stamp this_build() { return {build_info::version, build_info::git_commit}; }

command_record record_of(const sandbox::result& r) {
  return {r.exit_code, r.signal, r.timed_out, r.oom_killed, r.wall_seconds, r.cpu_seconds, r.note,
          {r.out.text, r.out.total_bytes}, {r.err.text, r.err.total_bytes}};
}

json to_json(const llm::message& m) {
  json j = {{"role", llm::to_string(m.role)}, {"text", m.text}};
  if (!m.tool_calls.empty()) {
    j["tool_calls"] = json::array();
    for (const auto& c : m.tool_calls) j["tool_calls"].push_back(to_json(c));
  }
  if (!m.tool_call_id.empty()) j["tool_call_id"] = m.tool_call_id;
  if (!m.tool_name.empty()) j["tool_name"] = m.tool_name;
  if (m.is_error) j["is_error"] = true;
  if (!m.opaque.is_null()) j["opaque"] = m.opaque;
  return j;
}

llm::message message_from_json(const json& j) {
  llm::message m;
  m.role = role_from(j.at("role"));
  m.text = j.value("text", "");
  if (j.contains("tool_calls")) m.tool_calls = calls_from(j["tool_calls"]);
  m.tool_call_id = j.value("tool_call_id", "");
  m.tool_name = j.value("tool_name", "");
  m.is_error = j.value("is_error", false);
  m.opaque = j.value("opaque", json());
  return m;
}

json to_json(const llm::usage& u) {
  return {{"input", u.input}, {"cached_input", u.cached_input}, {"cache_write", u.cache_write},
          {"output", u.output}, {"reasoning", u.reasoning}};
}

llm::usage usage_from_json(const json& j) {
  return {j.value("input", 0), j.value("cached_input", 0), j.value("cache_write", 0),
          j.value("output", 0), j.value("reasoning", 0)};
}

json to_json(const llm::response& r) {
  json calls = json::array();
  for (const auto& c : r.tool_calls) calls.push_back(to_json(c));
  return {{"text", r.text},
          {"tool_calls", calls},
          {"finish", llm::to_string(r.finish)},
          {"finish_raw", r.finish_raw},
          {"usage", to_json(r.tokens)},
          {"cost_usd", r.cost_usd},
          {"model", r.model},
          {"latency_ms", r.latency.count()},
          {"retries", r.retries},
          {"opaque", r.opaque},
          {"raw", r.raw}};
}

llm::response response_from_json(const json& j) {
  llm::response r;
  r.text = j.value("text", "");
  if (j.contains("tool_calls")) r.tool_calls = calls_from(j["tool_calls"]);
  r.finish = finish_from(j.value("finish", "other"));
  r.finish_raw = j.value("finish_raw", "");
  r.tokens = usage_from_json(j.value("usage", json::object()));
  r.cost_usd = j.value("cost_usd", 0.0);
  r.model = j.value("model", "");
  r.latency = llm::millis(j.value("latency_ms", 0));
  r.retries = j.value("retries", 0);
  r.opaque = j.value("opaque", json());
  r.raw = j.value("raw", json());
  return r;
}

json to_json(const transcript_event& e) {
  json j = std::visit([](const auto& event) { return to_json(event); }, e);
  j["type"] = type_names[e.index()];
  return j;
}

transcript_event event_from_json(const json& j) {
  if (!j.is_object() || !j.contains("type") || !j["type"].is_string())
    throw transcript_error("not an event: a JSON object with a \"type\" is expected");
  const std::string type = j["type"];
  try {
    if (type == "header") return header_from_json(j);
    if (type == "request") return request_from_json(j);
    if (type == "response") return response_event_from_json(j);
    if (type == "observation") return observation_from_json(j);
    if (type == "evaluation") return evaluation_from_json(j);
    if (type == "outcome") return outcome_from_json(j);
  } catch (const json::exception& e) {
    throw transcript_error(fmt::format("a {} event that cannot be read: {}", type, e.what()));
  } catch (const transcript_error& e) {
    throw transcript_error(fmt::format("a {} event that cannot be read: {}", type, e.what()));
  }
  throw transcript_error(fmt::format("\"{}\" is not an event type", type));
}

}  // namespace pk::agent
