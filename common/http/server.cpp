#include "common/http/server.hpp"

#include <algorithm>
#include <array>
#include <atomic>
#include <boost/asio/as_tuple.hpp>
#include <boost/asio/co_spawn.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/ssl/context.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/asio/strand.hpp>
#include <boost/asio/use_awaitable.hpp>
#include <boost/asio/write.hpp>
#include <boost/beast/core/buffer_traits.hpp>
#include <boost/beast/core/buffers_range.hpp>
#include <boost/beast/core/flat_buffer.hpp>
#include <boost/beast/core/read_size.hpp>
#include <boost/beast/http.hpp>
#include <boost/beast/ssl/ssl_stream.hpp>
#include <cerrno>
#include <cstring>
#include <iterator>
#include <memory_resource>
#include <mutex>
#include <optional>
#include <random>
#include <type_traits>
#include <unordered_map>

#include "common/http/burst_ring.hpp"
#include "common/http/request_id.hpp"
#include "common/http/server_conn.hpp"
#include "common/log/log.hpp"
#include "common/log/spawned.hpp"

namespace common::http {
namespace {

namespace asio = boost::asio;
namespace beast = boost::beast;
namespace bhttp = boost::beast::http;
using tcp = asio::ip::tcp;
constexpr auto kTuple = asio::as_tuple(asio::use_awaitable);
/// A request's parser, its header fields allocated from the arena serve_one gives it.
using RequestParser = bhttp::request_parser<bhttp::string_body, std::pmr::polymorphic_allocator<char>>;
/// The most one read of a request takes, as Beast's own read loop asks of beast::read_size.
constexpr std::size_t kReadSize = 65536;
namespace ssl = boost::asio::ssl;
using detail::Conn;
using detail::ConnStream;
using detail::kTlsShutdownTimeout;
using detail::PlainConn;
using detail::TlsConn;

}  // namespace

struct Server::Impl : std::enable_shared_from_this<Server::Impl> {
    Impl(asio::io_context& io, config::HostPort l, Limits lim, Handler h, ErrorRenderer e, AccessLog a,
         std::optional<TlsFiles> tls, std::size_t io_threads)
        : ioc(io),
          one_thread(io_threads == 1),
          listen(std::move(l)),
          limits(lim),
          handler(std::move(h)),
          errors(std::move(e)),
          access_log(std::move(a)),
          acceptor(asio::make_strand(io)),
          tls_files(std::move(tls)) {
        if (tls_files) tls_context = make_server_tls_context(*tls_files);
        // Plain connections only use the ring (TLS records are written and read by the stream's own operations).
        if (one_thread && limits.burst_sends && !tls_files) {
            std::string why;
            burst_ring = detail::BurstRing::open(io, why, limits.burst_ring_entries);
            if (!burst_ring)
                log::info("answers and reads take one system call each: io_uring is not available", {{"reason", why}});
        } else if (one_thread && !tls_files) {
            log::info("answers and reads take one system call each: io_uring is off (--io-uring)");
        }
    }

    asio::io_context& ioc;
    const bool one_thread;  ///< one thread runs ioc: connections need no strand of their own
    /// The answers of a burst sent together, and the requests of one read together (burst_ring.hpp): one thread only,
    /// and the host allowing io_uring.
    std::shared_ptr<detail::BurstRing> burst_ring;
    config::HostPort listen;
    Limits limits;
    Handler handler;
    ErrorRenderer errors;
    AccessLog access_log;
    tcp::acceptor acceptor;
    std::atomic<bool> stopping{false};
    std::atomic<std::size_t> count{0};
    std::atomic<std::uint64_t> accepted{0};
    std::mutex mutex;
    std::unordered_map<Conn*, std::weak_ptr<Conn>> conns;
    const std::optional<TlsFiles> tls_files;
    std::mutex tls_mutex;
    std::shared_ptr<ssl::context> tls_context;  // under tls_mutex; replaced by reload_tls()

    /// How long a connection's deadline timer waits at most before it looks at the deadline again: the shortest
    /// time-out a session arms, so that arming one never needs the timer restarted (Conn::arm).
    std::chrono::milliseconds deadline_step() const {
        return std::max(std::chrono::milliseconds(1),
                        std::min({limits.idle_timeout, limits.request_timeout, limits.write_timeout,
                                  limits.handler_timeout, limits.handshake_timeout}));
    }

