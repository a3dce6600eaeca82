#include "hub/ingest/validate.hpp"

#include "hub/ingest/order_document.hpp"
#include "tests/unit/webhook_bodies.hpp"

#include <boost/json/parse.hpp>
#include <boost/json/serialize.hpp>
#include <boost/json/string.hpp>
#include <catch2/catch.hpp>

#include <cmath>
#include <cstdint>
#include <iomanip>
#include <limits>
#include <optional>
#include <random>
#include <string>
#include <vector>

namespace {

namespace bj = boost::json;
using namespace hub::ingest;

using webhook_bodies::kCreated;
using webhook_bodies::kUpdated;
using webhook_bodies::set_at;

bj::value json_of(std::string_view text) { return bj::parse(text); }

bj::value with(std::string_view base, std::string_view pointer, const std::optional<bj::value>& value) {
    bj::value body = json_of(base);
    set_at(body, pointer, value);
    return body;
}

std::vector<std::string> paths(const ValidationResult& result) {
    std::vector<std::string> out;
    for (const FieldError& error : result.errors) {
        out.push_back(error.path);
    }
    return out;
}

bj::value text(std::size_t bytes, char c = 'x') { return bj::string(bytes, c); }

struct Case {
    const char* name;
    std::string_view base;
    std::string pointer;
    std::optional<bj::value> value;  // std::nullopt: remove the field
    std::string expected_path;
};

void check_single_error(const Case& c, std::string_view expected_code = kErrorValidationFailed) {
    INFO("case: " << c.name);
    const ValidationResult result = validate_webhook(with(c.base, c.pointer, c.value));
    CHECK_FALSE(result.value.has_value());
    CHECK(result.error_code == expected_code);
    REQUIRE(result.errors.size() == 1);
    CHECK(result.errors[0].path == c.expected_path);
    CHECK_FALSE(result.errors[0].message.empty());
}

void check_valid(const Case& c) {
    INFO("case: " << c.name);
    const ValidationResult result = validate_webhook(with(c.base, c.pointer, c.value));
    CHECK(result.value.has_value());
    CHECK(result.error_code.empty());
    CHECK(paths(result).empty());
}

}  // namespace

TEST_CASE("a valid order_created body converts to typed values", "[validate]") {
    const ValidationResult result = validate_webhook(json_of(kCreated));
    REQUIRE(result.value);
    CHECK(result.error_code.empty());
    CHECK(result.errors.empty());
    const Envelope& envelope = result.value->envelope;
    CHECK(envelope.event == "order_created");
    CHECK(envelope.event_time == Timestamp{2024, 5, 1, 12, 30, 0, 0, std::nullopt});
    CHECK(envelope.branch_id == "branch-001");

    const auto& order = std::get<OrderCreated>(result.value->payload);
    CHECK(order.external_id == "ORD-1001");
    CHECK(order.payment_method == "cash");
    CHECK(order.order_type == "DELIVERY");
    CHECK(order.note == "Leave at the door");
    CHECK(order.subtotal == 20500);
    CHECK(order.tax == 3075);
    CHECK(order.discount == 0);
    CHECK(order.total == 23575);
    CHECK_FALSE(order.is_schedule);
    CHECK_FALSE(order.schedule_date);
    REQUIRE(order.car_data);
    CHECK(order.car_data->color == "#1a2b3c");
    CHECK(order.car_data->plate_number == "4821");
    CHECK(order.car_data->plate_letters == "ABC");
    CHECK(order.car_data->car_brand == "Toyota");
    REQUIRE(order.customer);
    CHECK(order.customer->name == "Omar Haddad");
    CHECK(order.customer->phone == "+971501234567");
    CHECK(order.customer->address == "Marina 4");
    REQUIRE(order.items.size() == 1);
    CHECK(order.items[0].id == "pizza");
    CHECK(order.items[0].quantity == 2);
    CHECK(order.items[0].price == 20500);
    CHECK(order.items[0].note == "thin");
    REQUIRE(order.items[0].options.size() == 1);
    CHECK(order.items[0].options[0].id == "basil");
    CHECK(order.items[0].options[0].price == 250);
    CHECK(order.items[0].options[0].quantity == 3);
}

