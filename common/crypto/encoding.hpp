#pragma once

#include <optional>
#include <string>
#include <string_view>

/// Byte strings are carried in std::string throughout common::crypto (any byte value, including NUL).
namespace common::crypto {

/// Standard base64 (RFC 4648 section 4) with `=` padding and no line breaks.
std::string base64_encode(std::string_view data);

/// Strict standard base64 decode: nullopt for a wrong length, characters outside the alphabet, misplaced or
/// missing padding, whitespace, or non-zero padding bits (only the canonical encoding is accepted).
std::optional<std::string> base64_decode(std::string_view text);

/// URL-safe base64 (RFC 4648 section 5: `-` and `_`) without padding.
std::string base64url_encode(std::string_view data);

/// Strict URL-safe base64 decode of unpadded text; nullopt for anything base64url_encode would not produce.
std::optional<std::string> base64url_decode(std::string_view text);

/// Lowercase hexadecimal, two characters per byte.
std::string hex_encode(std::string_view data);
/// hex_encode into `out` (room for twice `data`'s bytes); returns the end of what it wrote.
char* hex_encode_to(std::string_view data, char* out);

/// Hexadecimal decode (either case); nullopt for an odd length or a non-hex character.
std::optional<std::string> hex_decode(std::string_view text);

}  // namespace common::crypto