    std::shared_ptr<ssl::context> current_tls_context() {
        std::lock_guard lock(tls_mutex);
        return tls_context;
    }

    /// Runs the TLS handshake under its deadline; false (logged) when it fails.
    asio::awaitable<bool> handshake(TlsConn& c) {
        c.arm(std::min(limits.handshake_timeout, limits.request_timeout));
        auto [ec] = co_await c.stream.async_handshake(ssl::stream_base::server, kTuple);
        const bool timed_out = c.timed_out;
        c.disarm();
        if (!ec) co_return true;
        if (!c.stopping) {
            boost::system::error_code rec;
            auto ep = c.socket().remote_endpoint(rec);
            log::info("tls handshake failed", {{"remote", rec ? std::string() : ep.address().to_string()},
                                               {"error", timed_out ? std::string("timed out") : ec.message()}});
        }
        co_return false;
    }

    /// Closes the connection; a TLS one first sends close_notify (bounded: the peer may never answer).
    template <class C>
    asio::awaitable<void> close(C& c, bool tls_ok) {
        if constexpr (std::is_same_v<C, TlsConn>) {
            if (tls_ok) {
                c.arm(std::min(limits.write_timeout, kTlsShutdownTimeout));
                co_await c.stream.async_shutdown(kTuple);
                c.disarm();
            }
        }
        boost::system::error_code ignored;
        c.socket().shutdown(tcp::socket::shutdown_send, ignored);
        c.socket().close(ignored);
    }

    // Answers in HTTP/1.1 whatever the request's `version` said (RFC 9110 6.2: the highest version the server
    // conforms to), never echoing "HTTP/1.0" or "HTTP/9.9"; an HTTP/1.0 client that asked to keep the connection
    // gets the token it looks for. A HEAD answer has the headers of the GET answer and no content (RFC 9110
    // 9.3.2): a body there would be read as the next answer on a kept connection.
    template <class C>
    asio::awaitable<bool> write(C& c, const Request& meta, Response& r, unsigned version, bool keep_alive) {
        AnswerHead head;
        answer_head(meta, r, version, keep_alive, head);
        Wire wire{head.buffer(), asio::buffer(r.body)};
        auto ec = write_at_once(c, wire);
        if (!ec && asio::buffer_size(wire) > 0) ec = co_await write_rest(c, wire);
        co_return !ec;
    }

    /// An answer's header text, in the writing coroutine's frame while it fits (most do: about 150 bytes), else on
    /// the heap.
    struct AnswerHead {
        static constexpr std::size_t kRoom = 512;
        std::array<char, kRoom> room;  // NOLINT(cppcoreguidelines-pro-type-member-init): written before it is read
        std::size_t size = 0;
        std::string spill;
        asio::const_buffer buffer() const {
            return spill.empty() ? asio::buffer(room.data(), size) : asio::buffer(spill);
        }
    };

    /// An answer on the wire: its header text and its body, in one gathered write. (Beast's own async_write walks its
    /// serializer's buffer views on every step of its composed operation: about a tenth of the hub's instructions for
    /// a 200-byte answer, docs/performance.md.)
    using Wire = std::array<asio::const_buffer, 2>;

    /// Writes what a plain connection's socket takes at once of `wire`, and advances `wire` past it: all of an answer
    /// that fits the socket's send buffer, in one system call and without an asynchronous write's steps (its
    /// operation, its completion posted, the coroutine resumed: docs/performance.md). Its socket is non-blocking for
    /// this program's own calls too (PlainConn), so a full buffer is would_block, left to write_rest, never a wait of
    /// the network thread. A TLS connection, or a socket that could not be made non-blocking, writes nothing here.
    /// An error other than would_block ends the answer.
    template <class C>
    static boost::system::error_code write_at_once(C& c, Wire& wire) {
        boost::system::error_code ec;
        if constexpr (std::is_same_v<C, PlainConn>) {
            if (!c.stream.non_blocking()) return ec;
            const std::size_t n = c.stream.write_some(wire, ec);
            if (ec == asio::error::would_block) ec.clear();
            skip(wire, n);
        }
        return ec;
    }

