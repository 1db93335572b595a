// Line diff of two versions of a file (solution.py between successive checks), as unified hunks.
// The edit script comes from dtl (Debian libdtl-dev), a kept library rather than a diff of our own.
#pragma once

#include <string>
#include <vector>

namespace pk::audit {

struct diff_line {
  enum kind { same, added, removed } type = same;
  std::string text;
};

struct diff_hunk {
  long long old_start = 0, old_count = 0, new_start = 0, new_count = 0;  ///< "@@ -a,b +c,d @@"
  std::vector<diff_line> lines;
};

/// The hunks that turn `before` into `after`, each with up to three lines of context; empty when
/// they are equal.
std::vector<diff_hunk> line_diff(const std::string& before, const std::string& after);

/// The hunks as HTML (escaped), or a line saying the file did not change.
std::string diff_html(const std::vector<diff_hunk>& hunks);

}  // namespace pk::audit
