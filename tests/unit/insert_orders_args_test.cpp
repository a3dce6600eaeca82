#include <boost/json.hpp>
#include <catch2/catch.hpp>
#include <cstdint>
#include <optional>
#include <stdexcept>
#include <string>
#include <vector>

#include "common/json/parse.hpp"
#include "hub/ingest/store_job.hpp"
#include "hub/ingest/validate.hpp"

using namespace hub::ingest;

namespace {

// The statement's columns as hub/db/insert_orders.cpp names them (x), in the order make_entry writes them.
enum Column : std::size_t {
    id = 0,
    h = 1,
    op = 2,
    t = 3,
    st = 4,
    oc = 5,
    ec = 6,
    ro = 7,
    p = 8,
    rq = 9,
    bl = 14,
    bs = 15,
    ob = 16,
    oe = 17,
    sub = 21,
    sch = 25,
    sd = 26,
    sdo = 27,
    cc = 28,
    ca = 34,
    ln = 35,
    et = 36,
    eto = 37,
    bo = 38
};

const char* kOrder = R"({"event":"order_created","event_time":"2024-05-01 18:02:11","branch_id":"B1",
 "payload":{"id":"A-1","payment_method":"card","order_type":"DELIVERY","note":"n","subtotal":10,"tax":1.5,
 "discount":0,"total":11.5,"is_schedule":1,"schedule_date":"2024-05-01T19:30:00.5+03:00","car_data":null,
 "customer":{"name":"S","phone":"+966500000001","address":null},"items":[{"id":"i","quantity":2,"price":5,"note":"",
 "options":[{"id":"o","price":0.25,"quantity":3}]}]}})";

Validated parse(const std::string& text) {
    auto p = common::json::parse_strict(text);
    REQUIRE(p.value);
    auto v = validate_webhook(*p.value);
    REQUIRE(v.value);
    return *v.value;
}

std::uint32_t read32(const std::string& s, std::size_t at) {
    REQUIRE(s.size() >= at + 4);
    const auto* b = reinterpret_cast<const unsigned char*>(s.data() + at);
    return (std::uint32_t{b[0]} << 24) | (std::uint32_t{b[1]} << 16) | (std::uint32_t{b[2]} << 8) | b[3];
}

/// The elements of a one-dimensional binary text[] (PostgreSQL's array_send format), checking its header.
std::vector<std::optional<std::string>> elements(const std::string& array) {
    CHECK(read32(array, 0) == 1);   // dimensions
    CHECK(read32(array, 4) <= 1);   // NULLs allowed or not
    CHECK(read32(array, 8) == 25);  // text
    const std::uint32_t n = read32(array, 12);
    CHECK(read32(array, 16) == 1);  // lower bound
    std::vector<std::optional<std::string>> out;
    std::size_t at = 20;
    for (std::uint32_t k = 0; k < n; ++k) {
        const auto length = static_cast<std::int32_t>(read32(array, at));
        at += 4;
        if (length < 0) {
            out.emplace_back();
            continue;
        }
        REQUIRE(array.size() >= at + static_cast<std::size_t>(length));
        out.emplace_back(array.substr(at, static_cast<std::size_t>(length)));
        at += static_cast<std::size_t>(length);
    }
    CHECK(at == array.size());
    return out;
}

}  // namespace

TEST_CASE("insert_orders arguments: one binary text[] per column, an element per entry, then the bodies", "[ingest]") {
    const Validated order = parse(kOrder);
    detail::Job created;
    created.partner_id = "p1";
    created.created = true;
    created.inbox.request_id = "r-1";
    created.inbox.event = "order_created";
    created.inbox.external_id = "A-1";
    created.inbox.branch_id = "B1";
    created.inbox.headers_json = R"({"content-type":"application/json"})";
    created.inbox.body = kOrder;
    created.entry = detail::make_entry(created.partner_id, &order, created.inbox);
    detail::Job record;  // an inbox row alone: a refusal, its body kept as it came
    record.partner_id = "p1";
    record.inbox.request_id = "r-2";
    record.inbox.headers_json = "{}";
    record.inbox.body = std::string("\xff\x00{", 3);
    record.inbox.body_size = 70000;
    record.inbox.http_status = 400;
    record.inbox.outcome = "rejected";
    record.inbox.error_code = "invalid_json";
    record.entry = detail::make_entry(record.partner_id, nullptr, record.inbox);

    const detail::Job* jobs[] = {&created, &record};
    const auto args = detail::insert_orders_args(jobs);
    REQUIRE(args.size() == detail::kEntryFields + 2);
    std::vector<std::vector<std::optional<std::string>>> columns;
    for (std::size_t k = 0; k <= detail::kEntryFields; ++k) {
        INFO("column " << k);
        columns.push_back(elements(args[k]));
        REQUIRE(columns.back().size() == 2);
    }
    CHECK(args.back() == created.inbox.body + record.inbox.body);

    // The order's entry: its ids and values; what only a refusal has is NULL.
    CHECK(columns[id][0]->size() == 36);
    CHECK(columns[h][0]->size() == 64);
    CHECK(!columns[op][0]);
    CHECK(!columns[t][0]);
    CHECK(!columns[st][0]);
    CHECK(columns[p][0] == "p1");
    CHECK(columns[rq][0] == "r-1");
    CHECK(columns[ro][0] == "");
    CHECK(columns[bl][0] == std::to_string(created.inbox.body.size()));
    CHECK(!columns[bs][0]);
    CHECK(columns[ob][0] == "B1");
    CHECK(columns[oe][0] == "A-1");
    CHECK(columns[sub][0] == "10.000");
    CHECK(columns[sch][0] == "t");
    CHECK(columns[sd][0] == "2024-05-01 19:30:00.500000+03:00");
    CHECK(columns[sdo][0] == "t");
    CHECK(!columns[cc][0]);  // no car_data
    CHECK(!columns[ca][0]);  // a customer without an address
    CHECK(boost::json::parse(*columns[ln][0]) ==
          boost::json::parse(R"({"items":[{"line_no":0,"id":"i","quantity":2,"price":"5.000","note":""}],
              "options":[{"line_no":0,"option_no":0,"id":"o","price":"0.250","quantity":3}]})"));
    CHECK(columns[et][0] == "2024-05-01 18:02:11");
    CHECK(columns[eto][0] == "f");
    CHECK(columns[bo][0] == "0");

    // The refusal's entry: its answer, no order.
    CHECK(!columns[id][1]);
    CHECK(columns[st][1] == "400");
    CHECK(columns[oc][1] == "rejected");
    CHECK(columns[ec][1] == "invalid_json");
    CHECK(columns[bl][1] == "3");
    CHECK(columns[bs][1] == "70000");
    for (std::size_t k = ob; k <= eto; ++k) CHECK(!columns[k][1]);
    CHECK(columns[bo][1] == std::to_string(created.inbox.body.size()));
}

TEST_CASE("insert_orders arguments: an entry cut short or longer than its values is refused, not misread", "[ingest]") {
    detail::Job record;
    record.partner_id = "p1";
    record.inbox.headers_json = "{}";
    record.entry = detail::make_entry(record.partner_id, nullptr, record.inbox);
    const detail::Job* jobs[] = {&record};
    CHECK(detail::insert_orders_args(jobs).size() == detail::kEntryFields + 2);
    const std::string whole = record.entry;
    record.entry.resize(whole.size() - 1);
    CHECK_THROWS_AS(detail::insert_orders_args(jobs), std::logic_error);
    record.entry = whole + std::string(4, '\0');  // one more (empty) value
    CHECK_THROWS_AS(detail::insert_orders_args(jobs), std::logic_error);
}
