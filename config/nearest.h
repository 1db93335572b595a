// "Did you mean": the known word nearest to a misspelt one (a flag, a subcommand, a config key).
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace pk::config {

/// The candidate closest to `word` by edit distance (a letter inserted, deleted, changed, or two
/// neighbours swapped: one step each), when it is close enough to be a likely typo (one step for
/// words of up to 4 letters, two for longer ones); nullopt when none is. Ties go to the first.
std::optional<std::string> nearest(std::string_view word, const std::vector<std::string>& candidates);

/// Every candidate at that least distance, in their order: a typo one step from two words
/// ("--modle": "--mode" and "--model") names both rather than guessing. Empty when none is close.
std::vector<std::string> nearest_all(std::string_view word, const std::vector<std::string>& candidates);

}  // namespace pk::config
