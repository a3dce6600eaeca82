#include "common/text/excerpt.hpp"

#include <algorithm>

namespace common::text {
namespace {

constexpr std::string_view kReplacement = "\xEF\xBF\xBD";  // U+FFFD

/// The length of the well-formed UTF-8 character at the start of `s` (RFC 3629: no overlong forms, no
/// surrogates, nothing above U+10FFFF), or 0 when `s` does not start with one.
std::size_t character_length(std::string_view s) {
    const auto byte = [&](std::size_t i) { return static_cast<unsigned char>(s[i]); };
    const unsigned char b = byte(0);
    if (b < 0x80) return 1;
    std::size_t n = 0;
    unsigned char lo = 0x80;  // the range of the second byte, narrowed where the first byte requires it
    unsigned char hi = 0xBF;
    if (b >= 0xC2 && b <= 0xDF) {
        n = 2;
    } else if (b >= 0xE0 && b <= 0xEF) {
        n = 3;
        if (b == 0xE0) lo = 0xA0;  // overlong
        if (b == 0xED) hi = 0x9F;  // surrogates
    } else if (b >= 0xF0 && b <= 0xF4) {
        n = 4;
        if (b == 0xF0) lo = 0x90;  // overlong
        if (b == 0xF4) hi = 0x8F;  // above U+10FFFF
    } else {
        return 0;
    }
    if (s.size() < n || byte(1) < lo || byte(1) > hi) return 0;
    for (std::size_t i = 2; i < n; ++i)
        if ((byte(i) & 0xC0) != 0x80) return 0;
    return n;
}

}  // namespace

std::string excerpt(std::string_view bytes, std::size_t max_bytes) {
    std::string out;
    out.reserve(std::min(bytes.size(), max_bytes));
    while (!bytes.empty()) {
        const std::size_t n = character_length(bytes);
        const auto b = static_cast<unsigned char>(bytes[0]);
        const std::string_view piece = n == 0                                ? kReplacement
                                       : (n == 1 && (b < 0x20 || b == 0x7F)) ? " "
                                                                             : bytes.substr(0, n);
        if (out.size() + piece.size() > max_bytes) break;
        out += piece;
        bytes.remove_prefix(n == 0 ? 1 : n);
    }
    return out;
}

std::string printable(std::string_view bytes) { return excerpt(bytes, std::string::npos); }

}  // namespace common::text
