// Starts tests/fake_provider/fake_provider.py for a test and talks to its control endpoints.
//
//   pk::testkit::fake_provider fake;                  // a server on 127.0.0.1, a free port
//   fake.load(R"({"replies": [{"text": "hi"}]})"_json);
//   cfg.base_url = fake.base_url();                   // "http://127.0.0.1:PORT/v1"
//   ... run the client ...
//   nlohmann::json reqs = fake.requests();            // what the server received
//
// The server stops when this object is destroyed (and by itself if the test process dies).
#pragma once

#include <memory>
#include <string>

#include <nlohmann/json.hpp>

namespace pk::testkit {

class fake_provider {
 public:
  /// Launches the server with `script` (a JSON document of replies, see README.md) loaded.
  explicit fake_provider(const nlohmann::json& script = {{"replies", nlohmann::json::array()}});
  ~fake_provider();
  fake_provider(const fake_provider&) = delete;
  fake_provider& operator=(const fake_provider&) = delete;

  int port() const { return port_; }
  /// "http://127.0.0.1:PORT/v1", the base URL to give a model_config.
  std::string base_url() const;
  /// Replaces the script; also clears the recorded requests. Throws on a bad script.
  void load(const nlohmann::json& script);
  /// The requests received since the last load(), oldest first: each has "path", "protocol"
  /// ("chat" | "responses" | "anthropic"), "body" (the parsed JSON), "headers" (lower-case names,
  /// without credentials) and "auth" {"scheme": "bearer" | "x-api-key" | null, "sha256": hex}.
  nlohmann::json requests() const;
  /// sha256 of `text` in hex (computed by the server), to compare with auth.sha256: the key
  /// itself is never recorded.
  std::string sha256_hex(const std::string& text) const;

 private:
  struct process;
  std::unique_ptr<process> proc_;
  int port_ = 0;
};

}  // namespace pk::testkit
