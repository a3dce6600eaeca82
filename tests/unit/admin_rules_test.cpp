// The operator rules without a database: a branch change applied (hub/admin/branch_rules.hpp) and the text rule of
// ids and names (hub/admin/refusal.hpp).
#include <catch2/catch.hpp>

#include "hub/admin/branch_rules.hpp"
#include "hub/admin/refusal.hpp"

using hub::admin::AcceptMode;
using hub::admin::apply_change;
using hub::admin::Branch;
using hub::admin::BranchChange;
using hub::admin::Refusal;
using hub::admin::require_text;

namespace {

Branch stored() {
    Branch b;
    b.id = "B1";
    b.brand_id = "BRAND";
    b.name = "Riyadh 1";
    b.pos_branch_id = "POS-B1";
    b.accept_mode = AcceptMode::automatic;
    b.accept_timeout_minutes = 10;
    b.schedule_lead_minutes = 30;
    return b;
}

bool same(const Branch& a, const Branch& b) {
    return a.id == b.id && a.brand_id == b.brand_id && a.name == b.name && a.pos_branch_id == b.pos_branch_id &&
           a.accept_mode == b.accept_mode && a.accept_timeout_minutes == b.accept_timeout_minutes &&
           a.schedule_lead_minutes == b.schedule_lead_minutes;
}

Refusal::Kind refusal_of(const Branch& current, const BranchChange& change) {
    try {
        apply_change(current, change);
    } catch (const Refusal& r) {
        return r.kind;
    }
    FAIL("no refusal");
    return Refusal::Kind::conflict;
}

}  // namespace

TEST_CASE("branch change: nothing given changes nothing", "[admin]") {
    CHECK(same(apply_change(stored(), {}), stored()));
}

TEST_CASE("branch change: only the given settings change", "[admin]") {
    BranchChange c;
    c.schedule_lead_minutes = 45;
    Branch expected = stored();
    expected.schedule_lead_minutes = 45;
    CHECK(same(apply_change(stored(), c), expected));

    BranchChange n;
    n.name = "Riyadh One";
    n.pos_branch_id = "POS-9";
    expected = stored();
    expected.name = "Riyadh One";
    expected.pos_branch_id = "POS-9";
    CHECK(same(apply_change(stored(), n), expected));
}

TEST_CASE("branch change: the accept mode and its time-out", "[admin]") {
    BranchChange manual;
    manual.accept_mode = AcceptMode::manual;
    manual.accept_timeout_minutes = 5;
    const Branch m = apply_change(stored(), manual);
    CHECK(m.accept_mode == AcceptMode::manual);
    CHECK(m.accept_timeout_minutes == 5);

    // The time-out of a branch that is manual already may change alone.
    BranchChange timeout;
    timeout.accept_timeout_minutes = 20;
    CHECK(apply_change(m, timeout).accept_timeout_minutes == 20);

    // Back to pending: the time-out is kept for a later manual mode.
    BranchChange pending;
    pending.accept_mode = AcceptMode::pending;
    const Branch p = apply_change(m, pending);
    CHECK(p.accept_mode == AcceptMode::pending);
    CHECK(p.accept_timeout_minutes == 5);

    // A time-out for a branch that is not (and does not become) manual is refused.
    CHECK(refusal_of(stored(), timeout) == Refusal::Kind::invalid);
    BranchChange auto_with_timeout;
    auto_with_timeout.accept_mode = AcceptMode::automatic;
    auto_with_timeout.accept_timeout_minutes = 5;
    CHECK(refusal_of(m, auto_with_timeout) == Refusal::Kind::invalid);
}

TEST_CASE("branch change: ranges and text are checked", "[admin]") {
    BranchChange c;
    c.schedule_lead_minutes = 10081;
    CHECK(refusal_of(stored(), c) == Refusal::Kind::invalid);
    c.schedule_lead_minutes = 0;
    CHECK(apply_change(stored(), c).schedule_lead_minutes == 0);

    BranchChange t;
    t.accept_mode = AcceptMode::manual;
    t.accept_timeout_minutes = 0;
    CHECK(refusal_of(stored(), t) == Refusal::Kind::invalid);

    BranchChange n;
    n.name = "";
    CHECK(refusal_of(stored(), n) == Refusal::Kind::invalid);
    n.name = "esc\x1b[2Jname";
    CHECK(refusal_of(stored(), n) == Refusal::Kind::invalid);
    BranchChange id;
    id.pos_branch_id = std::string(129, 'x');
    CHECK(refusal_of(stored(), id) == Refusal::Kind::invalid);
}

TEST_CASE("operator text: 1..max bytes of UTF-8 without control characters", "[admin]") {
    CHECK_NOTHROW(require_text("name", "فرع الرياض", 200));
    CHECK_NOTHROW(require_text("id", std::string(128, 'a'), 128));
    CHECK_THROWS_AS(require_text("id", std::string(129, 'a'), 128), Refusal);
    CHECK_THROWS_AS(require_text("id", "", 128), Refusal);
    CHECK_THROWS_AS(require_text("id", std::string("a\0b", 3), 128), Refusal);
    CHECK_THROWS_AS(require_text("id", "a\tb", 128), Refusal);
    CHECK_THROWS_AS(require_text("id", "a\xC2\x9B", 128), Refusal);     // C1 CSI
    CHECK_THROWS_AS(require_text("id", "r\xE9sum\xE9", 128), Refusal);  // Latin-1
}
