#pragma once

#include <array>
#include <optional>
#include <string>
#include <string_view>

namespace hub::ingest {

// Accepted timestamp grammar (exactly, no surrounding spaces; the schemas' `timestamp` pattern mirrors it):
//
//   YYYY-MM-DD{T| }HH:MM:SS[.f{1,9}][Z | {+|-}HH:MM | {+|-}HHMM]
//
// - Both the interface's `YYYY-MM-DD HH:MM:SS` and ISO 8601 with `T` take the same optional parts.
// - Year 0001-9999; the calendar is checked (leap years by the Gregorian rule, no Feb 30, no Apr 31).
// - Hour 00-23, minute 00-59, second 00-59: a leap second (60) is refused, since PostgreSQL would roll it
//   into the next minute and hub ordering by event_time would become ambiguous.
// - The fraction keeps microseconds; digits 7-9 are truncated (never rounded, so no carry into seconds).
// - Offset hours 00-14 (the real-world range is -12:00..+14:00), minutes 00-59; `Z` and `-00:00` mean 0.
//   Only upper-case `T` and `Z` are accepted.
// - Without an offset the time is local to the partner's time zone: offset_minutes stays empty.

/// A validated calendar timestamp with an optional UTC offset; plain data, no time-zone database involved.
struct Timestamp {
    int year = 1970;
    int month = 1;
    int day = 1;
    int hour = 0;
    int minute = 0;
    int second = 0;
    int micros = 0;                     ///< 0-999999
    std::optional<int> offset_minutes;  ///< east of UTC; empty when the text had no offset

    /// Renders for PostgreSQL: "2024-05-01 12:30:00.123456+03:00", or "2024-05-01 12:30:00.123456" without
    /// an offset (cast to timestamp, then AT TIME ZONE the partner's zone); the fraction is omitted when 0.
    std::string to_sql() const;
    /// Room for to_sql()'s text: seven fields of at most 11 characters each and the punctuation.
    using SqlText = std::array<char, 96>;
    /// to_sql() written into `buffer`, without allocating; the text views `buffer`.
    std::string_view to_sql(SqlText& buffer) const;

    bool operator==(const Timestamp&) const = default;
};

/// Parses the grammar above; std::nullopt for anything else, including impossible dates and times.
std::optional<Timestamp> parse_timestamp(std::string_view text);

/// True for leap years of the proleptic Gregorian calendar.
bool is_leap_year(int year);

/// Number of days of `month` (1-12) in `year`.
int days_in_month(int year, int month);

}  // namespace hub::ingest
