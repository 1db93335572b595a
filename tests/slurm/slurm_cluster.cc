#include "slurm_cluster.h"

#include <fcntl.h>
#include <netinet/in.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <sstream>
#include <stdexcept>
#include <thread>

#include <fmt/format.h>

#include "agent/run/slurm/slurm.h"

namespace pk::run::test_support {
namespace fs = std::filesystem;
using namespace std::chrono_literals;

namespace {

constexpr const char* sbin = "/usr/sbin";

int free_port() {
  const int fd = ::socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in a{};
  a.sin_family = AF_INET;
  a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  socklen_t len = sizeof a;
  if (fd < 0 || ::bind(fd, reinterpret_cast<sockaddr*>(&a), sizeof a) != 0 ||
      ::getsockname(fd, reinterpret_cast<sockaddr*>(&a), &len) != 0)
    throw std::runtime_error("no free TCP port on loopback");
  ::close(fd);
  return ntohs(a.sin_port);
}

std::string short_hostname() {
  char host[256] = {};
  ::gethostname(host, sizeof host - 1);
  std::string h = host;
  return h.substr(0, h.find('.'));
}

std::string tail_of(const fs::path& file, std::size_t bytes = 3000) {
  std::ifstream in(file);
  std::string text{std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
  return text.size() > bytes ? text.substr(text.size() - bytes) : text;
}

template <class Ready>
bool poll_until(Ready ready, std::chrono::seconds limit) {
  const auto deadline = std::chrono::steady_clock::now() + limit;
  while (std::chrono::steady_clock::now() < deadline) {
    if (ready()) return true;
    std::this_thread::sleep_for(100ms);
  }
  return ready();
}

}  // namespace

std::optional<std::string> slurm_cluster::unavailable_reason() {
  if (::geteuid() != 0) return "a test Slurm needs root (slurmd starts jobs and makes device nodes)";
  for (const char* daemon : {"slurmctld", "slurmd", "munged"})
    if (::access(fmt::format("{}/{}", sbin, daemon).c_str(), X_OK) != 0)
      return fmt::format("{}/{} is missing: scripts/install-deps installs slurmctld, slurmd, slurm-client and munge",
                         sbin, daemon);
  for (const char* client : {"/usr/bin/sbatch", "/usr/bin/munge", "/usr/sbin/mungekey"})
    if (::access(client, X_OK) != 0)
      return fmt::format("{} is missing: scripts/install-deps installs slurm-client and munge", client);
  return std::nullopt;
}

slurm_cluster::slurm_cluster(const fs::path& scratch, int cpus, int gpus) : dir_(scratch) {
  const std::string host = short_hostname();
  for (const char* sub : {"munge", "state", "spool", "log", "dev"}) fs::create_directories(dir_ / sub);
  // munged insists that every directory above its socket be searchable by all.
  fs::permissions(dir_, fs::perms::owner_all | fs::perms::group_read | fs::perms::group_exec |
                            fs::perms::others_read | fs::perms::others_exec);
  fs::permissions(dir_ / "munge", fs::perms::owner_all | fs::perms::group_read | fs::perms::group_exec |
                                      fs::perms::others_read | fs::perms::others_exec);
  const fs::path key = dir_ / "munge" / "munge.key", sock = dir_ / "munge" / "munge.sock";
  slurm_command({fmt::format("{}/mungekey", sbin), "--create", "--keyfile=" + key.string()});
  fs::permissions(key, fs::perms::owner_read | fs::perms::owner_write);
  munged_ = start({fmt::format("{}/munged", sbin), "-F", "--key-file=" + key.string(), "--socket=" + sock.string(),
                   "--pid-file=" + (dir_ / "munge" / "munged.pid").string(),
                   "--seed-file=" + (dir_ / "munge" / "munged.seed").string()},
                  "munged.log");
  if (!poll_until([&] {
        check_alive(munged_, "munged");
        try {
          slurm_command({"munge", "-S", sock.string(), "-n"});
          return true;
        } catch (const std::exception&) {
          return false;
        }
      }, 20s))
    throw std::runtime_error("munged did not answer within 20 s:\n" + logs());

  // Fake GPUs: GRES needs character devices; no driver sits behind these.
  for (int i = 0; i < gpus; ++i) {
    const fs::path node = dir_ / "dev" / fmt::format("nvidia{}", i);
    if (::mknod(node.c_str(), S_IFCHR | 0666, makedev(195, i)) != 0 && errno != EEXIST)
      throw std::runtime_error(fmt::format("mknod {}: {}", node.string(), std::strerror(errno)));
  }
  std::ofstream(dir_ / "gres.conf") << fmt::format("AutoDetect=off\nNodeName={} Name=gpu File={}/dev/nvidia[0-{}]\n",
                                                   host, dir_.string(), gpus - 1);
  std::ofstream(dir_ / "slurm.conf") << fmt::format(
      R"(ClusterName=pktest
SlurmctldHost={host}(127.0.0.1)
SlurmctldPort={ctld_port}
SlurmdPort={d_port}
SlurmUser=root
AuthType=auth/munge
CredType=cred/munge
AuthInfo=socket={sock}
StateSaveLocation={dir}/state
SlurmdSpoolDir={dir}/spool
SlurmctldPidFile={dir}/slurmctld.pid
SlurmdPidFile={dir}/slurmd.pid
SlurmctldLogFile={dir}/log/slurmctld.log
SlurmdLogFile={dir}/log/slurmd.log
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
SelectType=select/cons_tres
SelectTypeParameters=CR_Core
SchedulerParameters=batch_sched_delay=0
SlurmdParameters=config_overrides
KillWait=5
MpiDefault=none
MailProg=/bin/true
ReturnToService=2
JobAcctGatherType=jobacct_gather/none
AccountingStorageType=accounting_storage/none
JobCompType=jobcomp/filetxt
JobCompLoc={dir}/log/jobcomp.txt
GresTypes=gpu
NodeName={host} NodeAddr=127.0.0.1 CPUs={cpus} Gres=gpu:{gpus} State=UNKNOWN
PartitionName=debug Nodes=ALL Default=YES MaxTime=INFINITE State=UP
)",
      fmt::arg("host", host), fmt::arg("ctld_port", free_port()), fmt::arg("d_port", free_port()),
      fmt::arg("sock", sock.string()), fmt::arg("dir", dir_.string()), fmt::arg("cpus", cpus),
      fmt::arg("gpus", gpus));
  ::setenv("SLURM_CONF", (dir_ / "slurm.conf").c_str(), 1);
  slurmctld_ = start({fmt::format("{}/slurmctld", sbin), "-D"}, "slurmctld.out");
  slurmd_ = start({fmt::format("{}/slurmd", sbin), "-D", "-N", host}, "slurmd.out");
  const bool idle = poll_until([&] {
    check_alive(slurmctld_, "slurmctld");
    check_alive(slurmd_, "slurmd");
    try {
      return command({"sinfo", "-h", "-n", host, "-o", "%t"}).find("idle") != std::string::npos;
    } catch (const std::exception&) {
      return false;
    }
  }, 30s);
  if (!idle) throw std::runtime_error("the test Slurm node did not become idle within 30 s:\n" + logs());
}

slurm_cluster::~slurm_cluster() {
  // Jobs first (their steps outlive slurmd otherwise), then the daemons, by the PIDs we started.
  try {
    std::istringstream ids(command({"squeue", "-h", "-o", "%A"}));
    std::vector<std::string> cancel = {"scancel"};
    for (std::string id; ids >> id;) cancel.push_back(id);
    if (cancel.size() > 1) command(cancel);
    wait_for_empty_queue(60s);
  } catch (const std::exception&) {
    // the controller is gone already: nothing is left to cancel
  }
  stop(slurmd_);
  stop(slurmctld_);
  stop(munged_);
}

pid_t slurm_cluster::start(const std::vector<std::string>& argv, const std::string& log) {
  const fs::path log_file = dir_ / "log" / log;
  const pid_t parent = ::getpid();
  const pid_t pid = ::fork();
  if (pid < 0) throw std::runtime_error(fmt::format("fork: {}", std::strerror(errno)));
  if (pid == 0) {
    // Dies with the test, even one killed by a timeout.
    ::prctl(PR_SET_PDEATHSIG, SIGTERM);
    if (::getppid() != parent) ::_exit(1);
    const int out = ::open(log_file.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
    const int in = ::open("/dev/null", O_RDONLY);
    ::dup2(in, 0);
    ::dup2(out, 1);
    ::dup2(out, 2);
    std::vector<char*> args;
    for (const auto& a : argv) args.push_back(const_cast<char*>(a.c_str()));
    args.push_back(nullptr);
    ::execv(args[0], args.data());
    ::_exit(127);
  }
  return pid;
}

void slurm_cluster::check_alive(pid_t pid, const std::string& name) const {
  int status = 0;
  if (::waitpid(pid, &status, WNOHANG) == pid)
    throw std::runtime_error(fmt::format("{} exited at start (status {}):\n{}", name, status, logs()));
}

void slurm_cluster::stop(pid_t& pid) const {
  if (pid <= 0) return;
  ::kill(pid, SIGTERM);
  int status = 0;
  const bool ended = poll_until([&] { return ::waitpid(pid, &status, WNOHANG) == pid; }, 5s);
  if (!ended) {
    ::kill(pid, SIGKILL);
    ::waitpid(pid, &status, 0);
  }
  pid = -1;
}

std::string slurm_cluster::command(const std::vector<std::string>& argv) const { return slurm_command(argv); }

bool slurm_cluster::wait_for_empty_queue(std::chrono::seconds limit) const {
  return poll_until([&] {
    try {
      return command({"squeue", "-h", "-o", "%i"}).empty();
    } catch (const std::exception&) {
      return false;
    }
  }, limit);
}

std::string slurm_cluster::finished_jobs() const {
  std::ifstream in(dir_ / "log" / "jobcomp.txt");
  return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
}

std::string slurm_cluster::logs() const {
  std::string text;
  for (const char* log : {"munged.log", "slurmctld.out", "slurmctld.log", "slurmd.out", "slurmd.log"})
    text += fmt::format("--- {}:\n{}\n", log, tail_of(dir_ / "log" / log));
  return text;
}

}  // namespace pk::run::test_support
