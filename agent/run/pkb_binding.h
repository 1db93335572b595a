// How an episode's sandbox reaches its pkb server: the socket directory bound read-only at
// /run/pkb, the client binary at /run/pkb-bin/pkb, and that directory first on PATH.
#pragma once

#include <filesystem>

#include "agent/run/pkb_tool/server.h"
#include "sandbox/sandbox.h"

namespace pk::run {

void attach_pkb(sandbox::spec& s, const pkb::server& srv, const std::filesystem::path& pkb_binary);

}  // namespace pk::run
