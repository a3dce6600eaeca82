#include <boost/json.hpp>
#include <catch2/catch.hpp>
#include <cstdint>
#include <optional>
#include <stdexcept>
#include <string>
#include <vector>

#include "hub/ingest/store_job.hpp"
#include "tests/unit/ingest_support.hpp"

using namespace hub::ingest;

namespace {

// The statement's columns as hub/db/insert_orders.cpp names them (x), in the order make_entry writes them.
namespace col {
constexpr std::size_t id = 0;
constexpr std::size_t h = 1;
constexpr std::size_t op = 2;
constexpr std::size_t t = 3;
constexpr std::size_t st = 4;
constexpr std::size_t oc = 5;
constexpr std::size_t ec = 6;
constexpr std::size_t ro = 7;
constexpr std::size_t p = 8;
constexpr std::size_t rq = 9;
constexpr std::size_t bl = 14;
constexpr std::size_t bs = 15;
constexpr std::size_t ob = 16;
constexpr std::size_t oe = 17;
constexpr std::size_t sub = 21;
constexpr std::size_t sch = 25;
constexpr std::size_t sd = 26;
constexpr std::size_t sdo = 27;
constexpr std::size_t cc = 28;
constexpr std::size_t ca = 34;
constexpr std::size_t ln = 35;
constexpr std::size_t et = 36;
constexpr std::size_t eto = 37;
constexpr std::size_t bo = 38;
}  // namespace col

const char* kArgsOrder = R"({"event":"order_created","event_time":"2024-05-01 18:02:11","branch_id":"B1",
 "payload":{"id":"A-1","payment_method":"card","order_type":"DELIVERY","note":"n","subtotal":10,"tax":1.5,
 "discount":0,"total":11.5,"is_schedule":1,"schedule_date":"2024-05-01T19:30:00.5+03:00","car_data":null,
 "customer":{"name":"S","phone":"+966500000001","address":null},"items":[{"id":"i","quantity":2,"price":5,"note":"",
 "options":[{"id":"o","price":0.25,"quantity":3}]}]}})";

std::uint32_t be32_at(const std::string& s, std::size_t at) {
    REQUIRE(s.size() >= at + 4);
    const auto* b = reinterpret_cast<const unsigned char*>(s.data() + at);
    return (std::uint32_t{b[0]} << 24) | (std::uint32_t{b[1]} << 16) | (std::uint32_t{b[2]} << 8) | b[3];
}