TEST_CASE("optional order_created fields may be absent or null", "[validate]") {
    bj::value body = json_of(kCreated);
    for (const char* pointer : {"/payload/note", "/payload/schedule_date", "/payload/car_data", "/payload/customer",
                                "/payload/items/0/note", "/payload/items/0/options"}) {
        set_at(body, pointer, std::nullopt);
    }
    const ValidationResult absent = validate_webhook(body);
    REQUIRE(absent.value);
    const auto& order = std::get<OrderCreated>(absent.value->payload);
    CHECK(order.note.empty());
    CHECK_FALSE(order.schedule_date);
    CHECK_FALSE(order.car_data);
    CHECK_FALSE(order.customer);
    CHECK(order.items[0].note.empty());
    CHECK(order.items[0].options.empty());

    for (const char* pointer : {"/payload/note", "/payload/schedule_date", "/payload/car_data", "/payload/customer",
                                "/payload/items/0/note", "/payload/customer/address"}) {
        check_valid({"null", kCreated, pointer, bj::value(nullptr), ""});
    }
    const ValidationResult nulls = validate_webhook(with(kCreated, "/payload/customer/address", nullptr));
    REQUIRE(nulls.value);
    CHECK_FALSE(std::get<OrderCreated>(nulls.value->payload).customer->address.has_value());
    check_valid({"empty note", kCreated, "/payload/note", bj::value(""), ""});
    check_valid({"empty item note", kCreated, "/payload/items/0/note", bj::value(""), ""});
    check_valid({"empty options", kCreated, "/payload/items/0/options", bj::array(), ""});
    check_valid({"no address", kCreated, "/payload/customer/address", std::nullopt, ""});
}

TEST_CASE("a valid order_updated body converts to typed values", "[validate]") {
    for (const std::string_view status : kDeliveryStatuses) {
        const ValidationResult result = validate_webhook(with(kUpdated, "/payload/status", bj::value(status)));
        REQUIRE(result.value);
        CHECK(result.value->envelope.event == "order_updated");
        CHECK(result.value->envelope.event_time == Timestamp{2024, 5, 1, 12, 45, 0, 500000, 180});
        const auto& update = std::get<OrderUpdated>(result.value->payload);
        CHECK(update.order_id == "ORD-1001");
        CHECK(update.status == status);
    }
}

TEST_CASE("unknown extra fields are ignored", "[validate]") {
    bj::value body = json_of(kCreated);
    set_at(body, "/trace", json_of(R"({"x": [1, 2]})"));
    set_at(body, "/payload/platform", bj::value("fastfood"));
    set_at(body, "/payload/items/0/sku", bj::value(12));
    set_at(body, "/payload/items/0/options/0/group", nullptr);
    set_at(body, "/payload/customer/email", bj::value("a@example.com"));
    set_at(body, "/payload/car_data/model", bj::value("Corolla"));
    CHECK(validate_webhook(body).value.has_value());

    bj::value update = json_of(kUpdated);
    set_at(update, "/payload/driver", json_of(R"({"name": "Ali"})"));
    CHECK(validate_webhook(update).value.has_value());
}

// Every object of `v` with its members in reverse order, nested ones included.
bj::value reversed(const bj::value& v) {
    if (const bj::object* o = v.if_object()) {
        bj::object out;
        for (auto it = o->end(); it != o->begin();) {
            --it;
            out.emplace(it->key(), reversed(it->value()));
        }
        return out;
    }
    if (const bj::array* a = v.if_array()) {
        bj::array out;
        for (const bj::value& e : *a) out.push_back(reversed(e));
        return out;
    }
    return v;
}

// The canonical form of a valid order_created (every field the validator read), or the paths of its problems.
std::string outcome(const ValidationResult& r) {
    if (!r.value) return r.error_code + " " + bj::serialize(errors_to_json(r.errors));
    return order_forms(r.value->envelope, std::get<OrderCreated>(r.value->payload)).canonical;
}

TEST_CASE("members are found in any order, and among many", "[validate]") {
    // The validator reads each object's members in the interface's order, starting each search after the member
    // it found last; a body in another order, or with many members besides, must read the same.
    const bj::value body = json_of(kCreated);
    const ValidationResult plain = validate_webhook(body);
    REQUIRE(plain.value);
    const bj::value backwards = reversed(body);
    REQUIRE(bj::serialize(backwards) != bj::serialize(body));
    CHECK(outcome(validate_webhook(backwards)) == outcome(plain));

    // More members than a linear search is used for (the object's own index then), before and after the known ones.
    bj::value crowded = json_of(kCreated);
    bj::object& payload = crowded.at("payload").as_object();
    bj::object many;
    for (int k = 0; k < 40; ++k) many.emplace("extra_" + std::to_string(k), k);
    for (const auto& member : payload) many.emplace(member.key(), member.value());
    for (int k = 40; k < 80; ++k) many.emplace("extra_" + std::to_string(k), k);
    payload = std::move(many);
    CHECK(outcome(validate_webhook(crowded)) == outcome(plain));
    CHECK(outcome(validate_webhook(reversed(crowded))) == outcome(plain));

    // Problems too: the same ones, in the validator's reading order, whatever the body's order.
    bj::value wrong = json_of(kCreated);
    set_at(wrong, "/payload/id", std::nullopt);
    set_at(wrong, "/payload/total", bj::value("12"));
    set_at(wrong, "/payload/items/0/options/0/quantity", bj::value(0));
    const std::string refused = outcome(validate_webhook(wrong));
    CHECK(refused.find("/payload/id") < refused.find("/payload/total"));
    CHECK(outcome(validate_webhook(reversed(wrong))) == refused);
}

