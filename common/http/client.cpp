#include "common/http/client.hpp"

#include <openssl/err.h>
#include <openssl/ssl.h>
#include <openssl/x509_vfy.h>
#include <poll.h>
#include <strings.h>

#include <algorithm>
#include <atomic>
#include <boost/asio/as_tuple.hpp>
#include <boost/asio/co_spawn.hpp>
#include <boost/asio/connect.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/post.hpp>
#include <boost/asio/ssl/context.hpp>
#include <boost/asio/ssl/error.hpp>
#include <boost/asio/ssl/host_name_verification.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/asio/strand.hpp>
#include <boost/asio/this_coro.hpp>
#include <boost/asio/use_awaitable.hpp>
#include <boost/beast/core/flat_buffer.hpp>
#include <boost/beast/http.hpp>
#include <boost/beast/ssl/ssl_stream.hpp>
#include <boost/url/parse.hpp>
#include <cctype>
#include <charconv>
#include <cmath>
#include <cstdint>
#include <deque>
#include <map>
#include <mutex>

#include "common/http/tls.hpp"
#include "common/log/log.hpp"

namespace common::http {

std::optional<std::string_view> ClientResponse::header(std::string_view name) const {
    for (const auto& [k, v] : headers)
        if (k.size() == name.size() && strncasecmp(k.data(), name.data(), k.size()) == 0) return v;
    return std::nullopt;
}

std::string_view to_string(ClientFailure failure) {
    switch (failure) {
        case ClientFailure::none: return "none";
        case ClientFailure::bad_url: return "bad_url";
        case ClientFailure::resolve: return "resolve";
        case ClientFailure::connect_refused: return "connect_refused";
        case ClientFailure::connect_timeout: return "connect_timeout";
        case ClientFailure::tls_handshake: return "tls_handshake";
        case ClientFailure::tls_verify: return "tls_verify";
        case ClientFailure::write: return "write";
        case ClientFailure::write_timeout: return "write_timeout";
        case ClientFailure::read: return "read";
        case ClientFailure::read_timeout: return "read_timeout";
        case ClientFailure::too_large: return "too_large";
        case ClientFailure::protocol: return "protocol";
    }
    return "unknown";
}

namespace {

namespace asio = boost::asio;
namespace beast = boost::beast;
namespace bhttp = boost::beast::http;
namespace ssl = boost::asio::ssl;
using tcp = asio::ip::tcp;
using Clock = std::chrono::steady_clock;
using TlsStream = beast::ssl_stream<tcp::socket>;
using Executor = asio::any_io_executor;
constexpr auto kTuple = asio::as_tuple(asio::use_awaitable);
constexpr std::uint32_t kMaxResponseHeader = 64 * 1024;

/// Where a request goes, taken from its URL.
struct Target {
    bool tls = false;
    std::string host;  ///< a name, or an address without brackets: resolved, sent as SNI, verified
    bool host_is_address = false;
    std::uint16_t port = 0;
    std::string host_header;  ///< the Host field
    std::string resource;     ///< path and query
};

bool is_token(std::string_view s) {
    if (s.empty()) return false;
    for (unsigned char ch : s) {
        if (std::isalnum(ch)) continue;
        if (std::string_view("!#$%&'*+-.^_`|~").find(static_cast<char>(ch)) == std::string_view::npos) return false;
    }
    return true;
}

bool is_field_value(std::string_view s) {
    for (unsigned char ch : s)
        if (ch == '\r' || ch == '\n' || ch == '\0') return false;
    return true;
}

std::optional<Target> parse_target(std::string_view url, std::string& error) {
    // The URL itself is never echoed: a query string may carry a credential.
    auto parsed = boost::urls::parse_uri(url);
    if (!parsed) {
        error = "the URL is not an absolute http or https URL";
        return std::nullopt;
    }
    const auto& u = *parsed;
    Target t;
    if (u.scheme_id() == boost::urls::scheme::https) {
        t.tls = true;
    } else if (u.scheme_id() != boost::urls::scheme::http) {
        error = "the URL scheme must be http or https";
        return std::nullopt;
    }
    if (u.has_userinfo()) {
        error = "credentials in the URL are not supported";
        return std::nullopt;
    }
    switch (u.host_type()) {
        case boost::urls::host_type::ipv4:
        case boost::urls::host_type::ipv6:
            t.host = std::string(u.host_address());
            t.host_is_address = true;
            break;
        case boost::urls::host_type::name:
            t.host = std::string(u.encoded_host());
            if (t.host.find('%') != std::string::npos) {
                error = "the URL host must not be percent-encoded";
                return std::nullopt;
            }
            break;
        default: error = "the URL has no usable host"; return std::nullopt;
    }
    if (t.host.empty()) {
        error = "the URL has no host";
        return std::nullopt;
    }
    const std::uint16_t default_port = t.tls ? 443 : 80;
    t.port = default_port;
    if (u.has_port() && !u.port().empty()) {
        const auto text = u.port();
        unsigned value = 0;
        auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), value);
        if (ec != std::errc() || end != text.data() + text.size() || value == 0 || value > 65535) {
            error = "the URL port is not a number between 1 and 65535";
            return std::nullopt;
        }
        t.port = static_cast<std::uint16_t>(value);
    }
    t.host_header = u.host_type() == boost::urls::host_type::ipv6 ? "[" + t.host + "]" : t.host;
    if (t.port != default_port) t.host_header += ":" + std::to_string(t.port);
    t.resource = std::string(u.encoded_target());
    if (t.resource.empty() || t.resource.front() != '/') t.resource.insert(0, "/");
    return t;
}

