#pragma once
// `tessera serve` as a child of the bench, as a trainer's node runs it: its
// output goes to a log file (never a pipe the bench would have to drain),
// and its address comes from the "listening on http://HOST:PORT" line it
// prints once every worker is up. Destruction sends SIGTERM (the server
// drains and exits), then SIGKILL to its process group if it lingers.
#include <sys/types.h>

#include <filesystem>
#include <string>
#include <vector>

namespace tessera::bench::detail {

inline constexpr double kServeStopSeconds = 60;  // SIGTERM to SIGKILL

class ServeChild {
public:
  // Throws unavailable, with the log's tail, when the server exits or does
  // not listen within `start_timeout_s`.
  ServeChild(const std::filesystem::path& binary, const std::vector<std::string>& args,
             const std::filesystem::path& log, double start_timeout_s);
  ~ServeChild();
  ServeChild(const ServeChild&) = delete;
  ServeChild& operator=(const ServeChild&) = delete;

  const std::string& url() const { return url_; }  // "http://127.0.0.1:PORT"
  // The last `bytes` of its output.
  std::string log_tail(std::size_t bytes) const;

private:
  bool exited();  // reaps it when it has

  pid_t pid_ = -1;
  bool reaped_ = false;
  std::filesystem::path log_;
  std::string url_;
};

}  // namespace tessera::bench::detail