    /// Advances `wire` past its first `n` bytes (those a write took).
    static void skip(Wire& wire, std::size_t n) {
        for (auto& b : wire) {
            const std::size_t k = std::min(n, b.size());
            b += k;
            n -= k;
        }
    }

    /// Advances `wire` past the `sent` bytes of a send through the ring (-errno: nothing sent); -EAGAIN (the socket
    /// took nothing) is no error, the rest is written by write_rest.
    static boost::system::error_code advance(Wire& wire, int sent) {
        if (sent < 0)
            return sent == -EAGAIN ? boost::system::error_code()
                                   : boost::system::error_code(-sent, boost::system::system_category());
        skip(wire, static_cast<std::size_t>(sent));
        return {};
    }

    /// Writes the rest of `wire` (after write_at_once) under the write time-out. A coroutine of its own, so only a
    /// write that the socket did not take at once (a large answer, a slow reader, TLS) pays for its frame.
    template <class C>
    asio::awaitable<boost::system::error_code> write_rest(C& c, Wire wire) {
        c.arm(limits.write_timeout);
        auto [ec, n] = co_await asio::async_write(c.stream, wire, kTuple);
        c.disarm();
        co_return ec;
    }

    /// Room for an answer's header fields while they are put together (Beast allocates each field): the usual
    /// four or five take about 300 bytes; more continue on the heap.
    static constexpr std::size_t kFieldsArenaBytes = 1024;

    /// The header of the answer `r` (status line, fields and the blank line) as Beast's serializer writes it, into
    /// `out`: the fields set on a response whose field allocations come from an arena on this stack, then read from
    /// Beast's own header writer (`basic_fields::writer`) in one pass. Through the serializer, the same buffers came
    /// wrapped in its views for partial writes, whose every step was 2 % of the network thread's samples. A HEAD answer
    /// keeps the GET answer's Content-Length and has no content: `r.body` is emptied.
    static void answer_head(const Request& meta, Response& r, unsigned version, bool keep_alive, AnswerHead& out) {
        std::array<std::byte, kFieldsArenaBytes> space;  // NOLINT(cppcoreguidelines-pro-type-member-init): arena
        std::pmr::monotonic_buffer_resource arena(space.data(), space.size());
        using Fields = bhttp::basic_fields<std::pmr::polymorphic_allocator<char>>;
        bhttp::response_header<Fields> header{Fields::allocator_type(&arena)};
        header.result(static_cast<bhttp::status>(r.status));
        header.version(11);
        bhttp::response<bhttp::string_body, Fields> res{std::move(header)};
        res.set(bhttp::field::server, "orderhub");
        res.set(bhttp::field::content_type, r.content_type);
        if (!meta.request_id.empty()) res.set("X-Request-Id", meta.request_id);
        for (const auto& [k, v] : r.headers) res.set(k, v);
        res.body() = std::move(r.body);
        res.keep_alive(keep_alive);
        if (keep_alive && version == 10) res.set(bhttp::field::connection, "keep-alive");
        res.prepare_payload();
        r.body = std::move(res.body());
        if (meta.method == "HEAD") r.body.clear();  // after prepare_payload: Content-Length stays the GET's
        const Fields::writer writer(res, res.version(), res.result_int());
        const auto buffers = writer.get();  // named: the range below refers to it
        const std::size_t size = beast::buffer_bytes(buffers);
        char* at = out.room.data();
        if (size > out.room.size()) {
            out.spill.resize(size);
            at = out.spill.data();
        }
        for (const auto b : beast::buffers_range_ref(buffers)) {
            if (b.size() == 0) continue;  // an empty view may point nowhere: memcpy must not see it
            std::memcpy(at, b.data(), b.size());
            at += b.size();
        }
        out.size = size;
    }

    /// Reads while a response streams: a client sends nothing more, so any completion means it went away.
    template <class C>
    static asio::awaitable<void> watch_peer(std::shared_ptr<C> c, std::shared_ptr<ConnStream<C>> w) {
        std::array<char, 512> scratch{};
        for (;;) {
            auto [ec, n] = co_await c->stream.async_read_some(asio::buffer(scratch), kTuple);
            if (ec || w->ended) break;
        }
        w->end();
    }

