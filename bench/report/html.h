// The report as one self-contained HTML page: the document's tables plus inline SVG charts
// (pass@k curves per run, the speedup distribution, spend against success). No scripts, no
// external assets, so it can be mailed, archived and opened offline.
#pragma once

#include <string>

#include "bench/report/document.h"
#include "bench/report/run_set.h"

namespace pk::report {

/// `episodes` (HTML, e.g. episode_links_section) goes at the end of the page.
std::string render_html(const document& doc, const run_set& runs, const std::string& episodes = {});

}  // namespace pk::report
