// The fault suite: every protocol, streamed and not, against the fake provider on loopback.
#include <gtest/gtest.h>

#include <chrono>
#include <cstdlib>
#include <tuple>

#include "agent/llm/llm.h"
#include "fake_provider.h"

namespace pk::llm {
namespace {

using json = nlohmann::json;
using clock_type = std::chrono::steady_clock;

constexpr const char* key_env = "PK_FAKE_PROVIDER_KEY";
const std::string secret_key = "sk-fake-7f3a9c1e-SECRET-do-not-leak";

class fault_suite : public ::testing::TestWithParam<std::tuple<protocol, bool>> {
 protected:
  static void SetUpTestSuite() {
    setenv(key_env, secret_key.c_str(), 1);
    fake_ = new pk::testkit::fake_provider();
  }
  static void TearDownTestSuite() {
    delete fake_;
    fake_ = nullptr;
  }

  protocol proto() const { return std::get<0>(GetParam()); }
  bool streamed() const { return std::get<1>(GetParam()); }

  model_config config() const {
    model_config m;
    m.name = "fake";
    m.provider = proto();
    m.base_url = fake_->base_url();
    m.model = "fake-model";
    m.api_key_env = key_env;
    m.price = prices{2.0, 0.5, 2.5, 8.0, true};
    m.stream = streamed();
    m.retry.max_retries = 4;
    m.retry.initial_backoff = millis(10);
    m.retry.max_backoff = millis(50);
    m.retry.max_total_wait = millis(10000);
    m.timeout.connect = millis(2000);
    m.timeout.request = millis(10000);
    m.timeout.idle = millis(1000);
    return m;
  }

  static request ask(std::string text = "hi") {
    request r;
    r.messages.push_back(system_message("You write CUDA kernels."));
    r.messages.push_back(user_message(std::move(text)));
    return r;
  }

  static tool_spec bash_tool() {
    return {"bash", "Run a shell command",
            json{{"type", "object"}, {"properties", {{"cmd", {{"type", "string"}}}}}, {"required", {"cmd"}}}};
  }

  response run(const json& replies, const request& req, const model_config& cfg) {
    fake_->load({{"replies", replies}});
    return make_client(cfg)->complete(req);
  }
  response run(const json& replies, const request& req = ask()) { return run(replies, req, config()); }

  // A success that must come after the faults, so that retries are visible.
  static json ok(const std::string& text = "done") { return {{"text", text}}; }

