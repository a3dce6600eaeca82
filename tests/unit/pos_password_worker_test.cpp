#include <catch2/catch.hpp>
#include <optional>
#include <vector>

#include "pos/http/password_worker.hpp"

TEST_CASE("password checks: at most max_pending places, a place comes back when its login ends", "[pos][login]") {
    pos::http::PasswordWorker worker(1, 3);
    std::vector<pos::http::PasswordWorker::Place> held;
    for (int i = 0; i < 3; ++i) {
        auto place = worker.try_acquire();
        REQUIRE(place.has_value());
        held.push_back(std::move(*place));
    }
    CHECK_FALSE(worker.try_acquire().has_value());
    CHECK_FALSE(worker.try_acquire().has_value());  // a refusal takes no place
    held.pop_back();
    auto again = worker.try_acquire();
    CHECK(again.has_value());
    CHECK_FALSE(worker.try_acquire().has_value());
    again.reset();
    held.clear();
    for (int i = 0; i < 3; ++i) CHECK(worker.try_acquire().has_value());  // each released at once
}
