#pragma once

#include <boost/asio/awaitable.hpp>
#include <boost/json/fwd.hpp>
#include <chrono>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace common::http {

/// A parsed HTTP request as handlers see it; Beast types stay inside the server.
struct Request {
    std::string method;  ///< "POST"
    std::string target;  ///< "/webhooks/abc?x=1"
    std::string path;    ///< "/webhooks/abc"
    std::vector<std::pair<std::string, std::string>> headers;
    std::string body;
    std::string request_id;  ///< the caller's valid X-Request-Id or traceparent trace-id, else generated; echoed
    std::string trace_id;    ///< the trace-id of the caller's valid traceparent, "" without one
    std::string remote;      ///< peer address

    /// The first header with this name (case-insensitive).
    std::optional<std::string_view> header(std::string_view name) const;
};

/// Fields a handler adds to its request's access-log line, which the application's metrics may read too
/// ({"partner", "p1"}). The transport carries them and never interprets them. Keys are static strings; values never
/// hold secrets, keys, bodies or phone numbers.
class LogFields {
public:
    /// Sets `key` (a static string) to `value`, replacing an earlier value.
    void set(std::string_view key, std::string value);
    /// The value of `key`, or "" when it was not set.
    std::string_view get(std::string_view key) const;
    /// The fields in the order they were first set.
    const std::vector<std::pair<std::string_view, std::string>>& items() const { return items_; }

private:
    std::vector<std::pair<std::string_view, std::string>> items_;
};

/// The writing end of a streamed response (Server-Sent Events). Its coroutine methods run on the connection's
/// executor (its strand, or the one network thread) and must be awaited from the stream function only; wake() may
/// be called from any thread.
class StreamWriter {
public:
    virtual ~StreamWriter() = default;
    /// Writes `chunk` under the write time-out; false when the peer is gone or the write failed.
    virtual boost::asio::awaitable<bool> write(std::string chunk) = 0;
    /// Waits up to `d`; returns early after wake(), when the peer closes the connection or when the server stops.
    /// False when the stream must end (peer gone, server stopping).
    virtual boost::asio::awaitable<bool> wait(std::chrono::milliseconds d) = 0;
    /// Ends the current (or the next) wait() early. Thread-safe.
    virtual void wake() = 0;
};

/// Produces a streamed body; the connection is closed when it returns.
using StreamFn = std::function<boost::asio::awaitable<void>(std::shared_ptr<StreamWriter>)>;

/// A response; `body` is sent as is with `content_type`.
struct Response {
    unsigned status = 200;
    std::string body;
    std::string_view content_type = "application/json";  ///< a static text: a literal or a constant
    std::vector<std::pair<std::string, std::string>> headers;
    bool close = false;  ///< close the connection after this response
    /// An answer to a request for something that does not exist (an unknown webhook key): counted against the
    /// connection's budget (Limits::max_refusals, one earned back per refusal_delay), past which the answer is
    /// held about refusal_delay before it is written (common/http/server.cpp).
    bool refusal = false;
    LogFields log;  ///< for the access log and metrics; not sent
    /// When set, the headers go out without a length, `body` is ignored, and the stream function writes the body
    /// until it returns; then the connection closes (an HTTP/1.1 body delimited by the close).
    StreamFn stream{};
};

/// A JSON response.
Response json_response(unsigned status, const boost::json::value& body);

/// The reason phrase of a status code ("Not Found").
std::string_view reason(unsigned status);

}  // namespace common::http
