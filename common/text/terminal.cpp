#include "common/text/terminal.hpp"

#include <array>
#include <cstdint>

#include "common/text/utf8.hpp"

namespace common::text {
namespace {

constexpr std::string_view kHex = "0123456789abcdef";

/// C1 controls, and the format characters that change the order or the lines of what is displayed after them.
bool reorders_or_controls(std::uint32_t cp) {
    return (cp >= 0x80 && cp <= 0x9F) || cp == 0x061C || cp == 0x200E || cp == 0x200F ||
           (cp >= 0x2028 && cp <= 0x202E) || (cp >= 0x2066 && cp <= 0x2069);
}

void append_byte_escape(std::string& out, unsigned char b) {
    out += "\\x";
    out += kHex[b >> 4];
    out += kHex[b & 0x0F];
}

void append_code_point_escape(std::string& out, std::uint32_t cp) {
    out += "\\u{";
    std::array<char, 8> digits{};
    std::size_t n = 0;
    do {
        digits.at(n++) = kHex[cp & 0x0F];
        cp >>= 4;
    } while (cp != 0 || n < 4);
    while (n > 0) out += digits.at(--n);
    out += '}';
}

/// terminal_safe() and terminal_safe_json(): `double_backslash` is false for JSON, which escaped its own.
std::string escaped(std::string_view text, LineBreaks breaks, bool double_backslash) {
    std::string out;
    out.reserve(text.size());
    while (!text.empty()) {
        const auto [cp, n] = next_utf8(text);
        if (n == 0) {
            append_byte_escape(out, static_cast<unsigned char>(text[0]));
            text.remove_prefix(1);
            continue;
        }
        const bool kept_break = breaks == LineBreaks::keep && (cp == '\n' || cp == '\t');
        if (cp == '\\' && double_backslash) {
            out += "\\\\";
        } else if ((cp < 0x20 || cp == 0x7F) && !kept_break) {
            if (cp == '\n')
                out += "\\n";
            else if (cp == '\t')
                out += "\\t";
            else if (cp == '\r')
                out += "\\r";
            else
                append_byte_escape(out, static_cast<unsigned char>(cp));
        } else if (reorders_or_controls(cp)) {
            append_code_point_escape(out, cp);
        } else {
            out.append(text.substr(0, n));
        }
        text.remove_prefix(n);
    }
    return out;
}

}  // namespace

std::string terminal_safe(std::string_view text, LineBreaks breaks) { return escaped(text, breaks, true); }

std::string terminal_safe_json(std::string_view json) { return escaped(json, LineBreaks::escape, false); }

}  // namespace common::text
