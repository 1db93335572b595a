// libcurl, opened at the first HTTP request instead of linked. libcurl pulls in some 30 libraries
// (TLS, HTTP/2, IDN, LDAP, Kerberos ...) that take milliseconds to map and relocate at every
// start of pkagent, and most commands never make a request: `pkagent sandbox`, `eval`, `report`,
// and the rank supervisor that every evaluation starts. The functions keep curl's own signatures.
#pragma once

#include <curl/curl.h>

namespace pk::llm::detail {

struct curl_library {
  decltype(&::curl_global_init) global_init;
  decltype(&::curl_share_init) share_init;
  decltype(&::curl_share_setopt) share_setopt;
  decltype(&::curl_easy_init) easy_init;
  decltype(&::curl_easy_setopt) easy_setopt;
  decltype(&::curl_easy_perform) easy_perform;
  decltype(&::curl_easy_getinfo) easy_getinfo;
  decltype(&::curl_easy_cleanup) easy_cleanup;
  decltype(&::curl_easy_strerror) easy_strerror;
  decltype(&::curl_getdate) getdate;
  decltype(&::curl_slist_append) slist_append;
  decltype(&::curl_slist_free_all) slist_free_all;
};

/// libcurl, loaded on the first call (thread-safe; later calls return the same table). Throws
/// llm_error{kind::config} naming the library and the package to install when it cannot be loaded.
const curl_library& curl();

}  // namespace pk::llm::detail
