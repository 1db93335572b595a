#include "fake_provider.h"

#include <chrono>
#include <stdexcept>
#include <string>

#include <boost/process.hpp>
#include <curl/curl.h>

#include "config/paths.h"

namespace bp = boost::process;

namespace pk::testkit {
namespace {

size_t collect(char* data, size_t size, size_t n, void* out) {
  static_cast<std::string*>(out)->append(data, size * n);
  return size * n;
}

// A small blocking request to the control endpoints; the client under test is not used here
// so that a bug in it cannot hide itself.
nlohmann::json control(int port, const std::string& path, const std::string* post_body) {
  CURL* h = curl_easy_init();
  std::string url = "http://127.0.0.1:" + std::to_string(port) + path;
  std::string out;
  curl_slist* headers = curl_slist_append(nullptr, "Content-Type: application/json");
  curl_easy_setopt(h, CURLOPT_URL, url.c_str());
  curl_easy_setopt(h, CURLOPT_WRITEFUNCTION, &collect);
  curl_easy_setopt(h, CURLOPT_WRITEDATA, &out);
  curl_easy_setopt(h, CURLOPT_TIMEOUT, 30L);
  curl_easy_setopt(h, CURLOPT_NOPROXY, "*");  // loopback only, whatever the environment says
  curl_easy_setopt(h, CURLOPT_HTTPHEADER, headers);
  if (post_body != nullptr) curl_easy_setopt(h, CURLOPT_POSTFIELDS, post_body->c_str());
  const CURLcode rc = curl_easy_perform(h);
  long status = 0;
  curl_easy_getinfo(h, CURLINFO_RESPONSE_CODE, &status);
  curl_slist_free_all(headers);
  curl_easy_cleanup(h);
  if (rc != CURLE_OK) throw std::runtime_error("fake provider " + path + ": " + curl_easy_strerror(rc));
  if (status != 200) throw std::runtime_error("fake provider " + path + ": HTTP " + std::to_string(status) + ": " + out);
  return nlohmann::json::parse(out);
}

}  // namespace

struct fake_provider::process {
  bp::opstream in;
  bp::ipstream out;
  bp::child child;
};

fake_provider::fake_provider(const nlohmann::json& script) : proc_(std::make_unique<process>()) {
  // env(1) searches PATH when python() is a bare name (Boost.Process's search_path would need
  // Boost.Filesystem, which the GPU host lacks).
  proc_->child = bp::child(bp::exe = "/usr/bin/env",
                           bp::args = {pk::config::python(), PKAGENT_FAKE_PROVIDER, "--exit-on-stdin-eof"},
                           bp::std_in < proc_->in, bp::std_out > proc_->out);
  std::string line;
  if (!std::getline(proc_->out, line) || !line.starts_with("PORT "))
    throw std::runtime_error("fake provider did not start (first line: '" + line + "')");
  port_ = std::stoi(line.substr(5));
  load(script);
}

fake_provider::~fake_provider() {
  proc_->in.pipe().close();  // the server exits on end of input
  std::error_code ec;
  if (!proc_->child.wait_for(std::chrono::seconds(5), ec)) proc_->child.terminate(ec);
}

std::string fake_provider::base_url() const { return "http://127.0.0.1:" + std::to_string(port_) + "/v1"; }

void fake_provider::load(const nlohmann::json& script) {
  const std::string body = script.dump();
  control(port_, "/_fake/script", &body);
}

nlohmann::json fake_provider::requests() const { return control(port_, "/_fake/requests", nullptr)["requests"]; }

std::string fake_provider::sha256_hex(const std::string& text) const {
  const std::string body = nlohmann::json{{"text", text}}.dump();
  return control(port_, "/_fake/sha256", &body)["sha256"];
}

}  // namespace pk::testkit