TEST_CASE("the body must be a JSON object", "[validate]") {
    for (const char* text : {"[]", "null", "\"order\"", "1", "true"}) {
        INFO("body: " << text);
        const ValidationResult result = validate_webhook(json_of(text));
        CHECK_FALSE(result.value);
        CHECK(result.error_code == kErrorNotAnObject);
        REQUIRE(result.errors.size() == 1);
        CHECK(result.errors[0].path.empty());
    }
}

TEST_CASE("event problems give unknown_event and skip the payload", "[validate]") {
    check_single_error({"missing", kCreated, "/event", std::nullopt, "/event"}, kErrorUnknownEvent);
    check_single_error({"number", kCreated, "/event", bj::value(1), "/event"}, kErrorUnknownEvent);
    check_single_error({"null", kCreated, "/event", nullptr, "/event"}, kErrorUnknownEvent);
    check_single_error({"unknown", kCreated, "/event", bj::value("order_deleted"), "/event"}, kErrorUnknownEvent);
    check_single_error({"case", kCreated, "/event", bj::value("ORDER_CREATED"), "/event"}, kErrorUnknownEvent);

    // The payload is not inspected, but the rest of the envelope is.
    bj::value body = json_of(R"({"event": "order_paid", "event_time": "yesterday", "payload": {"id": 1}})");
    const ValidationResult result = validate_webhook(body);
    CHECK(result.error_code == kErrorUnknownEvent);
    CHECK(paths(result) == std::vector<std::string>{"/event", "/event_time", "/branch_id"});

    const ValidationResult empty = validate_webhook(json_of("{}"));
    CHECK(empty.error_code == kErrorUnknownEvent);
    CHECK(paths(empty) == std::vector<std::string>{"/event", "/event_time", "/branch_id", "/payload"});
}

TEST_CASE("envelope rules", "[validate]") {
    const std::vector<Case> cases = {
        {"event_time missing", kCreated, "/event_time", std::nullopt, "/event_time"},
        {"event_time number", kCreated, "/event_time", bj::value(1714566600), "/event_time"},
        {"event_time other format", kCreated, "/event_time", bj::value("01/05/2024 12:30"), "/event_time"},
        {"event_time Feb 30", kCreated, "/event_time", bj::value("2024-02-30 12:00:00"), "/event_time"},
        {"event_time leap second", kCreated, "/event_time", bj::value("2024-06-30T23:59:60Z"), "/event_time"},
        {"branch_id missing", kCreated, "/branch_id", std::nullopt, "/branch_id"},
        {"branch_id empty", kCreated, "/branch_id", bj::value(""), "/branch_id"},
        {"branch_id number", kCreated, "/branch_id", bj::value(7), "/branch_id"},
        {"branch_id 129 bytes", kCreated, "/branch_id", text(129), "/branch_id"},
        {"payload missing", kCreated, "/payload", std::nullopt, "/payload"},
        {"payload array", kCreated, "/payload", bj::array{1}, "/payload"},
        {"payload null", kUpdated, "/payload", nullptr, "/payload"},
    };
    for (const Case& c : cases) {
        check_single_error(c);
    }
    check_valid({"branch_id 128 bytes", kCreated, "/branch_id", text(128), ""});
    check_valid({"ISO event_time", kCreated, "/event_time", bj::value("2024-05-01T12:30:00.123456789Z"), ""});
    check_valid({"offset without colon", kCreated, "/event_time", bj::value("2024-05-01 12:30:00-0430"), ""});
}

TEST_CASE("lengths are counted in bytes, not code points", "[validate]") {
    std::string two_byte;
    for (int i = 0; i < 65; ++i) {
        two_byte += "\xc3\xa9";  // 65 code points, 130 bytes
    }
    check_single_error({"branch_id", kCreated, "/branch_id", bj::value(two_byte), "/branch_id"});
    check_valid({"name", kCreated, "/payload/customer/name", bj::value(two_byte), ""});
}

