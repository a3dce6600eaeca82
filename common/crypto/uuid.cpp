#include "common/crypto/uuid.hpp"

#include <pthread.h>

#include <array>
#include <atomic>
#include <chrono>
#include <cstdint>
#include <mutex>
#include <string_view>

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

constexpr std::size_t kRandomPerId = 10;
constexpr std::size_t kIdsPerDraw = 64;

/// Bumped in a forked child, so that no thread of the child hands out bytes its parent may hand out too.
std::atomic<unsigned> g_fork_generation{0};

/// The random bytes of ids, drawn from OpenSSL's generator for kIdsPerDraw ids at a time: RAND_bytes costs about
/// 1 µs per call whatever it draws (10 bytes: 970 ns; 640 bytes: 16 ns per id), and the ingest path makes one id
/// per stored order. Each thread keeps its own bytes; bytes handed out are never handed out again. take()'s view
/// is valid until the thread's next take().
class RandomPool {
public:
    std::string_view take() {
        const unsigned generation = g_fork_generation.load(std::memory_order_relaxed);
        if (used_ == bytes_.size() || generation != generation_) {
            bytes_ = random_bytes(kRandomPerId * kIdsPerDraw);
            used_ = 0;
            generation_ = generation;
        }
        const std::string_view out(bytes_.data() + used_, kRandomPerId);
        used_ += kRandomPerId;
        return out;
    }

private:
    std::string bytes_;
    std::size_t used_ = 0;
    unsigned generation_ = 0;
};

std::string_view id_random_bytes() {
    [[maybe_unused]] static const int kForkHook =
        pthread_atfork(nullptr, nullptr, [] { g_fork_generation.fetch_add(1); });
    thread_local RandomPool pool;
    return pool.take();
}

}  // namespace

std::string uuid_v7() {
    const auto now = std::chrono::system_clock::now().time_since_epoch();
    const auto now_ms = static_cast<std::uint64_t>(std::chrono::duration_cast<std::chrono::milliseconds>(now).count());
    const std::string_view random = id_random_bytes();
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

    // 8-4-4-4-12 hex digits, written once (an order's id, every order).
    std::array<char, 36> text{};
    const auto* raw = reinterpret_cast<const char*>(bytes.data());
    char* p = text.data();
    std::size_t from = 0;
    for (const std::size_t group : {4, 2, 2, 2, 6}) {
        if (from != 0) *p++ = '-';
        p = hex_encode_to(std::string_view(raw + from, group), p);
        from += group;
    }
    return {text.data(), text.size()};
}

}  // namespace common::crypto
