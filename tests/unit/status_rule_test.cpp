#include <catch2/catch.hpp>

#include "hub/ingest/status_rule.hpp"

using hub::ingest::update_applies;

TEST_CASE("status rule: the latest event time wins", "[status]") {
    CHECK(update_applies("assigned", 100, "on_the_way", 200));
    CHECK_FALSE(update_applies("on_the_way", 200, "assigned", 100));  // out of order: recorded, not applied
    CHECK(update_applies("on_the_way", 200, "at_pick_up", 300));      // a later time wins even if "backwards"
}

TEST_CASE("status rule: received yields to any delivery status", "[status]") {
    CHECK(update_applies("received", 500, "assigned", 100));
    CHECK(update_applies("received", 100, "cancelled", 100));
}

TEST_CASE("status rule: final statuses never revert", "[status]") {
    for (auto final : {"delivered", "cancelled"}) {
        INFO(final);
        CHECK_FALSE(update_applies(final, 100, "on_the_way", 200));
        CHECK_FALSE(update_applies(final, 100, "assigned", 50));
        CHECK_FALSE(update_applies(final, 100, final == std::string("delivered") ? "cancelled" : "delivered", 200));
        CHECK_FALSE(update_applies(final, 100, final, 200));
    }
    CHECK(hub::ingest::is_final_status("delivered"));
    CHECK(hub::ingest::is_final_status("cancelled"));
    CHECK_FALSE(hub::ingest::is_final_status("on_the_way"));
}

TEST_CASE("status rule: ties go to the further status", "[status]") {
    CHECK(update_applies("assigned", 100, "on_the_way", 100));
    CHECK_FALSE(update_applies("on_the_way", 100, "assigned", 100));
    CHECK_FALSE(update_applies("on_the_way", 100, "on_the_way", 100));
    CHECK(update_applies("on_the_way", 100, "delivered", 100));
    CHECK(update_applies("at_pick_up", 100, "cancelled", 100));
}
