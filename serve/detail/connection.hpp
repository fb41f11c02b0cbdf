#pragma once
// One client connection: read a request (bounded in size and time), hand it
// to the service, write its reply when it comes (from any thread), repeat
// while the client keeps the connection alive.
#include <memory>

#include <boost/asio/ip/tcp.hpp>

#include "serve/options.hpp"
#include "serve/service.hpp"

namespace tessera::serve::detail {

void start_connection(boost::asio::ip::tcp::socket socket, Service& service, const ServeOptions& options);

}  // namespace tessera::serve::detail
