#pragma once
// Where a request goes, read from its URL, and the checks on the text of a request line and header fields. Pure:
// no I/O, no Asio.

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

namespace common::http::detail {

/// Where a request goes, taken from its URL.
struct Target {
    bool tls = false;
    std::string host;  ///< a name, or an address without brackets: resolved, sent as SNI, verified
    bool host_is_address = false;
    std::uint16_t port = 0;
    std::string host_header;  ///< the Host field
    std::string resource;     ///< path and query
};

/// An absolute http or https URL without credentials, with a host that is a name (not percent-encoded) or an
/// IPv4 or IPv6 address, and a port between 1 and 65535 if any; a fragment is dropped. nullopt otherwise, with a
/// reason in `error` that never echoes the URL (a query string may carry a credential).
std::optional<Target> parse_target(std::string_view url, std::string& error);

/// The key of a target's connections and limits: one per scheme, host, port and (for https) CA file.
std::string pool_key(const Target& t, const std::string& ca_file);

/// An RFC 9110 token (a method or a field name).
bool is_token(std::string_view s);

/// A field value that cannot split the header: no CR, LF or NUL.
bool is_field_value(std::string_view s);

}  // namespace common::http::detail
