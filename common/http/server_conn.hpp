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

#include "common/http/drain_aware_socket.hpp"
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
/// on the connection's executor (its strand, or the one network thread).
struct Conn : std::enable_shared_from_this<Conn> {
    explicit Conn(const tcp::socket::executor_type& ex) : timer(ex), pause(ex) {}
    virtual ~Conn() = default;
    Conn(const Conn&) = delete;
    Conn& operator=(const Conn&) = delete;

    /// The TCP socket under the stream.
    virtual tcp::socket& socket() = 0;

    using Clock = std::chrono::steady_clock;

    /// Cancels the socket's operations when `d` passes; a later arm() or disarm() voids an earlier one.
    ///
    /// A request arms and disarms four deadlines (waiting for it, reading it, its handler, writing the answer).
    /// Restarting the timer for each cost a timer operation, a cancellation and a completion per phase on the
    /// network thread, so arm() and disarm() only move `deadline`. The timer, once waiting, wakes at most `step`
    /// later (the shortest of the server's own time-outs, so that a phase's deadline is never before the wake-up)
    /// and then times the connection out, waits again for what is left of the deadline, or, disarmed, stops until
    /// the next arm(). Only a deadline earlier than the wake-up (a TLS close_notify's 1 s) restarts the wait.
    void arm(std::chrono::milliseconds d) { arm(d, Clock::now()); }
    /// arm() from `now`, a time just read (a clock read less per phase).
    void arm(std::chrono::milliseconds d, Clock::time_point now) {
        timed_out = false;
        deadline = now + d;
        if (!waiting || wake_at > deadline) wait_until(std::min(deadline, now + step));
    }
    void disarm() { deadline = Clock::time_point::max(); }

    asio::steady_timer timer;  ///< the deadlines' (arm, disarm)
    asio::steady_timer pause;  ///< a refusal past the budget waits here (Limits::refusal_delay)
    std::chrono::milliseconds step{1000};
    Clock::time_point deadline = Clock::time_point::max();
    Clock::time_point wake_at{};  ///< when `timer` ends its wait, while `waiting`
    bool waiting = false;
    std::uint64_t generation = 0;  ///< of the timer's wait: an earlier wait's completion is ignored
    /// What the session keeps of its current request for the answer and the access log: the request line and ids,
    /// without headers or body. Kept here, its strings' room serves the next request on the connection: the
    /// handler's request takes freshly allocated ones, and these are copied from it without allocating.
    Request meta;
    /// While the session awaits its handler: the request (`meta`). Its deadline
    /// passing then calls on_handler_timeout, which answers 503 without the handler; the session, once its
    /// handler returns, finds handler_timed_out and leaves the connection to that answer.
    const Request* handling = nullptr;
    Clock::time_point handling_started{};
    bool handler_timed_out = false;
    std::function<void(Conn&)> on_handler_timeout;  ///< set once per connection by the server
    bool timed_out = false;
    bool idle = true;
    bool stopping = false;
    bool holding = false;                               ///< a refusal past the budget waits on `pause`
    std::string remote;                                 ///< the peer's address, once known
    std::optional<double> refusal_credit;               ///< refusals answered at once from now (see pace())
    std::chrono::steady_clock::time_point credit_at{};  ///< when refusal_credit was last brought up to date
    std::function<void()> end_stream;                   ///< set while a streamed response is being written

private:
    void wait_until(Clock::time_point at) {
        waiting = true;
        wake_at = at;
        const std::uint64_t gen = ++generation;
        timer.expires_at(at);  // ends a wait in progress, whose completion then carries an old generation
        timer.async_wait([w = weak_from_this(), gen](boost::system::error_code ec) {
            auto self = w.lock();
            if (!self || self->generation != gen) return;
            self->waiting = false;
            if (!ec) self->woke();
        });
    }
    void woke() {
        if (deadline == Clock::time_point::max()) return;  // disarmed: the next arm() starts a wait
        const auto now = Clock::now();
        if (now < deadline) {
            wait_until(std::min(deadline, now + step));
            return;
        }
        deadline = Clock::time_point::max();
        timed_out = true;
        boost::system::error_code ignored;
        socket().cancel(ignored);
        if (handling != nullptr && on_handler_timeout) {
            handler_timed_out = true;
            on_handler_timeout(*this);  // copies what it needs of `handling` before it returns
            handling = nullptr;
        }
    }
};

/// A plain HTTP connection.
struct PlainConn final : Conn {
    explicit PlainConn(tcp::socket s) : Conn(s.get_executor()), stream(std::move(s)) {
        // Non-blocking for this program's own calls too (Asio's asynchronous operations are non-blocking anyway): an
        // answer is first written at once with write_some, which then returns would_block on a full send buffer
        // instead of waiting (Server::Impl::write_at_once, which writes nothing at once should this fail).
        boost::system::error_code ignored;
        stream.non_blocking(true, ignored);
    }
    tcp::socket& socket() override { return stream; }
    DrainAwareSocket stream;
};

/// A TLS connection; it keeps the context it was accepted with, whatever reload_tls() does later.
struct TlsConn final : Conn {
    TlsConn(tcp::socket s, std::shared_ptr<ssl::context> c)
        : Conn(s.get_executor()), ctx(std::move(c)), stream(std::move(s), *ctx) {}
    tcp::socket& socket() override { return stream.next_layer(); }
    std::shared_ptr<ssl::context> ctx;  // declared before the stream, which refers to it
    TlsStream stream;
};

/// The StreamWriter of one connection. Everything but wake() runs on the connection's executor.
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
