#include <gtest/gtest.h>

#include <cstdlib>
#include <fstream>
#include <set>

#include "agent/llm/llm.h"
#include "config/toml_reader.h"

namespace pk::llm {
namespace {

const std::filesystem::path shipped = std::filesystem::path(PKAGENT_SOURCE_DIR) / "config/models.toml";

// Sets (or unsets, with nullptr) an environment variable for one scope.
class scoped_env {
 public:
  scoped_env(const char* name, const char* value) : name_(name) {
    if (const char* old = std::getenv(name)) old_ = old;
    value ? setenv(name, value, 1) : unsetenv(name);
  }
  ~scoped_env() { old_ ? setenv(name_, old_->c_str(), 1) : unsetenv(name_); }

 private:
  const char* name_;
  std::optional<std::string> old_;
};

std::filesystem::path write_temp(const std::string& name, const std::string& text) {
  const auto p = std::filesystem::temp_directory_path() / name;
  std::ofstream(p) << text;
  return p;
}

TEST(models, the_shipped_table_loads_and_is_complete) {
  const auto models = load_models(shipped);
  ASSERT_GE(models.size(), 8u);
  std::set<protocol> protocols;
  for (const auto& m : models) {
    SCOPED_TRACE(m.name);
    EXPECT_FALSE(m.model.empty());
    EXPECT_TRUE(m.base_url.starts_with("https://") || m.base_url.starts_with("http://127.0.0.1"));
    EXPECT_TRUE(m.price.known);
    EXPECT_FALSE(m.api_key_env.empty());
    EXPECT_EQ(m.retry.max_retries, 6);  // the file-wide [retry] applies
    protocols.insert(m.provider);
  }
  EXPECT_EQ(protocols.size(), 3u) << "every protocol has at least one configured model";
}

TEST(models, missing_key_names_the_variable) {
  scoped_env unset("ANTHROPIC_API_KEY", nullptr);
  try {
    resolve_model("claude-sonnet-4-5", shipped);
    FAIL() << "expected an error";
  } catch (const llm_error& e) {
    EXPECT_EQ(e.what_kind(), llm_error::kind::config);
    EXPECT_NE(std::string(e.what()).find("ANTHROPIC_API_KEY"), std::string::npos) << e.what();
  }
}

TEST(models, resolves_a_named_model_when_its_key_is_set) {
  scoped_env set("ANTHROPIC_API_KEY", "sk-ant-test");
  const auto m = resolve_model("claude-sonnet-4-5", shipped);
  EXPECT_EQ(m.provider, protocol::anthropic);
  EXPECT_EQ(m.base_url, "https://api.anthropic.com/v1");
  EXPECT_DOUBLE_EQ(m.price.cache_write, 3.75);
  EXPECT_EQ(m.defaults.max_output_tokens, 32000);
}

TEST(models, unknown_name_lists_the_known_ones_and_the_spec_form) {
  try {
    resolve_model("gpt-17", shipped);
    FAIL() << "expected an error";
  } catch (const llm_error& e) {
    const std::string msg = e.what();
    EXPECT_EQ(e.what_kind(), llm_error::kind::config);
    EXPECT_NE(msg.find("gpt-17"), std::string::npos);
    EXPECT_NE(msg.find("claude-sonnet-4-5"), std::string::npos);
    EXPECT_NE(msg.find("openai-compatible:URL#MODEL"), std::string::npos);
  }
}

TEST(models, openai_compatible_spec_needs_no_entry_and_no_key) {
  scoped_env unset("OPENAI_API_KEY", nullptr);
  const auto m = resolve_model("openai-compatible:http://127.0.0.1:8000/v1/#Qwen/Qwen2.5-7B", shipped);
  EXPECT_EQ(m.provider, protocol::openai_chat);
  EXPECT_EQ(m.base_url, "http://127.0.0.1:8000/v1");
  EXPECT_EQ(m.model, "Qwen/Qwen2.5-7B");
  EXPECT_EQ(m.api_key_env, "OPENAI_API_KEY");
  EXPECT_TRUE(m.key_optional);
  EXPECT_FALSE(m.price.known);
  EXPECT_NO_THROW(make_client(m));
  // Named without the port, and an output limit so that a local server does not fill its context.
  EXPECT_EQ(m.name, "openai-compatible:127.0.0.1/v1#Qwen/Qwen2.5-7B");
  EXPECT_EQ(m.defaults.max_output_tokens, compatible_max_output_tokens);
}

TEST(models, identity_of_a_compatible_spec_leaves_out_the_port) {
  EXPECT_EQ(model_identity("openai-compatible:http://127.0.0.1:8181/v1#gemma-3-270m"),
            "openai-compatible:127.0.0.1/v1#gemma-3-270m");
  EXPECT_EQ(model_identity("openai-compatible:http://127.0.0.1:40123/v1/#gemma-3-270m"),
            model_identity("openai-compatible:http://127.0.0.1:8181/v1#gemma-3-270m"));
  EXPECT_EQ(model_identity("openai-compatible:https://llm.example.org/v1#org/model:tag"),
            "openai-compatible:llm.example.org/v1#org/model:tag");
  EXPECT_EQ(model_identity("openai-compatible:http://[::1]:8000/v1#m"), "openai-compatible:[::1]/v1#m");
  EXPECT_EQ(model_identity("openai-compatible:http://10.0.0.2:8000#m"), "openai-compatible:10.0.0.2#m");
  EXPECT_NE(model_identity("openai-compatible:http://127.0.0.1:8181/v1#a"),
            model_identity("openai-compatible:http://127.0.0.1:8181/v1#b"));
  for (const char* name : {"gpt-5", "demo", "openai-compatible:127.0.0.1/v1#m", "openai-compatible:#m"})
    EXPECT_EQ(model_identity(name), name);
  EXPECT_THROW(resolve_model(model_identity("openai-compatible:http://127.0.0.1:1/v1#m"), shipped), llm_error);
}

TEST(models, bad_specs_say_what_is_expected) {
  for (const char* spec : {"openai-compatible:http://x", "openai-compatible:#m", "openai-compatible:ftp://x#m"}) {
    try {
      resolve_model(spec, shipped);
      FAIL() << spec;
    } catch (const llm_error& e) {
      EXPECT_EQ(e.what_kind(), llm_error::kind::config);
      EXPECT_NE(std::string(e.what()).find(spec), std::string::npos) << e.what();
    }
  }
}

TEST(models, typos_and_bad_values_are_refused_with_the_key_named) {
  const auto typo = write_temp("pk_models_typo.toml",
                               "[models.x]\nprovider = \"openai-chat\"\nbase_url = \"http://127.0.0.1:1/v1\"\n"
                               "model = \"m\"\nbase_ur = \"oops\"\n");
  try {
    load_models(typo);
    FAIL();
  } catch (const pk::config::config_error& e) {
    EXPECT_NE(std::string(e.what()).find("models.x.base_ur"), std::string::npos) << e.what();
  }
  const auto bad = write_temp("pk_models_bad.toml",
                              "[models.x]\nprovider = \"gemini\"\nbase_url = \"http://127.0.0.1:1/v1\"\nmodel = \"m\"\n");
  try {
    load_models(bad);
    FAIL();
  } catch (const pk::config::config_error& e) {
    EXPECT_NE(std::string(e.what()).find("openai-responses"), std::string::npos) << e.what();
  }
}

TEST(models, make_client_refuses_a_missing_key) {
  scoped_env unset("PK_TEST_UNSET_KEY", nullptr);
  model_config m;
  m.name = "needs-key";
  m.api_key_env = "PK_TEST_UNSET_KEY";
  try {
    make_client(m);
    FAIL();
  } catch (const llm_error& e) {
    EXPECT_NE(std::string(e.what()).find("PK_TEST_UNSET_KEY"), std::string::npos);
  }
}

TEST(models, cost_uses_each_rate) {
  prices p{2.0, 0.5, 2.5, 8.0, true};
  usage u{1000, 200, 100, 300, 50};
  EXPECT_DOUBLE_EQ(cost_usd(u, p), (700 * 2.0 + 200 * 0.5 + 100 * 2.5 + 300 * 8.0) / 1e6);
  p.known = false;
  EXPECT_EQ(cost_usd(u, p), 0.0);
}

}  // namespace
}  // namespace pk::llm