TEST_CASE("order_created payload rules", "[validate]") {
    const std::vector<Case> cases = {
        {"id missing", kCreated, "/payload/id", std::nullopt, "/payload/id"},
        {"id empty", kCreated, "/payload/id", bj::value(""), "/payload/id"},
        {"id number", kCreated, "/payload/id", bj::value(1001), "/payload/id"},
        {"id 129 bytes", kCreated, "/payload/id", text(129), "/payload/id"},
        {"payment_method missing", kCreated, "/payload/payment_method", std::nullopt, "/payload/payment_method"},
        {"payment_method null", kCreated, "/payload/payment_method", nullptr, "/payload/payment_method"},
        {"payment_method 65 bytes", kCreated, "/payload/payment_method", text(65), "/payload/payment_method"},
        {"order_type missing", kCreated, "/payload/order_type", std::nullopt, "/payload/order_type"},
        {"order_type lower case", kCreated, "/payload/order_type", bj::value("delivery"), "/payload/order_type"},
        {"order_type other", kCreated, "/payload/order_type", bj::value("TAKEAWAY"), "/payload/order_type"},
        {"order_type number", kCreated, "/payload/order_type", bj::value(1), "/payload/order_type"},
        {"note number", kCreated, "/payload/note", bj::value(5), "/payload/note"},
        {"note 1001 bytes", kCreated, "/payload/note", text(1001), "/payload/note"},
        {"note with NUL", kCreated, "/payload/note", bj::value(std::string("a\0b", 3)), "/payload/note"},
        {"subtotal missing", kCreated, "/payload/subtotal", std::nullopt, "/payload/subtotal"},
        {"tax negative", kCreated, "/payload/tax", bj::value(-0.01), "/payload/tax"},
        {"tax negative integer", kCreated, "/payload/tax", bj::value(-1), "/payload/tax"},
        {"discount string", kCreated, "/payload/discount", bj::value("0"), "/payload/discount"},
        {"discount null", kCreated, "/payload/discount", nullptr, "/payload/discount"},
        {"total boolean", kCreated, "/payload/total", bj::value(true), "/payload/total"},
        {"total above 1e9", kCreated, "/payload/total", bj::value(1000000000.001), "/payload/total"},
        {"total integer above 1e9", kCreated, "/payload/total", bj::value(1000000001), "/payload/total"},
        {"total uint64", kCreated, "/payload/total", bj::value(std::uint64_t{1} << 63), "/payload/total"},
        {"total infinite", kCreated, "/payload/total", bj::value(std::numeric_limits<double>::infinity()),
         "/payload/total"},
        {"total NaN", kCreated, "/payload/total", bj::value(std::nan("")), "/payload/total"},
        {"is_schedule missing", kCreated, "/payload/is_schedule", std::nullopt, "/payload/is_schedule"},
        {"is_schedule 2", kCreated, "/payload/is_schedule", bj::value(2), "/payload/is_schedule"},
        {"is_schedule -1", kCreated, "/payload/is_schedule", bj::value(-1), "/payload/is_schedule"},
        {"is_schedule true", kCreated, "/payload/is_schedule", bj::value(true), "/payload/is_schedule"},
        {"is_schedule 0.0", kCreated, "/payload/is_schedule", bj::value(0.0), "/payload/is_schedule"},
        {"is_schedule string", kCreated, "/payload/is_schedule", bj::value("0"), "/payload/is_schedule"},
        {"is_schedule uint64", kCreated, "/payload/is_schedule", bj::value(UINT64_MAX), "/payload/is_schedule"},
        {"unscheduled with date", kCreated, "/payload/schedule_date", bj::value("2024-05-02 09:00:00"),
         "/payload/schedule_date"},
        {"unscheduled with bad date", kCreated, "/payload/schedule_date", bj::value(5), "/payload/schedule_date"},
        {"car_data string", kCreated, "/payload/car_data", bj::value("red"), "/payload/car_data"},
        {"car_data array", kCreated, "/payload/car_data", bj::array(), "/payload/car_data"},
        {"color missing", kCreated, "/payload/car_data/color", std::nullopt, "/payload/car_data/color"},
        {"color number", kCreated, "/payload/car_data/color", bj::value(0xffffff), "/payload/car_data/color"},
        {"color without #", kCreated, "/payload/car_data/color", bj::value("1a2b3c"), "/payload/car_data/color"},
        {"color 4 hex", kCreated, "/payload/car_data/color", bj::value("#abcd"), "/payload/car_data/color"},
        {"color 8 hex", kCreated, "/payload/car_data/color", bj::value("#11223344"), "/payload/car_data/color"},
        {"color 2 hex", kCreated, "/payload/car_data/color", bj::value("#ab"), "/payload/car_data/color"},
        {"color not hex", kCreated, "/payload/car_data/color", bj::value("#12345g"), "/payload/car_data/color"},
        {"color name", kCreated, "/payload/car_data/color", bj::value("red"), "/payload/car_data/color"},
        {"color newline", kCreated, "/payload/car_data/color", bj::value("#abc\n"), "/payload/car_data/color"},
        {"plate_number missing", kCreated, "/payload/car_data/plate_number", std::nullopt,
         "/payload/car_data/plate_number"},
        {"plate_number 65 bytes", kCreated, "/payload/car_data/plate_number", text(65),
         "/payload/car_data/plate_number"},
        {"plate_letters number", kCreated, "/payload/car_data/plate_letters", bj::value(1),
         "/payload/car_data/plate_letters"},
        {"car_brand missing", kCreated, "/payload/car_data/car_brand", std::nullopt, "/payload/car_data/car_brand"},
        {"customer string", kCreated, "/payload/customer", bj::value("Omar"), "/payload/customer"},
        {"name missing", kCreated, "/payload/customer/name", std::nullopt, "/payload/customer/name"},
        {"name null", kCreated, "/payload/customer/name", nullptr, "/payload/customer/name"},
        {"name 201 bytes", kCreated, "/payload/customer/name", text(201), "/payload/customer/name"},
        {"phone missing", kCreated, "/payload/customer/phone", std::nullopt, "/payload/customer/phone"},
        {"phone number", kCreated, "/payload/customer/phone", bj::value(971501234567), "/payload/customer/phone"},
        {"phone without +", kCreated, "/payload/customer/phone", bj::value("971501234567"), "/payload/customer/phone"},
        {"phone 5 digits", kCreated, "/payload/customer/phone", bj::value("+12345"), "/payload/customer/phone"},
        {"phone 16 digits", kCreated, "/payload/customer/phone", bj::value("+1234567890123456"),
         "/payload/customer/phone"},
        {"phone spaces", kCreated, "/payload/customer/phone", bj::value("+971 50 123 4567"), "/payload/customer/phone"},
        {"phone newline", kCreated, "/payload/customer/phone", bj::value("+971501234567\n"), "/payload/customer/phone"},
        {"phone two +", kCreated, "/payload/customer/phone", bj::value("++97150123456"), "/payload/customer/phone"},
        {"address number", kCreated, "/payload/customer/address", bj::value(12), "/payload/customer/address"},
        {"address 1001 bytes", kCreated, "/payload/customer/address", text(1001), "/payload/customer/address"},
        {"items missing", kCreated, "/payload/items", std::nullopt, "/payload/items"},
        {"items empty", kCreated, "/payload/items", bj::array(), "/payload/items"},
        {"items object", kCreated, "/payload/items", bj::object(), "/payload/items"},
        {"item string", kCreated, "/payload/items/0", bj::value("pizza"), "/payload/items/0"},
        {"item id missing", kCreated, "/payload/items/0/id", std::nullopt, "/payload/items/0/id"},
        {"item id empty", kCreated, "/payload/items/0/id", bj::value(""), "/payload/items/0/id"},
        {"item id 129 bytes", kCreated, "/payload/items/0/id", text(129), "/payload/items/0/id"},
        {"item id with NUL", kCreated, "/payload/items/0/id", bj::value(std::string("a\0", 2)), "/payload/items/0/id"},
        {"quantity missing", kCreated, "/payload/items/0/quantity", std::nullopt, "/payload/items/0/quantity"},
        {"quantity 0", kCreated, "/payload/items/0/quantity", bj::value(0), "/payload/items/0/quantity"},
        {"quantity -1", kCreated, "/payload/items/0/quantity", bj::value(-1), "/payload/items/0/quantity"},
        {"quantity 10001", kCreated, "/payload/items/0/quantity", bj::value(10001), "/payload/items/0/quantity"},
        {"quantity 2.0", kCreated, "/payload/items/0/quantity", bj::value(2.0), "/payload/items/0/quantity"},
        {"quantity 1.5", kCreated, "/payload/items/0/quantity", bj::value(1.5), "/payload/items/0/quantity"},
        {"quantity string", kCreated, "/payload/items/0/quantity", bj::value("2"), "/payload/items/0/quantity"},
        {"quantity true", kCreated, "/payload/items/0/quantity", bj::value(true), "/payload/items/0/quantity"},
        {"price missing", kCreated, "/payload/items/0/price", std::nullopt, "/payload/items/0/price"},
        {"price negative", kCreated, "/payload/items/0/price", bj::value(-1), "/payload/items/0/price"},
        {"price string", kCreated, "/payload/items/0/price", bj::value("1"), "/payload/items/0/price"},
        {"item note number", kCreated, "/payload/items/0/note", bj::value(1), "/payload/items/0/note"},
        {"item note 1001 bytes", kCreated, "/payload/items/0/note", text(1001), "/payload/items/0/note"},
        {"options null", kCreated, "/payload/items/0/options", nullptr, "/payload/items/0/options"},
        {"options object", kCreated, "/payload/items/0/options", bj::object(), "/payload/items/0/options"},
        {"option string", kCreated, "/payload/items/0/options/0", bj::value("basil"), "/payload/items/0/options/0"},
        {"option id missing", kCreated, "/payload/items/0/options/0/id", std::nullopt, "/payload/items/0/options/0/id"},
        {"option id empty", kCreated, "/payload/items/0/options/0/id", bj::value(""), "/payload/items/0/options/0/id"},
        {"option price missing", kCreated, "/payload/items/0/options/0/price", std::nullopt,
         "/payload/items/0/options/0/price"},
        {"option price negative", kCreated, "/payload/items/0/options/0/price", bj::value(-0.5),
         "/payload/items/0/options/0/price"},
        {"option quantity missing", kCreated, "/payload/items/0/options/0/quantity", std::nullopt,
         "/payload/items/0/options/0/quantity"},
        {"option quantity 0", kCreated, "/payload/items/0/options/0/quantity", bj::value(0),
         "/payload/items/0/options/0/quantity"},
        {"option quantity 1.0", kCreated, "/payload/items/0/options/0/quantity", bj::value(1.0),
         "/payload/items/0/options/0/quantity"},
    };
    for (const Case& c : cases) {
        check_single_error(c);
    }
}

