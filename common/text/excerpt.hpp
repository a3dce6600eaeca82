#pragma once

#include <cstddef>
#include <string>
#include <string_view>

namespace common::text {

/// `bytes` from another system (a POS's answer, say) as text that PostgreSQL, JSON and a log line all accept:
/// each byte that does not belong to a well-formed UTF-8 character becomes U+FFFD, each control character (NUL,
/// line breaks, ...) a space. Pure.
std::string printable(std::string_view bytes);

/// The start of `printable(bytes)`, at most `max_bytes` long and cut between characters: a character the limit
/// would split is left out whole. Pure.
std::string excerpt(std::string_view bytes, std::size_t max_bytes);

}  // namespace common::text
