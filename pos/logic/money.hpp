#pragma once

#include <cstdint>
#include <optional>
#include <string>

#include <boost/json/value.hpp>

namespace pos {

/// An amount of money in thousandths (three decimals, the scale of numeric(14,3)): 12.5 is 12500.
using Money = std::int64_t;

/// The largest amount numeric(14,3) holds: 99999999999.999.
inline constexpr Money kMaxMoney = 99'999'999'999'999;

/// The JSON number `value` in thousandths, rounded half away from zero on the decimal digits the number
/// was written with (1.0005 -> 1001, -2.0005 -> -2001), not on its binary approximation. Nullopt when
/// `value` is not a number or its magnitude exceeds kMaxMoney after rounding.
std::optional<Money> money_from_json(const boost::json::value& value);

/// `value` as a decimal with exactly three fraction digits ("12.500", "-0.001"), as PostgreSQL numeric input.
std::string format_money(Money value);

}  // namespace pos