/// The pool of a target: one per scheme, host, port and (for https) CA file.
std::string pool_key(const Target& t, const std::string& ca_file) {
    return (t.tls ? "https|" : "http|") + t.host + "|" + std::to_string(t.port) + "|" + (t.tls ? ca_file : "");
}

/// Cancels (or closes) a socket, or cancels a resolver, when its time is up. Lives on the request's strand, as
/// does every object it touches; a later arm() or disarm() voids an earlier arm().
class Watchdog {
public:
    explicit Watchdog(const Executor& ex) : timer_(ex) {}
    ~Watchdog() { disarm(); }
    Watchdog(const Watchdog&) = delete;
    Watchdog& operator=(const Watchdog&) = delete;

    void arm(Clock::time_point deadline, tcp::socket* socket, tcp::resolver* resolver, bool close) {
        disarm();
        state_->socket = socket;
        state_->resolver = resolver;
        state_->close = close;
        state_->fired = false;
        timer_.expires_at(deadline);
        timer_.async_wait([state = state_, gen = state_->generation](boost::system::error_code ec) {
            if (ec || state->generation != gen) return;
            state->fired = true;
            boost::system::error_code ignored;
            if (state->resolver) state->resolver->cancel();
            if (state->socket) {
                if (state->close)
                    state->socket->close(ignored);
                else
                    state->socket->cancel(ignored);
            }
        });
    }
    void disarm() {
        ++state_->generation;
        state_->socket = nullptr;
        state_->resolver = nullptr;
        timer_.cancel();
    }
    /// True when the last arm() expired.
    bool fired() const { return state_->fired; }

private:
    struct State {
        tcp::socket* socket = nullptr;
        tcp::resolver* resolver = nullptr;
        bool close = false;
        bool fired = false;
        std::uint64_t generation = 0;
    };
    std::shared_ptr<State> state_ = std::make_shared<State>();
    asio::steady_timer timer_;
};

/// One TCP (and maybe TLS) connection to a host. Used by one request at a time; between requests it sits in its
/// host's idle list under the client's mutex.
struct Connection {
    Connection(const Executor& ex, std::shared_ptr<ssl::context> context,
               std::shared_ptr<std::atomic<std::size_t>> open_counter)
        : ctx(std::move(context)), counter(std::move(open_counter)) {
        if (ctx)
            tls = std::make_unique<TlsStream>(ex, *ctx);
        else
            plain = std::make_unique<tcp::socket>(ex);
    }
    ~Connection() {
        boost::system::error_code ignored;
        socket().close(ignored);
        if (counted) counter->fetch_sub(1);
    }
    Connection(const Connection&) = delete;
    Connection& operator=(const Connection&) = delete;

