#include "common/http/client.hpp"

#include <strings.h>

#include <atomic>
#include <boost/asio/co_spawn.hpp>
#include <boost/asio/strand.hpp>
#include <boost/asio/use_awaitable.hpp>

#include "common/http/client/connection.hpp"
#include "common/http/client/exchange.hpp"
#include "common/http/client/host_pool.hpp"
#include "common/http/client/tls.hpp"
#include "common/http/client/url.hpp"

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
        case ClientFailure::queue_timeout: return "queue_timeout";
    }
    return "unknown";
}

namespace detail {

/// What the requests of one Client share; each request holds a reference, so it may outlive the Client.
struct ClientImpl {
    ClientImpl(boost::asio::any_io_executor e, ClientOptions o) : ex(std::move(e)), options(o) {
        if (options.max_connections_per_host == 0) options.max_connections_per_host = 1;
        hosts = std::make_shared<HostPools>(ex, options);
    }

    boost::asio::any_io_executor ex;  // of the connections (requests run on strands of it)
    ClientOptions options;
    std::shared_ptr<std::atomic<std::size_t>> open = std::make_shared<std::atomic<std::size_t>>(0);
    TlsContexts contexts;
    std::shared_ptr<HostPools> hosts;
};

}  // namespace detail

namespace {

namespace asio = boost::asio;
using detail::ClientImpl;
using detail::Connection;
using detail::HostPool;
using detail::HostPools;
using detail::Outcome;
using detail::Target;
using detail::WireRequest;
using Clock = std::chrono::steady_clock;

/// A checked request, ready for the wire.
struct Prepared {
    Target target;
    WireRequest req;
    std::shared_ptr<asio::ssl::context> ctx;  // for https
    std::string key;                          // of the host's pool
};

void fail(ClientResult& result, ClientFailure failure, std::string error) {
    result.failure = failure;
    result.error = std::move(error);
}

/// Parses the URL, builds the request and finds the TLS context; nullopt with the failure set in `result`.
std::optional<Prepared> prepare(ClientImpl& impl, const ClientRequest& request, ClientResult& result) {
    std::string error;
    Prepared p;
    auto target = detail::parse_target(request.url, error);
    if (!target || !detail::build_request(request, *target, p.req, error)) {
        fail(result, ClientFailure::bad_url, error);
        return std::nullopt;
    }
    p.target = std::move(*target);
    if (p.target.tls) {
        p.ctx = impl.contexts.get(request.ca_file, error);
        if (!p.ctx) {
            fail(result, ClientFailure::tls_verify, error);
            return std::nullopt;
        }
    }
    p.key = detail::pool_key(p.target, request.ca_file);
    return p;
}

/// Under a slot of the host: a pooled connection if there is one, else a fresh one; a second attempt on a fresh
/// connection only under the rule documented on Client (client.hpp): a reused connection, `Outcome::retryable`.
asio::awaitable<void> attempts(ClientImpl& impl, HostPool& pool, Prepared& p, ClientResult& result,
                               ClientFailure& phase) {
    for (int attempt = 0;; ++attempt) {
        std::unique_ptr<Connection> conn;
        if (attempt == 0) conn = impl.hosts->take_idle(pool);
        const bool reused = conn != nullptr;
        if (!conn) {
            phase = ClientFailure::connect_refused;
            conn = std::make_unique<Connection>(impl.ex, p.ctx, impl.open);
            auto o = co_await detail::connect(*conn, p.target, impl.options);
            if (o.failure != ClientFailure::none) {
                fail(result, o.failure, std::move(o.error));
                co_return;
            }
        }
        phase = ClientFailure::read;
        ClientResponse response;
        bool keep_alive = false;
        auto o = co_await detail::exchange(*conn, p.req, impl.options, response, keep_alive);
        if (o.failure == ClientFailure::none) {
            if (keep_alive) impl.hosts->put_idle(pool, std::move(conn));
            result.response = std::move(response);
            co_return;
        }
        if (reused && attempt == 0 && o.retryable) continue;  // conn closes here
        fail(result, o.failure, std::move(o.error));
        co_return;
    }
}

/// Tells the host's limit how the request sent at `epoch` went: an answer, or a time-out that signals overload.
void feed_back(ClientImpl& impl, HostPool& pool, std::uint64_t epoch, const Target& t, const ClientResult& result) {
    const auto f = result.failure;
    if (result.response) {
        const unsigned st = result.response->status;
        impl.hosts->feedback(pool, epoch, st == 429 || st == 503, t.host_header, "HTTP " + std::to_string(st));
    } else if (f == ClientFailure::connect_timeout || f == ClientFailure::write_timeout ||
               f == ClientFailure::read_timeout) {
        impl.hosts->feedback(pool, epoch, true, t.host_header, to_string(f));
    }
}

/// Waits for a slot of the host, runs the attempts under it and feeds the outcome back.
asio::awaitable<void> on_host(std::shared_ptr<ClientImpl> impl, Prepared& p, ClientResult& result,
                              ClientFailure& phase) {
    auto pool = impl->hosts->pool_for(p.key);
    phase = ClientFailure::connect_timeout;
    std::uint64_t epoch = 0;
    const auto wait = co_await impl->hosts->acquire(*pool, epoch);
    if (wait == HostPools::Wait::cancelled) {
        fail(result, ClientFailure::connect_timeout,
             "cancelled while waiting for a connection to " + p.target.host_header);
        co_return;
    }
    if (wait == HostPools::Wait::timed_out) {
        fail(result, ClientFailure::queue_timeout,
             "no connection to " + p.target.host_header + " came free within " +
                 std::to_string(impl->options.queue_timeout.count()) + " ms");
        co_return;
    }
    detail::Slot slot(impl->hosts, pool);
    co_await attempts(*impl, *pool, p, result, phase);
    feed_back(*impl, *pool, epoch, p.target, result);
}

/// The whole request on its own strand: prepare, then the work on the host; never throws.
asio::awaitable<ClientResult> run(std::shared_ptr<ClientImpl> impl, ClientRequest request) {
    const auto started = Clock::now();
    ClientResult result;
    ClientFailure phase = ClientFailure::bad_url;  // what an unexpected exception counts as
    try {
        if (auto prepared = prepare(*impl, request, result)) co_await on_host(impl, *prepared, result, phase);
    } catch (const std::exception& e) {
        // Cancellation of the caller (operation_aborted thrown at a co_await) or resource exhaustion.
        result.response.reset();
        fail(result, phase, std::string("interrupted: ") + e.what());
    } catch (...) {
        result.response.reset();
        fail(result, phase, "interrupted");
    }
    result.latency = std::chrono::duration_cast<std::chrono::microseconds>(Clock::now() - started);
    co_return result;
}

}  // namespace

Client::Client(asio::any_io_executor ex, ClientOptions options)
    : impl_(std::make_shared<ClientImpl>(std::move(ex), options)) {}

Client::~Client() { impl_->hosts->shutdown(); }

asio::awaitable<ClientResult> Client::send(ClientRequest request) {
    // Not a coroutine itself: the work runs on a fresh strand and owns a reference to the internals, so nothing
    // refers to `this` once send() has returned.
    return asio::co_spawn(asio::make_strand(impl_->ex), run(impl_, std::move(request)), asio::use_awaitable);
}

std::size_t Client::open_connections() const { return impl_->open->load(); }

std::size_t Client::in_flight_limit(std::string_view url, const std::string& ca_file) const {
    std::string error;
    auto target = detail::parse_target(url, error);
    return target ? impl_->hosts->in_flight_limit(detail::pool_key(*target, ca_file)) : 0;
}

}  // namespace common::http
