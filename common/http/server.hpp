#pragma once

#include <boost/asio/awaitable.hpp>
#include <boost/asio/io_context.hpp>
#include <chrono>
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <string_view>

#include "common/config/options.hpp"
#include "common/http/message.hpp"
#include "common/http/tls.hpp"

namespace common::http {

/// Limits of section 8 of the product contract.
struct Limits {
    std::size_t max_body = 1024 * 1024;
    std::size_t max_header = 16 * 1024;
    std::chrono::milliseconds request_timeout{30'000};  ///< from the first byte to the whole request
    std::chrono::milliseconds idle_timeout{60'000};     ///< a keep-alive connection waiting for its next request
    std::chrono::milliseconds write_timeout{10'000};
    /// A TLS handshake's own deadline (the request time-out applies too, when shorter): a peer that stalls its
    /// handshake holds a connection and the handshake's state no longer than this.
    std::chrono::milliseconds handshake_timeout{10'000};
    /// From a whole request to its handler's answer: past it the client gets 503 `handler_timeout` (and the
    /// connection is closed) while the handler's work goes on, bounded by its own time-outs, its answer dropped.
    std::chrono::milliseconds handler_timeout{30'000};
    std::size_t max_connections = 4096;
    /// Answers marked `refusal` (message.hpp) are paced per connection: a connection has a budget of
    /// `max_refusals` refusals answered at once, which earns one back every `refusal_delay`; a refusal beyond it
    /// waits `refusal_delay` before it is written (the answer itself is unchanged). A client that keeps asking for
    /// what does not exist (a flood of random webhook keys) then gets about one answer per connection per delay, and
    /// the network thread serves everyone else meanwhile; a client that errs now and then never waits. Each wait is
    /// the delay times a random factor between 0.5 and 1.5, so that held connections are not released all at once.
    /// stop() ends the wait.
    std::size_t max_refusals = 4;
    std::chrono::milliseconds refusal_delay{1000};
    /// Plain answers written in the same turn of the network thread (a group commit's) go out together, with one
    /// io_uring system call (burst_ring.hpp), when one thread runs the server and the host allows io_uring; so do
    /// the reads of the plain connections one epoll_wait found readable (drain_aware_socket.hpp). False (`--io-uring
    /// off`), or without io_uring, each answer is written with its own sendmsg and each read made with its own recvmsg.
    /// Either way an answer the socket does not take at once is finished by an asynchronous write under write_timeout.
    bool burst_sends = true;
    /// Room of that ring for one turn (a power of two): a burst has as many sends as the requests a group commit
    /// answers, and as many reads as one epoll_wait finds readable (tens); those one turn queues past it are each made
    /// on their own, as without the ring (tests make it small to reach that path).
    unsigned burst_ring_entries = 256;
};

/// What a connection reads at once while it waits for its next request. Beast's header limit is soft and its
/// verdict depends on how the bytes are cut into reads, so whatever predicts the server's answers (tests/fuzz)
/// reads the same way.
inline constexpr std::size_t kIdleReadBytes = 4096;

/// Produces handler answers for a request (a Response with `stream` set is written as a stream; message.hpp). The
/// request is the server's, lent until the handler's coroutine completes (the server awaits it at once): a handler
/// may take its parts (the body) or hand the reference to a coroutine it awaits, without a copy or a move of the
/// whole request per layer.
using Handler = std::function<boost::asio::awaitable<Response>(Request&&)>;

/// Renders the server's own refusals (413, 408, 431, 400, 503, 500) in the product's error shape; `target` is
/// the request target when known.
using ErrorRenderer =
    std::function<Response(std::string_view target, unsigned status, std::string_view code, std::string_view message)>;

/// Called after every response with the request, the response and the latency (logging, metrics).
using AccessLog = std::function<void(const Request&, const Response&, std::chrono::microseconds)>;

/// An HTTP/1.1 listener: one coroutine per connection (on its own strand, unless one thread runs the io_context;
/// the handler runs inside it, under the handler time-out), a fresh parser with body and header
/// limits per request, time-outs on every read and write, a bound on connections. Runs on the io_context
/// given; the handler may run on any of its threads. Not copyable; `stop()` before destroying.
///
/// With `tls` every connection speaks TLS 1.2 or 1.3 (see make_server_tls_context); the handshake must finish
/// within `handshake_timeout` (and `request_timeout`), then the same limits and keep-alive rules apply as for
/// plain HTTP. Over `max_connections`, a plain connection gets a 503 and a TLS one is closed before any
/// handshake (a refusal must cost less than a request).
class Server {
public:
    /// `io_threads`: how many threads run `ioc` (0: not known). A connection's work runs on a strand of its own,
    /// except with 1: then on `ioc`'s executor itself, which one thread already serializes (a strand's queue, lock
    /// and executor copies cost about 3 % of the hub's instructions per order). Throws std::runtime_error when the
    /// TLS files cannot be loaded.
    Server(boost::asio::io_context& ioc, const config::HostPort& listen, Limits limits, Handler handler,
           ErrorRenderer errors, AccessLog access_log = {}, std::optional<TlsFiles> tls = std::nullopt,
           std::size_t io_threads = 0);
    ~Server();
    Server(const Server&) = delete;
    Server& operator=(const Server&) = delete;

    /// Binds and starts accepting; throws std::system_error with a clear message when the address is taken.
    void start();
    /// The bound port (useful with port 0).
    std::uint16_t port() const;
    /// Stops accepting and closes idle connections; requests in flight finish.
    void stop();
    /// Number of open connections.
    std::size_t connections() const;
    /// Connections accepted since start() (including refused ones; for tests and metrics).
    std::uint64_t accepted() const;
    /// True when the answers and reads of a burst go through one io_uring system call (Limits::burst_sends, one
    /// network thread, plain HTTP, the host allowed io_uring when the server was made, and the ring has not stepped
    /// aside since: a failed submission, a kernel that refused an operation).
    bool bursts_through_io_uring() const;
    /// True when the listener speaks TLS.
    bool tls() const;
    /// Re-reads the certificate and key files into a new TLS context used by connections accepted from now on;
    /// open connections keep theirs. Thread-safe. Throws std::runtime_error (the old certificate stays in use)
    /// when the files cannot be loaded; does nothing without TLS.
    void reload_tls();

private:
    struct Impl;
    std::shared_ptr<Impl> impl_;
};

}  // namespace common::http
