#include "agent/prompt_template.h"

#include <algorithm>

#include <fmt/format.h>

#include "config/read_file.h"

namespace pk::agent {
namespace {

int line_of(const std::string& text, std::size_t pos) {
  return 1 + static_cast<int>(std::count(text.begin(), text.begin() + static_cast<long>(pos), '\n'));
}

bool valid_name(const std::string& s) {
  return !s.empty() && std::all_of(s.begin(), s.end(), [](char c) {
    return (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '_';
  });
}

}  // namespace

prompt_template::prompt_template(std::string text, std::string origin,
                                 const std::set<std::string>& allowed)
    : origin_(std::move(origin)) {
  std::size_t pos = 0;
  pieces_ = parse(text, pos, "", 0, allowed);
}

std::vector<prompt_template::piece> prompt_template::parse(const std::string& text, std::size_t& pos,
                                                           const std::string& section,
                                                           std::size_t section_start,
                                                           const std::set<std::string>& allowed) {
  auto fail = [&](std::size_t at, const std::string& why) {
    return template_error(fmt::format("{}:{}: {}", origin_, line_of(text, at), why));
  };
  std::vector<piece> out;
  while (pos < text.size()) {
    std::size_t start = text.find("{{", pos);
    if (start == std::string::npos) start = text.size();
    if (start > pos) out.push_back({piece::text, text.substr(pos, start - pos), {}});
    if (start == text.size()) break;
    std::size_t end = text.find("}}", start + 2);
    if (end == std::string::npos) throw fail(start, "'{{' without a closing '}}'");
    std::string tag = text.substr(start + 2, end - start - 2);
    tag.erase(0, tag.find_first_not_of(' '));
    tag.erase(tag.find_last_not_of(' ') + 1);
    char sigil = tag.empty() ? 0 : tag[0];
    bool is_section_tag = sigil == '#' || sigil == '^' || sigil == '/';
    std::string name = is_section_tag ? tag.substr(1) : tag;
    if (!valid_name(name))
      throw fail(start, fmt::format("'{{{{{}}}}}' is not a placeholder: names are lower_snake_case", tag));
    if (!allowed.contains(name))
      throw fail(start, fmt::format("unknown placeholder '{}'; this template may use: {}", name,
                                    fmt::join(allowed, ", ")));
    used_.insert(name);
    pos = end + 2;
    // A section tag alone on its line leaves no blank line behind.
    if (is_section_tag && pos < text.size() && text[pos] == '\n' && (start == 0 || text[start - 1] == '\n'))
      ++pos;
    if (sigil == '/') {
      if (name != section) throw fail(start, fmt::format("'{{{{/{}}}}}' closes no open section", name));
      return out;
    }
    if (sigil == '#' || sigil == '^')
      out.push_back({sigil == '#' ? piece::section : piece::inverted, name,
                     parse(text, pos, name, start, allowed)});
    else
      out.push_back({piece::var, name, {}});
  }
  if (!section.empty()) throw fail(section_start, fmt::format("section '{}' is never closed", section));
  return out;
}

prompt_template prompt_template::load(const std::filesystem::path& file,
                                      const std::set<std::string>& allowed) {
  return prompt_template(read_file(file, "the prompt template (is PKAGENT_HOME right?)"), file.string(), allowed);
}

const std::string& prompt_template::lookup(const std::string& name, const template_vars& vars) const {
  auto it = vars.find(name);
  if (it == vars.end())
    throw template_error(fmt::format("{}: no value for placeholder '{}'", origin_, name));
  return it->second;
}

std::string prompt_template::render_pieces(const std::vector<piece>& pieces,
                                           const template_vars& vars) const {
  std::string out;
  for (const piece& p : pieces) {
    switch (p.kind) {
      case piece::text: out += p.value; break;
      case piece::var: out += lookup(p.value, vars); break;
      case piece::section:
      case piece::inverted: {
        bool set = !lookup(p.value, vars).empty();
        if (set == (p.kind == piece::section)) out += render_pieces(p.children, vars);
        break;
      }
    }
  }
  return out;
}

std::string prompt_template::render(const template_vars& vars) const {
  return render_pieces(pieces_, vars);
}

}  // namespace pk::agent