TEST_CASE("order_created boundaries that pass", "[validate]") {
    const std::vector<Case> cases = {
        {"id 128 bytes", kCreated, "/payload/id", text(128), ""},
        {"payment_method empty", kCreated, "/payload/payment_method", bj::value(""), ""},
        {"payment_method 64 bytes", kCreated, "/payload/payment_method", text(64), ""},
        {"payment_method other", kCreated, "/payload/payment_method", bj::value("apple_pay"), ""},
        {"DINE-IN", kCreated, "/payload/order_type", bj::value("DINE-IN"), ""},
        {"PICK-UP", kCreated, "/payload/order_type", bj::value("PICK-UP"), ""},
        {"note 1000 bytes", kCreated, "/payload/note", text(1000), ""},
        {"total 1e9", kCreated, "/payload/total", bj::value(1000000000), ""},
        {"total 1e9 double", kCreated, "/payload/total", bj::value(1e9), ""},
        {"total -0.0", kCreated, "/payload/total", bj::value(-0.0), ""},
        {"color 3 hex", kCreated, "/payload/car_data/color", bj::value("#FA0"), ""},
        {"color 6 hex mixed case", kCreated, "/payload/car_data/color", bj::value("#aBcDeF"), ""},
        {"plate_letters empty", kCreated, "/payload/car_data/plate_letters", bj::value(""), ""},
        {"plate_number 64 bytes", kCreated, "/payload/car_data/plate_number", text(64), ""},
        {"name empty", kCreated, "/payload/customer/name", bj::value(""), ""},
        {"name 200 bytes", kCreated, "/payload/customer/name", text(200), ""},
        {"phone 6 digits", kCreated, "/payload/customer/phone", bj::value("+123456"), ""},
        {"phone 15 digits", kCreated, "/payload/customer/phone", bj::value("+123456789012345"), ""},
        {"address 1000 bytes", kCreated, "/payload/customer/address", text(1000), ""},
        {"quantity 10000", kCreated, "/payload/items/0/quantity", bj::value(10000), ""},
        {"quantity 1", kCreated, "/payload/items/0/quantity", bj::value(1), ""},
        {"item note 1000 bytes", kCreated, "/payload/items/0/note", text(1000), ""},
    };
    for (const Case& c : cases) {
        check_valid(c);
    }
}

