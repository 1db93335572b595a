// Two episodes of one problem side by side, step by step (e.g. an agent sample against a
// zero-shot one, or two models): each step's reply, command and output in two columns.
#pragma once

#include <string>

#include "agent/audit/episode_data.h"
#include "agent/audit/episode_page.h"

namespace pk::audit {

struct compared_episode {
  const episode_data* data = nullptr;
  std::string label;  ///< e.g. "agent · demo, sample 0"
  std::string href;   ///< its own page
};

std::string render_comparison_page(const compared_episode& a, const compared_episode& b,
                                   const page_links& links = {});

}  // namespace pk::audit
