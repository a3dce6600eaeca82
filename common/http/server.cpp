#include "common/http/server.hpp"

#include <atomic>
#include <boost/asio/as_tuple.hpp>
#include <boost/asio/co_spawn.hpp>
#include <boost/asio/detached.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/asio/strand.hpp>
#include <boost/asio/use_awaitable.hpp>
#include <boost/beast/core/flat_buffer.hpp>
#include <boost/beast/http.hpp>
#include <mutex>
#include <unordered_map>

#include "common/http/request_id.hpp"
#include "common/log/log.hpp"

namespace common::http {
namespace {

namespace asio = boost::asio;
namespace beast = boost::beast;
namespace bhttp = boost::beast::http;
using tcp = asio::ip::tcp;
constexpr auto kTuple = asio::as_tuple(asio::use_awaitable);

/// One connection's socket and deadline timer. Every member is touched only on the connection's strand.
struct Conn : std::enable_shared_from_this<Conn> {
    explicit Conn(tcp::socket s) : socket(std::move(s)), timer(socket.get_executor()) {}

    /// Cancels the socket's operations when `d` passes; a later arm() or disarm() voids an earlier one.
    void arm(std::chrono::milliseconds d) {
        timed_out = false;
        const std::uint64_t gen = ++generation;
        timer.expires_after(d);
        timer.async_wait([w = weak_from_this(), gen](boost::system::error_code ec) {
            auto self = w.lock();
            if (ec || !self || self->generation != gen) return;
            self->timed_out = true;
            boost::system::error_code ignored;
            self->socket.cancel(ignored);
        });
    }
    void disarm() {
        ++generation;
        timer.cancel();
    }

    tcp::socket socket;
    asio::steady_timer timer;
    std::uint64_t generation = 0;
    bool timed_out = false;
    bool idle = true;
    bool stopping = false;
};

}  // namespace

struct Server::Impl : std::enable_shared_from_this<Server::Impl> {
    Impl(asio::io_context& io, config::HostPort l, Limits lim, Handler h, ErrorRenderer e, AccessLog a)
        : ioc(io), listen(std::move(l)), limits(lim), handler(std::move(h)), errors(std::move(e)),
          access_log(std::move(a)), acceptor(asio::make_strand(io)) {}

    asio::io_context& ioc;
    config::HostPort listen;
    Limits limits;
    Handler handler;
    ErrorRenderer errors;
    AccessLog access_log;
    tcp::acceptor acceptor;
    std::atomic<bool> stopping{false};
    std::atomic<std::size_t> count{0};
    std::mutex mutex;
    std::unordered_map<Conn*, std::weak_ptr<Conn>> conns;

    asio::awaitable<bool> write(Conn& c, const Request& meta, Response& r, unsigned version, bool keep_alive) {
        bhttp::response<bhttp::string_body> res{static_cast<bhttp::status>(r.status), version};
        res.set(bhttp::field::server, "orderhub");
        res.set(bhttp::field::content_type, r.content_type);
        if (!meta.request_id.empty()) res.set("X-Request-Id", meta.request_id);
        for (const auto& [k, v] : r.headers) res.set(k, v);
        res.body() = std::move(r.body);
        res.keep_alive(keep_alive);
        res.prepare_payload();
        c.arm(limits.write_timeout);
        auto [ec, n] = co_await bhttp::async_write(c.socket, res, kTuple);
        c.disarm();
        r.body = std::move(res.body());
        co_return !ec;
    }

    asio::awaitable<void> session(std::shared_ptr<Conn> c) {
        beast::flat_buffer buffer;
        for (;;) {
            if (buffer.size() == 0) {
                // Idle between requests: wait for the first byte under the idle time-out; stop() cancels this.
                c->idle = true;
                if (c->stopping) break;
                c->arm(limits.idle_timeout);
                auto [ec] = co_await c->socket.async_wait(tcp::socket::wait_read, kTuple);
                c->disarm();
                c->idle = false;
                if (ec || c->stopping) break;
            }
            bhttp::request_parser<bhttp::string_body> parser;
            parser.header_limit(static_cast<std::uint32_t>(limits.max_header));
            parser.body_limit(limits.max_body);
            const auto started = std::chrono::steady_clock::now();
            c->arm(limits.request_timeout);
            auto [ec, n] = co_await bhttp::async_read(c->socket, buffer, parser, kTuple);
            const bool timed_out = c->timed_out;
            c->disarm();

            Request meta;
            meta.request_id = new_request_id();
            boost::system::error_code rec;
            auto ep = c->socket.remote_endpoint(rec);
            if (!rec) meta.remote = ep.address().to_string();
            {
                // The request line is known as soon as it was parsed, even when a limit stopped the rest.
                const auto& h = parser.get();
                meta.method = std::string(h.method_string());
                meta.target = std::string(h.target());
                meta.path = meta.target.substr(0, meta.target.find('?'));
            }
            if (ec) {
                Response r;
                if (timed_out) {
                    r = errors(meta.target, 408, "request_timeout",
                               "the request was not received in time (" +
                                   std::to_string(limits.request_timeout.count() / 1000) + " s)");
                } else if (ec == bhttp::error::body_limit) {
                    r = errors(meta.target, 413, "body_too_large",
                               "the body is larger than " + std::to_string(limits.max_body) + " bytes");
                } else if (ec == bhttp::error::header_limit) {
                    r = errors(meta.target, 431, "headers_too_large",
                               "the headers are larger than " + std::to_string(limits.max_header) + " bytes");
                } else if (ec == bhttp::error::end_of_stream || ec == asio::error::eof ||
                           ec == asio::error::connection_reset || ec == asio::error::operation_aborted ||
                           ec == bhttp::error::partial_message) {
                    break;  // the peer went away, or stop(): nothing to answer
                } else {
                    r = errors(meta.target, 400, "bad_request", "malformed HTTP request");
                }
                r.close = true;
                co_await write(*c, meta, r, 11, false);
                if (access_log)
                    access_log(meta, r, std::chrono::duration_cast<std::chrono::microseconds>(
                                            std::chrono::steady_clock::now() - started));
                break;
            }

            auto& msg = parser.get();
            const unsigned version = msg.version();
            const bool client_keep_alive = msg.keep_alive();
            for (const auto& f : msg) meta.headers.emplace_back(std::string(f.name_string()), std::string(f.value()));
            Request req = meta;
            req.body = std::move(msg.body());

            Response r;
            try {
                r = co_await handler(std::move(req));
            } catch (const std::exception& e) {
                log::error("handler failed", {{"request_id", meta.request_id}, {"error", e.what()}});
                r = errors(meta.target, 500, "internal_error", "internal error");
            }
            const bool keep_alive = client_keep_alive && !r.close && !stopping.load();
            const bool ok = co_await write(*c, meta, r, version, keep_alive);
            if (access_log)
                access_log(meta, r, std::chrono::duration_cast<std::chrono::microseconds>(
                                        std::chrono::steady_clock::now() - started));
            if (!ok || !keep_alive) break;
        }
        boost::system::error_code ignored;
        c->socket.shutdown(tcp::socket::shutdown_send, ignored);
        c->socket.close(ignored);
    }

