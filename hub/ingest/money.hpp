#pragma once

// Money of webhook bodies: amounts in thousandths of the currency unit, read from JSON numbers and written with
// three decimals (hub/ingest/validate.hpp holds the rules that use them).
//
// Decisions:
//   - The number is read through the shortest decimal text that round-trips its double (std::to_chars), then
//     rounded half away from zero at the third decimal, so 20.0005 -> 20001, 0.0001 -> 0,
//     0.30000000000000004 -> 300. Bounds (0 to kMaxMoneyUnits) apply before rounding.

#include <boost/json/value.hpp>

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <variant>

namespace hub::ingest {

inline constexpr std::int64_t kMaxMoneyUnits = 1'000'000'000;

/// Amount in thousandths of the currency unit: 20.5 -> 20500.
using Money = std::int64_t;

/// Converts a JSON number to Money; on failure the problem in words ("must not be negative", ...).
std::variant<Money, std::string_view> convert_money(const boost::json::value& v);

/// Converts a JSON number to Money (rounding above); std::nullopt for non-numbers (booleans included),
/// negative, non-finite or above kMaxMoneyUnits.
std::optional<Money> to_money(const boost::json::value& number);

/// Renders Money with exactly three decimals: 20500 -> "20.500".
std::string format_money(Money amount);

namespace detail {
/// A finite double in [0, kMaxMoneyUnits] rounded to thousandths, half away from zero, read from the shortest
/// decimal text that round-trips it: that text is what the partner wrote, so 20.0005 (stored as
/// 20.000499999999998...) still rounds up. convert_money skips the text when it can (tests hold both equal).
Money money_by_text(double d);
}  // namespace detail

}  // namespace hub::ingest