/// The elements of a one-dimensional binary text[] (PostgreSQL's array_send format), checking its header.
std::vector<std::optional<std::string>> text_array_elements(const std::string& array) {
    CHECK(be32_at(array, 0) == 1);   // dimensions
    CHECK(be32_at(array, 4) <= 1);   // NULLs allowed or not
    CHECK(be32_at(array, 8) == 25);  // text
    const std::uint32_t n = be32_at(array, 12);
    CHECK(be32_at(array, 16) == 1);  // lower bound
    std::vector<std::optional<std::string>> out;
    std::size_t at = 20;
    for (std::uint32_t k = 0; k < n; ++k) {
        const auto length = static_cast<std::int32_t>(be32_at(array, at));
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
    const Validated order = tests::ingest::validated(kArgsOrder);
    detail::Job created;
    created.created = true;
    created.inbox.partner_id = "p1";
    created.inbox.request_id = "r-1";
    created.inbox.event = "order_created";
    created.inbox.external_id = "A-1";
    created.inbox.branch_id = "B1";
    created.inbox.headers_json = R"({"content-type":"application/json"})";
    created.inbox.body = kArgsOrder;
    created.entry = detail::make_entry(&order, created.inbox);
    detail::Job record;  // an inbox row alone: a refusal, its body kept as it came
    record.inbox.partner_id = "p1";
    record.inbox.request_id = "r-2";
    record.inbox.headers_json = "{}";
    record.inbox.body = std::string("\xff\x00{", 3);
    record.inbox.body_size = 70000;
    record.inbox.http_status = 400;
    record.inbox.outcome = "rejected";
    record.inbox.error_code = "invalid_json";
    record.entry = detail::make_entry(nullptr, record.inbox);

    const detail::Job* jobs[] = {&created, &record};
    const auto args = detail::insert_orders_args(jobs);
    REQUIRE(args.size() == detail::kEntryFields + 2);
    std::vector<std::vector<std::optional<std::string>>> columns;
    for (std::size_t k = 0; k <= detail::kEntryFields; ++k) {
        INFO("column " << k);
        columns.push_back(text_array_elements(args[k]));
        REQUIRE(columns.back().size() == 2);
    }
    CHECK(args.back() == created.inbox.body + record.inbox.body);

    // The order's entry: its ids and values; what only a refusal has is NULL.
    CHECK(columns[col::id][0]->size() == 36);
    CHECK(columns[col::h][0]->size() == 64);
    CHECK(!columns[col::op][0]);
    CHECK(!columns[col::t][0]);
    CHECK(!columns[col::st][0]);
    CHECK(columns[col::p][0] == "p1");
    CHECK(columns[col::rq][0] == "r-1");
    CHECK(columns[col::ro][0] == "");
    CHECK(columns[col::bl][0] == std::to_string(created.inbox.body.size()));
    CHECK(!columns[col::bs][0]);
    CHECK(columns[col::ob][0] == "B1");
    CHECK(columns[col::oe][0] == "A-1");
    CHECK(columns[col::sub][0] == "10.000");
    CHECK(columns[col::sch][0] == "t");
    CHECK(columns[col::sd][0] == "2024-05-01 19:30:00.500000+03:00");
    CHECK(columns[col::sdo][0] == "t");
    CHECK(!columns[col::cc][0]);  // no car_data
    CHECK(!columns[col::ca][0]);  // a customer without an address
    CHECK(boost::json::parse(*columns[col::ln][0]) ==
          boost::json::parse(R"({"items":[{"line_no":0,"id":"i","quantity":2,"price":"5.000","note":""}],
              "options":[{"line_no":0,"option_no":0,"id":"o","price":"0.250","quantity":3}]})"));
    CHECK(columns[col::et][0] == "2024-05-01 18:02:11");
    CHECK(columns[col::eto][0] == "f");
    CHECK(columns[col::bo][0] == "0");

    // The refusal's entry: its answer, no order.
    CHECK(!columns[col::id][1]);
    CHECK(columns[col::st][1] == "400");
    CHECK(columns[col::oc][1] == "rejected");
    CHECK(columns[col::ec][1] == "invalid_json");
    CHECK(columns[col::bl][1] == "3");
    CHECK(columns[col::bs][1] == "70000");
    for (std::size_t k = col::ob; k <= col::eto; ++k) CHECK(!columns[k][1]);
    CHECK(columns[col::bo][1] == std::to_string(created.inbox.body.size()));
}

TEST_CASE("insert_orders arguments: an entry cut short or longer than its values is refused, not misread", "[ingest]") {
    detail::Job record;
    record.inbox.headers_json = "{}";
    record.entry = detail::make_entry(nullptr, record.inbox);
    const detail::Job* jobs[] = {&record};
    CHECK(detail::insert_orders_args(jobs).size() == detail::kEntryFields + 2);
    const std::string whole = record.entry;
    record.entry.resize(whole.size() - 1);
    CHECK_THROWS_AS(detail::insert_orders_args(jobs), std::logic_error);
    record.entry = whole + std::string(4, '\0');  // one more (empty) value
    CHECK_THROWS_AS(detail::insert_orders_args(jobs), std::logic_error);
}

TEST_CASE("insert_orders arguments: an order's entry many times its writer's first size keeps every value",
          "[ingest]") {
    // make_entry writes into room it doubles when a value does not fit: 80 items with long notes, a note and headers
    // each about as large as that first room or larger, must come out whole, in their columns.
    boost::json::value body = boost::json::parse(kArgsOrder);
    auto& payload = body.at("payload").as_object();
    const std::string note(kMaxNoteBytes, 'n');
    payload["note"] = note;
    boost::json::array items;
    for (int i = 0; i < 80; ++i)
        items.push_back(boost::json::object{{"id", "item-" + std::to_string(i)},
                                            {"quantity", 1},
                                            {"price", 2},
                                            {"note", std::string(200, static_cast<char>('a' + i % 26))}});
    payload["items"] = std::move(items);
    const std::string text = boost::json::serialize(body);
    const Validated order = tests::ingest::validated(text);
    detail::Job created;
    created.created = true;
    created.inbox.partner_id = "p1";
    created.inbox.request_id = "r-1";
    created.inbox.headers_json = R"({"user-agent":")" + std::string(3000, 'u') + R"("})";
    created.inbox.body = text;
    created.entry = detail::make_entry(&order, created.inbox);
    CHECK(created.entry.size() > 8 * 1024);

    const detail::Job* jobs[] = {&created};
    const auto args = detail::insert_orders_args(jobs);
    std::vector<std::vector<std::optional<std::string>>> columns;
    for (std::size_t k = 0; k <= detail::kEntryFields; ++k) {
        INFO("column " << k);
        columns.push_back(text_array_elements(args[k]));
        REQUIRE(columns.back().size() == 1);
    }
    CHECK(columns[col::rq][0] == "r-1");
    CHECK(columns[col::bl][0] == std::to_string(text.size()));
    CHECK(columns[col::ob][0] == "B1");
    CHECK(columns[col::oe][0] == "A-1");
    CHECK(columns[18][0] == "card");
    CHECK(columns[20][0] == note);
    CHECK(columns[13][0] == created.inbox.headers_json);
    const auto lines = boost::json::parse(*columns[col::ln][0]);
    REQUIRE(lines.at("items").as_array().size() == 80);
    CHECK(lines.at("items").as_array()[79].at("note").as_string() ==
          std::string(200, static_cast<char>('a' + 79 % 26)));
    CHECK(columns[col::et][0] == "2024-05-01 18:02:11");
    CHECK(columns[col::eto][0] == "f");
    CHECK(columns[col::bo][0] == "0");
}
