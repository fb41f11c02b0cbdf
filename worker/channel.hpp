#pragma once
// The protocol channel of a harness child (the worker, the runner): JSON lines
// on a private copy of stdout. Once it exists, fd 1 points at stderr, so
// anything else printed to stdout (device printf, a candidate's host prints)
// lands in the process's log and never in the protocol.
#include <unistd.h>

#include <cstdio>
#include <string>

#include <nlohmann/json.hpp>

namespace tessera::worker {

class Channel {
public:
  Channel() {
    const int fd = ::dup(STDOUT_FILENO);
    ::dup2(STDERR_FILENO, STDOUT_FILENO);
    out_ = ::fdopen(fd, "w");
  }
  Channel(const Channel&) = delete;
  Channel& operator=(const Channel&) = delete;
  ~Channel() noexcept {
    if (out_) std::fclose(out_);
  }
  void send(const nlohmann::json& j) {
    const std::string line = j.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace) + "\n";
    std::fwrite(line.data(), 1, line.size(), out_);
    std::fflush(out_);
  }

private:
  std::FILE* out_ = nullptr;
};

}  // namespace tessera::worker