    /// Writes the headers of a streamed response, then runs its stream function until it returns, the peer goes
    /// away or the server stops. The caller closes the connection afterwards.
    template <class C>
    asio::awaitable<void> stream(std::shared_ptr<C> c, const Request& meta, Response& r) {
        bhttp::response<bhttp::empty_body> res{static_cast<bhttp::status>(r.status), 11};
        res.set(bhttp::field::server, "orderhub");
        res.set(bhttp::field::content_type, r.content_type);
        if (!meta.request_id.empty()) res.set("X-Request-Id", meta.request_id);
        for (const auto& [k, v] : r.headers) res.set(k, v);
        res.keep_alive(false);
        bhttp::response_serializer<bhttp::empty_body> sr{res};
        c->arm(limits.write_timeout);
        auto [ec, n] = co_await bhttp::async_write_header(c->stream, sr, kTuple);
        c->disarm();
        if (ec || meta.method == "HEAD") co_return;
        auto w = std::make_shared<ConnStream<C>>(c, limits.write_timeout);
        if (c->stopping) w->end();
        c->end_stream = [weak = std::weak_ptr<ConnStream<C>>(w)] {
            if (auto s = weak.lock()) s->end();
        };
        asio::co_spawn(c->socket().get_executor(), watch_peer(c, w), log::on_failure("stream watcher failed"));
        try {
            co_await r.stream(w);
        } catch (const std::exception& e) {
            log::error("stream failed", {{"request_id", meta.request_id}, {"error", e.what()}});
        }
        c->end_stream = nullptr;
        w->end();
    }

    /// The idle read of await_request: a plain connection's read after which the kernel counts nothing left in the
    /// socket (no byte, no end of stream) has the next one wait for the socket's next edge (drain_aware_socket.hpp),
    /// so the read after an answer does not find the socket empty first; TLS reads through its engine as before.
    template <class C>
    static auto read_idle(C& c, asio::mutable_buffer into) {
        if constexpr (std::is_same_v<C, PlainConn>)
            return c.stream.async_read_marking_drained(into, kTuple);
        else
            return c.stream.async_read_some(into, kTuple);
    }

    /// The first read of the rest of a request on a plain connection, tried at once (its socket is non-blocking for
    /// this program's calls, PlainConn): the bytes read (0 with nothing there yet, or with an error in `ec`). The
    /// idle read before it may have told the reactor the socket is empty (read_idle), and a reset that arrived with
    /// the request's first bytes raises no edge of its own, so a read that only waited for one would hold the
    /// connection until the request time-out; this one meets the reset. A TLS connection reads through its stream.
    template <class C>
    static std::size_t read_at_once(C& c, beast::flat_buffer& buffer, beast::error_code& ec) {
        if constexpr (std::is_same_v<C, PlainConn>) {
            if (!c.stream.non_blocking()) return 0;
            const std::size_t n = c.stream.read_some(buffer.prepare(beast::read_size(buffer, kReadSize)), ec);
            if (ec == asio::error::would_block) ec.clear();
            buffer.commit(n);
            return n;
        }
        return 0;
    }

    /// Idle between requests: waits for the first bytes of the next one under the idle time-out (stop() cancels
    /// the wait); false when the connection is to end. Waits by reading, not with a wait on the socket: bytes may
    /// already wait decrypted inside the TLS layer, and on a plain socket asio re-arms epoll (EPOLL_CTL_MOD) for
    /// every wait, where a read waits without that system call (read_idle).
    template <class C>
    asio::awaitable<bool> await_request(C& c, beast::flat_buffer& buffer) {
        c.idle = true;
        if (c.stopping) co_return false;
        c.arm(limits.idle_timeout);
        boost::system::error_code ec;
        for (;;) {
            auto [read_ec, got] = co_await read_idle(c, buffer.prepare(kIdleReadBytes));
            buffer.commit(got);
            ec = read_ec;
            // A read through the ring that found the socket empty after all (drain_aware_socket.hpp): the next read
            // waits for the socket's next edge, unless the deadline or stop() came meanwhile.
            if (ec != asio::error::would_block || c.timed_out || c.stopping) break;
        }
        c.disarm();
        c.idle = false;
        co_return !ec && !c.stopping;
    }

