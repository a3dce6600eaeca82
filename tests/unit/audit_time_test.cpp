#include <catch2/catch.hpp>

#include "hub/admin/audit_time.hpp"

using hub::admin::rfc3339_to_sql;

TEST_CASE("audit: --since and --until take RFC 3339 times with an offset", "[audit]") {
    CHECK(rfc3339_to_sql("2026-11-22T08:00:00Z") == "2026-11-22 08:00:00+00:00");
    CHECK(rfc3339_to_sql("2026-11-22T10:00:00.5+02:00") == "2026-11-22 10:00:00.500000+02:00");
    CHECK(rfc3339_to_sql("2026-11-22 08:00:00-05:30") == "2026-11-22 08:00:00-05:30");
    // No offset: which zone? Refused rather than guessed.
    CHECK_FALSE(rfc3339_to_sql("2026-11-22T08:00:00"));
    CHECK_FALSE(rfc3339_to_sql("2026-11-22"));
    CHECK_FALSE(rfc3339_to_sql("yesterday"));
    CHECK_FALSE(rfc3339_to_sql("2026-02-30T00:00:00Z"));
    CHECK_FALSE(rfc3339_to_sql(""));
}