TEST_CASE("item and option counts are bounded", "[validate]") {
    const bj::value item = json_of(kCreated).at("payload").at("items").at(0);
    bj::array items(kMaxItems, item);
    check_valid({"200 items", kCreated, "/payload/items", items, ""});
    items.push_back(item);
    check_single_error({"201 items", kCreated, "/payload/items", items, "/payload/items"});

    const bj::value option = item.at("options").at(0);
    bj::array options(kMaxOptionsPerItem, option);
    check_valid({"50 options", kCreated, "/payload/items/0/options", options, ""});
    options.push_back(option);
    check_single_error({"51 options", kCreated, "/payload/items/0/options", options, "/payload/items/0/options"});
}

TEST_CASE("line totals are amounts: bounded like one, and never past 64 bits", "[validate]") {
    // kCreated's first item: quantity 2, with one option of quantity 3.
    check_valid({"item line 1e9", kCreated, "/payload/items/0/price", bj::value(500000000), ""});
    check_single_error(
        {"item line over 1e9", kCreated, "/payload/items/0/price", bj::value(500000000.001), "/payload/items/0"});
    check_valid({"option line 6e8", kCreated, "/payload/items/0/options/0/price", bj::value(100000000), ""});
    check_single_error({"option line 1.2e9", kCreated, "/payload/items/0/options/0/price", bj::value(200000000),
                        "/payload/items/0/options/0"});
    // Each field at its own bound: 10^12 thousandths × 10^4 × 10^4 is past 2^63; refused, not wrapped.
    bj::value body = json_of(kCreated);
    auto& item = body.at("payload").at("items").at(0).as_object();
    item["quantity"] = kMaxQuantity;
    item["price"] = 1;
    auto& option = item["options"].as_array().at(0).as_object();
    option["price"] = kMaxMoneyUnits;
    option["quantity"] = kMaxQuantity;
    const auto result = validate_webhook(body);
    REQUIRE_FALSE(result.value);
    CHECK(paths(result) == std::vector<std::string>{"/payload/items/0/options/0"});
}