    /// The answer to a request that could not be read whole, or nullopt when the peer went away (or stop()):
    /// nothing to answer.
    std::optional<Response> unreadable(const Request& meta, const boost::system::error_code& ec, bool timed_out) const {
        if (timed_out)
            return errors(meta.target, 408, "request_timeout",
                          "the request was not received in time (" +
                              std::to_string(limits.request_timeout.count() / 1000) + " s)");
        if (ec == bhttp::error::body_limit)
            return errors(meta.target, 413, "body_too_large",
                          "the body is larger than " + std::to_string(limits.max_body) + " bytes");
        if (ec == bhttp::error::header_limit)
            return errors(meta.target, 431, "headers_too_large",
                          "the headers are larger than " + std::to_string(limits.max_header) + " bytes");
        if (ec == bhttp::error::end_of_stream || ec == asio::error::eof || ec == asio::error::connection_reset ||
            ec == asio::error::operation_aborted || ec == bhttp::error::partial_message)
            return std::nullopt;
        return errors(meta.target, 400, "bad_request", "malformed HTTP request");
    }

    /// What is known of a request as soon as its request line was parsed, even when a limit stopped the rest.
    template <class C>
    static Request request_line(C& c, const RequestParser& parser) {
        Request meta;
        if (c.remote.empty()) {
            boost::system::error_code rec;
            auto ep = c.socket().remote_endpoint(rec);
            if (!rec) c.remote = ep.address().to_string();
        }
        meta.remote = c.remote;
        const auto& h = parser.get();
        // The caller's id when it sent a usable one (X-Request-Id, else a traceparent's trace-id): one id from the
        // platform's request to the POS's log.
        auto field = [&h](std::string_view name) -> std::optional<std::string_view> {
            auto it = h.find(name);
            if (it == h.end()) return std::nullopt;
            return std::string_view(it->value().data(), it->value().size());
        };
        const auto traceparent = field("traceparent");
        if (traceparent) meta.trace_id = trace_id_of(*traceparent).value_or("");
        meta.request_id = incoming_request_id(field("X-Request-Id"), traceparent);
        meta.method = std::string(h.method_string());
        meta.target = std::string(h.target());
        meta.path = meta.target.substr(0, meta.target.find('?'));
        return meta;
    }

    void log_access(const Request& meta, const Response& r, std::chrono::steady_clock::time_point started) const {
        if (access_log)
            access_log(
                meta, r,
                std::chrono::duration_cast<std::chrono::microseconds>(std::chrono::steady_clock::now() - started));
    }

    /// The 503 `handler_timeout` of a request whose handler is past its time-out, written while the handler goes on
    /// (its answer is dropped), and the connection's end. Started by the connection's deadline (Conn::woke): the
    /// handler runs inside the session's own coroutine, which the deadline cannot resume.
    template <class C>
    asio::awaitable<void> answer_handler_timeout(std::shared_ptr<C> c, Request meta,
                                                 std::chrono::steady_clock::time_point started) {
        log::warn("handler timed out", {{"request_id", meta.request_id}});
        Response r = errors(meta.target, 503, "handler_timeout", "the request took too long; retry later");
        r.headers.emplace_back("Retry-After", "1");
        r.close = true;
        co_await write(*c, meta, r, 11, false);
        log_access(meta, r, started);
        co_await close(*c, true);
    }

    /// Takes one refusal from the connection's budget (Limits::max_refusals, one earned back per refusal_delay);
    /// false when there is none left.
    bool take_refusal_credit(Conn& c) const {
        const auto now = std::chrono::steady_clock::now();
        const auto cap = static_cast<double>(limits.max_refusals);
        double credit = cap;
        if (c.refusal_credit) {
            const std::chrono::duration<double> earned = now - c.credit_at;
            const std::chrono::duration<double> per = limits.refusal_delay;
            credit = per.count() > 0 ? std::min(cap, *c.refusal_credit + earned / per) : cap;
        }
        c.credit_at = now;
        const bool ok = credit >= 1.0;
        c.refusal_credit = ok ? credit - 1.0 : credit;
        return ok;
    }

    /// `d` times a random factor in [0.5, 1.5): connections held together (a flood that started at once) are then
    /// released spread out, not all in the same instant.
    static std::chrono::milliseconds jittered(std::chrono::milliseconds d) {
        thread_local std::minstd_rand random{std::random_device{}()};
        std::uniform_real_distribution<double> factor(0.5, 1.5);
        return std::chrono::milliseconds(static_cast<std::int64_t>(static_cast<double>(d.count()) * factor(random)));
    }