    asio::awaitable<void> refuse(tcp::socket socket) {
        // Over the connection bound: answer 503 at once and close, never queue unboundedly.
        auto c = std::make_shared<Conn>(std::move(socket));
        Response r = errors("", 503, "too_many_connections", "the server is at its connection limit");
        r.headers.emplace_back("Retry-After", "1");
        co_await write(*c, Request{}, r, 11, false);
        boost::system::error_code ignored;
        c->socket.close(ignored);
    }

    asio::awaitable<void> accept_loop() {
        auto self = shared_from_this();
        for (;;) {
            auto [ec, socket] = co_await acceptor.async_accept(asio::make_strand(ioc), kTuple);
            if (stopping.load() || !acceptor.is_open()) break;
            if (ec) {
                // Out of descriptors and similar: pause instead of spinning.
                log::warn("accept failed", {{"error", ec.message()}});
                asio::steady_timer t(acceptor.get_executor(), std::chrono::milliseconds(50));
                co_await t.async_wait(kTuple);
                continue;
            }
            boost::system::error_code ignored;
            socket.set_option(tcp::no_delay(true), ignored);
            if (count.load() >= limits.max_connections) {
                auto ex = socket.get_executor();
                asio::co_spawn(ex, self->refuse(std::move(socket)), asio::detached);
                continue;
            }
            auto c = std::make_shared<Conn>(std::move(socket));
            count.fetch_add(1);
            {
                std::lock_guard lock(mutex);
                conns[c.get()] = c;
            }
            asio::co_spawn(c->socket.get_executor(), self->session(c), [self, raw = c.get()](std::exception_ptr e) {
                if (e) {
                    try {
                        std::rethrow_exception(e);
                    } catch (const std::exception& ex) {
                        log::error("connection failed", {{"error", ex.what()}});
                    }
                }
                std::lock_guard lock(self->mutex);
                self->conns.erase(raw);
                self->count.fetch_sub(1);
            });
        }
    }
};

Server::Server(asio::io_context& ioc, const config::HostPort& listen, Limits limits, Handler handler,
               ErrorRenderer errors, AccessLog access_log)
    : impl_(std::make_shared<Impl>(ioc, listen, limits, std::move(handler), std::move(errors),
                                   std::move(access_log))) {}

Server::~Server() = default;

void Server::start() {
    auto& a = impl_->acceptor;
    tcp::endpoint ep;
    boost::system::error_code ec;
    auto address = asio::ip::make_address(impl_->listen.host == "localhost" ? "127.0.0.1" : impl_->listen.host, ec);
    if (ec) throw std::system_error(ec, "listen address '" + impl_->listen.host + "' is not an IP address");
    ep = tcp::endpoint(address, impl_->listen.port);
    a.open(ep.protocol());
    a.set_option(tcp::acceptor::reuse_address(true));
    a.bind(ep, ec);
    if (ec) throw std::system_error(ec, "cannot listen on " + impl_->listen.host + ":" + std::to_string(impl_->listen.port));
    a.listen(asio::socket_base::max_listen_connections);
    asio::co_spawn(a.get_executor(), impl_->accept_loop(), asio::detached);
}

std::uint16_t Server::port() const {
    boost::system::error_code ec;
    auto ep = impl_->acceptor.local_endpoint(ec);
    return ec ? 0 : ep.port();
}

void Server::stop() {
    auto impl = impl_;
    impl->stopping.store(true);
    asio::post(impl->acceptor.get_executor(), [impl] {
        boost::system::error_code ignored;
        impl->acceptor.close(ignored);
    });
    std::lock_guard lock(impl->mutex);
    for (auto& [raw, weak] : impl->conns) {
        if (auto c = weak.lock()) {
            asio::post(c->socket.get_executor(), [c] {
                c->stopping = true;
                if (c->idle) {
                    boost::system::error_code ignored;
                    c->socket.cancel(ignored);
                }
            });
        }
    }
}

std::size_t Server::connections() const { return impl_->count.load(); }

}  // namespace common::http
