#pragma once
// The HTTP/1.1 front of the service (Boost.Beast): keep-alive connections,
// request size limits, a read timeout against slow clients, and SIGTERM
// handling: drain (new requests get 503, requests in flight finish), then
// stop.
#include <memory>

#include "serve/options.hpp"
#include "serve/service.hpp"

namespace tessera::serve {

class HttpServer {
public:
  // Binds and listens now; throws Error(unavailable) when the address
  // cannot be bound.
  HttpServer(Service& service, const ServeOptions& options);
  ~HttpServer();
  HttpServer(const HttpServer&) = delete;
  HttpServer& operator=(const HttpServer&) = delete;

  unsigned short port() const;  // the bound port (useful with port 0)
  // Serves on options.io_threads threads until stop(). With
  // `handle_signals`, SIGTERM or SIGINT starts a drain: the service answers
  // new requests 503, the ones in flight finish (up to options.drain_s),
  // then the server stops.
  void run(bool handle_signals = true);
  void stop();  // thread-safe

private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace tessera::serve
