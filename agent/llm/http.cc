#include "agent/llm/http.h"

#include <algorithm>
#include <array>
#include <cctype>
#include <charconv>
#include <chrono>
#include <cstdlib>
#include <ctime>
#include <mutex>

#include "agent/llm/curl_library.h"

namespace pk::llm::detail {
namespace {

using clock = std::chrono::steady_clock;
constexpr std::size_t max_body = 64u << 20;

// curl_global_init is not thread-safe: run it once, before the first handle, for the process.
// The share object lets every handle reuse DNS answers and TLS sessions; it needs locks.
struct curl_process {
  CURLSH* share = nullptr;
  std::array<std::mutex, CURL_LOCK_DATA_LAST> locks;

  curl_process() {
    const curl_library& lib = curl();
    lib.global_init(CURL_GLOBAL_DEFAULT);
    share = lib.share_init();
    lib.share_setopt(share, CURLSHOPT_LOCKFUNC, &lock);
    lib.share_setopt(share, CURLSHOPT_UNLOCKFUNC, &unlock);
    lib.share_setopt(share, CURLSHOPT_USERDATA, this);
    lib.share_setopt(share, CURLSHOPT_SHARE, CURL_LOCK_DATA_DNS);
    lib.share_setopt(share, CURLSHOPT_SHARE, CURL_LOCK_DATA_SSL_SESSION);
  }
  static void lock(CURL*, curl_lock_data d, curl_lock_access, void* self) {
    static_cast<curl_process*>(self)->locks[static_cast<std::size_t>(d)].lock();
  }
  static void unlock(CURL*, curl_lock_data d, void* self) {
    static_cast<curl_process*>(self)->locks[static_cast<std::size_t>(d)].unlock();
  }
};

curl_process& process() {
  static curl_process p;  // never destroyed before exit; handles may outlive static teardown
  return p;
}

struct transfer {
  const http_request* req;
  const std::function<bool(std::string_view)>* on_stream;
  http_outcome out;
  bool stream_aborted = false;
  // Idle detection: curl's LOW_SPEED_* averages over a window, so bytes that arrived before a
  // stall keep it quiet; we track the time of the last received byte ourselves instead.
  curl_off_t last_bytes = -1;
  clock::time_point last_progress = clock::now();
  bool idle_expired = false;
};

std::string lower(std::string_view s) {
  std::string r(s);
  std::transform(r.begin(), r.end(), r.begin(), [](unsigned char c) { return std::tolower(c); });
  return r;
}

std::string_view trim(std::string_view s) {
  while (!s.empty() && std::isspace(static_cast<unsigned char>(s.front()))) s.remove_prefix(1);
  while (!s.empty() && std::isspace(static_cast<unsigned char>(s.back()))) s.remove_suffix(1);
  return s;
}

size_t on_header(char* data, size_t size, size_t n, void* user) {
  auto* t = static_cast<transfer*>(user);
  const std::string_view line(data, size * n);
  if (line.starts_with("HTTP/")) {  // a new response (after redirects or 100-continue)
    t->out.event_stream = false;
    t->out.retry_after.reset();
    return size * n;
  }
  const auto colon = line.find(':');
  if (colon == std::string_view::npos) return size * n;
  const std::string name = lower(trim(line.substr(0, colon)));
  const std::string_view value = trim(line.substr(colon + 1));
  if (name == "content-type") {
    t->out.event_stream = lower(value).starts_with("text/event-stream");
  } else if (name == "retry-after-ms") {
    long long ms = 0;
    if (std::from_chars(value.data(), value.data() + value.size(), ms).ec == std::errc() && ms >= 0)
      t->out.retry_after = millis(ms);
  } else if (name == "retry-after" && !t->out.retry_after) {
    t->out.retry_after = parse_retry_after(value);
  }
  return size * n;
}

size_t on_write(char* data, size_t size, size_t n, void* user) {
  auto* t = static_cast<transfer*>(user);
  const std::string_view chunk(data, size * n);
  if (t->out.event_stream && (*t->on_stream)) {
    if (!(*t->on_stream)(chunk)) {
      t->stream_aborted = true;
      return 0;  // makes curl stop with CURLE_WRITE_ERROR
    }
    return chunk.size();
  }
  if (t->out.body.size() + chunk.size() > max_body) return 0;
  t->out.body.append(chunk);
  return chunk.size();
}

int on_progress(void* user, curl_off_t, curl_off_t dlnow, curl_off_t, curl_off_t) {
  auto* t = static_cast<transfer*>(user);
  const auto now = clock::now();
  if (dlnow != t->last_bytes) {
    t->last_bytes = dlnow;
    t->last_progress = now;
    return 0;
  }
  if (now - t->last_progress >= t->req->limits.idle) {
    t->idle_expired = true;
    return 1;  // aborts the transfer
  }
  return 0;
}

const std::string& no_proxy() {
  static const std::string list = [] {
    std::string l = "127.0.0.1,localhost,::1";
    for (const char* name : {"no_proxy", "NO_PROXY"})
      if (const char* v = std::getenv(name); v != nullptr && *v != '\0') return l + "," + v;
    return l;
  }();
  return list;
}

}  // namespace

std::optional<millis> parse_retry_after(std::string_view value) {
  value = trim(value);
  if (value.empty()) return std::nullopt;
  double seconds = 0;
  const auto [ptr, ec] = std::from_chars(value.data(), value.data() + value.size(), seconds);
  if (ec == std::errc() && ptr == value.data() + value.size() && seconds >= 0)
    return millis(static_cast<std::int64_t>(seconds * 1000.0));
  const std::string text(value);
  const time_t when = curl().getdate(text.c_str(), nullptr);
  if (when < 0) return std::nullopt;
  const auto delta = when - std::time(nullptr);
  return millis(std::max<std::int64_t>(0, static_cast<std::int64_t>(delta) * 1000));
}

http_outcome http_post(const http_request& req, const std::function<bool(std::string_view)>& on_stream) {
  curl_process& proc = process();
  const curl_library& lib = curl();
  transfer t{&req, &on_stream, {}, false};
  CURL* h = lib.easy_init();
  if (h == nullptr) {
    t.out.fail = http_outcome::failure::connect;
    t.out.error = "curl_easy_init failed";
    return t.out;
  }
  curl_slist* headers = nullptr;
  for (const auto& line : req.headers) headers = lib.slist_append(headers, line.c_str());
  char errbuf[CURL_ERROR_SIZE] = {0};

  lib.easy_setopt(h, CURLOPT_URL, req.url.c_str());
  lib.easy_setopt(h, CURLOPT_SHARE, proc.share);
  lib.easy_setopt(h, CURLOPT_NOSIGNAL, 1L);  // no SIGALRM for DNS timeouts: we are threaded
  lib.easy_setopt(h, CURLOPT_POST, 1L);
  lib.easy_setopt(h, CURLOPT_POSTFIELDS, req.body.data());
  lib.easy_setopt(h, CURLOPT_POSTFIELDSIZE_LARGE, static_cast<curl_off_t>(req.body.size()));
  lib.easy_setopt(h, CURLOPT_HTTPHEADER, headers);
  lib.easy_setopt(h, CURLOPT_ACCEPT_ENCODING, "");
  lib.easy_setopt(h, CURLOPT_ERRORBUFFER, errbuf);
  lib.easy_setopt(h, CURLOPT_HEADERFUNCTION, &on_header);
  lib.easy_setopt(h, CURLOPT_HEADERDATA, &t);
  lib.easy_setopt(h, CURLOPT_WRITEFUNCTION, &on_write);
  lib.easy_setopt(h, CURLOPT_WRITEDATA, &t);
  lib.easy_setopt(h, CURLOPT_CONNECTTIMEOUT_MS, static_cast<long>(req.limits.connect.count()));
  lib.easy_setopt(h, CURLOPT_TIMEOUT_MS, static_cast<long>(req.limits.request.count()));
  lib.easy_setopt(h, CURLOPT_TCP_KEEPALIVE, 1L);
  // A proxy from the environment must never see loopback traffic (self-hosted servers, tests).
  lib.easy_setopt(h, CURLOPT_NOPROXY, no_proxy().c_str());
  if (req.idle_timeout) {
    // curl calls this at least once a second, so an idle stall is noticed within ~1 s of the limit.
    lib.easy_setopt(h, CURLOPT_XFERINFOFUNCTION, &on_progress);
    lib.easy_setopt(h, CURLOPT_XFERINFODATA, &t);
    lib.easy_setopt(h, CURLOPT_NOPROGRESS, 0L);
  }

  const auto start = clock::now();
  const CURLcode rc = lib.easy_perform(h);
  const auto elapsed = std::chrono::duration_cast<millis>(clock::now() - start);
  lib.easy_getinfo(h, CURLINFO_RESPONSE_CODE, &t.out.status);
  long connected = 0;
  curl_off_t connect_us = 0;
  lib.easy_getinfo(h, CURLINFO_CONNECT_TIME_T, &connect_us);
  connected = connect_us > 0 ? 1 : 0;
  lib.slist_free_all(headers);
  lib.easy_cleanup(h);

  if (rc == CURLE_OK) return std::move(t.out);
  t.out.error = errbuf[0] != '\0' ? std::string(errbuf) : std::string(lib.easy_strerror(rc));
  using F = http_outcome::failure;
  switch (rc) {
    case CURLE_WRITE_ERROR:
      t.out.fail = t.stream_aborted ? F::aborted : F::broken;
      if (!t.stream_aborted) t.out.error = "reply body exceeds 64 MiB";
      break;
    case CURLE_COULDNT_RESOLVE_HOST:
    case CURLE_COULDNT_RESOLVE_PROXY:
    case CURLE_COULDNT_CONNECT:
    case CURLE_SSL_CONNECT_ERROR:
      t.out.fail = F::connect;
      break;
    case CURLE_ABORTED_BY_CALLBACK:
      t.out.fail = t.idle_expired ? F::idle_timeout : F::broken;
      break;
    case CURLE_OPERATION_TIMEDOUT:
      t.out.fail = connected || elapsed + millis(200) >= req.limits.request ? F::request_timeout : F::connect_timeout;
      break;
    default:  // reset, partial body, nothing received, HTTP/2 stream errors ...
      t.out.fail = F::broken;
      break;
  }
  return std::move(t.out);
}

}  // namespace pk::llm::detail
