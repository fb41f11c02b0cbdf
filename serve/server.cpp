#include "serve/server.hpp"

#include <csignal>
#include <memory>
#include <thread>
#include <vector>

#include <boost/asio/io_context.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/post.hpp>
#include <boost/asio/signal_set.hpp>
#include <boost/asio/strand.hpp>
#include <spdlog/spdlog.h>

#include "core/error.hpp"
#include "serve/detail/connection.hpp"

namespace tessera::serve {

namespace net = boost::asio;
using tcp = net::ip::tcp;

struct HttpServer::Impl {
  Impl(Service& s, const ServeOptions& o)
      : service(s), options(o), ioc(std::make_shared<net::io_context>()), acceptor(*ioc), signals(*ioc) {}

  void accept() {
    acceptor.async_accept(net::make_strand(*ioc), [this](boost::system::error_code ec, tcp::socket socket) {
      if (!ec) detail::start_connection(std::move(socket), service, options, ioc);
      if (acceptor.is_open()) accept();
    });
  }

  // SIGTERM/SIGINT: drain on a thread of its own (it waits), then stop.
  void on_signal(int signo) {
    if (drain_thread.joinable()) return;
    spdlog::info("signal {}: draining ({} requests in flight; new ones get 503)", signo, service.in_flight());
    service.begin_drain();
    drain_thread = std::thread([this] {
      const bool clean = service.wait_drained(std::chrono::duration<double>(options.drain_s));
      if (clean) spdlog::info("drained; stopping");
      else spdlog::warn("drain timed out after {:.0f} s with {} requests in flight; stopping", options.drain_s,
                        service.in_flight());
      stop();
    });
  }

  void stop() {
    net::post(*ioc, [this] {
      boost::system::error_code ec;
      acceptor.close(ec);
      signals.cancel(ec);
      ioc->stop();
    });
  }

  Service& service;
  ServeOptions options;
  // Shared with the replies still on their way (connection.cpp): one that
  // comes from the service's threads after the server is gone is posted to
  // this io_context, stopped, which drops it, instead of a destroyed one.
  std::shared_ptr<net::io_context> ioc;
  tcp::acceptor acceptor;
  net::signal_set signals;
  std::thread drain_thread;
};

HttpServer::HttpServer(Service& service, const ServeOptions& options)
    : impl_(std::make_unique<Impl>(service, options)) {
  boost::system::error_code ec;
  const auto address = net::ip::make_address(options.host, ec);
  if (ec) fail_bad_input("--host '" + options.host + "' is not an IP address: " + ec.message());
  const tcp::endpoint ep(address, static_cast<unsigned short>(options.port));
  auto& a = impl_->acceptor;
  a.open(ep.protocol(), ec);
  if (!ec) a.set_option(net::socket_base::reuse_address(true), ec);
  if (!ec) a.bind(ep, ec);
  if (!ec) a.listen(net::socket_base::max_listen_connections, ec);
  if (ec)
    throw Error(Error::Kind::unavailable,
                "cannot listen on " + options.host + ":" + std::to_string(options.port) + ": " + ec.message());
}

HttpServer::~HttpServer() {
  if (impl_->drain_thread.joinable()) impl_->drain_thread.join();
}

unsigned short HttpServer::port() const { return impl_->acceptor.local_endpoint().port(); }

void HttpServer::run(bool handle_signals) {
  if (handle_signals) {
    impl_->signals.add(SIGTERM);
    impl_->signals.add(SIGINT);
    impl_->signals.async_wait([this](boost::system::error_code ec, int signo) {
      if (!ec) impl_->on_signal(signo);
    });
  }
  impl_->accept();
  std::vector<std::thread> threads;
  for (int i = 1; i < std::max(1, impl_->options.io_threads); ++i) threads.emplace_back([this] { impl_->ioc->run(); });
  impl_->ioc->run();
  for (auto& t : threads) t.join();
}

void HttpServer::stop() { impl_->stop(); }

}  // namespace tessera::serve
