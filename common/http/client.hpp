#pragma once

#include <boost/asio/any_io_executor.hpp>
#include <boost/asio/awaitable.hpp>
#include <chrono>
#include <cstddef>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace common::http {

namespace detail {
struct ClientImpl;
}

/// Time-outs and bounds of a Client.
struct ClientOptions {
    std::chrono::milliseconds connect_timeout{5000};    ///< name resolution and TCP connect together
    std::chrono::milliseconds handshake_timeout{5000};  ///< the TLS handshake
    std::chrono::milliseconds write_timeout{10000};     ///< writing the whole request
    std::chrono::milliseconds read_timeout{15000};      ///< from the end of the request to the whole response
    /// Requests in flight per host at most; further ones wait. A host that signals overload (429, 503, a connect,
    /// write or read time-out) gets half as many at once, once per round of requests, down to one; each other
    /// answer adds 1/limit, so a round of answers adds one, back up to this ceiling.
    std::size_t max_connections_per_host = 8;
    /// How long a request waits for a slot of its host (see max_connections_per_host) before it gives up with
    /// queue_timeout, having sent nothing: nothing waits on a host without a deadline.
    std::chrono::milliseconds queue_timeout{5000};
    std::size_t max_response_body = 1024 * 1024;      ///< larger bodies fail with too_large
    std::chrono::milliseconds idle_keepalive{30000};  ///< idle pooled connections are closed after this
};

/// One outbound request.
struct ClientRequest {
    std::string method = "POST";
    std::string url;  ///< absolute: http://host:port/path?query or https://...; a fragment is dropped
    std::vector<std::pair<std::string, std::string>> headers;  ///< Host, Content-Length are set by the client
    std::string body;
    std::string ca_file;  ///< PEM trust anchors for https; empty: the system trust store
};

/// An HTTP answer, whatever its status.
struct ClientResponse {
    unsigned status = 0;
    std::vector<std::pair<std::string, std::string>> headers;
    std::string body;

    /// The first header with this name (case-insensitive).
    std::optional<std::string_view> header(std::string_view name) const;
};

/// Why a request got no HTTP answer. `bad_url` also covers a malformed method or header; `queue_timeout`: no slot
/// of the host came free within ClientOptions::queue_timeout, and nothing was sent.
enum class ClientFailure {
    none,
    bad_url,
    resolve,
    connect_refused,
    connect_timeout,
    tls_handshake,
    tls_verify,
    write,
    write_timeout,
    read,
    read_timeout,
    too_large,
    protocol,
    queue_timeout
};

/// The outcome of Client::send: a response, or a failure with a human reason.
struct ClientResult {
    std::optional<ClientResponse> response;  ///< set when an HTTP answer arrived
    ClientFailure failure = ClientFailure::none;
    std::string error;  ///< human text, never containing header values such as the token
    std::chrono::microseconds latency{0};
};

/// "connect_refused" and so on: stable names for logs and the attempts table.
std::string_view to_string(ClientFailure failure);

/// "scheme://host:port" of an absolute http(s) URL (scheme and host lower-cased, the default port written out);
/// nullopt when the URL cannot be used.
std::optional<std::string> origin(std::string_view url);

/// `base` without its trailing slashes, then `path` ("https://pos.example/" + "/api/orders").
std::string join_url(std::string_view base, std::string_view path);

/// An async HTTP/1.1 client with keep-alive pools per (scheme, host, port, ca_file), a bound on requests in
/// flight per host that backs off while the host signals overload (further requests wait in order, each until its
/// queue_timeout; a caller that cancels while waiting gives its place up), TLS 1.2+ with SNI and certificate and
/// host-name verification, and a time-out on every step.
///
/// Retry rule: a request is sent a second time (once, on a fresh connection) only when it failed on a *reused*
/// keep-alive connection before the server can have acted on it: the write failed (a write time-out does not
/// count), or the connection ended (EOF, reset, TLS truncation) before a single byte of the response arrived, which
/// is what a server closing an idle connection at that moment looks like. A failure on a fresh connection, any
/// time-out and a partial response are never retried here. Idle connections are also checked before reuse
/// (anything readable, such as the server's FIN, discards them). A server may thus, rarely, see a POST twice;
/// the POS's partner_reference idempotency covers that.
///
/// Thread-safe: send() may be called from any coroutine on any thread; each request runs on its own strand of the
/// executor given. One TLS context per distinct ca_file, made on first use and kept (a CA file changed on disk is
/// not re-read). Destroy the Client while no send() is in flight and before its io_context: the destructor closes
/// the pooled connections (a send() still running keeps the internals alive, but its connection is then closed
/// instead of pooled).
class Client {
public:
    /// Uses `ex` (an io_context's executor) for sockets, timers and strands.
    Client(boost::asio::any_io_executor ex, ClientOptions options = {});
    ~Client();
    Client(const Client&) = delete;
    Client& operator=(const Client&) = delete;

    /// Sends one request and reads its response; never throws for network or protocol errors (see failure).
    boost::asio::awaitable<ClientResult> send(ClientRequest request);
    /// Connections open now, idle or busy (for tests and metrics).
    std::size_t open_connections() const;
    /// How many requests the host of `url` is allowed in flight now (the ceiling for a host not yet used; 0 for a
    /// malformed URL).
    std::size_t in_flight_limit(std::string_view url, const std::string& ca_file = {}) const;

private:
    std::shared_ptr<detail::ClientImpl> impl_;
};

}  // namespace common::http
