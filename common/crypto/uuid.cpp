#include "common/crypto/uuid.hpp"

#include <array>
#include <chrono>
#include <cstdint>
#include <mutex>

#include "common/crypto/encoding.hpp"
#include "common/crypto/random.hpp"

namespace common::crypto {
namespace {

constexpr std::uint32_t kCounterMax = 0xFFF;       // 12 bits of rand_a
constexpr std::uint32_t kCounterSeedMask = 0x7FF;  // seeds leave the top bit clear: >= 2048 ids per ms

struct Clock {
    std::mutex mutex;
    std::uint64_t last_ms = 0;
    std::uint32_t counter = 0;
};

Clock& process_clock() {
    static Clock clock;
    return clock;
}

}  // namespace

std::string uuid_v7() {
    const auto now = std::chrono::system_clock::now().time_since_epoch();
    const auto now_ms = static_cast<std::uint64_t>(std::chrono::duration_cast<std::chrono::milliseconds>(now).count());
    const std::string random = random_bytes(10);
    const std::uint32_t seed =
        ((static_cast<unsigned char>(random[0]) << 8) | static_cast<unsigned char>(random[1])) & kCounterSeedMask;

    std::uint64_t ms = 0;
    std::uint32_t counter = 0;
    {
        Clock& clock = process_clock();
        const std::lock_guard lock(clock.mutex);
        if (now_ms > clock.last_ms) {
            clock.last_ms = now_ms;
            clock.counter = seed;
        } else if (++clock.counter > kCounterMax) {
            // Same millisecond (or the clock stepped back) and the counter is spent: borrow the next ms.
            ++clock.last_ms;
            clock.counter = seed;
        }
        ms = clock.last_ms;
        counter = clock.counter;
    }

    std::array<unsigned char, 16> bytes{};
    for (int i = 0; i < 6; ++i) {
        bytes[static_cast<std::size_t>(i)] = static_cast<unsigned char>((ms >> (8 * (5 - i))) & 0xFF);
    }
    bytes[6] = static_cast<unsigned char>(0x70 | (counter >> 8));
    bytes[7] = static_cast<unsigned char>(counter & 0xFF);
    bytes[8] = static_cast<unsigned char>(0x80 | (static_cast<unsigned char>(random[2]) & 0x3F));
    for (std::size_t i = 9; i < bytes.size(); ++i) {
        bytes[i] = static_cast<unsigned char>(random[i - 6]);
    }

    const std::string hex = hex_encode(std::string_view(reinterpret_cast<const char*>(bytes.data()), bytes.size()));
    std::string out;
    out.reserve(36);
    out.append(hex, 0, 8).append(1, '-');
    out.append(hex, 8, 4).append(1, '-');
    out.append(hex, 12, 4).append(1, '-');
    out.append(hex, 16, 4).append(1, '-');
    out.append(hex, 20, 12);
    return out;
}

}  // namespace common::crypto
