#include <catch2/catch.hpp>

#include "hub/forward/outbox.hpp"
#include "hub/forward/status_log.hpp"

using hub::forward::JobResult;
using hub::forward::status_log_row;

TEST_CASE("status log: which claim ends write a row, and what it says", "[forward][status]") {
    struct Case {
        const char* state;
        const char* status;
        const char* source;
        const char* actor;
        const char* detail;
    };
    for (const auto& c :
         {Case{"delivered", "pos_accepted", "pos", "POS-1", ""}, Case{"rejected", "pos_rejected", "pos", "", "boom"},
          Case{"auth_failed", "forward_auth_failed", "hub", "", "boom"},
          Case{"dead", "forward_dead", "hub", "", "boom"}, Case{"cancelled", "forward_cancelled", "hub", "", "boom"}}) {
        JobResult r;
        r.state = c.state;
        r.pos_order_id = "POS-1";
        r.error = "boom";
        const auto row = status_log_row(r);
        REQUIRE(row);
        CHECK(row->status == c.status);
        CHECK(row->source == c.source);
        CHECK(row->actor == c.actor);
        CHECK(row->detail == c.detail);
    }
    JobResult retry;
    retry.state = "pending";
    CHECK_FALSE(status_log_row(retry));
}