    tcp::socket& socket() { return tls ? tls->next_layer() : *plain; }

    /// An idle connection must have nothing to read: pending bytes or an end of stream mean the server closed it
    /// (or sent something unasked), so it cannot carry another request.
    bool quiet() {
        if (!socket().is_open()) return false;
        pollfd p{socket().native_handle(), POLLIN, 0};
        return ::poll(&p, 1, 0) == 0;
    }

    std::shared_ptr<ssl::context> ctx;  // declared before the stream: the SSL object refers to it
    std::unique_ptr<TlsStream> tls;
    std::unique_ptr<tcp::socket> plain;
    beast::flat_buffer buffer;
    Clock::time_point idle_since{};
    std::shared_ptr<std::atomic<std::size_t>> counter;
    bool counted = false;
};

/// Someone waiting for a slot of a host. The timer lives on the waiter's strand and waits "forever"; release()
/// marks the waiter granted under the mutex and then cancels the timer from that strand.
struct Waiter {
    explicit Waiter(const Executor& ex) : timer(ex) {}
    asio::steady_timer timer;
    bool granted = false;  // under ClientImpl::mutex
};

/// The state of one (scheme, host, port, ca_file): slots in use, waiters in order, idle connections, and how many
/// requests the host is allowed at once now (see ClientOptions::max_connections_per_host).
struct HostPool {
    explicit HostPool(std::size_t ceiling) : limit(static_cast<double>(ceiling)) {}
    std::size_t in_flight = 0;
    double limit;             // between 1 and the ceiling; whole slots count
    std::uint64_t epoch = 0;  // one more per decrease: an overload seen by a request sent before it is not counted
    bool reduced = false;     // below the ceiling since the last decrease (for the log line on recovery)
    std::deque<std::shared_ptr<Waiter>> waiters;
    std::vector<std::unique_ptr<Connection>> idle;  // most recently used last
};

/// Why an attempt failed; `retryable` when the request cannot have reached the server on a reused connection.
struct Outcome {
    ClientFailure failure = ClientFailure::none;
    std::string error;
    bool retryable = false;
};

}  // namespace

namespace detail {

struct ClientImpl : std::enable_shared_from_this<ClientImpl> {
    ClientImpl(Executor e, ClientOptions o)
        : ex(std::move(e)), options(o), sweep_strand(asio::make_strand(ex)), sweep_timer(sweep_strand) {
        if (options.max_connections_per_host == 0) options.max_connections_per_host = 1;
    }

    Executor ex;
    ClientOptions options;
    std::shared_ptr<std::atomic<std::size_t>> open = std::make_shared<std::atomic<std::size_t>>(0);

    mutable std::mutex mutex;  // guards everything below except the sweep members
    bool closed = false;
    std::map<std::string, std::shared_ptr<HostPool>> pools;
    std::map<std::string, std::shared_ptr<ssl::context>> contexts;

    asio::strand<Executor> sweep_strand;  // the sweep members are touched only there
    asio::steady_timer sweep_timer;
    bool sweep_armed = false;

    std::shared_ptr<HostPool> pool_for(const std::string& key) {
        std::lock_guard lock(mutex);
        auto& p = pools[key];
        if (!p) p = std::make_shared<HostPool>(options.max_connections_per_host);
        return p;
    }

    static std::size_t allowed(const HostPool& pool) {
        return pool.limit < 1 ? 1 : static_cast<std::size_t>(pool.limit);
    }

    /// Under the mutex: hands free slots to waiters, in order.
    static void grant_locked(HostPool& pool, std::vector<std::shared_ptr<Waiter>>& granted) {
        while (!pool.waiters.empty() && pool.in_flight < allowed(pool)) {
            ++pool.in_flight;
            granted.push_back(std::move(pool.waiters.front()));
            pool.waiters.pop_front();
            granted.back()->granted = true;
        }
    }

    static void wake(const std::vector<std::shared_ptr<Waiter>>& granted) {
        for (const auto& w : granted) asio::post(w->timer.get_executor(), [w] { w->timer.cancel(); });
    }

