#include "serve/detail/connection.hpp"

#include <algorithm>
#include <cctype>
#include <chrono>
#include <optional>

#include <boost/asio/dispatch.hpp>
#include <boost/asio/post.hpp>
#include <boost/beast/core.hpp>
#include <boost/beast/http.hpp>
#include <nlohmann/json.hpp>

namespace tessera::serve::detail {

namespace {
namespace beast = boost::beast;
namespace http = beast::http;
namespace net = boost::asio;
using tcp = net::ip::tcp;

std::string lower(beast::string_view s) {
  std::string out(s);
  std::transform(out.begin(), out.end(), out.begin(), [](unsigned char c) { return char(std::tolower(c)); });
  return out;
}

class Connection : public std::enable_shared_from_this<Connection> {
public:
  Connection(tcp::socket socket, Service& service, const ServeOptions& options, std::weak_ptr<net::io_context> ioc)
      : stream_(std::move(socket)), service_(service), options_(options), ioc_(std::move(ioc)) {}

  void start() {
    net::dispatch(stream_.get_executor(), [self = shared_from_this()] { self->read_header(); });
  }

private:
  std::chrono::steady_clock::duration io_timeout() const {
    return std::chrono::duration_cast<std::chrono::steady_clock::duration>(
        std::chrono::duration<double>(options_.read_timeout_s));
  }

  void read_header() {
    parser_.emplace();
    parser_->header_limit(std::uint32_t(kMaxHeaderBytes));
    parser_->body_limit(options_.max_body_bytes);
    stream_.expires_after(io_timeout());
    http::async_read_header(stream_, buffer_, *parser_,
                            [self = shared_from_this()](beast::error_code ec, std::size_t) { self->on_header(ec); });
  }

  void on_header(beast::error_code ec) {
    if (ec) return on_read_error(ec);
    // curl sends "Expect: 100-continue" for bodies over 1 KiB and waits for it.
    if (beast::iequals(parser_->get()[http::field::expect], "100-continue")) {
      auto cont = std::make_shared<http::response<http::empty_body>>(http::status::continue_, parser_->get().version());
      http::async_write(stream_, *cont, [self = shared_from_this(), cont](beast::error_code wec, std::size_t) {
        if (wec) return self->close();
        self->read_body();
      });
      return;
    }
    read_body();
  }

  void read_body() {
    http::async_read(stream_, buffer_, *parser_,
                     [self = shared_from_this()](beast::error_code ec, std::size_t) { self->on_request(ec); });
  }

  void on_read_error(beast::error_code ec) {
    if (ec == http::error::body_limit)
      return write_error(413, "payload_too_large",
                         "the request body is larger than the server's limit of " +
                             std::to_string(options_.max_body_bytes) + " bytes");
    if (ec == http::error::header_limit) return write_error(431, "headers_too_large", "the request headers are too large");
    if (ec == http::error::end_of_stream || ec == net::error::eof || ec == beast::error::timeout ||
        ec == net::error::operation_aborted || ec == net::error::connection_reset)
      return close();
    write_error(400, "bad_request", "malformed HTTP request: " + ec.message());
  }

  void write_error(int status, const std::string& type, const std::string& message) {
    HttpResponse r;
    r.status = status;
    r.body = nlohmann::json{{"error", {{"type", type}, {"message", message}}}}.dump();
    r.close = true;
    keep_alive_ = false;
    write(std::move(r));
  }

  void on_request(beast::error_code ec) {
    if (ec) return on_read_error(ec);
    stream_.expires_never();  // the answer may take as long as the request's deadline
    auto req = parser_->release();
    keep_alive_ = req.keep_alive();
    version_ = req.version();
    HttpRequest r;
    r.method = std::string(req.method_string());
    r.target = std::string(req.target());
    for (const auto& f : req) r.headers[lower(f.name_string())] = std::string(f.value());
    r.body = std::move(req.body());
    // The reply comes from the service's threads, maybe after the server is
    // gone, and the service may keep it (its Call) a while after it ran. Its
    // hold on this connection is released before its hold on the io_context,
    // so the socket never outlives its io_context, and a late reply is posted
    // to a stopped io_context, which drops it, never to a destroyed one.
    struct Hold {
      std::shared_ptr<net::io_context> ioc;  // declared first: released last
      std::shared_ptr<Connection> self;
    };
    auto hold = std::make_shared<Hold>(Hold{ioc_.lock(), shared_from_this()});
    service_.handle(std::move(r), [hold](HttpResponse resp) {
      net::post(hold->self->stream_.get_executor(),
                [self = hold->self, resp = std::move(resp)]() mutable { self->write(std::move(resp)); });
    });
  }

  void write(HttpResponse r) {
    auto res = std::make_shared<http::response<http::string_body>>(static_cast<http::status>(r.status), version_);
    res->set(http::field::server, "tessera");
    res->set(http::field::content_type, r.content_type);
    for (const auto& [k, v] : r.headers) res->set(k, v);
    res->body() = std::move(r.body);
    res->keep_alive(keep_alive_ && !r.close);
    res->prepare_payload();
    stream_.expires_after(io_timeout());
    http::async_write(stream_, *res, [self = shared_from_this(), res](beast::error_code ec, std::size_t) {
      if (ec || !res->keep_alive()) return self->close();
      self->read_header();
    });
  }

  void close() {
    beast::error_code ec;
    stream_.socket().shutdown(tcp::socket::shutdown_send, ec);
  }

  beast::tcp_stream stream_;
  beast::flat_buffer buffer_;
  std::optional<http::request_parser<http::string_body>> parser_;
  Service& service_;
  const ServeOptions options_;  // a copy: a connection a late reply holds may outlive the server's
  std::weak_ptr<net::io_context> ioc_;  // weak: a queued handler holding this must not keep it
  bool keep_alive_ = true;
  unsigned version_ = 11;
};
}  // namespace

void start_connection(tcp::socket socket, Service& service, const ServeOptions& options,
                      std::shared_ptr<net::io_context> ioc) {
  std::make_shared<Connection>(std::move(socket), service, options, std::move(ioc))->start();
}

}  // namespace tessera::serve::detail