    /// Holds a refusal past the connection's budget for Limits::refusal_delay (stop() ends it early).
    asio::awaitable<void> hold(Conn& c) const {
        if (c.stopping) co_return;
        c.holding = true;
        c.pause.expires_after(jittered(limits.refusal_delay));
        co_await c.pause.async_wait(kTuple);
        c.holding = false;
        c.credit_at = std::chrono::steady_clock::now();  // the wait paid for this refusal
    }

    /// Feeds the parser what `buffer` holds, as async_read would before reading more; need_more is no error here.
    static beast::error_code parse_buffered(RequestParser& parser, beast::flat_buffer& buffer) {
        parser.eager(true);  // the header and as much of the body as is there, as bhttp::read does
        beast::error_code ec;
        while (!parser.is_done() && buffer.size() > 0) {
            const std::size_t used = parser.put(buffer.data(), ec);
            buffer.consume(used);
            if (ec == bhttp::error::need_more) return {};
            if (ec || used == 0) break;
        }
        return ec;
    }

    /// What a session does after one request: read the next, close the connection, or nothing (already closed).
    enum class After { next, close, closed };

    /// Reads one request, runs the handler and writes (or streams) its answer.
    template <class C>
    asio::awaitable<After> serve_one(std::shared_ptr<C> c, beast::flat_buffer& buffer) {
        // The request's header fields (Beast allocates each) come from an arena in this frame, released with it.
        std::array<std::byte, kFieldsArenaBytes> space;  // NOLINT(cppcoreguidelines-pro-type-member-init): arena
        std::pmr::monotonic_buffer_resource arena(space.data(), space.size());
        // Destroyed once the request is taken from it, before the handler waits (below); `parser` and `msg` are not
        // used past that point.
        std::optional<RequestParser> parsing(std::in_place, std::piecewise_construct, std::make_tuple(),
                                             std::make_tuple(std::pmr::polymorphic_allocator<char>(&arena)));
        RequestParser& parser = *parsing;
        parser.header_limit(static_cast<std::uint32_t>(limits.max_header));
        parser.body_limit(limits.max_body);
        const auto started = std::chrono::steady_clock::now();
        // The whole request usually waits in the buffer already (await_request read it): parsed there at once,
        // without the composed read's completion posted through the scheduler; the rest is read as it comes.
        beast::error_code ec = parse_buffered(parser, buffer);
        bool timed_out = false;
        const bool read_more = !ec && !parser.is_done();
        if (read_more) {
            c->arm(limits.request_timeout);
            // Beast's read loop gives the parser what the buffer holds before it reads. After need_more the parser
            // is to be given more bytes than last time: Beast 1.81 asserts so while parsing a final chunk, and the
            // same bytes again aborted a build with assertions on (tests/fuzz/regressions/fuzz_http). So what
            // parse_buffered left is read to first (tried at once on a plain connection, then waited for), with the
            // read size Beast's loop would use. (That assertion is
            // also too strict for "0\r\n" and "\r" sent apart, fixed upstream in 2024, boostorg/beast#2861; a
            // Release build, NDEBUG, parses both right.)
            const std::size_t at_once = read_at_once(*c, buffer, ec);
            if (!ec && at_once == 0 && buffer.size() > 0) {
                auto [read_ec, n] =
                    co_await c->stream.async_read_some(buffer.prepare(beast::read_size(buffer, kReadSize)), kTuple);
                buffer.commit(n);
                ec = read_ec;
            }
            if (!ec) {
                auto [read_ec, n] = co_await bhttp::async_read(c->stream, buffer, parser, kTuple);
                ec = read_ec;
            }
            timed_out = c->timed_out;
            c->disarm();
        }
        Request req = request_line(*c, parser);
        // The session's copy (Conn::meta), taken while `req` holds the request line and ids only: its strings' room
        // is reused from one request on the connection to the next.
        Request& meta = c->meta;
        meta = req;
        if (ec) {
            std::optional<Response> refusal = unreadable(meta, ec, timed_out);
            if (!refusal) co_return After::close;
            refusal->close = true;
            co_await write(*c, meta, *refusal, 11, false);
            log_access(meta, *refusal, started);
            co_return After::close;
        }
        auto& msg = parser.get();
        const unsigned version = msg.version();
        const bool client_keep_alive = msg.keep_alive();
        // The handler's request takes the headers and the body; the session's (`meta`, for the answer and the access
        // log) keeps the request line and ids only.
        req.headers.reserve(static_cast<std::size_t>(std::distance(msg.begin(), msg.end())));
        for (const auto& f : msg) req.headers.emplace_back(std::string(f.name_string()), std::string(f.value()));
        req.body = std::move(msg.body());
        // The parser and its header fields are freed now, while they are in this thread's cache, not after the
        // handler's wait (a webhook's is the commit, milliseconds later).
        parsing.reset();
        // The handler runs in this coroutine, under the handler time-out: past it, the connection's deadline answers
        // 503 without it (answer_handler_timeout) and this session ends once the handler returns. (Run as a
        // coroutine of its own, raced against a timer, it cost a spawn, its completion posted back and a timer's
        // wait per request: 3 % of the hub's instructions per stored order, docs/performance.md.)
        std::optional<Response> answer;  // the handler's, built in place (not a default one assigned over)
        c->handling = &meta;
        c->handling_started = started;
        // Parsed from what was buffered, the request took no time since `started`: its clock read serves.
        c->arm(limits.handler_timeout, read_more ? Conn::Clock::now() : started);
        try {
            answer.emplace(co_await handler(std::move(req)));
        } catch (const std::exception& e) {
            log::error("handler failed", {{"request_id", meta.request_id}, {"error", e.what()}});
        }
        c->handling = nullptr;
        if (c->handler_timed_out) co_return After::closed;  // answered, and closed, without the handler
        c->disarm();
        if (!answer) answer.emplace(errors(meta.target, 500, "internal_error", "internal error"));
        Response& r = *answer;
        if (r.stream) {
            co_await stream(c, meta, r);
            log_access(meta, r, started);
            // No close_notify: the peer may have gone, and a TLS shutdown must not race the watcher's read.
            co_await close(*c, false);
            co_return After::closed;
        }
        if (r.refusal && !take_refusal_credit(*c)) co_await hold(*c);
        const bool keep_alive = client_keep_alive && !r.close && !stopping.load();
        // Written from this frame, not through write(): a coroutine, its frame and its resumption fewer per answer.
        AnswerHead head;
        answer_head(meta, r, version, keep_alive, head);
        Wire wire{head.buffer(), asio::buffer(r.body)};
        boost::system::error_code write_ec;
        bool burst = false;
        if constexpr (std::is_same_v<C, PlainConn>) burst = burst_ring != nullptr;
        if (burst) {
            // With the burst's other answers, in one system call; what the socket did not take goes as below.
            std::array<iovec, 2> iov{iovec{const_cast<void*>(wire[0].data()), wire[0].size()},
                                     iovec{const_cast<void*>(wire[1].data()), wire[1].size()}};
            msghdr msg{};
            msg.msg_iov = iov.data();
            msg.msg_iovlen = iov.size();
            const int sent = co_await burst_ring->async_send(c->socket(), &msg, asio::use_awaitable);
            write_ec = advance(wire, sent);
        } else {
            write_ec = write_at_once(*c, wire);
        }
        if (!write_ec && asio::buffer_size(wire) > 0) write_ec = co_await write_rest(*c, wire);
        log_access(meta, r, started);
        co_return !write_ec && keep_alive ? After::next : After::close;
    }

