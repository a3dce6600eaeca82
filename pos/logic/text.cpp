#include "pos/logic/text.hpp"

#include <algorithm>

namespace pos {

std::size_t utf8_length(std::string_view text) {
    // Count every byte that does not continue a multi-byte sequence (10xxxxxx).
    return static_cast<std::size_t>(
        std::count_if(text.begin(), text.end(), [](char c) { return (static_cast<unsigned char>(c) & 0xC0) != 0x80; }));
}

bool is_blank(std::string_view text) { return text.find_first_not_of(" \t\n\r\f\v") == std::string_view::npos; }

}  // namespace pos
