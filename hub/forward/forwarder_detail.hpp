#pragma once

// Small helpers shared by the forwarder's translation units (forwarder.cpp, forwarder_login.cpp,
// forwarder_tend.cpp); not part of the forwarder's interface.

#include <chrono>
#include <cstdint>
#include <string>
#include <string_view>

namespace hub::forward::detail {

/// `base` without its trailing slashes, then `path`.
inline std::string join_url(const std::string& base, std::string_view path) {
    std::string b = base;
    while (!b.empty() && b.back() == '/') b.pop_back();
    return b + std::string(path);
}

/// Wall-clock microseconds since the epoch (an attempt's start as the attempt log stores it).
inline std::int64_t unix_us() {
    return std::chrono::duration_cast<std::chrono::microseconds>(std::chrono::system_clock::now().time_since_epoch())
        .count();
}

}  // namespace hub::forward::detail
