#pragma once

#include <optional>
#include <string>
#include <string_view>

namespace common::http {

/// The longest request id taken from a peer's X-Request-Id, in bytes.
inline constexpr std::size_t kMaxRequestId = 128;

/// A request id unique within the process and unlikely to repeat across processes: 16 hex characters.
std::string new_request_id();

/// Whether a peer's X-Request-Id can be kept as the request id: 1 to kMaxRequestId bytes, each visible ASCII
/// (0x21 to 0x7e: no space, no control character, nothing that could split a log line).
bool valid_request_id(std::string_view id);

/// The trace-id of a W3C `traceparent` header (`00-<32 hex>-<16 hex>-<2 hex>`, lowercase, neither id all zeros,
/// version not ff; a later version may append fields), or nullopt when the header is not one.
std::optional<std::string> trace_id_of(std::string_view traceparent);

/// The id a request is known by: its X-Request-Id when valid, else the trace-id of its traceparent when valid,
/// else a new one (new_request_id()).
std::string incoming_request_id(std::optional<std::string_view> x_request_id,
                                std::optional<std::string_view> traceparent);

/// A `traceparent` to send on behalf of a request with this id: the same trace-id when the id is one (32
/// lowercase hex, as taken from an incoming traceparent), else the first 128 bits of its SHA-256 (the same
/// trace for every call made for that id); a new random span id; sampled.
std::string traceparent_for(std::string_view request_id);

}  // namespace common::http
