#include <catch2/catch.hpp>

#include "hub/forward/outbox.hpp"
#include "hub/forward/status_log.hpp"

using hub::forward::JobResult;
using hub::forward::JobState;
using hub::forward::status_log_row;

TEST_CASE("status log: which claim ends write a row, and what it says", "[forward][status]") {
    struct Case {
        JobState state;
        const char* status;
        const char* source;
        const char* actor;
        const char* detail;
    };
    for (const auto& c : {Case{JobState::delivered, "pos_accepted", "pos", "POS-1", ""},
                          Case{JobState::rejected, "pos_rejected", "pos", "", "boom"},
                          Case{JobState::auth_failed, "forward_auth_failed", "hub", "", "boom"},
                          Case{JobState::dead, "forward_dead", "hub", "", "boom"},
                          Case{JobState::cancelled, "forward_cancelled", "hub", "", "boom"}}) {
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
    retry.state = JobState::pending;
    CHECK_FALSE(status_log_row(retry));
}

TEST_CASE("job states: each word of hub.forward_jobs.state names one state and back", "[forward][status]") {
    using hub::forward::job_state_from_text;
    for (const char* word : {"pending", "in_flight", "delivered", "rejected", "auth_failed", "dead", "cancelled",
                             "awaiting_acceptance", "merchant_rejected", "timed_out"}) {
        const auto state = job_state_from_text(word);
        REQUIRE(state);
        CHECK(to_text(*state) == word);
    }
    CHECK(to_text(JobState::pending) == "pending");
    CHECK(to_text(JobState::in_flight) == "in_flight");
    CHECK(to_text(JobState::cancelled) == "cancelled");
    CHECK(to_text(JobState::awaiting_acceptance) == "awaiting_acceptance");
    CHECK(to_text(JobState::timed_out) == "timed_out");
    CHECK(to_text(hub::forward::AttemptOutcome::unauthorized) == "unauthorized");
    CHECK(to_text(hub::forward::AttemptOutcome::login_failed) == "login_failed");
    CHECK_FALSE(job_state_from_text(""));
    CHECK_FALSE(job_state_from_text("Pending"));
    CHECK(is_queued(JobState::in_flight));
    CHECK_FALSE(is_queued(JobState::dead));
    CHECK(is_held_for_staff(JobState::timed_out));
    CHECK_FALSE(is_held_for_staff(JobState::pending));
}