  static pk::testkit::fake_provider* fake_;
};

pk::testkit::fake_provider* fault_suite::fake_ = nullptr;

TEST_P(fault_suite, text_usage_and_exact_cost) {
  std::string streamed_text;
  request req = ask();
  req.on_text = [&](std::string_view d) { streamed_text += d; };
  const auto r = run(json::array({{{"text", "hello kernel world"},
                                   {"usage", {{"input", 1000}, {"cached_input", 200}, {"cache_write", 100},
                                              {"output", 300}, {"reasoning", 50}}}}}),
                     req);
  EXPECT_EQ(r.text, "hello kernel world");
  EXPECT_EQ(r.finish, finish_reason::stop);
  EXPECT_EQ(r.retries, 0);
  EXPECT_EQ(r.model, "fake-model");
  EXPECT_EQ(r.tokens.input, 1000);
  EXPECT_EQ(r.tokens.cached_input, 200);
  EXPECT_EQ(r.tokens.output, 300);
  if (proto() == protocol::anthropic) {
    EXPECT_EQ(r.tokens.cache_write, 100);
    EXPECT_DOUBLE_EQ(r.cost_usd, (700 * 2.0 + 200 * 0.5 + 100 * 2.5 + 300 * 8.0) / 1e6);
  } else {
    EXPECT_EQ(r.tokens.reasoning, 50);
    EXPECT_DOUBLE_EQ(r.cost_usd, (800 * 2.0 + 200 * 0.5 + 300 * 8.0) / 1e6);
  }
  EXPECT_EQ(streamed_text, streamed() ? "hello kernel world" : "");
  EXPECT_FALSE(r.raw.is_null());

  const json reqs = fake_->requests();
  ASSERT_EQ(reqs.size(), 1u);
  const json& body = reqs[0]["body"];
  EXPECT_EQ(body["model"], "fake-model");
  EXPECT_EQ(body.value("stream", false), streamed());
  EXPECT_EQ(reqs[0]["auth"]["sha256"], fake_->sha256_hex(secret_key)) << "the key from the environment was sent";
  EXPECT_EQ(reqs[0]["auth"]["scheme"], proto() == protocol::anthropic ? "x-api-key" : "bearer");
  // The system prompt goes where each protocol wants it.
  if (proto() == protocol::openai_chat) {
    EXPECT_EQ(body["messages"][0]["role"], "system");
  }
  if (proto() == protocol::openai_responses) {
    EXPECT_EQ(body["instructions"], "You write CUDA kernels.");
  }
  if (proto() == protocol::anthropic) {
    EXPECT_EQ(body["system"][0]["text"], "You write CUDA kernels.");
    EXPECT_EQ(body["system"][0]["cache_control"]["type"], "ephemeral");
    EXPECT_EQ(reqs[0]["headers"]["anthropic-version"], "2023-06-01");
  }
}

TEST_P(fault_suite, tool_calls_are_assembled_and_typed) {
  request req = ask("list files");
  req.tools.push_back(bash_tool());
  const auto r = run(json::array({{{"text", "Let me look."},
                                   {"tool_calls", json::array({{{"id", "call_1"}, {"name", "bash"},
                                                                {"arguments", {{"cmd", "ls -la /tmp"}}}}})}}}),
                     req);
  ASSERT_EQ(r.tool_calls.size(), 1u);
  EXPECT_EQ(r.tool_calls[0].id, "call_1");
  EXPECT_EQ(r.tool_calls[0].name, "bash");
  EXPECT_TRUE(r.tool_calls[0].arguments_valid());
  EXPECT_EQ(r.tool_calls[0].arguments["cmd"], "ls -la /tmp");
  EXPECT_EQ(r.finish, finish_reason::tool_calls);
  EXPECT_EQ(r.text, "Let me look.");

  const json body = fake_->requests()[0]["body"];
  ASSERT_EQ(body["tools"].size(), 1u);
  if (proto() == protocol::openai_chat) {
    EXPECT_EQ(body["tools"][0]["function"]["name"], "bash");
  }
  if (proto() == protocol::openai_responses) {
    EXPECT_EQ(body["tools"][0]["name"], "bash");
  }
  if (proto() == protocol::anthropic) {
    EXPECT_EQ(body["tools"][0]["input_schema"]["required"][0], "cmd");
  }
}

TEST_P(fault_suite, tool_arguments_that_are_not_json_are_flagged_not_fatal) {
  const auto r = run(json::array(
      {{{"tool_calls", json::array({{{"id", "call_9"}, {"name", "bash"}, {"arguments_raw", "{\"cmd\": \"ls"}}})}}}));
  ASSERT_EQ(r.tool_calls.size(), 1u);
  EXPECT_FALSE(r.tool_calls[0].arguments_valid());
  EXPECT_EQ(r.tool_calls[0].arguments_text, "{\"cmd\": \"ls");
  EXPECT_NE(r.tool_calls[0].arguments_error.find("not valid JSON"), std::string::npos);
  EXPECT_EQ(r.retries, 0);
}

TEST_P(fault_suite, rate_limit_honours_retry_after) {
  const auto t0 = clock_type::now();
  const auto r = run(json::array({{{"fault", "status"}, {"status", 429}, {"retry_after", "1"}}, ok()}));
  const auto elapsed = std::chrono::duration_cast<millis>(clock_type::now() - t0);
  EXPECT_EQ(r.text, "done");
  EXPECT_EQ(r.retries, 1);
  EXPECT_GE(elapsed, millis(1000)) << "waited as the provider asked, not the 10 ms backoff";
  EXPECT_LT(elapsed, millis(4000));
}

TEST_P(fault_suite, server_errors_are_retried) {
  const auto r = run(json::array({{{"fault", "status"}, {"status", 500}},
                                  {{"fault", "status"}, {"status", 503}},
                                  {{"fault", "status"}, {"status", 529}},
                                  ok()}));
  EXPECT_EQ(r.text, "done");
  EXPECT_EQ(r.retries, 3);
  EXPECT_EQ(fake_->requests().size(), 4u);
}

TEST_P(fault_suite, connection_reset_mid_body_is_retried) {
  const auto r = run(json::array({{{"fault", "reset"}, {"text", "partial reply here"}}, ok()}));
  EXPECT_EQ(r.text, "done");
  EXPECT_EQ(r.retries, 1);
}

TEST_P(fault_suite, a_reply_cut_before_its_end_is_retried) {
  const auto r = run(json::array({{{"fault", "cut"}, {"text", "this reply will be cut in the middle"}}, ok()}));
  EXPECT_EQ(r.text, "done");
  EXPECT_EQ(r.retries, 1);
}

TEST_P(fault_suite, a_stall_longer_than_the_timeout_is_retried) {
  model_config cfg = config();
  if (!streamed()) cfg.timeout.request = millis(1500);  // a non-streamed reply has no idle limit
  const auto t0 = clock_type::now();
  const auto r = run(json::array({{{"fault", "stall"}, {"stall_s", 6}, {"text", "slow slow slow slow"}}, ok()}),
                     ask(), cfg);
  const auto elapsed = std::chrono::duration_cast<millis>(clock_type::now() - t0);
  EXPECT_EQ(r.text, "done");
  EXPECT_EQ(r.retries, 1);
  EXPECT_LT(elapsed, millis(4500)) << "gave up on the stall well before it ended";
}

TEST_P(fault_suite, malformed_json_is_retried) {
  const auto r = run(json::array({{{"fault", "malformed"}, {"text", "garbage garbage garbage"}}, ok()}));
  EXPECT_EQ(r.text, "done");
  EXPECT_EQ(r.retries, 1);
}

TEST_P(fault_suite, an_empty_reply_is_retried) {
  const auto r = run(json::array({{{"fault", "empty"}}, ok()}));
  EXPECT_EQ(r.text, "done");
  EXPECT_EQ(r.retries, 1);
}

TEST_P(fault_suite, unauthorized_fails_at_once_with_the_provider_message) {
  const auto t0 = clock_type::now();
  try {
    run(json::array({{{"fault", "status"}, {"status", 401}, {"message", "Invalid bearer token"}}, ok()}));
    FAIL() << "expected llm_error";
  } catch (const llm_error& e) {
    EXPECT_EQ(e.what_kind(), llm_error::kind::http_status);
    EXPECT_EQ(e.status(), 401);
    EXPECT_EQ(e.retries(), 0);
    EXPECT_EQ(e.provider_message(), "Invalid bearer token");
    EXPECT_NE(std::string(e.what()).find("Invalid bearer token"), std::string::npos);
    EXPECT_NE(std::string(e.what()).find(key_env), std::string::npos) << "says which variable to check";
  }
  EXPECT_LT(clock_type::now() - t0, std::chrono::seconds(2));
  EXPECT_EQ(fake_->requests().size(), 1u) << "no retry of a 401";
}

TEST_P(fault_suite, retries_are_bounded) {
  try {
    run(json::array({{{"fault", "status"}, {"status", 503}, {"count", 5}}, ok()}));
    FAIL() << "expected llm_error";
  } catch (const llm_error& e) {
    EXPECT_EQ(e.what_kind(), llm_error::kind::retries_exhausted);
    EXPECT_EQ(e.status(), 503);
    EXPECT_EQ(e.retries(), 4);
  }
  EXPECT_EQ(fake_->requests().size(), 5u);
}

TEST_P(fault_suite, a_retry_after_beyond_the_total_wait_gives_up_at_once) {
  model_config cfg = config();
  cfg.retry.max_total_wait = millis(2000);
  const auto t0 = clock_type::now();
  try {
    run(json::array({{{"fault", "status"}, {"status", 429}, {"retry_after", "30"}}, ok()}), ask(), cfg);
    FAIL() << "expected llm_error";
  } catch (const llm_error& e) {
    EXPECT_EQ(e.what_kind(), llm_error::kind::http_status);
    EXPECT_EQ(e.status(), 429);
    EXPECT_NE(std::string(e.what()).find("total wait"), std::string::npos) << e.what();
  }
  EXPECT_LT(clock_type::now() - t0, std::chrono::seconds(1));
}

TEST_P(fault_suite, reasoning_and_tool_turns_are_carried_back) {
  request req = ask("fix the kernel");
  req.tools.push_back(bash_tool());
  req.params.reasoning_effort = "high";
  req.params.max_output_tokens = 30000;
  const auto first = run(json::array({{{"reasoning", "the reduction is wrong"},
                                       {"tool_calls", json::array({{{"id", "call_7"}, {"name", "bash"},
                                                                    {"arguments", {{"cmd", "nvcc k.cu"}}}}})}},
                                      ok("fixed")}),
                         req);
  ASSERT_EQ(first.tool_calls.size(), 1u);
  req.messages.push_back(first.to_message());
  req.messages.push_back(tool_result("call_7", "bash", "compiled OK"));
  const auto second = make_client(config())->complete(req);
  EXPECT_EQ(second.text, "fixed");

  const json reqs = fake_->requests();
  ASSERT_EQ(reqs.size(), 2u);
  const json& body = reqs[1]["body"];
  const std::string dumped = body.dump();
  switch (proto()) {
    case protocol::openai_chat: {
      EXPECT_EQ(reqs[0]["body"]["reasoning_effort"], "high");
      EXPECT_EQ(reqs[0]["body"]["max_tokens"], 30000);
      const json& msgs = body["messages"];
      ASSERT_EQ(msgs.size(), 4u);
      EXPECT_EQ(msgs[2]["tool_calls"][0]["id"], "call_7");
      EXPECT_EQ(json::parse(msgs[2]["tool_calls"][0]["function"]["arguments"].get<std::string>())["cmd"], "nvcc k.cu");
      EXPECT_EQ(msgs[3]["role"], "tool");
      EXPECT_EQ(msgs[3]["tool_call_id"], "call_7");
      break;
    }
    case protocol::openai_responses: {
      EXPECT_EQ(reqs[0]["body"]["reasoning"]["effort"], "high");
      EXPECT_EQ(reqs[0]["body"]["store"], false);
      EXPECT_EQ(reqs[0]["body"]["max_output_tokens"], 30000);
      EXPECT_EQ(reqs[0]["body"]["include"][0], "reasoning.encrypted_content");
      const json& input = body["input"];
      ASSERT_EQ(input.size(), 4u);  // user, reasoning, function_call, function_call_output
      EXPECT_EQ(input[1]["type"], "reasoning");
      EXPECT_EQ(input[1]["encrypted_content"], "enc:the reduction is wrong");
      EXPECT_EQ(input[2]["type"], "function_call");
      EXPECT_EQ(input[2]["call_id"], "call_7");
      EXPECT_EQ(input[3]["type"], "function_call_output");
      EXPECT_EQ(input[3]["output"], "compiled OK");
      break;
    }
    case protocol::anthropic: {
      EXPECT_EQ(reqs[0]["body"]["thinking"]["type"], "enabled");
      EXPECT_EQ(reqs[0]["body"]["thinking"]["budget_tokens"], 24576);
      EXPECT_EQ(reqs[0]["body"]["max_tokens"], 30000);
      EXPECT_GT(reqs[0]["body"]["max_tokens"].get<int>(), reqs[0]["body"]["thinking"]["budget_tokens"].get<int>());
      const json& msgs = body["messages"];
      ASSERT_EQ(msgs.size(), 3u);
      const json& content = msgs[1]["content"];
      EXPECT_EQ(content[0]["type"], "thinking");
      EXPECT_EQ(content[0]["thinking"], "the reduction is wrong");
      EXPECT_EQ(content[0]["signature"], "sig:the reduction is wrong");
      EXPECT_EQ(content[1]["type"], "tool_use");
      EXPECT_EQ(content[1]["input"]["cmd"], "nvcc k.cu");
      const json& result_turn = msgs[2]["content"];
      EXPECT_EQ(result_turn[0]["type"], "tool_result");
      EXPECT_EQ(result_turn[0]["tool_use_id"], "call_7");
      EXPECT_EQ(result_turn[0]["cache_control"]["type"], "ephemeral") << "the newest turn carries the cache marker";
      EXPECT_EQ(body["tools"][0]["cache_control"]["type"], "ephemeral");
      break;
    }
  }
}

TEST_P(fault_suite, the_key_never_appears_in_errors_responses_or_output) {
  ::testing::internal::CaptureStdout();
  ::testing::internal::CaptureStderr();
  std::string seen;
  try {
    run(json::array({{{"fault", "status"}, {"status", 401}, {"message", "Incorrect API key provided: {key}"}}}));
    ADD_FAILURE() << "expected llm_error";
  } catch (const llm_error& e) {
    seen += e.what();
    seen += e.provider_message();
    EXPECT_NE(std::string(e.what()).find("[redacted]"), std::string::npos) << e.what();
  }
  const auto r = run(json::array({{{"text", "ok"}, {"reasoning", "r"}}}));
  seen += r.raw.dump() + r.opaque.dump() + r.text;
  seen += fake_->requests().dump();  // the server side records a hash, never the key
  seen += ::testing::internal::GetCapturedStdout();
  seen += ::testing::internal::GetCapturedStderr();
  EXPECT_EQ(seen.find(secret_key), std::string::npos);
}

std::string name_of(const ::testing::TestParamInfo<fault_suite::ParamType>& info) {
  std::string p(to_string(std::get<0>(info.param)));
  for (auto& c : p)
    if (c == '-') c = '_';
  return p + (std::get<1>(info.param) ? "_streamed" : "_whole");
}

INSTANTIATE_TEST_SUITE_P(all_protocols, fault_suite,
                         ::testing::Combine(::testing::Values(protocol::openai_chat, protocol::openai_responses,
                                                              protocol::anthropic),
                                            ::testing::Bool()),
                         name_of);

TEST(fault_suite_connect, an_unreachable_server_is_retried_then_reported) {
  model_config m;
  m.name = "nowhere";
  m.base_url = "http://127.0.0.1:9/v1";  // discard port: nothing listens
  m.model = "m";
  m.retry.max_retries = 2;
  m.retry.initial_backoff = millis(10);
  try {
    request req;
    req.messages.push_back(user_message("hi"));
    make_client(m)->complete(req);
    FAIL() << "expected llm_error";
  } catch (const llm_error& e) {
    EXPECT_EQ(e.what_kind(), llm_error::kind::retries_exhausted);
    EXPECT_EQ(e.retries(), 2);
    EXPECT_NE(std::string(e.what()).find("cannot connect"), std::string::npos) << e.what();
  }
}

}  // namespace
}  // namespace pk::llm
