// Shapes compiler and traceback output for the model: the first errors with a few lines of
// context, every ptxas register / spill / shared-memory line, the end of a Python traceback, and
// a count of what was left out, instead of a raw tail that may start mid-error.
#pragma once

#include <string>
#include <string_view>

namespace pk::pkb {

struct shaping {
  int max_errors = 5;      ///< error lines shown with their context
  int context_before = 2;  ///< lines kept before an error line
  int context_after = 4;   ///< lines kept after it
  int max_ptxas = 24;      ///< ptxas info lines kept
  int traceback_tail = 12; ///< last lines kept when the text holds a Python traceback
};

std::string shape_compiler_output(std::string_view text, const shaping& s = {});

}  // namespace pk::pkb
