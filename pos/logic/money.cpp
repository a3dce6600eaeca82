#include "pos/logic/money.hpp"

#include <charconv>
#include <cmath>
#include <cstdlib>

namespace pos {
namespace {

// At or above this nothing rounds into kMaxMoney; checked before any integer arithmetic.
constexpr double kMagnitudeLimit = 1e12;

std::optional<Money> checked(Money value) {
    if (value > kMaxMoney || value < -kMaxMoney) {
        return std::nullopt;
    }
    return value;
}

// Rounds a finite double on its shortest round-trip decimal form ("1.0005e+00"), which is the text the
// sender wrote whenever that had 17 significant digits or fewer.
std::optional<Money> from_double(double value) {
    if (!std::isfinite(value) || std::fabs(value) >= kMagnitudeLimit) {
        return std::nullopt;
    }
    char buffer[64];
    const auto [end, error] =
        std::to_chars(buffer, buffer + sizeof(buffer), std::fabs(value), std::chars_format::scientific);
    if (error != std::errc{}) {
        return std::nullopt;
    }
    const std::string_view text(buffer, static_cast<std::size_t>(end - buffer));
    const std::size_t exponent_at = text.find('e');
    std::string digits;
    for (const char c : text.substr(0, exponent_at)) {
        if (c != '.') {
            digits.push_back(c);
        }
    }
    const int exponent = std::atoi(std::string(text.substr(exponent_at + 1)).c_str());
    // value = 0.d1d2d3... * 10^(exponent + 1), so the digits before the point of value * 1000 number:
    const int integer_digits = exponent + 1 + 3;
    Money magnitude = 0;
    for (int i = 0; i < integer_digits; ++i) {
        const char digit = i < static_cast<int>(digits.size()) ? digits[static_cast<std::size_t>(i)] : '0';
        magnitude = magnitude * 10 + (digit - '0');
    }
    // Half away from zero: the first dropped digit decides, ties included.
    const int first_dropped = integer_digits < 0 ? -1 : integer_digits;
    if (first_dropped >= 0 && first_dropped < static_cast<int>(digits.size()) &&
        digits[static_cast<std::size_t>(first_dropped)] >= '5') {
        ++magnitude;
    }
    return checked(value < 0 ? -magnitude : magnitude);
}

}  // namespace

std::optional<Money> money_from_json(const boost::json::value& value) {
    if (value.is_int64()) {
        const std::int64_t whole = value.get_int64();
        if (whole > kMaxMoney / 1000 + 1 || whole < -(kMaxMoney / 1000 + 1)) {
            return std::nullopt;
        }
        return checked(whole * 1000);
    }
    if (value.is_uint64()) {
        const std::uint64_t whole = value.get_uint64();
        if (whole > static_cast<std::uint64_t>(kMaxMoney / 1000)) {
            return std::nullopt;
        }
        return checked(static_cast<Money>(whole) * 1000);
    }
    if (value.is_double()) {
        return from_double(value.get_double());
    }
    return std::nullopt;
}

std::string format_money(Money value) {
    // Work on the magnitude as unsigned so that the most negative value does not overflow.
    const bool negative = value < 0;
    const std::uint64_t magnitude =
        negative ? static_cast<std::uint64_t>(-(value + 1)) + 1 : static_cast<std::uint64_t>(value);
    std::string fraction = std::to_string(magnitude % 1000);
    fraction.insert(0, 3 - fraction.size(), '0');
    return (negative ? "-" : "") + std::to_string(magnitude / 1000) + "." + fraction;
}

}  // namespace pos
