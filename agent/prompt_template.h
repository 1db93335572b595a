// Strict text templates for every model-facing text (prompts/*.md).
//
// Syntax (a small, strict subset of Mustache):
//   {{name}}                 the value of `name`
//   {{#name}} ... {{/name}}  the block when `name` is non-empty (sections may nest)
//   {{^name}} ... {{/name}}  the block when `name` is empty
// A template declares the variables it may use; a placeholder outside that set is an error when
// the file is loaded, and rendering without a value for a used variable is an error too, so a
// typo never renders as a silent blank. Hand-written because the one packaged C++ engine
// (kainjow mustache) renders unknown names as blanks and HTML-escapes by default.
#pragma once

#include <filesystem>
#include <map>
#include <set>
#include <stdexcept>
#include <string>
#include <vector>

namespace pk::agent {

/// A template file or its use is wrong; the message names the file, the line and the fix.
class template_error : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

using template_vars = std::map<std::string, std::string, std::less<>>;

class prompt_template {
 public:
  prompt_template() = default;  ///< renders as empty text
  /// Parses `text`; `origin` names it in errors. Every placeholder must be in `allowed`.
  prompt_template(std::string text, std::string origin, const std::set<std::string>& allowed);
  static prompt_template load(const std::filesystem::path& file, const std::set<std::string>& allowed);

  /// Throws template_error when a used variable has no value.
  std::string render(const template_vars& vars) const;
  /// The variables this template uses.
  const std::set<std::string>& used() const { return used_; }
  const std::string& origin() const { return origin_; }

 private:
  struct piece {
    enum kind { text, var, section, inverted } kind;
    std::string value;           ///< text, or the variable name
    std::vector<piece> children;  ///< sections: their body
  };
  std::vector<piece> parse(const std::string& text, std::size_t& pos, const std::string& section,
                           std::size_t section_start, const std::set<std::string>& allowed);
  std::string render_pieces(const std::vector<piece>& pieces, const template_vars& vars) const;
  const std::string& lookup(const std::string& name, const template_vars& vars) const;

  std::string origin_;
  std::vector<piece> pieces_;
  std::set<std::string> used_;
};

}  // namespace pk::agent