    /// The answer of a request sent at `epoch`: an overloaded host (429, 503, a time-out) halves the requests it is
    /// allowed at once, once per round of requests; every other answer adds 1/limit, so a full round of answers
    /// adds one slot, up to the ceiling.
    void feedback(HostPool& pool, std::uint64_t epoch, bool overloaded, const std::string& host, std::string_view why) {
        std::vector<std::shared_ptr<Waiter>> granted;
        std::optional<std::size_t> reduced_to;
        bool recovered = false;
        const auto ceiling = static_cast<double>(options.max_connections_per_host);
        {
            std::lock_guard lock(mutex);
            if (overloaded) {
                if (epoch == pool.epoch && pool.limit > 1) {
                    pool.limit = std::max(1.0, std::floor(pool.limit / 2));
                    ++pool.epoch;
                    pool.reduced = true;
                    reduced_to = allowed(pool);
                }
            } else if (pool.limit < ceiling) {
                pool.limit = std::min(ceiling, pool.limit + 1 / pool.limit);
                recovered = pool.reduced && pool.limit >= ceiling;
                if (recovered) pool.reduced = false;
                grant_locked(pool, granted);
            }
        }
        wake(granted);
        if (reduced_to)
            common::log::warn("fewer requests at once to an overloaded host",
                              {{"host", host}, {"answer", std::string(why)}, {"in_flight_limit", *reduced_to}});
        if (recovered)
            common::log::info("host back to its full number of requests at once",
                              {{"host", host}, {"in_flight_limit", options.max_connections_per_host}});
    }

    /// One context per CA file, made once; a file that cannot be loaded is tried again by the next request.
    std::shared_ptr<ssl::context> context_for(const std::string& ca_file, std::string& error) {
        std::lock_guard lock(mutex);
        auto& c = contexts[ca_file];
        if (!c) {
            try {
                c = make_client_tls_context(ca_file);
            } catch (const std::exception& e) {
                error = e.what();
                contexts.erase(ca_file);
                return nullptr;
            }
        }
        return c;
    }

    /// Gives a slot back: to the first waiter if the host's limit allows it, else to the pool.
    void release(HostPool& pool) {
        std::vector<std::shared_ptr<Waiter>> granted;
        {
            std::lock_guard lock(mutex);
            --pool.in_flight;
            grant_locked(pool, granted);
        }
        wake(granted);
    }

    /// The most recently used idle connection that is still fresh and quiet; stale ones are closed.
    std::unique_ptr<Connection> take_idle(HostPool& pool) {
        std::vector<std::unique_ptr<Connection>> stale;  // closed after the lock is released
        std::unique_ptr<Connection> found;
        const auto now = Clock::now();
        std::lock_guard lock(mutex);
        while (!pool.idle.empty() && !found) {
            auto c = std::move(pool.idle.back());
            pool.idle.pop_back();
            if (now - c->idle_since < options.idle_keepalive && c->quiet())
                found = std::move(c);
            else
                stale.push_back(std::move(c));
        }
        return found;
    }

    void put_idle(HostPool& pool, std::unique_ptr<Connection> c) {
        {
            std::lock_guard lock(mutex);
            if (closed || pool.idle.size() >= options.max_connections_per_host) return;  // c closes
            c->idle_since = Clock::now();
            pool.idle.push_back(std::move(c));
        }
        asio::post(sweep_strand, [w = weak_from_this()] {
            if (auto self = w.lock()) self->schedule_sweep();
        });
    }

    /// On the sweep strand: wakes up when the oldest idle connection expires.
    void schedule_sweep() {
        if (sweep_armed) return;
        std::optional<Clock::time_point> first;
        {
            std::lock_guard lock(mutex);
            for (auto& [key, pool] : pools)
                for (auto& c : pool->idle)
                    if (!first || c->idle_since < *first) first = c->idle_since;
        }
        if (!first) return;
        sweep_armed = true;
        sweep_timer.expires_at(*first + options.idle_keepalive);
        sweep_timer.async_wait([w = weak_from_this()](boost::system::error_code ec) {
            auto self = w.lock();
            if (!self) return;
            self->sweep_armed = false;
            if (ec) return;
            self->sweep();
            self->schedule_sweep();
        });
    }

