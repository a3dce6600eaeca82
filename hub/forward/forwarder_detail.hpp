#pragma once

// A small helper shared by the forwarder's translation units (forwarder.cpp, forwarder_login.cpp,
// forwarder_tend.cpp); not part of the forwarder's interface.

#include <chrono>
#include <cstdint>

namespace hub::forward::detail {

/// Wall-clock microseconds since the epoch (an attempt's start as the attempt log stores it).
inline std::int64_t unix_us() {
    return std::chrono::duration_cast<std::chrono::microseconds>(std::chrono::system_clock::now().time_since_epoch())
        .count();
}

}  // namespace hub::forward::detail
