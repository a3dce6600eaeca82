#include "hub/ingest/timestamp.hpp"

#include <catch2/catch.hpp>

#include <cstdio>
#include <cstdlib>
#include <random>
#include <string>

namespace {

using hub::ingest::parse_timestamp;
using hub::ingest::Timestamp;

Timestamp make(int year, int month, int day, int hour, int minute, int second, int micros = 0,
               std::optional<int> offset = std::nullopt) {
    return Timestamp{year, month, day, hour, minute, second, micros, offset};
}

}  // namespace

TEST_CASE("parse_timestamp reads the interface format YYYY-MM-DD HH:MM:SS", "[timestamp]") {
    const auto ts = parse_timestamp("2024-05-01 12:30:07");
    REQUIRE(ts);
    CHECK(*ts == make(2024, 5, 1, 12, 30, 7));
    CHECK_FALSE(ts->offset_minutes.has_value());
}

TEST_CASE("parse_timestamp reads ISO 8601 with T, fractions and offsets", "[timestamp]") {
    CHECK(parse_timestamp("2024-05-01T12:30:07") == make(2024, 5, 1, 12, 30, 7));
    CHECK(parse_timestamp("2024-05-01T12:30:07Z") == make(2024, 5, 1, 12, 30, 7, 0, 0));
    CHECK(parse_timestamp("2024-05-01T12:30:07+03:00") == make(2024, 5, 1, 12, 30, 7, 0, 180));
    CHECK(parse_timestamp("2024-05-01T12:30:07+0530") == make(2024, 5, 1, 12, 30, 7, 0, 330));
    CHECK(parse_timestamp("2024-05-01T12:30:07-04:30") == make(2024, 5, 1, 12, 30, 7, 0, -270));
    CHECK(parse_timestamp("2024-05-01T12:30:07-0100") == make(2024, 5, 1, 12, 30, 7, 0, -60));
    CHECK(parse_timestamp("2024-05-01T12:30:07-00:00") == make(2024, 5, 1, 12, 30, 7, 0, 0));
    CHECK(parse_timestamp("2024-05-01T12:30:07+14:59") == make(2024, 5, 1, 12, 30, 7, 0, 899));
    CHECK(parse_timestamp("2024-05-01T12:30:07-14:00") == make(2024, 5, 1, 12, 30, 7, 0, -840));
    // The space form takes the same optional parts.
    CHECK(parse_timestamp("2024-05-01 12:30:07.25+02:00") == make(2024, 5, 1, 12, 30, 7, 250000, 120));
}

TEST_CASE("parse_timestamp keeps microseconds of the fraction and truncates the rest", "[timestamp]") {
    CHECK(parse_timestamp("2024-05-01T12:30:07.5")->micros == 500000);
    CHECK(parse_timestamp("2024-05-01T12:30:07.000001")->micros == 1);
    CHECK(parse_timestamp("2024-05-01T12:30:07.123456")->micros == 123456);
    CHECK(parse_timestamp("2024-05-01T12:30:07.1234567Z")->micros == 123456);
    CHECK(parse_timestamp("2024-05-01T12:30:07.999999999Z") == make(2024, 5, 1, 12, 30, 7, 999999, 0));
    CHECK(parse_timestamp("2024-05-01T12:30:07.0000009")->micros == 0);
    CHECK_FALSE(parse_timestamp("2024-05-01T12:30:07.1234567890"));  // 10 digits
    CHECK_FALSE(parse_timestamp("2024-05-01T12:30:07."));
    CHECK_FALSE(parse_timestamp("2024-05-01T12:30:07.Z"));
    CHECK_FALSE(parse_timestamp("2024-05-01T12:30:07,5"));
}

TEST_CASE("parse_timestamp checks the calendar", "[timestamp]") {
    CHECK(parse_timestamp("2024-02-29 00:00:00"));
    CHECK(parse_timestamp("2000-02-29 00:00:00"));
    CHECK(parse_timestamp("1600-02-29 00:00:00"));
    CHECK_FALSE(parse_timestamp("2023-02-29 00:00:00"));
    CHECK_FALSE(parse_timestamp("1900-02-29 00:00:00"));
    CHECK_FALSE(parse_timestamp("2024-02-30 00:00:00"));
    CHECK_FALSE(parse_timestamp("2024-04-31 00:00:00"));
    CHECK_FALSE(parse_timestamp("2024-06-31 00:00:00"));
    CHECK(parse_timestamp("2024-01-31 00:00:00"));
    CHECK(parse_timestamp("2024-12-31 23:59:59"));
    CHECK_FALSE(parse_timestamp("2024-00-10 00:00:00"));
    CHECK_FALSE(parse_timestamp("2024-13-10 00:00:00"));
    CHECK_FALSE(parse_timestamp("2024-05-00 00:00:00"));
    CHECK_FALSE(parse_timestamp("2024-05-32 00:00:00"));
    CHECK_FALSE(parse_timestamp("0000-01-01 00:00:00"));
    CHECK(parse_timestamp("0001-01-01 00:00:00"));
    CHECK(parse_timestamp("9999-12-31 23:59:59"));
}

