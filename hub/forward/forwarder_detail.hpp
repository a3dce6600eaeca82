#pragma once

// Small helpers shared by the forwarder's translation units (forwarder.cpp, forwarder_login.cpp,
// forwarder_tend.cpp); not part of the forwarder's interface.

#include <chrono>
#include <cstdint>
#include <string>

#include "common/http/client.hpp"
#include "common/http/request_id.hpp"

namespace hub::forward::detail {

/// Wall-clock microseconds since the epoch (an attempt's start as the attempt log stores it).
inline std::int64_t unix_us() {
    return std::chrono::duration_cast<std::chrono::microseconds>(std::chrono::system_clock::now().time_since_epoch())
        .count();
}

/// Names the platform request that created the order on a call to the POS: X-Request-Id (the same id) and a
/// traceparent (the same trace, a new span). Nothing when the order predates request ids.
inline void add_trace_headers(common::http::ClientRequest& req, const std::string& request_id) {
    if (request_id.empty()) return;
    req.headers.emplace_back("X-Request-Id", request_id);
    req.headers.emplace_back("traceparent", common::http::traceparent_for(request_id));
}

}  // namespace hub::forward::detail
