// The report as GitHub-flavoured markdown (what `pkagent report` prints).
#pragma once

#include <string>

#include "bench/report/document.h"

namespace pk::report {

std::string render_markdown(const document& doc);

}  // namespace pk::report
