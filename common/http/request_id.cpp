#include "common/http/request_id.hpp"

#include <atomic>
#include <cstdio>
#include <random>

namespace common::http {

std::string new_request_id() {
    // A random per-process prefix and a counter: cheap on the hot path, and ids from restarts do not collide.
    static const std::uint32_t kPrefix = std::random_device{}();
    static std::atomic<std::uint32_t> counter{0};
    char buf[17];
    std::snprintf(buf, sizeof buf, "%08x%08x", kPrefix, counter.fetch_add(1, std::memory_order_relaxed));
    return buf;
}

}  // namespace common::http
