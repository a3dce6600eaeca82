#include "common/text/utf8.hpp"

namespace common::text {

Utf8Char next_utf8(std::string_view s) {
    if (s.empty()) return {};
    const auto byte = [&](std::size_t i) { return static_cast<unsigned char>(s[i]); };
    const unsigned char b = byte(0);
    if (b < 0x80) return {b, 1};
    std::size_t n = 0;
    std::uint32_t cp = 0;
    unsigned char lo = 0x80;  // the range of the second byte, narrowed where the first byte requires it
    unsigned char hi = 0xBF;
    if (b >= 0xC2 && b <= 0xDF) {
        n = 2;
        cp = b & 0x1Fu;
    } else if (b >= 0xE0 && b <= 0xEF) {
        n = 3;
        cp = b & 0x0Fu;
        if (b == 0xE0) lo = 0xA0;  // overlong
        if (b == 0xED) hi = 0x9F;  // surrogates
    } else if (b >= 0xF0 && b <= 0xF4) {
        n = 4;
        cp = b & 0x07u;
        if (b == 0xF0) lo = 0x90;  // overlong
        if (b == 0xF4) hi = 0x8F;  // above U+10FFFF
    } else {
        return {};
    }
    if (s.size() < n || byte(1) < lo || byte(1) > hi) return {};
    for (std::size_t i = 1; i < n; ++i) {
        if ((byte(i) & 0xC0) != 0x80) return {};
        cp = (cp << 6) | (byte(i) & 0x3Fu);
    }
    return {cp, n};
}

bool is_utf8(std::string_view s) {
    while (!s.empty()) {
        const std::size_t n = next_utf8(s).length;
        if (n == 0) return false;
        s.remove_prefix(n);
    }
    return true;
}

}  // namespace common::text
