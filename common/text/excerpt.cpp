#include "common/text/excerpt.hpp"

#include <algorithm>

#include "common/text/utf8.hpp"

namespace common::text {
namespace {

constexpr std::string_view kReplacement = "\xEF\xBF\xBD";  // U+FFFD

}  // namespace

std::string excerpt(std::string_view bytes, std::size_t max_bytes) {
    std::string out;
    out.reserve(std::min(bytes.size(), max_bytes));
    while (!bytes.empty()) {
        const std::size_t n = next_utf8(bytes).length;
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
