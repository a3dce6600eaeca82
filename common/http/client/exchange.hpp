#pragma once
// One attempt on the wire: open a connection, or carry one request and its response over an open one. Included by
// the client only (it brings Beast's message types).

#include <boost/asio/awaitable.hpp>
#include <boost/beast/http/message.hpp>
#include <boost/beast/http/string_body.hpp>
#include <string>

#include "common/http/client.hpp"
#include "common/http/client/connection.hpp"
#include "common/http/client/url.hpp"

namespace common::http::detail {

/// A request as it goes on the wire; built once, sent again on a retry.
using WireRequest = boost::beast::http::request<boost::beast::http::string_body>;

/// Builds the request for `t` from `r` (Host, User-Agent and Content-Length are ours; Transfer-Encoding is
/// dropped); false, with a reason naming no value, for a malformed method or header.
bool build_request(const ClientRequest& r, const Target& t, WireRequest& req, std::string& error);

/// Resolves `t` and connects `c` within `o.connect_timeout`, then (for a TLS connection) handshakes within
/// `o.handshake_timeout`. On failure `c` must be dropped.
boost::asio::awaitable<Outcome> connect(Connection& c, const Target& t, const ClientOptions& o);

/// Writes `req` and reads one final response into `out` (interim 1xx answers are skipped), within
/// `o.write_timeout` and then `o.read_timeout`. `keep_alive` tells whether `c` may carry another request.
boost::asio::awaitable<Outcome> exchange(Connection& c, WireRequest& req, const ClientOptions& o, ClientResponse& out,
                                         bool& keep_alive);

}  // namespace common::http::detail
