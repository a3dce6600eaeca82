#pragma once

#include <optional>
#include <string>
#include <string_view>

namespace hub::admin {

/// An RFC 3339 date-time with its offset (`2026-11-22T08:00:00Z`, `2026-11-22T10:00:00.5+02:00`; a space may stand
/// for the `T`) rendered for PostgreSQL's timestamptz; std::nullopt for anything else, a time without an offset
/// included (it would be ambiguous).
std::optional<std::string> rfc3339_to_sql(std::string_view text);

}  // namespace hub::admin
