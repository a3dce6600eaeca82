#include "common/http/client/exchange.hpp"

#include <boost/asio/as_tuple.hpp>
#include <boost/asio/connect.hpp>
#include <boost/asio/ssl/error.hpp>
#include <boost/asio/this_coro.hpp>
#include <boost/asio/use_awaitable.hpp>
#include <boost/beast/http/error.hpp>
#include <boost/beast/http/field.hpp>
#include <boost/beast/http/parser.hpp>
#include <boost/beast/http/read.hpp>
#include <boost/beast/http/verb.hpp>
#include <boost/beast/http/write.hpp>
#include <cstdint>

#include "common/http/client/tls.hpp"
#include "common/http/client/watchdog.hpp"

namespace common::http::detail {
namespace {

namespace asio = boost::asio;
namespace bhttp = boost::beast::http;
using tcp = asio::ip::tcp;
using Clock = std::chrono::steady_clock;
using ResponseParser = bhttp::response_parser<bhttp::string_body>;
constexpr auto kTuple = asio::as_tuple(asio::use_awaitable);
constexpr std::uint32_t kMaxResponseHeader = 64 * 1024;

bool eof_like(const boost::system::error_code& ec) {
    return ec == bhttp::error::end_of_stream || ec == asio::error::eof || ec == asio::error::connection_reset ||
           ec == asio::error::broken_pipe || ec == asio::ssl::error::stream_truncated;
}

/// Why a read that did not time out failed. Only an end before any byte of the response, with nothing left over
/// from an earlier one, is retryable: that is what a server closing an idle connection at that moment looks like.
Outcome read_failure(const boost::system::error_code& ec, const ResponseParser& parser, bool had_bytes,
                     const ClientOptions& o) {
    if (ec == bhttp::error::body_limit)
        return {ClientFailure::too_large,
                "the response body is larger than " + std::to_string(o.max_response_body) + " bytes"};
    if (ec == bhttp::error::header_limit) return {ClientFailure::too_large, "the response headers are too large"};
    if (!parser.got_some() && !had_bytes && eof_like(ec))
        return {ClientFailure::read, "the connection was closed before a response", true};
    if (ec.category() == bhttp::make_error_code(bhttp::error::bad_version).category() &&
        ec != bhttp::error::partial_message && ec != bhttp::error::end_of_stream)
        return {ClientFailure::protocol, "malformed response: " + ec.message()};
    return {ClientFailure::read, "reading the response failed: " + ec.message()};
}

template <class Stream>
asio::awaitable<Outcome> exchange_on(Stream& stream, Connection& c, WireRequest& req, const ClientOptions& o,
                                     ClientResponse& out, bool& keep_alive) {
    Watchdog watchdog(co_await asio::this_coro::executor);
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
        ResponseParser parser;
        parser.body_limit(o.max_response_body);
        parser.header_limit(kMaxResponseHeader);
        if (req.method() == bhttp::verb::head) parser.skip(true);
        const bool had_bytes = c.buffer.size() > 0;
        auto [rec, n] = co_await bhttp::async_read(stream, c.buffer, parser, kTuple);
        if (rec) {
            if (watchdog.fired()) co_return Outcome{ClientFailure::read_timeout, "no complete response in time"};
            co_return read_failure(rec, parser, had_bytes, o);
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

}  // namespace

bool build_request(const ClientRequest& r, const Target& t, WireRequest& req, std::string& error) {
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

asio::awaitable<Outcome> connect(Connection& c, const Target& t, const ClientOptions& o) {
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

    // Closing (not cancelling) stops the range connect from moving on to the next address.
    watchdog.arm(deadline, &c.socket(), nullptr, true);
    auto [cec, ep] = co_await asio::async_connect(c.socket(), endpoints, kTuple);
    watchdog.disarm();
    if (cec) {
        if (watchdog.fired())
            co_return Outcome{ClientFailure::connect_timeout, "connecting to " + where + " timed out"};
        co_return Outcome{ClientFailure::connect_refused, "cannot connect to " + where + ": " + cec.message()};
    }
    c.mark_open();
    boost::system::error_code ignored;
    c.socket().set_option(tcp::no_delay(true), ignored);
    if (c.tls) co_return co_await handshake(c, t, o.handshake_timeout);
    co_return Outcome{};
}

asio::awaitable<Outcome> exchange(Connection& c, WireRequest& req, const ClientOptions& o, ClientResponse& out,
                                  bool& keep_alive) {
    if (c.tls) co_return co_await exchange_on(*c.tls, c, req, o, out, keep_alive);
    co_return co_await exchange_on(*c.plain, c, req, o, out, keep_alive);
}

}  // namespace common::http::detail
