#include "agent/run/slurm/slurm.h"

#include <unistd.h>

#include <fstream>
#include <sstream>

#include <fmt/format.h>
#include <fmt/ranges.h>
#include <nlohmann/json.hpp>

#include "agent/run/atomic_file.h"
#include "sandbox/process.h"

extern char** environ;

namespace pk::run {
namespace fs = std::filesystem;
using json = nlohmann::json;

namespace {

std::map<std::string, std::string> own_environment() {
  std::map<std::string, std::string> env;
  for (char** e = environ; *e; ++e) {
    const std::string kv = *e;
    const auto eq = kv.find('=');
    if (eq != std::string::npos) env.emplace(kv.substr(0, eq), kv.substr(eq + 1));
  }
  return env;
}

std::string trimmed(std::string s) {
  while (!s.empty() && (s.back() == '\n' || s.back() == ' ' || s.back() == '\r')) s.pop_back();
  return s;
}

}  // namespace

std::string slurm_command(const std::vector<std::string>& argv) {
  sandbox::process_spec spec;
  spec.argv = argv;
  spec.env = own_environment();
  spec.timeout = std::chrono::seconds(120);  // a controller that does not answer in 2 minutes is down
  sandbox::process_result r;
  try {
    r = sandbox::run_process(spec);
  } catch (const sandbox::process_error& e) {
    throw slurm_error(fmt::format("{}: cannot run it ({}); is this a Slurm login node?", argv.at(0), e.what()));
  }
  if (!r.ok())
    throw slurm_error(fmt::format("`{}` failed ({}): {}", fmt::join(argv, " "),
                                  r.timed_out ? "no answer in 120 s" : fmt::format("exit {}", r.shell_status()),
                                  trimmed(r.err.text + r.out.text)));
  return r.out.text;
}

std::string sbatch(const std::vector<std::string>& options, const fs::path& script) {
  std::vector<std::string> argv = {"sbatch", "--parsable"};
  argv.insert(argv.end(), options.begin(), options.end());
  argv.push_back(script.string());
  const std::string out = trimmed(slurm_command(argv));
  // --parsable prints "<job id>" or "<job id>;<cluster>".
  const std::string id = out.substr(0, out.find(';'));
  if (id.empty() || id.find_first_not_of("0123456789") != std::string::npos)
    throw slurm_error(fmt::format("sbatch printed '{}', not a job id", out));
  return id;
}

std::optional<std::map<std::string, std::string>> queued_jobs(const std::vector<std::string>& ids) {
  std::map<std::string, std::string> live;
  if (ids.empty()) return live;
  std::string out;
  try {
    // -r: one line per array task; %i is "<array>_<task>" for tasks, "<id>" otherwise.
    out = slurm_command({"squeue", "-h", "-r", "-o", "%i %T", "-j", fmt::format("{}", fmt::join(ids, ","))});
  } catch (const slurm_error& e) {
    // squeue refuses a list whose jobs have all left the controller's memory ("Invalid job id").
    if (std::string(e.what()).find("Invalid job id") != std::string::npos) return live;
    return std::nullopt;
  }
  std::istringstream lines(out);
  std::string id, state;
  while (lines >> id >> state) live[id] = state;
  return live;
}

std::optional<job_info> show_job(const std::string& id) {
  std::string out;
  try {
    out = slurm_command({"scontrol", "-o", "show", "job", id});
  } catch (const slurm_error&) {
    return std::nullopt;
  }
  job_info info;
  std::istringstream words(out);
  std::string w;
  while (words >> w) {
    const auto eq = w.find('=');
    if (eq == std::string::npos) continue;
    const std::string key = w.substr(0, eq), value = w.substr(eq + 1);
    if (key == "JobState") info.state = value;
    else if (key == "Reason") info.reason = value;
    else if (key == "ExitCode") info.exit_code = value;
  }
  if (info.state.empty()) return std::nullopt;
  return info;
}

std::string slurm_record::job_of(int shard) const {
  for (auto s = submissions.rbegin(); s != submissions.rend(); ++s)
    for (int i : s->shards)
      if (i == shard) return fmt::format("{}_{}", s->array_job, shard);
  return "";
}

fs::path slurm_dir(const fs::path& out) { return out / "slurm"; }

std::optional<slurm_record> read_slurm_record(const fs::path& out) {
  const fs::path file = slurm_dir(out) / "slurm.json";
  std::ifstream in(file);
  if (!in) return std::nullopt;
  const json j = json::parse(in, nullptr, false);
  slurm_record r;
  try {
    if (j.is_discarded() || j.value("format", "") != "pkagent-slurm") throw std::invalid_argument("not a record");
    r.shards = j.at("shards").get<int>();
    for (const json& s : j.at("submissions"))
      r.submissions.push_back({s.at("array_job").get<std::string>(), s.at("shards").get<std::vector<int>>(),
                               s.at("merge_job").get<std::string>(), s.at("submitted").get<double>()});
  } catch (const std::exception& e) {
    throw std::invalid_argument(fmt::format("{}: not pkagent's Slurm record ({}); move it away to submit afresh",
                                            file.string(), e.what()));
  }
  return r;
}

void write_slurm_record(const fs::path& out, const slurm_record& r) {
  json subs = json::array();
  for (const auto& s : r.submissions)
    subs.push_back({{"array_job", s.array_job}, {"shards", s.shards}, {"merge_job", s.merge_job},
                    {"submitted", s.submitted}});
  const json j = {{"format", "pkagent-slurm"}, {"version", 1}, {"shards", r.shards}, {"submissions", subs}};
  fs::create_directories(slurm_dir(out));
  write_file_atomically(slurm_dir(out) / "slurm.json", j.dump(2) + "\n");
}

}  // namespace pk::run
