// An episode as one static HTML page: the task, every step (the model's text, the command, its
// full output, exit status and time, tokens and dollars) with an anchor `#step-N`, the pkb
// check/bench/submit reports as tables with solution.py diffed between successive checks, how
// the episode ended and the final verdict. `pkagent replay --format html` and the pages of
// `pkagent report --html` both render through it.
#pragma once

#include <string>
#include <utility>
#include <vector>

#include "agent/audit/episode_data.h"

namespace pk::audit {

struct page_links {
  std::vector<std::pair<std::string, std::string>> nav;  ///< (href, text) shown at the top
};

/// The links as a <nav> bar; empty without links.
std::string nav_html(const page_links& links);

std::string render_episode_page(const episode_data& e, const page_links& links = {});

/// The final verdict in words: "correct, speedup 1.31x ..." from result.json, else the task's
/// check, else "no verdict".
std::string verdict_summary(const episode_data& e);

/// Tokens and dollars of one step's response event (`response` object).
std::string step_spend(const nlohmann::json& response, bool prices_known);

/// The HTML of one step's model reply and command with its output, without the heading.
std::string step_body(const agent::recorded_step& s, bool prices_known);

}  // namespace pk::audit
