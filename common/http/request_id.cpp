#include "common/http/request_id.hpp"

#include <openssl/rand.h>

#include <algorithm>
#include <array>
#include <atomic>
#include <random>

#include "common/crypto/digest.hpp"

namespace common::http {
namespace {

constexpr std::size_t kTraceIdHex = 32;
constexpr std::size_t kSpanIdHex = 16;
// "00-" trace-id "-" span-id "-" flags
constexpr std::size_t kTraceparentV0 = 2 + 1 + kTraceIdHex + 1 + kSpanIdHex + 1 + 2;

bool lower_hex(std::string_view s) {
    return std::all_of(s.begin(), s.end(), [](char c) { return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'f'); });
}

bool all_zeros(std::string_view s) {
    return std::all_of(s.begin(), s.end(), [](char c) { return c == '0'; });
}

std::string hex(const unsigned char* bytes, std::size_t n) {
    static constexpr char kDigits[] = "0123456789abcdef";
    std::string out;
    out.reserve(n * 2);
    for (std::size_t i = 0; i < n; ++i) {
        out += kDigits[bytes[i] >> 4];
        out += kDigits[bytes[i] & 0x0f];
    }
    return out;
}

bool is_trace_id(std::string_view s) { return s.size() == kTraceIdHex && lower_hex(s) && !all_zeros(s); }

}  // namespace

std::string new_request_id() {
    // A random per-process prefix and a counter: cheap on the hot path, and ids from restarts do not collide.
    static const std::uint32_t kPrefix = std::random_device{}();
    static std::atomic<std::uint32_t> counter{0};
    // Written digit by digit: snprintf parsed its format for every request without an id of its own (1 % of the
    // hub's network thread at 64 connections).
    const std::uint64_t id = (std::uint64_t{kPrefix} << 32) | counter.fetch_add(1, std::memory_order_relaxed);
    static constexpr char kDigits[] = "0123456789abcdef";
    std::string out(16, '0');
    for (std::size_t i = 0; i < out.size(); ++i) out[out.size() - 1 - i] = kDigits[(id >> (4 * i)) & 0xF];
    return out;
}

bool valid_request_id(std::string_view id) {
    return !id.empty() && id.size() <= kMaxRequestId &&
           std::all_of(id.begin(), id.end(), [](char c) { return c > 0x20 && c < 0x7f; });
}

std::optional<std::string> trace_id_of(std::string_view tp) {
    if (tp.size() < kTraceparentV0) return std::nullopt;
    const std::string_view version = tp.substr(0, 2);
    const std::string_view trace = tp.substr(3, kTraceIdHex);
    const std::string_view span = tp.substr(3 + kTraceIdHex + 1, kSpanIdHex);
    const std::string_view flags = tp.substr(kTraceparentV0 - 2, 2);
    if (!lower_hex(version) || version == "ff" || tp[2] != '-' || tp[3 + kTraceIdHex] != '-' ||
        tp[kTraceparentV0 - 3] != '-' || !is_trace_id(trace) || span.size() != kSpanIdHex || !lower_hex(span) ||
        all_zeros(span) || !lower_hex(flags))
        return std::nullopt;
    // Version 00 is exactly this long; a later version may carry more after a dash.
    if (tp.size() > kTraceparentV0 && (version == "00" || tp[kTraceparentV0] != '-')) return std::nullopt;
    return std::string(trace);
}

std::string incoming_request_id(std::optional<std::string_view> x_request_id,
                                std::optional<std::string_view> traceparent) {
    if (x_request_id && valid_request_id(*x_request_id)) return std::string(*x_request_id);
    if (traceparent)
        if (auto trace = trace_id_of(*traceparent)) return *trace;
    return new_request_id();
}

std::string traceparent_for(std::string_view request_id) {
    std::string trace;
    if (is_trace_id(request_id)) {
        trace = std::string(request_id);
    } else {
        // The first 16 bytes of its SHA-256 (the digest's fetched algorithm: no lookup per delivery).
        const std::string digest = crypto::sha256(request_id);
        trace = hex(reinterpret_cast<const unsigned char*>(digest.data()), kTraceIdHex / 2);
        if (all_zeros(trace)) trace.back() = '1';
    }
    std::array<unsigned char, kSpanIdHex / 2> span{};
    if (RAND_bytes(span.data(), static_cast<int>(span.size())) != 1 || all_zeros(hex(span.data(), span.size())))
        span.back() = 1;
    return "00-" + trace + "-" + hex(span.data(), span.size()) + "-01";
}

}  // namespace common::http
