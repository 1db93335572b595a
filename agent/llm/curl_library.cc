#include "agent/llm/curl_library.h"

#include <dlfcn.h>

#include <fmt/format.h>

#include "agent/llm/llm.h"

namespace pk::llm::detail {
namespace {

curl_library load() {
  // The soname of the libcurl the build found (PKAGENT_CURL_SONAME, from its ELF header).
  void* lib = ::dlopen(PKAGENT_CURL_SONAME, RTLD_NOW | RTLD_LOCAL);
  if (lib == nullptr)
    throw llm_error(llm_error::kind::config,
                    fmt::format("cannot load {} for HTTP requests to the model ({}); install libcurl "
                                "(scripts/install-deps)", PKAGENT_CURL_SONAME, ::dlerror()));
  curl_library c{};
  auto bind = [lib](auto& fn, const char* name) {
    fn = reinterpret_cast<std::remove_reference_t<decltype(fn)>>(::dlsym(lib, name));
    if (fn == nullptr)
      throw llm_error(llm_error::kind::config, fmt::format("{} has no {}: too old a libcurl", PKAGENT_CURL_SONAME, name));
  };
  bind(c.global_init, "curl_global_init");
  bind(c.share_init, "curl_share_init");
  bind(c.share_setopt, "curl_share_setopt");
  bind(c.easy_init, "curl_easy_init");
  bind(c.easy_setopt, "curl_easy_setopt");
  bind(c.easy_perform, "curl_easy_perform");
  bind(c.easy_getinfo, "curl_easy_getinfo");
  bind(c.easy_cleanup, "curl_easy_cleanup");
  bind(c.easy_strerror, "curl_easy_strerror");
  bind(c.getdate, "curl_getdate");
  bind(c.slist_append, "curl_slist_append");
  bind(c.slist_free_all, "curl_slist_free_all");
  return c;  // the library stays loaded for the life of the process
}

}  // namespace

const curl_library& curl() {
  static const curl_library library = load();  // a failed load throws and is tried again next time
  return library;
}

}  // namespace pk::llm::detail
