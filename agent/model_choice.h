// Picks the model of an episode by name: `demo` (or `demo:SCRIPT`) plays a scripted reply file;
// any other name is resolved in config/models.toml by the LLM client.
#pragma once

#include <filesystem>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>

#include <nlohmann/json.hpp>

#include "agent/llm/llm.h"

namespace pk::agent {

struct chosen_model {
  llm::model_config config;  ///< for the transcript header (names, never keys)
  std::unique_ptr<llm::client> client;
};

/// Throws llm::llm_error (unknown model, unset key variable) or std::runtime_error (bad script).
/// `max_output_tokens` (--max-output-tokens) replaces the model's default output limit per reply.
chosen_model choose_model(const std::string& name, const std::filesystem::path& models_toml,
                          std::optional<std::int64_t> max_output_tokens = std::nullopt);

/// The header's record of a model: names and prices, and the variable holding the key (never
/// its value).
nlohmann::json model_record(const llm::model_config& m);

}  // namespace pk::agent