TEST_CASE("parse_timestamp checks the clock and refuses leap seconds", "[timestamp]") {
    CHECK(parse_timestamp("2024-05-01 23:59:59"));
    CHECK(parse_timestamp("2024-05-01 00:00:00"));
    CHECK_FALSE(parse_timestamp("2024-05-01 24:00:00"));
    CHECK_FALSE(parse_timestamp("2024-05-01 12:60:00"));
    CHECK_FALSE(parse_timestamp("2024-06-30 23:59:60"));
    CHECK_FALSE(parse_timestamp("2024-06-30T23:59:60Z"));
}

TEST_CASE("parse_timestamp refuses other shapes", "[timestamp]") {
    for (const char* text : {
             "",
             "2024-05-01",
             "2024-05-01T12:30",
             "2024-05-01 12:30",
             "2024-5-01 12:30:00",
             "24-05-01 12:30:00",
             "20240501T123000",
             "2024/05/01 12:30:00",
             "01/05/2024 12:30:00",
             "2024-05-01t12:30:00",
             "2024-05-01T12:30:00z",
             "2024-05-01  12:30:00",
             "2024-05-01_12:30:00",
             " 2024-05-01 12:30:00",
             "2024-05-01 12:30:00 ",
             "2024-05-01 12:30:00\n",
             "2024-05-01T12:30:00+03",
             "2024-05-01T12:30:00+3:00",
             "2024-05-01T12:30:00+03:0",
             "2024-05-01T12:30:00+15:00",
             "2024-05-01T12:30:00+03:60",
             "2024-05-01T12:30:00 +03:00",
             "2024-05-01T12:30:00ZZ",
             "2024-05-01T12:30:00+03:00:00",
             "+2024-05-01T12:30:00",
             "2024-05-01T1a:30:00",
         }) {
        INFO("text: '" << text << "'");
        CHECK_FALSE(parse_timestamp(text));
    }
    // Digits outside ASCII (here Arabic-Indic) are not digits.
    CHECK_FALSE(parse_timestamp("\xd9\xa2\xd9\xa0\xd9\xa2\xd9\xa4-05-01 12:30:00"));
}

TEST_CASE("Timestamp::to_sql renders for PostgreSQL", "[timestamp]") {
    CHECK(make(2024, 5, 1, 12, 30, 0, 123456, 180).to_sql() == "2024-05-01 12:30:00.123456+03:00");
    CHECK(make(2024, 5, 1, 12, 30, 0, 123456).to_sql() == "2024-05-01 12:30:00.123456");
    CHECK(make(2024, 5, 1, 12, 30, 0).to_sql() == "2024-05-01 12:30:00");
    CHECK(make(2024, 5, 1, 2, 3, 4, 5, 0).to_sql() == "2024-05-01 02:03:04.000005+00:00");
    CHECK(make(999, 1, 2, 3, 4, 5, 0, -270).to_sql() == "0999-01-02 03:04:05-04:30");
    CHECK(parse_timestamp("2024-05-01T12:30:07.5-0130")->to_sql() == "2024-05-01 12:30:07.500000-01:30");
    CHECK(parse_timestamp("2024-05-01T12:30:07Z")->to_sql() == "2024-05-01 12:30:07+00:00");
}

TEST_CASE("Timestamp::to_sql writes what printf's %04d and %02d would, for any field values", "[timestamp]") {
    auto printf_form = [](const Timestamp& t) {
        char b[128];
        int n = std::snprintf(b, sizeof b, "%04d-%02d-%02d %02d:%02d:%02d", t.year, t.month, t.day, t.hour, t.minute,
                              t.second);
        if (t.micros != 0) n += std::snprintf(b + n, sizeof b - static_cast<std::size_t>(n), ".%06d", t.micros);
        if (t.offset_minutes)
            n += std::snprintf(b + n, sizeof b - static_cast<std::size_t>(n), "%c%02d:%02d",
                               *t.offset_minutes < 0 ? '-' : '+', std::abs(*t.offset_minutes) / 60,
                               std::abs(*t.offset_minutes) % 60);
        return std::string(b, static_cast<std::size_t>(n));
    };
    std::mt19937 rng(7);
    auto any = [&](int low, int high) { return std::uniform_int_distribution<int>(low, high)(rng); };
    for (int i = 0; i < 2000; ++i) {
        // Mostly the ranges a parsed timestamp has, sometimes far outside them (both sides of zero).
        const bool wild = i % 4 == 0;
        const auto t = make(wild ? any(-20000, 2000000) : any(1, 9999), wild ? any(-5, 123) : any(1, 12),
                            wild ? any(-5, 123) : any(1, 31), wild ? any(-5, 123) : any(0, 23), any(0, 59), any(0, 59),
                            any(0, 3) == 0 ? 0 : (wild ? any(-5, 99999999) : any(1, 999999)),
                            any(0, 2) == 0 ? std::nullopt : std::optional<int>(any(-100000, 100000)));
        INFO(i);
        CHECK(t.to_sql() == printf_form(t));
    }
}

TEST_CASE("calendar helpers", "[timestamp]") {
    CHECK(hub::ingest::is_leap_year(2024));
    CHECK(hub::ingest::is_leap_year(2000));
    CHECK_FALSE(hub::ingest::is_leap_year(1900));
    CHECK_FALSE(hub::ingest::is_leap_year(2023));
    CHECK(hub::ingest::days_in_month(2024, 2) == 29);
    CHECK(hub::ingest::days_in_month(2023, 2) == 28);
    CHECK(hub::ingest::days_in_month(2023, 4) == 30);
    CHECK(hub::ingest::days_in_month(2023, 12) == 31);
}
