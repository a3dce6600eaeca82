// When a job that finds the group commit idle waits for company (common::db::GatherPolicy): while gathers catch
// some, and not for a client that sends its next job only after the last one's answer.
#include <catch2/catch.hpp>

#include "common/db/batcher.hpp"

using common::db::GatherPolicy;

namespace {

// Idle starts until one gathers (a probe), at most `limit`; 0 when none did.
unsigned starts_until_gather(GatherPolicy& p, unsigned limit) {
    for (unsigned i = 1; i <= limit; ++i)
        if (p.gather_now()) return i;
    return 0;
}

}  // namespace

TEST_CASE("gather policy: a new batcher gathers", "[batcher]") {
    GatherPolicy p;
    CHECK(p.pays());
    CHECK(p.gather_now());
}

TEST_CASE("gather policy: gathers that catch nobody stop, and then one idle start in 128 probes", "[batcher]") {
    GatherPolicy p;
    int gathers = 0;
    while (p.gather_now()) {
        p.caught(1);  // the job that waited, alone
        ++gathers;
        REQUIRE(gathers < 100);
    }
    // About the last eight gathers count: a dozen empty ones are enough, and one empty gather is not.
    CHECK(gathers > 1);
    CHECK(gathers <= 12);
    CHECK_FALSE(p.pays());
    // Already one start skipped above; the probe comes at the 128th.
    CHECK(starts_until_gather(p, 1000) == GatherPolicy::kProbeEvery - 1);
    p.caught(1);  // the probe caught nobody either
    CHECK_FALSE(p.pays());
    CHECK(starts_until_gather(p, 1000) == GatherPolicy::kProbeEvery);
    // A probe that catches company brings gathering back at once.
    p.caught(2);
    CHECK(p.pays());
    CHECK(p.gather_now());
}

TEST_CASE("gather policy: a steady trickle that a gather catches about half the time keeps it gathering", "[batcher]") {
    GatherPolicy p;
    // 0.6 jobs caught on average (300 jobs/s, 2 ms), in an order that puts three empty gathers in a row.
    const std::size_t sizes[] = {1, 2, 1, 1, 1, 2, 3, 1, 2, 1};
    for (int round = 0; round < 50; ++round)
        for (std::size_t size : sizes) {
            REQUIRE(p.gather_now());
            p.caught(size);
        }
    CHECK(p.pays());
}

TEST_CASE("gather policy: an empty batch counts as no company", "[batcher]") {
    GatherPolicy p;
    for (int i = 0; i < 40; ++i) p.caught(0);
    CHECK_FALSE(p.pays());
}
