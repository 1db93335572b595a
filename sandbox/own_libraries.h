// pkagent's own shared libraries, for a sandbox in which pkagent runs itself again (the judge's
// rank supervisor, `pkb profile`). Where its libraries live under a path the sandbox hides (a
// package folder inside the checkout, a build under /tmp or $HOME), the dynamic linker inside
// finds nothing there ("libmuparser.so.2: cannot open shared object file"), so the directories
// it loaded them from are bound back read-only (spec::own_libraries).
#pragma once

#include <filesystem>
#include <vector>

namespace pk::sandbox {

/// The files of the shared objects loaded into this process, in load order (dl_iterate_phdr):
/// absolute paths only, so neither the main program nor the vDSO.
std::vector<std::filesystem::path> loaded_shared_objects();

/// The directories of `objects` that lie under one of `hidden` (the paths a sandbox does not show
/// as on the host), each once, in the order first met.
std::vector<std::filesystem::path> library_dirs_under(const std::vector<std::filesystem::path>& objects,
                                                      const std::vector<std::filesystem::path>& hidden);

}  // namespace pk::sandbox
