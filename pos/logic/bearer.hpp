#pragma once

#include <cstddef>
#include <optional>
#include <string>
#include <string_view>

namespace pos {

/// Longest bearer token looked up; a longer one is refused without touching the database.
inline constexpr std::size_t kMaxBearerTokenLength = 512;

/// The token of an `Authorization` header value `Bearer <token>` (scheme case-insensitive, spaces or tabs
/// around the token allowed). Nullopt when the header is absent, names another scheme, carries no token, a
/// token with white space or control characters inside, or one longer than kMaxBearerTokenLength. Pure.
std::optional<std::string> bearer_token(std::optional<std::string_view> header);

}  // namespace pos
