// The pieces every audit page is built from: escaping of untrusted text, folded long outputs,
// and the page shell with its inline stylesheet. Model and candidate text is untrusted: it only
// ever reaches a page through escape().
#pragma once

#include <string>
#include <string_view>

namespace pk::audit {

/// Text as HTML character data or attribute value: & < > " ' escaped.
std::string escape(std::string_view text);

/// `text` in a <pre>; longer than fold_lines lines it is folded under a <details> whose summary
/// says how many lines it holds. Never cut: the whole text is in the page.
std::string output_block(std::string_view text, std::string_view label);
inline constexpr int fold_lines = 30;

/// A whole page: title, inline CSS, `body` (already HTML).
std::string page(std::string_view title, const std::string& body);

/// "$0.0123", or "$ unknown" when the model's prices are unknown: $0 would read as free.
std::string dollars_text(double dollars, bool known);

}  // namespace pk::audit
