#pragma once

// The connections of common/http/server.cpp (internal to it: Beast and Asio templates, included nowhere else): one
// connection's deadline timer and state, its plain or TLS stream, and the StreamWriter of a streamed response.

#include <boost/asio/as_tuple.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/post.hpp>
#include <boost/asio/ssl/context.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/asio/use_awaitable.hpp>
#include <boost/asio/write.hpp>
#include <boost/beast/ssl/ssl_stream.hpp>
#include <chrono>
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>

#include "common/http/message.hpp"

namespace common::http::detail {

namespace asio = boost::asio;
namespace beast = boost::beast;
using tcp = asio::ip::tcp;
inline constexpr auto kConnTuple = asio::as_tuple(asio::use_awaitable);

namespace ssl = boost::asio::ssl;
using TlsStream = beast::ssl_stream<tcp::socket>;
// A TLS connection's close_notify exchange is bounded tighter than a write: the peer may never answer it.
inline constexpr std::chrono::milliseconds kTlsShutdownTimeout{1000};

/// One connection's deadline timer and state; the stream lives in the derived type. Every member is touched only
/// on the connection's strand.
struct Conn : std::enable_shared_from_this<Conn> {
    explicit Conn(const tcp::socket::executor_type& ex) : timer(ex) {}
    virtual ~Conn() = default;
    Conn(const Conn&) = delete;
    Conn& operator=(const Conn&) = delete;

    /// The TCP socket under the stream.
    virtual tcp::socket& socket() = 0;

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
            self->socket().cancel(ignored);
        });
    }
    void disarm() {
        ++generation;
        timer.cancel();
    }

    asio::steady_timer timer;
    std::uint64_t generation = 0;
    bool timed_out = false;
    bool idle = true;
    bool stopping = false;
    bool holding = false;                  ///< a refusal past the budget waits on `timer` (Limits::refusal_delay)
    std::string remote;                    ///< the peer's address, once known
    std::optional<double> refusal_credit;  ///< refusals answered at once from now (see pace())
    std::chrono::steady_clock::time_point credit_at{};  ///< when refusal_credit was last brought up to date
    std::function<void()> end_stream;                   ///< set while a streamed response is being written
};

/// A plain HTTP connection.
struct PlainConn final : Conn {
    explicit PlainConn(tcp::socket s) : Conn(s.get_executor()), stream(std::move(s)) {}
    tcp::socket& socket() override { return stream; }
    tcp::socket stream;
};

/// A TLS connection; it keeps the context it was accepted with, whatever reload_tls() does later.
struct TlsConn final : Conn {
    TlsConn(tcp::socket s, std::shared_ptr<ssl::context> c)
        : Conn(s.get_executor()), ctx(std::move(c)), stream(std::move(s), *ctx) {}
    tcp::socket& socket() override { return stream.next_layer(); }
    std::shared_ptr<ssl::context> ctx;  // declared before the stream, which refers to it
    TlsStream stream;
};

/// The StreamWriter of one connection. Everything but wake() runs on the connection's strand.
template <class C>
struct ConnStream final : StreamWriter, std::enable_shared_from_this<ConnStream<C>> {
    ConnStream(std::shared_ptr<C> c, std::chrono::milliseconds wt)
        : conn(std::move(c)), timer(conn->socket().get_executor()), write_timeout(wt) {}

    asio::awaitable<bool> write(std::string chunk) override {
        if (ended) co_return false;
        conn->arm(write_timeout);
        auto [ec, n] = co_await asio::async_write(conn->stream, asio::buffer(chunk), kConnTuple);
        conn->disarm();
        if (ec) ended = true;
        co_return !ended;
    }

    asio::awaitable<bool> wait(std::chrono::milliseconds d) override {
        if (!ended && !woken) {
            timer.expires_after(d);
            co_await timer.async_wait(kConnTuple);
        }
        woken = false;
        co_return !ended;
    }

    void wake() override {
        asio::post(timer.get_executor(), [w = this->weak_from_this()] {
            if (auto s = w.lock()) {
                s->woken = true;
                s->timer.cancel();
            }
        });
    }

    /// The peer closed, or the server stops: the stream function sees false from its next wait() or write().
    void end() {
        ended = true;
        timer.cancel();
    }

    std::shared_ptr<C> conn;
    asio::steady_timer timer;
    std::chrono::milliseconds write_timeout;
    bool ended = false;
    bool woken = false;
};

}  // namespace common::http::detail