    template <class C>
    asio::awaitable<void> session(std::shared_ptr<C> c) {
        if constexpr (std::is_same_v<C, TlsConn>) {
            if (!co_await handshake(*c)) {
                co_await close(*c, false);
                co_return;
            }
        }
        beast::flat_buffer buffer;
        for (;;) {
            if (buffer.size() == 0) {
                const bool more = co_await await_request(*c, buffer);
                if (!more) break;
            }
            const After after = co_await serve_one(c, buffer);
            if (after == After::closed) co_return;
            if (after == After::close) break;
        }
        co_await close(*c, true);
    }

    /// Over the connection bound: answers 503 at once and closes, never queues unboundedly.
    asio::awaitable<void> refuse(std::shared_ptr<PlainConn> c) {
        c->step = deadline_step();
        Response r = errors("", 503, "too_many_connections", "the server is at its connection limit");
        r.headers.emplace_back("Retry-After", "1");
        // A named request, not a temporary: GCC 12 destroys temporaries of a co_await full-expression twice
        // (free(): invalid pointer under overload, found by tests/reliability/s6_overload.py).
        const Request none;
        co_await write(*c, none, r, 11, false);
        boost::system::error_code ignored;
        c->socket().close(ignored);
    }

    /// Starts the session of an accepted connection (plain or TLS).
    template <class C>
    void start_session(std::shared_ptr<C> c) {
        c->step = deadline_step();
        c->on_handler_timeout = [weak = weak_from_this()](Conn& conn) {
            auto self = weak.lock();
            if (!self || conn.handling == nullptr) return;
            auto typed = std::static_pointer_cast<C>(conn.shared_from_this());
            asio::co_spawn(conn.socket().get_executor(),
                           self->answer_handler_timeout(std::move(typed), *conn.handling, conn.handling_started),
                           [self, failed = log::on_failure("answering a handler's time-out failed")](
                               const std::exception_ptr& e) { failed(e); });
        };
        count.fetch_add(1);
        {
            std::lock_guard lock(mutex);
            conns[c.get()] = c;
        }
        auto self = shared_from_this();
        asio::co_spawn(c->socket().get_executor(), self->session(c),
                       [self, raw = static_cast<Conn*>(c.get())](const std::exception_ptr& e) {
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

    /// The executor of the next connection's socket, timers and handlers (Server's io_threads).
    asio::any_io_executor connection_executor() {
        if (one_thread) return ioc.get_executor();
        return asio::make_strand(ioc);
    }

    asio::awaitable<void> accept_loop() {
        auto self = shared_from_this();
        for (;;) {
            auto [ec, socket] = co_await acceptor.async_accept(connection_executor(), kTuple);
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
            accepted.fetch_add(1);
            auto ex = socket.get_executor();
            const bool refused = count.load() >= limits.max_connections;
            if (tls_files && refused) {
                // A 503 over TLS would cost a full handshake (the most expensive part of a connection) for a
                // refusal: the connection is closed before it instead, which a client sees as a reset.
                socket.close(ignored);
            } else if (tls_files) {
                start_session(std::make_shared<TlsConn>(std::move(socket), current_tls_context()));
            } else {
                auto c = std::make_shared<PlainConn>(std::move(socket));
                if (burst_ring) c->stream.use_ring(burst_ring);
                if (refused)
                    asio::co_spawn(ex, self->refuse(c), log::on_failure("refusing a connection failed"));
                else
                    start_session(c);
            }
        }
    }
};

Server::Server(asio::io_context& ioc, const config::HostPort& listen, Limits limits, Handler handler,
               ErrorRenderer errors, AccessLog access_log, std::optional<TlsFiles> tls, std::size_t io_threads)
    : impl_(std::make_shared<Impl>(ioc, listen, limits, std::move(handler), std::move(errors), std::move(access_log),
                                   std::move(tls), io_threads)) {}

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
    if (ec)
        throw std::system_error(ec,
                                "cannot listen on " + impl_->listen.host + ":" + std::to_string(impl_->listen.port));
    a.listen(asio::socket_base::max_listen_connections);
    asio::co_spawn(a.get_executor(), impl_->accept_loop(), log::on_failure("accept loop stopped by an error"));
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
            asio::post(c->socket().get_executor(), [c] {
                c->stopping = true;
                if (c->holding) c->pause.cancel();
                if (c->idle) {
                    boost::system::error_code ignored;
                    c->socket().cancel(ignored);
                }
                if (c->end_stream) c->end_stream();
            });
        }
    }
}

std::size_t Server::connections() const { return impl_->count.load(); }

std::uint64_t Server::accepted() const { return impl_->accepted.load(); }

bool Server::bursts_through_io_uring() const { return impl_->burst_ring != nullptr && impl_->burst_ring->in_use(); }

bool Server::tls() const { return impl_->tls_files.has_value(); }

void Server::reload_tls() {
    if (!impl_->tls_files) return;
    auto fresh = make_server_tls_context(*impl_->tls_files);  // throws: the current context stays
    std::lock_guard lock(impl_->tls_mutex);
    impl_->tls_context = std::move(fresh);
}

}  // namespace common::http