TEST_CASE("schedule_date follows is_schedule", "[validate]") {
    bj::value scheduled = with(kCreated, "/payload/is_schedule", bj::value(1));
    set_at(scheduled, "/payload/schedule_date", bj::value("2024-05-02T09:00:00+03:00"));
    const ValidationResult ok = validate_webhook(scheduled);
    REQUIRE(ok.value);
    const auto& order = std::get<OrderCreated>(ok.value->payload);
    CHECK(order.is_schedule);
    CHECK(order.schedule_date == Timestamp{2024, 5, 2, 9, 0, 0, 0, 180});

    set_at(scheduled, "/payload/schedule_date", bj::value("2024-05-02 09:00:00"));
    CHECK(validate_webhook(scheduled).value.has_value());

    const std::vector<std::pair<std::optional<bj::value>, const char*>> bad = {
        {std::nullopt, "absent"},
        {bj::value(nullptr), "null"},
        {bj::value("tomorrow"), "not a timestamp"},
        {bj::value("2023-02-29 09:00:00"), "not a date"},
        {bj::value(1714640400), "a number"},
    };
    for (const auto& [value, name] : bad) {
        set_at(scheduled, "/payload/schedule_date", value);  // the first case removes the field
        INFO("schedule_date " << name);
        const ValidationResult result = validate_webhook(scheduled);
        CHECK(result.error_code == kErrorValidationFailed);
        CHECK(paths(result) == std::vector<std::string>{"/payload/schedule_date"});
    }

    // With is_schedule itself broken, schedule_date is still checked for its type.
    bj::value broken = with(kCreated, "/payload/is_schedule", bj::value("yes"));
    set_at(broken, "/payload/schedule_date", bj::value("soon"));
    CHECK(paths(validate_webhook(broken)) ==
          std::vector<std::string>{"/payload/is_schedule", "/payload/schedule_date"});
    set_at(broken, "/payload/schedule_date", bj::value("2024-05-02 09:00:00"));
    CHECK(paths(validate_webhook(broken)) == std::vector<std::string>{"/payload/is_schedule"});
}

TEST_CASE("order_updated payload rules", "[validate]") {
    const std::vector<Case> cases = {
        {"order_id missing", kUpdated, "/payload/order_id", std::nullopt, "/payload/order_id"},
        {"order_id empty", kUpdated, "/payload/order_id", bj::value(""), "/payload/order_id"},
        {"order_id number", kUpdated, "/payload/order_id", bj::value(1001), "/payload/order_id"},
        {"order_id 129 bytes", kUpdated, "/payload/order_id", text(129), "/payload/order_id"},
        {"status missing", kUpdated, "/payload/status", std::nullopt, "/payload/status"},
        {"status null", kUpdated, "/payload/status", nullptr, "/payload/status"},
        {"status unknown", kUpdated, "/payload/status", bj::value("picked_up"), "/payload/status"},
        {"status upper case", kUpdated, "/payload/status", bj::value("DELIVERED"), "/payload/status"},
        {"event_time bad", kUpdated, "/event_time", bj::value("2024-02-31T10:00:00Z"), "/event_time"},
    };
    for (const Case& c : cases) {
        check_single_error(c);
    }
    check_valid({"order_id 128 bytes", kUpdated, "/payload/order_id", text(128), ""});

    // An order_created payload under order_updated misses both fields.
    const ValidationResult mixed = validate_webhook(with(kUpdated, "/payload", json_of(kCreated).at("payload")));
    CHECK(paths(mixed) == std::vector<std::string>{"/payload/order_id", "/payload/status"});
}

TEST_CASE("every problem is reported, in document order", "[validate]") {
    bj::value body = json_of(kCreated);
    set_at(body, "/branch_id", bj::value(""));
    set_at(body, "/payload/id", bj::value(""));
    set_at(body, "/payload/order_type", bj::value("TAKEAWAY"));
    set_at(body, "/payload/total", bj::value(-1));
    set_at(body, "/payload/customer/phone", bj::value("0501234567"));
    set_at(body, "/payload/items/0/quantity", bj::value(0));
    set_at(body, "/payload/items/0/options/0/id", std::nullopt);
    set_at(body, "/payload/items/1", json_of(R"({"id": "cola", "quantity": 1.5})"));
    const ValidationResult result = validate_webhook(body);
    CHECK_FALSE(result.value);
    CHECK(result.error_code == kErrorValidationFailed);
    CHECK(paths(result) == std::vector<std::string>{
                               "/branch_id",
                               "/payload/id",
                               "/payload/order_type",
                               "/payload/total",
                               "/payload/customer/phone",
                               "/payload/items/0/quantity",
                               "/payload/items/0/options/0/id",
                               "/payload/items/1/quantity",
                               "/payload/items/1/price",
                           });
    CHECK(result.errors[0].message == "must not be empty");
    CHECK(result.errors[8].message == "is required");
}

TEST_CASE("the error list is capped", "[validate]") {
    bj::array items(kMaxItems, bj::object());  // each item misses id, quantity and price
    const ValidationResult result = validate_webhook(with(kCreated, "/payload/items", items));
    REQUIRE(result.errors.size() == kMaxReportedErrors + 1);
    CHECK(result.errors[0].path == "/payload/items/0/id");
    CHECK(result.errors[kMaxReportedErrors - 1].path == "/payload/items/33/id");
    CHECK(result.errors.back().path.empty());
    CHECK(result.errors.back().message.find("too many errors") != std::string::npos);
}

