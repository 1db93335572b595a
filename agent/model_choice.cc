#include "agent/model_choice.h"

#include "agent/scripted_client.h"
#include "config/paths.h"

namespace pk::agent {

chosen_model choose_model(const std::string& name, const std::filesystem::path& models_toml,
                          std::optional<std::int64_t> max_output_tokens) {
  if (name == "demo" || name.rfind("demo:", 0) == 0) {
    std::filesystem::path script = name == "demo" ? pk::config::data_path("prompts/demo/replies.md")
                                                  : std::filesystem::path(name.substr(5));
    chosen_model c;
    c.client = std::make_unique<scripted_client>(scripted_client::from_file(script));
    c.config.name = name == "demo" ? "demo" : "demo:" + std::filesystem::absolute(script).string();
    c.config.model = "scripted";
    c.config.base_url = "file://" + std::filesystem::absolute(script).string();
    return c;
  }
  chosen_model c;
  c.config = llm::resolve_model(name, models_toml);
  if (max_output_tokens) c.config.defaults.max_output_tokens = *max_output_tokens;
  c.client = llm::make_client(c.config);
  return c;
}

nlohmann::json model_record(const llm::model_config& m) {
  bool scripted = m.model == "scripted" && m.base_url.rfind("file://", 0) == 0;
  return {{"name", m.name},
          {"provider", scripted ? "scripted" : std::string(llm::to_string(m.provider))},
          {"model", m.model},
          {"base_url", m.base_url},
          {"api_key_env", m.api_key_env},
          {"max_output_tokens", m.defaults.max_output_tokens ? nlohmann::json(*m.defaults.max_output_tokens) : nlohmann::json()},
          {"prices_usd_per_mtok",
           {{"input", m.price.input}, {"cached_input", m.price.cached_input},
            {"output", m.price.output}, {"known", m.price.known}}}};
}

}  // namespace pk::agent
