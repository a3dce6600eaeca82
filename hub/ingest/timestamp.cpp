#include "hub/ingest/timestamp.hpp"

#include <charconv>
#include <cstdlib>

namespace hub::ingest {
namespace {

constexpr int kMaxOffsetHours = 14;

// Reads exactly `count` ASCII digits at `pos`, advancing it; false when any of them is not a digit.
bool read_digits(std::string_view text, std::size_t& pos, std::size_t count, int& out) {
    if (text.size() - pos < count) {
        return false;
    }
    int value = 0;
    for (std::size_t i = 0; i < count; ++i) {
        const char c = text[pos + i];
        if (c < '0' || c > '9') {
            return false;
        }
        value = value * 10 + (c - '0');
    }
    pos += count;
    out = value;
    return true;
}

bool read_char(std::string_view text, std::size_t& pos, char expected) {
    if (pos >= text.size() || text[pos] != expected) {
        return false;
    }
    ++pos;
    return true;
}

bool is_digit(char c) { return c >= '0' && c <= '9'; }

// Parses the optional offset starting at `pos`; `pos` must then be the end of the text.
bool read_offset(std::string_view text, std::size_t& pos, std::optional<int>& offset) {
    if (pos == text.size()) {
        return true;
    }
    if (text[pos] == 'Z') {
        ++pos;
        offset = 0;
        return true;
    }
    if (text[pos] != '+' && text[pos] != '-') {
        return false;
    }
    const int sign = text[pos] == '-' ? -1 : 1;
    ++pos;
    int hours = 0;
    int minutes = 0;
    if (!read_digits(text, pos, 2, hours)) {
        return false;
    }
    if (pos < text.size() && text[pos] == ':') {
        ++pos;
    }
    if (!read_digits(text, pos, 2, minutes) || hours > kMaxOffsetHours || minutes > 59) {
        return false;
    }
    offset = sign * (hours * 60 + minutes);
    return true;
}

}  // namespace

bool is_leap_year(int year) { return (year % 4 == 0 && year % 100 != 0) || year % 400 == 0; }

int days_in_month(int year, int month) {
    static constexpr int kDays[12] = {31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31};
    if (month == 2 && is_leap_year(year)) {
        return 29;
    }
    return kDays[month - 1];
}

std::optional<Timestamp> parse_timestamp(std::string_view text) {
    Timestamp ts;
    std::size_t pos = 0;
    if (!read_digits(text, pos, 4, ts.year) || !read_char(text, pos, '-') || !read_digits(text, pos, 2, ts.month) ||
        !read_char(text, pos, '-') || !read_digits(text, pos, 2, ts.day)) {
        return std::nullopt;
    }
    if (pos >= text.size() || (text[pos] != 'T' && text[pos] != ' ')) {
        return std::nullopt;
    }
    ++pos;
    if (!read_digits(text, pos, 2, ts.hour) || !read_char(text, pos, ':') || !read_digits(text, pos, 2, ts.minute) ||
        !read_char(text, pos, ':') || !read_digits(text, pos, 2, ts.second)) {
        return std::nullopt;
    }
    if (pos < text.size() && text[pos] == '.') {
        ++pos;
        std::size_t digits = 0;
        int micros = 0;
        while (pos < text.size() && is_digit(text[pos])) {
            if (digits < 6) {
                micros = micros * 10 + (text[pos] - '0');
            }
            ++digits;
            ++pos;
        }
        if (digits == 0 || digits > 9) {
            return std::nullopt;
        }
        for (std::size_t i = digits; i < 6; ++i) {
            micros *= 10;
        }
        ts.micros = micros;
    }
    if (!read_offset(text, pos, ts.offset_minutes) || pos != text.size()) {
        return std::nullopt;
    }
    if (ts.year < 1 || ts.month < 1 || ts.month > 12 || ts.day < 1 || ts.day > days_in_month(ts.year, ts.month) ||
        ts.hour > 23 || ts.minute > 59 || ts.second > 59) {
        return std::nullopt;
    }
    return ts;
}

namespace {

/// Appends `value` as printf's %0*d does: at least `width` characters, the sign counted, zero-padded.
char* put_padded(char* at, long long value, int width) {
    if (value < 0) {
        *at++ = '-';
        --width;
    }
    const unsigned long long magnitude =
        value < 0 ? 0ULL - static_cast<unsigned long long>(value) : static_cast<unsigned long long>(value);
    char digits[24];
    const char* end = std::to_chars(digits, digits + sizeof digits, magnitude).ptr;
    for (auto n = static_cast<int>(end - digits); n < width; ++n) *at++ = '0';
    for (const char* d = digits; d != end; ++d) *at++ = *d;
    return at;
}

}  // namespace

std::string Timestamp::to_sql() const {
    SqlText buffer;
    return std::string(to_sql(buffer));
}

std::string_view Timestamp::to_sql(SqlText& text) const {
    // Every order formats its event time: digits by to_chars, not a printf format parsed each time.
    char* const buffer = text.data();
    char* p = put_padded(buffer, year, 4);
    *p++ = '-';
    p = put_padded(p, month, 2);
    *p++ = '-';
    p = put_padded(p, day, 2);
    *p++ = ' ';
    p = put_padded(p, hour, 2);
    *p++ = ':';
    p = put_padded(p, minute, 2);
    *p++ = ':';
    p = put_padded(p, second, 2);
    if (micros != 0) {
        *p++ = '.';
        p = put_padded(p, micros, 6);
    }
    if (offset_minutes) {
        const long long total = std::llabs(static_cast<long long>(*offset_minutes));
        *p++ = *offset_minutes < 0 ? '-' : '+';
        p = put_padded(p, total / 60, 2);
        *p++ = ':';
        p = put_padded(p, total % 60, 2);
    }
    return {buffer, static_cast<std::size_t>(p - buffer)};
}

}  // namespace hub::ingest
