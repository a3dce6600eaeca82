#include "hub/ingest/money.hpp"

#include <array>
#include <charconv>
#include <cmath>

namespace hub::ingest {
namespace {

// Rounds a finite double in [0, kMaxMoneyUnits] to thousandths, half away from zero: detail::money_by_text, without
// writing the text when the double is the one nearest to a number of thousandths r / 1000 (most amounts: "18.25").
// Then the shortest text of d rounds to r: any text that round-trips d lies within one unit in the last place of d
// (1.2e-7 at most below 1e9) of r / 1000, far from the 0.0005 that would round it elsewhere.
Money round_to_thousandths(double d) {
    const double thousandths = std::round(d * 1000);
    if (thousandths / 1000 == d) return static_cast<Money>(thousandths);
    return detail::money_by_text(d);
}

}  // namespace

namespace detail {

Money money_by_text(double d) {
    if (d == 0) {
        return 0;  // also -0.0, whose text would carry a sign
    }
    // The longest shortest-fixed text of a double below 1e9 is a subnormal: "0." + 323 zeros + digits.
    char buffer[400];
    const auto [end, ec] = std::to_chars(buffer, buffer + sizeof buffer, d, std::chars_format::fixed);
    if (ec != std::errc{}) {
        return static_cast<Money>(std::llround(d * 1000));  // unreachable with this buffer
    }
    const char* p = buffer;
    Money units = 0;
    for (; p != end && *p != '.'; ++p) {
        units = units * 10 + (*p - '0');
    }
    Money fraction = 0;
    int digits = 0;
    bool round_up = false;
    if (p != end) {
        ++p;
        for (; p != end && digits < 4; ++p, ++digits) {
            if (digits < 3) {
                fraction = fraction * 10 + (*p - '0');
            } else {
                round_up = *p >= '5';
            }
        }
    }
    for (; digits < 3; ++digits) {
        fraction *= 10;
    }
    return units * 1000 + fraction + (round_up ? 1 : 0);
}

}  // namespace detail

std::variant<Money, std::string_view> convert_money(const boost::json::value& v) {
    static constexpr std::string_view kNegative = "must not be negative";
    static constexpr std::string_view kTooLarge = "must be at most 1000000000";
    static_assert(kMaxMoneyUnits == 1'000'000'000, "update kTooLarge");
    switch (v.kind()) {
        case boost::json::kind::int64: {
            const std::int64_t i = v.get_int64();
            if (i < 0) {
                return kNegative;
            }
            if (i > kMaxMoneyUnits) {
                return kTooLarge;
            }
            return static_cast<Money>(i * 1000);
        }
        case boost::json::kind::uint64: return kTooLarge;  // Boost.JSON uses uint64 only above INT64_MAX
        case boost::json::kind::double_: {
            const double d = v.get_double();
            if (!std::isfinite(d)) {
                return std::string_view("must be a finite number");
            }
            if (d < 0) {
                return kNegative;
            }
            if (d > static_cast<double>(kMaxMoneyUnits)) {
                return kTooLarge;
            }
            return round_to_thousandths(d);
        }
        default: return std::string_view("must be a number");
    }
}

std::optional<Money> to_money(const boost::json::value& number) {
    auto converted = convert_money(number);
    if (const Money* amount = std::get_if<Money>(&converted)) {
        return *amount;
    }
    return std::nullopt;
}

std::string format_money(Money amount) {
    const bool negative = amount < 0;
    // Work on the magnitude as unsigned so that INT64_MIN cannot overflow.
    const auto magnitude = negative ? 0 - static_cast<std::uint64_t>(amount) : static_cast<std::uint64_t>(amount);
    // to_chars, not snprintf: an order formats 4 + 2 per item amounts, and a printf format is parsed each time.
    std::array<char, 32> buffer{};
    char* p = buffer.data();
    if (negative) *p++ = '-';
    p = std::to_chars(p, buffer.data() + buffer.size(), magnitude / 1000).ptr;  // at most 20 digits: fits
    const auto thousandths = static_cast<unsigned>(magnitude % 1000);
    *p++ = '.';
    *p++ = static_cast<char>('0' + thousandths / 100);
    *p++ = static_cast<char>('0' + thousandths / 10 % 10);
    *p++ = static_cast<char>('0' + thousandths % 10);
    return {buffer.data(), p};
}

}  // namespace hub::ingest
