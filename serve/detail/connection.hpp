#pragma once
// One client connection: read a request (bounded in size and time), hand it
// to the service, write its reply when it comes (from any thread), repeat
// while the client keeps the connection alive.
#include <memory>

#include <boost/asio/io_context.hpp>
#include <boost/asio/ip/tcp.hpp>

#include "serve/options.hpp"
#include "serve/service.hpp"

namespace tessera::serve::detail {

// `ioc` is the server's io_context, the socket's: a reply that comes after
// the server is gone keeps it (stopped) until the connection is released.
void start_connection(boost::asio::ip::tcp::socket socket, Service& service, const ServeOptions& options,
                      std::shared_ptr<boost::asio::io_context> ioc);

}  // namespace tessera::serve::detail