TEST_CASE("money: the shortcut for thousandths gives what the shortest text gives, for any double",
          "[validate][money]") {
    std::mt19937_64 random(20261128);
    const auto same = [](double d) {
        if (d > static_cast<double>(kMaxMoneyUnits)) return;  // refused before rounding
        INFO("amount " << std::setprecision(17) << d);
        CHECK(to_money(bj::value(d)) == detail::money_by_text(d));
    };
    // Every amount a partner writes with up to three decimals, near the bounds and across them.
    for (std::int64_t units = 0; units < 200'000; ++units) same(static_cast<double>(units) / 1000);
    for (std::int64_t units = kMaxMoneyUnits * 1000 - 200'000; units <= kMaxMoneyUnits * 1000; ++units)
        same(static_cast<double>(units) / 1000);
    std::uniform_int_distribution<std::int64_t> thousandths(0, kMaxMoneyUnits * 1000);
    for (int i = 0; i < 200'000; ++i) same(static_cast<double>(thousandths(random)) / 1000);
    // Halves and near-halves of a thousandth, more decimals, and doubles drawn uniformly from every magnitude.
    std::uniform_real_distribution<double> below_max(0, static_cast<double>(kMaxMoneyUnits));
    std::uniform_int_distribution<int> exponent(-330, 9);
    std::uniform_real_distribution<double> mantissa(1, 10);
    for (int i = 0; i < 100'000; ++i) {
        const double t = static_cast<double>(thousandths(random));
        same((t + 0.5) / 1000);
        same(std::nextafter(t / 1000, 0.0));
        same(std::nextafter(t / 1000, 2e9));
        same(static_cast<double>(thousandths(random)) / 10'000);
        same(below_max(random));
        const double scaled = mantissa(random) * std::pow(10.0, exponent(random));
        if (scaled <= static_cast<double>(kMaxMoneyUnits)) same(scaled);
    }
}

TEST_CASE("money is kept in thousandths, rounded half away from zero", "[validate][money]") {
    CHECK(to_money(bj::value(20.5)) == 20500);
    CHECK(to_money(bj::value(20.0005)) == 20001);  // the double is 20.000499999..., the text is 20.0005
    CHECK(to_money(bj::value(20.0004999)) == 20000);
    CHECK(to_money(bj::value(1e-4)) == 0);
    CHECK(to_money(bj::value(0.0005)) == 1);
    CHECK(to_money(bj::value(0.0015)) == 2);
    CHECK(to_money(bj::value(2.675)) == 2675);
    CHECK(to_money(bj::value(1.0005)) == 1001);
    CHECK(to_money(bj::value(0.9995)) == 1000);
    CHECK(to_money(bj::value(0.1)) == 100);
    CHECK(to_money(bj::value(0.2)) == 200);
    CHECK(to_money(bj::value(0.1 + 0.2)) == 300);  // 0.30000000000000004
    CHECK(*to_money(bj::value(0.1)) + *to_money(bj::value(0.2)) == *to_money(bj::value(0.3)));
    CHECK(to_money(bj::value(5e-324)) == 0);
    CHECK(to_money(bj::value(-0.0)) == 0);
    CHECK(to_money(bj::value(0)) == 0);
    CHECK(to_money(bj::value(7)) == 7000);
    CHECK(to_money(bj::value(1000000000)) == 1'000'000'000'000);
    CHECK(to_money(bj::value(1e9)) == 1'000'000'000'000);
    CHECK(to_money(bj::value(999999999.9995)) == 1'000'000'000'000);
    CHECK(to_money(bj::value(123456789.123)) == 123'456'789'123);
}

TEST_CASE("to_money refuses what is not an amount", "[validate][money]") {
    CHECK_FALSE(to_money(bj::value(-0.001)));
    CHECK_FALSE(to_money(bj::value(-1)));
    CHECK_FALSE(to_money(bj::value(1000000000.001)));
    CHECK_FALSE(to_money(bj::value(1000000001)));
    CHECK_FALSE(to_money(bj::value(UINT64_MAX)));
    CHECK_FALSE(to_money(bj::value(std::numeric_limits<double>::infinity())));
    CHECK_FALSE(to_money(bj::value(std::nan(""))));
    CHECK_FALSE(to_money(bj::value(true)));
    CHECK_FALSE(to_money(bj::value("1")));
    CHECK_FALSE(to_money(bj::value(nullptr)));
}

TEST_CASE("format_money renders three decimals", "[validate][money]") {
    CHECK(format_money(20500) == "20.500");
    CHECK(format_money(0) == "0.000");
    CHECK(format_money(5) == "0.005");
    CHECK(format_money(1'000'000'000'000) == "1000000000.000");
    CHECK(format_money(-1500) == "-1.500");
    CHECK(format_money(std::numeric_limits<Money>::min()) == "-9223372036854775.808");
}

TEST_CASE("errors_to_json renders the details array", "[validate]") {
    const bj::array details = errors_to_json({{"/payload/items/0/quantity", "must be an integer"}, {"", "x"}});
    CHECK(bj::serialize(details) ==
          R"([{"path":"/payload/items/0/quantity","message":"must be an integer"},{"path":"","message":"x"}])");
    CHECK(errors_to_json({}).empty());
}
