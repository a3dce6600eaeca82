#pragma once

#include <cstddef>
#include <cstdint>
#include <string_view>

namespace common::text {

/// One character decoded from UTF-8.
struct Utf8Char {
    std::uint32_t code_point = 0;
    std::size_t length = 0;  ///< its bytes; 0 when the text does not start with a well-formed character
};

/// The well-formed UTF-8 character at the start of `s` (RFC 3629: no overlong forms, no surrogates, nothing above
/// U+10FFFF), or length 0 when `s` does not start with one (or is empty). Pure.
Utf8Char next_utf8(std::string_view s);

/// True when all of `s` is well-formed UTF-8. Pure.
bool is_utf8(std::string_view s);

}  // namespace common::text
