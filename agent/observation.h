// What the model sees after a command: exit code, stdout and stderr cut to head + tail with a
// marker naming the bytes left out, and timeouts / OOM kills said as such.
#pragma once

#include <cstdint>
#include <string>

#include "agent/agent_config.h"
#include "agent/prompts.h"
#include "sandbox/sandbox.h"

namespace pk::agent {

/// `text` (the captured head and tail of a stream that had `total_bytes` in all) cut to at most
/// `max_bytes` shown bytes: the first and last halves, joined by prompts/truncated.md. UTF-8
/// sequences are never split. Returns `text` unchanged when everything fits.
std::string head_tail(const std::string& text, std::uint64_t total_bytes, std::uint64_t max_bytes,
                      const std::string& stream, const prompt_set& prompts);

/// Renders prompts/observation.md for a sandbox result.
std::string render_observation(const sandbox::result& r, const agent_config& cfg,
                               const prompt_set& prompts);

/// The sandbox's per-stream capture for `cfg`: enough head and tail that head_tail's cut is
/// exact (at least four times what is shown).
std::uint64_t capture_bytes(const agent_config& cfg);

}  // namespace pk::agent