    void sweep() {
        std::vector<std::unique_ptr<Connection>> expired;
        const auto now = Clock::now();
        std::lock_guard lock(mutex);
        for (auto& [key, pool] : pools) {
            auto& idle = pool->idle;
            for (auto it = idle.begin(); it != idle.end();) {
                if (now - (*it)->idle_since >= options.idle_keepalive) {
                    expired.push_back(std::move(*it));
                    it = idle.erase(it);
                } else {
                    ++it;
                }
            }
        }
    }

    void shutdown() {
        std::vector<std::unique_ptr<Connection>> idle;
        {
            std::lock_guard lock(mutex);
            closed = true;
            for (auto& [key, pool] : pools)
                for (auto& c : pool->idle) idle.push_back(std::move(c));
            for (auto& [key, pool] : pools) pool->idle.clear();
        }
        // The sweep timer goes with this object; its handler holds only a weak reference.
    }
};

}  // namespace detail

namespace {

using detail::ClientImpl;

/// A slot of a host, given back when destroyed (also when the request's coroutine is destroyed unfinished).
class Slot {
public:
    Slot(std::shared_ptr<ClientImpl> impl, std::shared_ptr<HostPool> pool)
        : impl_(std::move(impl)), pool_(std::move(pool)) {}
    ~Slot() {
        if (pool_) impl_->release(*pool_);
    }
    Slot(const Slot&) = delete;
    Slot& operator=(const Slot&) = delete;

private:
    std::shared_ptr<ClientImpl> impl_;
    std::shared_ptr<HostPool> pool_;
};

/// Unregisters a waiter that gives up (cancelled or destroyed); a grant that raced with giving up is passed on.
class WaiterGuard {
public:
    WaiterGuard(ClientImpl& impl, HostPool& pool, std::shared_ptr<Waiter> w)
        : impl_(impl), pool_(pool), w_(std::move(w)) {}
    ~WaiterGuard() {
        if (!w_) return;
        bool pass_on = false;
        {
            std::lock_guard lock(impl_.mutex);
            if (w_->granted) {
                pass_on = true;
            } else {
                auto& q = pool_.waiters;
                for (auto it = q.begin(); it != q.end(); ++it)
                    if (*it == w_) {
                        q.erase(it);
                        break;
                    }
            }
        }
        if (pass_on) impl_.release(pool_);
    }
    WaiterGuard(const WaiterGuard&) = delete;
    WaiterGuard& operator=(const WaiterGuard&) = delete;
    void dismiss() { w_.reset(); }

private:
    ClientImpl& impl_;
    HostPool& pool_;
    std::shared_ptr<Waiter> w_;
};

/// Takes a slot of `pool`, waiting in order behind earlier requests; false when the wait was cancelled. `epoch` is
/// the pool's when the slot was taken.
asio::awaitable<bool> acquire(ClientImpl& impl, HostPool& pool, std::uint64_t& epoch) {
    auto ex = co_await asio::this_coro::executor;
    std::shared_ptr<Waiter> w;
    {
        std::lock_guard lock(impl.mutex);
        epoch = pool.epoch;
        if (pool.in_flight < ClientImpl::allowed(pool) && pool.waiters.empty()) {
            ++pool.in_flight;
        } else {
            w = std::make_shared<Waiter>(ex);
            pool.waiters.push_back(w);
        }
    }
    if (!w) co_return true;
    WaiterGuard guard(impl, pool, w);
    // release() cancels this timer through a post to our strand, so it cannot run before the wait has begun.
    w->timer.expires_at(Clock::time_point::max());
    co_await w->timer.async_wait(kTuple);
    std::lock_guard lock(impl.mutex);
    if (!w->granted) co_return false;  // the guard unregisters us (the mutex is released first)
    guard.dismiss();
    epoch = pool.epoch;
    co_return true;
}

bool eof_like(const boost::system::error_code& ec) {
    return ec == bhttp::error::end_of_stream || ec == asio::error::eof || ec == asio::error::connection_reset ||
           ec == asio::error::broken_pipe || ec == ssl::error::stream_truncated;
}

/// Host-name verification that leaves a precise reason (X509_V_ERR_HOSTNAME_MISMATCH) for the error text.
struct HostCheck {
    ssl::host_name_verification check;
    bool operator()(bool preverified, ssl::verify_context& ctx) const {
        const bool ok = check(preverified, ctx);
        if (!ok && preverified) X509_STORE_CTX_set_error(ctx.native_handle(), X509_V_ERR_HOSTNAME_MISMATCH);
        return ok;
    }
};

/// Resolves, connects and (for https) handshakes a fresh connection into `out`.
asio::awaitable<Outcome> connect(ClientImpl& impl, const Target& t, std::shared_ptr<ssl::context> ctx,
                                 std::unique_ptr<Connection>& out) {
    const auto& o = impl.options;
    auto ex = co_await asio::this_coro::executor;
    Watchdog watchdog(ex);
    const auto deadline = Clock::now() + o.connect_timeout;
    const std::string where = t.host + ":" + std::to_string(t.port);

    tcp::resolver resolver(ex);
    watchdog.arm(deadline, nullptr, &resolver, false);
    const auto flags = t.host_is_address ? tcp::resolver::numeric_host : tcp::resolver::flags();
    auto [rec, endpoints] = co_await resolver.async_resolve(t.host, std::to_string(t.port), flags, kTuple);
    watchdog.disarm();
    if (rec) {
        if (watchdog.fired()) co_return Outcome{ClientFailure::resolve, "resolving " + t.host + " timed out"};
        co_return Outcome{ClientFailure::resolve, "cannot resolve " + t.host + ": " + rec.message()};
    }

    auto c = std::make_unique<Connection>(impl.ex, ctx, impl.open);
    // Closing (not cancelling) stops the range connect from moving on to the next address.
    watchdog.arm(deadline, &c->socket(), nullptr, true);
    auto [cec, ep] = co_await asio::async_connect(c->socket(), endpoints, kTuple);
    watchdog.disarm();
    if (cec) {
        if (watchdog.fired())
            co_return Outcome{ClientFailure::connect_timeout, "connecting to " + where + " timed out"};
        co_return Outcome{ClientFailure::connect_refused, "cannot connect to " + where + ": " + cec.message()};
    }
    c->counted = true;
    impl.open->fetch_add(1);
    boost::system::error_code ignored;
    c->socket().set_option(tcp::no_delay(true), ignored);

    if (c->tls) {
        SSL* ssl_handle = c->tls->native_handle();
        // RFC 6066: SNI carries names only, never addresses.
        if (!t.host_is_address && SSL_set_tlsext_host_name(ssl_handle, t.host.c_str()) != 1)
            co_return Outcome{ClientFailure::tls_handshake, "cannot set the TLS server name " + t.host};
        c->tls->set_verify_mode(ssl::verify_peer);
        c->tls->set_verify_callback(HostCheck{ssl::host_name_verification(t.host)});
        watchdog.arm(Clock::now() + o.handshake_timeout, &c->socket(), nullptr, false);
        auto [hec] = co_await c->tls->async_handshake(ssl::stream_base::client, kTuple);
        watchdog.disarm();
        if (hec) {
            if (watchdog.fired())
                co_return Outcome{ClientFailure::tls_handshake, "the TLS handshake with " + where + " timed out"};
            const long verify = SSL_get_verify_result(ssl_handle);
            if (verify != X509_V_OK)
                co_return Outcome{ClientFailure::tls_verify, "the certificate of " + where + " was refused: " +
                                                                 X509_verify_cert_error_string(verify)};
            if (hec.category() == asio::error::get_ssl_category() &&
                ERR_GET_REASON(static_cast<unsigned long>(hec.value())) == SSL_R_CERTIFICATE_VERIFY_FAILED)
                co_return Outcome{ClientFailure::tls_verify, "the certificate of " + where + " was refused"};
            co_return Outcome{ClientFailure::tls_handshake,
                              "the TLS handshake with " + where + " failed: " + hec.message()};
        }
    }
    out = std::move(c);
    co_return Outcome{};
}

/// Writes the request and reads one final response on an open connection; `keep_alive` tells whether the
/// connection may carry another request.
template <class Stream>
asio::awaitable<Outcome> exchange(Stream& stream, Connection& c, bhttp::request<bhttp::string_body>& req,
                                  const ClientOptions& o, ClientResponse& out, bool& keep_alive) {
    auto ex = co_await asio::this_coro::executor;
    Watchdog watchdog(ex);
    keep_alive = false;

    watchdog.arm(Clock::now() + o.write_timeout, &c.socket(), nullptr, false);
    auto [wec, written] = co_await bhttp::async_write(stream, req, kTuple);
    watchdog.disarm();
    if (wec) {
        if (watchdog.fired()) co_return Outcome{ClientFailure::write_timeout, "writing the request timed out"};
        co_return Outcome{ClientFailure::write, "writing the request failed: " + wec.message(), true};
    }

    watchdog.arm(Clock::now() + o.read_timeout, &c.socket(), nullptr, false);
    for (;;) {
        bhttp::response_parser<bhttp::string_body> parser;
        parser.body_limit(o.max_response_body);
        parser.header_limit(kMaxResponseHeader);
        if (req.method() == bhttp::verb::head) parser.skip(true);
        const bool had_bytes = c.buffer.size() > 0;
        auto [rec, n] = co_await bhttp::async_read(stream, c.buffer, parser, kTuple);
        if (rec) {
            if (watchdog.fired()) co_return Outcome{ClientFailure::read_timeout, "no complete response in time"};
            if (rec == bhttp::error::body_limit)
                co_return Outcome{ClientFailure::too_large,
                                  "the response body is larger than " + std::to_string(o.max_response_body) + " bytes"};
            if (rec == bhttp::error::header_limit)
                co_return Outcome{ClientFailure::too_large, "the response headers are too large"};
            if (!parser.got_some() && !had_bytes && eof_like(rec))
                co_return Outcome{ClientFailure::read, "the connection was closed before a response", true};
            if (rec.category() == bhttp::make_error_code(bhttp::error::bad_version).category() &&
                rec != bhttp::error::partial_message && rec != bhttp::error::end_of_stream)
                co_return Outcome{ClientFailure::protocol, "malformed response: " + rec.message()};
            co_return Outcome{ClientFailure::read, "reading the response failed: " + rec.message()};
        }
        auto& msg = parser.get();
        const unsigned status = msg.result_int();
        if (status >= 100 && status < 200 && status != 101) continue;  // an interim answer: the final one follows
        out.status = status;
        for (const auto& f : msg) out.headers.emplace_back(std::string(f.name_string()), std::string(f.value()));
        out.body = std::move(msg.body());
        keep_alive = parser.keep_alive() && status != 101 && c.buffer.size() == 0;
        break;
    }
    watchdog.disarm();
    co_return Outcome{};
}

/// Builds the Beast request; false (with a reason naming no value) for a malformed method or header.
bool build_request(const ClientRequest& r, const Target& t, bhttp::request<bhttp::string_body>& req,
                   std::string& error) {
    if (!is_token(r.method)) {
        error = "the method is not a valid HTTP token";
        return false;
    }
    const auto verb = bhttp::string_to_verb(r.method);
    if (verb == bhttp::verb::unknown)
        req.method_string(r.method);
    else
        req.method(verb);
    req.target(t.resource);
    req.version(11);
    req.set(bhttp::field::host, t.host_header);
    req.set(bhttp::field::user_agent, "orderhub");
    for (const auto& [name, value] : r.headers) {
        if (!is_token(name) || !is_field_value(value)) {
            error = "a request header has an invalid name or value";
            return false;
        }
        const auto f = bhttp::string_to_field(name);
        if (f == bhttp::field::content_length || f == bhttp::field::transfer_encoding) continue;  // ours
        if (f == bhttp::field::host || f == bhttp::field::user_agent)
            req.set(f, value);
        else
            req.insert(name, value);
    }
    req.body() = r.body;
    req.prepare_payload();
    req.keep_alive(true);
    return true;
}

/// The whole request on its own strand: parse, take a slot, take or open a connection, exchange, and retry once
/// under the rule documented on Client (client.hpp): only a reused connection, only when `Outcome::retryable`.
asio::awaitable<ClientResult> run(std::shared_ptr<ClientImpl> impl, ClientRequest request) {
    const auto started = Clock::now();
    ClientResult result;
    auto fail = [&](ClientFailure f, std::string error) {
        result.failure = f;
        result.error = std::move(error);
    };
    ClientFailure phase = ClientFailure::bad_url;  // what an unexpected exception counts as
    try {
        std::string error;
        auto target = parse_target(request.url, error);
        bhttp::request<bhttp::string_body> req;
        if (!target || !build_request(request, *target, req, error)) {
            fail(ClientFailure::bad_url, error);
        } else {
            std::shared_ptr<ssl::context> ctx;
            if (target->tls) ctx = impl->context_for(request.ca_file, error);
            if (target->tls && !ctx) {
                fail(ClientFailure::tls_verify, error);
            } else {
                auto pool = impl->pool_for(pool_key(*target, request.ca_file));
                phase = ClientFailure::connect_timeout;
                std::uint64_t epoch = 0;
                if (!co_await acquire(*impl, *pool, epoch)) {
                    fail(ClientFailure::connect_timeout,
                         "cancelled while waiting for a connection to " + target->host_header);
                } else {
                    Slot slot(impl, pool);
                    for (int attempt = 0;; ++attempt) {
                        std::unique_ptr<Connection> conn;
                        if (attempt == 0) conn = impl->take_idle(*pool);
                        const bool reused = conn != nullptr;
                        if (!conn) {
                            phase = ClientFailure::connect_refused;
                            auto o = co_await connect(*impl, *target, ctx, conn);
                            if (o.failure != ClientFailure::none) {
                                fail(o.failure, std::move(o.error));
                                break;
                            }
                        }
                        phase = ClientFailure::read;
                        ClientResponse response;
                        bool keep_alive = false;
                        Outcome o;
                        if (conn->tls)
                            o = co_await exchange(*conn->tls, *conn, req, impl->options, response, keep_alive);
                        else
                            o = co_await exchange(*conn->plain, *conn, req, impl->options, response, keep_alive);
                        if (o.failure == ClientFailure::none) {
                            if (keep_alive) impl->put_idle(*pool, std::move(conn));
                            result.response = std::move(response);
                            break;
                        }
                        if (reused && attempt == 0 && o.retryable) continue;  // conn closes here
                        fail(o.failure, std::move(o.error));
                        break;
                    }
                    const auto f = result.failure;
                    if (result.response) {
                        const unsigned st = result.response->status;
                        impl->feedback(*pool, epoch, st == 429 || st == 503, target->host_header,
                                       "HTTP " + std::to_string(st));
                    } else if (f == ClientFailure::connect_timeout || f == ClientFailure::write_timeout ||
                               f == ClientFailure::read_timeout) {
                        impl->feedback(*pool, epoch, true, target->host_header, to_string(f));
                    }
                }
            }
        }
    } catch (const std::exception& e) {
        // Cancellation of the caller (operation_aborted thrown at a co_await) or resource exhaustion.
        result.response.reset();
        fail(phase, std::string("interrupted: ") + e.what());
    } catch (...) {
        result.response.reset();
        fail(phase, "interrupted");
    }
    result.latency = std::chrono::duration_cast<std::chrono::microseconds>(Clock::now() - started);
    co_return result;
}

}  // namespace

Client::Client(asio::any_io_executor ex, ClientOptions options)
    : impl_(std::make_shared<ClientImpl>(std::move(ex), options)) {}

Client::~Client() { impl_->shutdown(); }

asio::awaitable<ClientResult> Client::send(ClientRequest request) {
    // Not a coroutine itself: the work runs on a fresh strand and owns a reference to the internals, so nothing
    // refers to `this` once send() has returned.
    return asio::co_spawn(asio::make_strand(impl_->ex), run(impl_, std::move(request)), asio::use_awaitable);
}

std::size_t Client::open_connections() const { return impl_->open->load(); }

std::size_t Client::in_flight_limit(std::string_view url, const std::string& ca_file) const {
    std::string error;
    auto target = parse_target(url, error);
    if (!target) return 0;
    std::lock_guard lock(impl_->mutex);
    auto it = impl_->pools.find(pool_key(*target, ca_file));
    return it == impl_->pools.end() ? impl_->options.max_connections_per_host : ClientImpl::allowed(*it->second);
}

}  // namespace common::http
