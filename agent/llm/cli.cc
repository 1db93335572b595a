#include "agent/llm/cli.h"

#include <cstdlib>
#include <memory>

#include <fmt/format.h>

#include "agent/llm/llm.h"
#include "config/paths.h"

namespace pk::llm {

void add_models_command(CLI::App& app, int& exit_code) {
  auto file = std::make_shared<std::string>(pk::config::data_path("config/models.toml").string());
  CLI::App* cmd = app.add_subcommand(
      "models", "List the models of config/models.toml: provider, model id, price, and whether the key is set");
  cmd->add_option("--file", *file, "The model table")->capture_default_str();
  cmd->callback([file, &exit_code] {
    const auto models = load_models(*file);
    fmt::print("{:<30} {:<17} {:<34} {:>14}  {}\n", "NAME", "PROVIDER", "MODEL", "USD/M in/out", "KEY");
    for (const auto& m : models) {
      std::string key = "none needed";
      if (!m.api_key_env.empty()) {
        const char* v = std::getenv(m.api_key_env.c_str());
        const bool set = v != nullptr && *v != '\0';
        key = fmt::format("{} {}{}", m.api_key_env, set ? "set" : "NOT SET", m.key_optional ? " (optional)" : "");
      }
      const std::string price =
          m.price.known ? fmt::format("{:g}/{:g}", m.price.input, m.price.output) : std::string("unknown");
      fmt::print("{:<30} {:<17} {:<34} {:>14}  {}\n", m.name, to_string(m.provider), m.model, price, key);
    }
    fmt::print("\nAlso: --model openai-compatible:URL#MODEL for any OpenAI-compatible server (key: OPENAI_API_KEY if set).\n");
    exit_code = 0;
  });
}

}  // namespace pk::llm
