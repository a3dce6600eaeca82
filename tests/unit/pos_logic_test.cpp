#include <catch2/catch.hpp>

#include <limits>
#include <string>
#include <string_view>

#include <boost/json/parse.hpp>
#include <boost/json/serialize.hpp>
#include <boost/json/value.hpp>

#include "pos/logic/menu_check.hpp"
#include "pos/logic/menu_file.hpp"
#include "pos/logic/money.hpp"
#include "pos/logic/order_request.hpp"
#include "pos/logic/validation_errors.hpp"

namespace json = boost::json;

namespace {

constexpr std::string_view kValidOrder = R"({
    "branch_id": "BR-1", "brand_id": "BRAND-A", "partner_reference": "talabat:1001", "note": "No onions",
    "total": 57.5, "subtotal": 50, "tax": 7.5, "status": "ACCEPTED",
    "customer": {"name": "Sara", "phone": "+966500000000"},
    "products": [
        {"id": "P-1", "quantity": 2, "total": 45, "note": null, "modifiers": [
            {"id": "M-1", "quantity": 1, "total": 2.5, "note": "extra"},
            {"id": "M-2", "quantity": 2, "total": 5}]},
        {"id": "P-2", "quantity": 1, "total": 5}],
    "unknown_field": {"kept": "out"}
})";

json::value valid_order() { return json::parse(kValidOrder); }

// Errors rendered one "key: message" per line, so that a failed CHECK shows the whole difference.
std::string render(const pos::ValidationErrors& errors) {
    std::string out;
    for (const auto& [key, messages] : errors) {
        for (const auto& message : messages) {
            out += key + ": " + message + "\n";
        }
    }
    return out;
}

std::string errors_of(const json::value& body) {
    const pos::ParsedOrderRequest parsed = pos::parse_order_request(body);
    CHECK(parsed.order.has_value() == parsed.errors.empty());
    return render(parsed.errors);
}

// The errors after setting (or, with a null `value` and erase=true, removing) one top-level field.
std::string with_field(std::string_view field, const json::value& value) {
    json::value body = valid_order();
    body.as_object()[field] = value;
    return errors_of(body);
}

std::string without_field(std::string_view field) {
    json::value body = valid_order();
    body.as_object().erase(field);
    return errors_of(body);
}

json::object& product(json::value& body, std::size_t index) {
    return body.at("products").as_array().at(index).as_object();
}

json::object& modifier(json::value& body, std::size_t product_index, std::size_t index) {
    return product(body, product_index).at("modifiers").as_array().at(index).as_object();
}

std::optional<pos::Money> money(std::string_view text) { return pos::money_from_json(json::parse(text)); }

}  // namespace

TEST_CASE("a valid order parses into the typed struct", "[pos]") {
    const pos::ParsedOrderRequest parsed = pos::parse_order_request(valid_order());
    REQUIRE(parsed.errors.empty());
    REQUIRE(parsed.order);
    const pos::OrderRequest& order = *parsed.order;
    CHECK(order.branch_id == "BR-1");
    CHECK(order.brand_id == "BRAND-A");
    CHECK(order.partner_reference == "talabat:1001");
    CHECK(order.note == "No onions");
    CHECK(order.total == 57'500);
    CHECK(order.subtotal == 50'000);
    CHECK(order.tax == 7'500);
    CHECK(order.status == pos::OrderStatus::accepted);
    REQUIRE(order.customer);
    CHECK(order.customer->name == "Sara");
    CHECK(order.customer->phone == "+966500000000");
    REQUIRE(order.products.size() == 2);
    CHECK(order.products[0].id == "P-1");
    CHECK(order.products[0].quantity == 2);
    CHECK(order.products[0].total == 45'000);
    CHECK_FALSE(order.products[0].note.has_value());
    REQUIRE(order.products[0].modifiers.size() == 2);
    CHECK(order.products[0].modifiers[0].id == "M-1");
    CHECK(order.products[0].modifiers[0].quantity == 1);
    CHECK(order.products[0].modifiers[0].total == 2'500);
    CHECK(order.products[0].modifiers[0].note == "extra");
    CHECK(order.products[0].modifiers[1].quantity == 2);
    CHECK(order.products[1].modifiers.empty());
}

TEST_CASE("optional fields may be left out or null", "[pos]") {
    const pos::ParsedOrderRequest parsed = pos::parse_order_request(json::parse(R"({
        "branch_id": "BR-1", "brand_id": "BRAND-A", "partner_reference": "ref", "total": 0, "subtotal": 0,
        "tax": 0, "note": null, "status": null, "customer": null,
        "products": [{"id": "P-1", "quantity": 1, "total": 0, "modifiers": null}]})"));
    REQUIRE(parsed.order);
    CHECK_FALSE(parsed.order->note.has_value());
    CHECK(parsed.order->status == pos::OrderStatus::pending);
    CHECK_FALSE(parsed.order->customer.has_value());
    CHECK(parsed.order->products[0].modifiers.empty());

    json::value body = valid_order();
    body.as_object().erase("status");
    body.as_object()["customer"] = json::object{};
    const pos::ParsedOrderRequest defaulted = pos::parse_order_request(body);
    REQUIRE(defaulted.order);
    CHECK(defaulted.order->status == pos::OrderStatus::pending);
    REQUIRE(defaulted.order->customer);
    CHECK_FALSE(defaulted.order->customer->name.has_value());
    CHECK_FALSE(defaulted.order->customer->phone.has_value());
}

TEST_CASE("a body that is not an object is one error under body", "[pos]") {
    for (const char* text : {"[]", "\"order\"", "null", "42", "[{\"branch_id\": \"BR-1\"}]"}) {
        INFO(text);
        CHECK(errors_of(json::parse(text)) == "body: The request body must be a JSON object.\n");
    }
}

TEST_CASE("every required field is reported at once", "[pos]") {
    CHECK(errors_of(json::object{}) ==
          "branch_id: The branch id field is required.\n"
          "brand_id: The brand id field is required.\n"
          "partner_reference: The partner reference field is required.\n"
          "products: The products field is required.\n"
          "subtotal: The subtotal field is required.\n"
          "tax: The tax field is required.\n"
          "total: The total field is required.\n");
}

TEST_CASE("required string fields", "[pos]") {
    CHECK(without_field("branch_id") == "branch_id: The branch id field is required.\n");
    CHECK(without_field("brand_id") == "brand_id: The brand id field is required.\n");
    CHECK(without_field("partner_reference") == "partner_reference: The partner reference field is required.\n");
    CHECK(with_field("branch_id", nullptr) == "branch_id: The branch id field is required.\n");
    CHECK(with_field("branch_id", "") == "branch_id: The branch id field is required.\n");
    CHECK(with_field("brand_id", "  \t") == "brand_id: The brand id field is required.\n");
    CHECK(with_field("branch_id", 12) == "branch_id: The branch id must be a string.\n");
    CHECK(with_field("brand_id", json::array{"A"}) == "brand_id: The brand id must be a string.\n");
    CHECK(with_field("partner_reference", true) == "partner_reference: The partner reference must be a string.\n");
}

TEST_CASE("string lengths count characters, not bytes", "[pos]") {
    CHECK(with_field("branch_id", json::string(191, 'b')).empty());
    CHECK(with_field("branch_id", json::string(192, 'b')) ==
          "branch_id: The branch id must not be greater than 191 characters.\n");
    std::string accented;
    for (int i = 0; i < 191; ++i) {
        accented += "\xc3\xa9";  // é, two bytes
    }
    CHECK(with_field("partner_reference", json::string(accented)).empty());
    CHECK(with_field("partner_reference", json::string(accented + "\xc3\xa9")) ==
          "partner_reference: The partner reference must not be greater than 191 characters.\n");
    CHECK(with_field("note", json::string(2000, 'n')).empty());
    CHECK(with_field("note", json::string(2001, 'n')) == "note: The note must not be greater than 2000 characters.\n");
}

TEST_CASE("note is an optional string", "[pos]") {
    CHECK(without_field("note").empty());
    CHECK(with_field("note", nullptr).empty());
    CHECK(with_field("note", "").empty());
    CHECK(with_field("note", 5) == "note: The note must be a string.\n");
}

TEST_CASE("money fields are numbers at least 0 and within numeric(14,3)", "[pos]") {
    for (const char* field : {"total", "subtotal", "tax"}) {
        const std::string name(field);
        INFO(name);
        CHECK(without_field(field) == name + ": The " + name + " field is required.\n");
        CHECK(with_field(field, nullptr) == name + ": The " + name + " field is required.\n");
        CHECK(with_field(field, "12.5") == name + ": The " + name + " must be a number.\n");
        CHECK(with_field(field, true) == name + ": The " + name + " must be a number.\n");
        CHECK(with_field(field, json::object{}) == name + ": The " + name + " must be a number.\n");
        CHECK(with_field(field, -1) == name + ": The " + name + " must be at least 0.\n");
        CHECK(with_field(field, -0.001) == name + ": The " + name + " must be at least 0.\n");
        CHECK(with_field(field, 1e12) == name + ": The " + name + " must not be greater than 99999999999.999.\n");
        CHECK(with_field(field, std::uint64_t{18446744073709551615ULL}) ==
              name + ": The " + name + " must not be greater than 99999999999.999.\n");
        CHECK(with_field(field, 0).empty());
        CHECK(with_field(field, 99999999999.999).empty());
    }
    // Boost.JSON parses 1e400 as infinity.
    CHECK(errors_of(json::parse(R"({"total": 1e400, "subtotal": -1e400})"))
              .find("subtotal: The subtotal must be at least 0.\n"
                    "tax: The tax field is required.\n"
                    "total: The total must not be greater than 99999999999.999.\n") != std::string::npos);
}

TEST_CASE("status is one of the six names, default PENDING", "[pos]") {
    for (const char* name : {"PENDING", "ACCEPTED", "PREPARING", "CANCELED", "REJECTED", "TIME_OUT"}) {
        json::value body = valid_order();
        body.as_object()["status"] = name;
        const auto parsed = pos::parse_order_request(body);
        REQUIRE(parsed.order);
        CHECK(pos::to_string(parsed.order->status) == name);
    }
    CHECK(with_field("status", "DONE") == "status: The selected status is invalid.\n");
    CHECK(with_field("status", "pending") == "status: The selected status is invalid.\n");
    CHECK(with_field("status", "") == "status: The selected status is invalid.\n");
    CHECK(with_field("status", 3) == "status: The status must be a string.\n");
    CHECK(pos::parse_order_status("TIME_OUT") == pos::OrderStatus::time_out);
    CHECK_FALSE(pos::parse_order_status("CANCELLED").has_value());
}

TEST_CASE("customer is an optional object of optional strings", "[pos]") {
    CHECK(without_field("customer").empty());
    CHECK(with_field("customer", "Sara") == "customer: The customer must be an object.\n");
    CHECK(with_field("customer", json::array{}) == "customer: The customer must be an object.\n");
    CHECK(with_field("customer", json::object{{"name", 5}}) == "customer.name: The customer.name must be a string.\n");
    CHECK(with_field("customer", json::object{{"phone", 966}}) ==
          "customer.phone: The customer.phone must be a string.\n");
    CHECK(with_field("customer", json::object{{"phone", std::string(51, '1')}}) ==
          "customer.phone: The customer.phone must not be greater than 50 characters.\n");
    CHECK(with_field("customer", json::object{{"name", std::string(192, 'n')}}) ==
          "customer.name: The customer.name must not be greater than 191 characters.\n");
    CHECK(with_field("customer", json::object{{"name", nullptr}, {"phone", nullptr}}).empty());
}

TEST_CASE("products is a required, non-empty, bounded array of objects", "[pos]") {
    CHECK(without_field("products") == "products: The products field is required.\n");
    CHECK(with_field("products", nullptr) == "products: The products field is required.\n");
    CHECK(with_field("products", json::array{}) == "products: The products field is required.\n");
    CHECK(with_field("products", json::object{}) == "products: The products must be an array.\n");
    CHECK(with_field("products", "P-1") == "products: The products must be an array.\n");
    CHECK(with_field("products", json::array{5}) == "products.0: The products.0 must be an object.\n");

    json::array many;
    for (int i = 0; i < 501; ++i) {
        many.push_back(json::object{{"id", "P-1"}, {"quantity", 1}, {"total", 1}});
    }
    CHECK(with_field("products", many) == "products: The products must not have more than 500 items.\n");
    many.pop_back();
    CHECK(with_field("products", many).empty());
}

TEST_CASE("product line rules", "[pos]") {
    const auto check_product = [](std::string_view field, const json::value& value, const std::string& expected) {
        json::value body = valid_order();
        product(body, 1)[field] = value;
        INFO(field << " = " << json::serialize(value));
        CHECK(errors_of(body) == expected);
    };
    const auto check_missing = [](std::string_view field, const std::string& expected) {
        json::value body = valid_order();
        product(body, 1).erase(field);
        INFO(field);
        CHECK(errors_of(body) == expected);
    };
    check_missing("id", "products.1.id: The products.1.id field is required.\n");
    check_missing("quantity", "products.1.quantity: The products.1.quantity field is required.\n");
    check_missing("total", "products.1.total: The products.1.total field is required.\n");
    check_missing("note", "");
    check_missing("modifiers", "");

    check_product("id", "", "products.1.id: The products.1.id field is required.\n");
    check_product("id", 7, "products.1.id: The products.1.id must be a string.\n");
    check_product("id", json::string(192, 'p'),
                  "products.1.id: The products.1.id must not be greater than 191 characters.\n");
    check_product("quantity", "2", "products.1.quantity: The products.1.quantity must be an integer.\n");
    check_product("quantity", 1.5, "products.1.quantity: The products.1.quantity must be an integer.\n");
    check_product("quantity", true, "products.1.quantity: The products.1.quantity must be an integer.\n");
    check_product("quantity", 0, "products.1.quantity: The products.1.quantity must be at least 1.\n");
    check_product("quantity", -3, "products.1.quantity: The products.1.quantity must be at least 1.\n");
    check_product("quantity", 100001,
                  "products.1.quantity: The products.1.quantity must not be greater than 100000.\n");
    check_product("quantity", std::uint64_t{18446744073709551615ULL},
                  "products.1.quantity: The products.1.quantity must not be greater than 100000.\n");
    check_product("quantity", std::numeric_limits<double>::infinity(),
                  "products.1.quantity: The products.1.quantity must be an integer.\n");
    check_product("quantity", 100000, "");
    check_product("quantity", 3.0, "");
    check_product("total", "5", "products.1.total: The products.1.total must be a number.\n");
    check_product("total", -0.5, "products.1.total: The products.1.total must be at least 0.\n");
    check_product("note", 3, "products.1.note: The products.1.note must be a string.\n");
    check_product("note", json::string(2001, 'x'),
                  "products.1.note: The products.1.note must not be greater than 2000 characters.\n");
    check_product("note", nullptr, "");
    check_product("modifiers", "M-1", "products.1.modifiers: The products.1.modifiers must be an array.\n");
    check_product("modifiers", json::array{}, "");
    check_product("modifiers", nullptr, "");
    check_product("modifiers", json::array{"M-1"},
                  "products.1.modifiers.0: The products.1.modifiers.0 must be an object.\n");

    json::array many;
    for (int i = 0; i < 101; ++i) {
        many.push_back(json::object{{"id", "M-1"}, {"quantity", 1}, {"total", 0}});
    }
    check_product("modifiers", many,
                  "products.1.modifiers: The products.1.modifiers must not have more than 100 items.\n");

    json::value body = valid_order();
    product(body, 1)["quantity"] = 3.0;
    CHECK(pos::parse_order_request(body).order->products[1].quantity == 3);
}

TEST_CASE("modifier rules", "[pos]") {
    const auto check_modifier = [](std::string_view field, const json::value& value, const std::string& expected) {
        json::value body = valid_order();
        modifier(body, 0, 1)[field] = value;
        INFO(field << " = " << json::serialize(value));
        CHECK(errors_of(body) == expected);
    };
    const auto check_missing = [](std::string_view field, const std::string& expected) {
        json::value body = valid_order();
        modifier(body, 0, 1).erase(field);
        INFO(field);
        CHECK(errors_of(body) == expected);
    };
    check_missing("id", "products.0.modifiers.1.id: The products.0.modifiers.1.id field is required.\n");
    check_missing("quantity",
                  "products.0.modifiers.1.quantity: The products.0.modifiers.1.quantity field is required.\n");
    check_missing("total", "products.0.modifiers.1.total: The products.0.modifiers.1.total field is required.\n");
    check_missing("note", "");

    check_modifier("id", 1, "products.0.modifiers.1.id: The products.0.modifiers.1.id must be a string.\n");
    check_modifier("id", " ", "products.0.modifiers.1.id: The products.0.modifiers.1.id field is required.\n");
    check_modifier("quantity", "1",
                   "products.0.modifiers.1.quantity: The products.0.modifiers.1.quantity must be an integer.\n");
    check_modifier("quantity", 0,
                   "products.0.modifiers.1.quantity: The products.0.modifiers.1.quantity must be at least 1.\n");
    check_modifier("total", "2.5",
                   "products.0.modifiers.1.total: The products.0.modifiers.1.total must be a number.\n");
    check_modifier("total", -1, "products.0.modifiers.1.total: The products.0.modifiers.1.total must be at least 0.\n");
    check_modifier("note", false, "products.0.modifiers.1.note: The products.0.modifiers.1.note must be a string.\n");
    check_modifier("note", nullptr, "");
}

TEST_CASE("problems anywhere in the body are all reported together", "[pos]") {
    json::value body = valid_order();
    body.as_object()["branch_id"] = 5;
    body.as_object()["status"] = "DONE";
    product(body, 1)["quantity"] = 0;
    modifier(body, 0, 0)["total"] = "x";
    modifier(body, 0, 1).erase("id");
    CHECK(errors_of(body) ==
          "branch_id: The branch id must be a string.\n"
          "products.0.modifiers.0.total: The products.0.modifiers.0.total must be a number.\n"
          "products.0.modifiers.1.id: The products.0.modifiers.1.id field is required.\n"
          "products.1.quantity: The products.1.quantity must be at least 1.\n"
          "status: The selected status is invalid.\n");
}

TEST_CASE("summarize_errors gives Laravel's top-level message", "[pos]") {
    pos::ValidationErrors errors;
    CHECK(pos::summarize_errors(errors).empty());
    pos::add_error(errors, "tax", "The tax field is required.");
    CHECK(pos::summarize_errors(errors) == "The tax field is required.");
    pos::add_error(errors, "branch_id", "The branch id field is required.");
    CHECK(pos::summarize_errors(errors) == "The branch id field is required. (and 1 more error)");
    pos::ValidationErrors more;
    pos::add_error(more, "tax", "Another.");
    pos::merge_errors(errors, more);
    CHECK(errors.at("tax").size() == 2);
    CHECK(pos::summarize_errors(errors) == "The branch id field is required. (and 2 more errors)");
}

TEST_CASE("money keeps three decimals, rounding half away from zero on the written digits", "[pos]") {
    CHECK(money("0") == 0);
    CHECK(money("20") == 20'000);
    CHECK(money("20.0") == 20'000);
    CHECK(money("2.5") == 2'500);
    CHECK(money("2.675") == 2'675);
    CHECK(money("0.1") == 100);
    CHECK(money("0.0005") == 1);
    CHECK(money("0.0004999") == 0);
    CHECK(money("1.0005") == 1'001);
    CHECK(money("1.0015") == 1'002);
    CHECK(money("-2.0005") == -2'001);
    CHECK(money("0.00005") == 0);
    CHECK(money("1.5e-3") == 2);
    CHECK(money("1e2") == 100'000);
    CHECK(money("123456789.123") == 123'456'789'123);
    CHECK(money("99999999999.999") == pos::kMaxMoney);
    CHECK(money("99999999999") == 99'999'999'999'000);
    CHECK_FALSE(money("99999999999.9995").has_value());
    CHECK_FALSE(money("100000000000").has_value());
    CHECK_FALSE(money("1e300").has_value());
    CHECK_FALSE(money("18446744073709551615").has_value());
    CHECK_FALSE(money("\"1.5\"").has_value());
    CHECK_FALSE(money("null").has_value());

    CHECK(pos::format_money(0) == "0.000");
    CHECK(pos::format_money(12'500) == "12.500");
    CHECK(pos::format_money(7) == "0.007");
    CHECK(pos::format_money(-1) == "-0.001");
    CHECK(pos::format_money(pos::kMaxMoney) == "99999999999.999");
    CHECK(pos::format_money(INT64_MIN) == "-9223372036854775.808");
}

namespace {

pos::MenuView sample_menu() {
    pos::MenuView menu;
    menu.branches = {"BR-1", "BR-2"};
    menu.products = {"P-1", "P-2", "P-3"};
    menu.product_branches = {{"P-1", {"BR-1", "BR-2"}}, {"P-2", {"BR-1"}}};
    menu.modifiers = {"M-1", "M-2"};
    return menu;
}

pos::OrderRequest order_with(std::string branch, std::vector<pos::OrderProduct> products) {
    pos::OrderRequest order;
    order.branch_id = std::move(branch);
    order.brand_id = "BRAND-A";
    order.partner_reference = "ref";
    order.products = std::move(products);
    return order;
}

pos::OrderProduct line(std::string id, std::vector<std::string> modifier_ids = {}) {
    pos::OrderProduct product;
    product.id = std::move(id);
    product.quantity = 1;
    for (auto& modifier_id : modifier_ids) {
        product.modifiers.push_back({std::move(modifier_id), 1, 0, std::nullopt});
    }
    return product;
}

}  // namespace

TEST_CASE("an order that fits the menu has no menu errors", "[pos]") {
    const auto order = pos::parse_order_request(valid_order()).order;
    REQUIRE(order);
    CHECK(render(pos::check_order_against_menu(*order, sample_menu())).empty());
    CHECK(render(pos::check_order_against_menu(order_with("BR-2", {line("P-1", {"M-2"})}), sample_menu())).empty());
}

TEST_CASE("unknown products and modifiers and unavailable products are refused", "[pos]") {
    const pos::MenuView menu = sample_menu();
    CHECK(render(pos::check_order_against_menu(order_with("BR-1", {line("P-1"), line("P-9")}), menu)) ==
          "products.1.id: The selected products.1.id is invalid.\n");
    CHECK(render(pos::check_order_against_menu(order_with("BR-2", {line("P-1"), line("P-2")}), menu)) ==
          "products.1.id: Product P-2 is not available in branch BR-2.\n");
    CHECK(render(pos::check_order_against_menu(order_with("BR-1", {line("P-3")}), menu)) ==
          "products.0.id: Product P-3 is not available in branch BR-1.\n");
    CHECK(render(pos::check_order_against_menu(order_with("BR-1", {line("P-1", {"M-1", "M-9"})}), menu)) ==
          "products.0.modifiers.1.id: The selected products.0.modifiers.1.id is invalid.\n");
    CHECK(render(pos::check_order_against_menu(order_with("BR-2", {line("P-9", {"M-8"}), line("P-2", {"M-1", "M-7"})}),
                                               menu)) ==
          "products.0.id: The selected products.0.id is invalid.\n"
          "products.0.modifiers.0.id: The selected products.0.modifiers.0.id is invalid.\n"
          "products.1.id: Product P-2 is not available in branch BR-2.\n"
          "products.1.modifiers.1.id: The selected products.1.modifiers.1.id is invalid.\n");
}

TEST_CASE("a branch outside the brand is one branch_id error, not one per product", "[pos]") {
    CHECK(render(pos::check_order_against_menu(order_with("BR-9", {line("P-1"), line("P-9")}), sample_menu())) ==
          "branch_id: The selected branch id is invalid.\n"
          "products.1.id: The selected products.1.id is invalid.\n");
}

namespace {

constexpr std::string_view kExampleMenu = R"({
 "brands":   [{"id": "BRAND-A", "name": "Brand A"}],
 "branches": [{"id": "BR-1", "brand_id": "BRAND-A", "name": "Olaya"}],
 "products": [{"id": "P-1", "brand_id": "BRAND-A", "name": "Burger", "price": 20.0, "branches": ["BR-1"]}],
 "modifiers":[{"id": "M-1", "brand_id": "BRAND-A", "name": "Cheese", "price": 2.5}]})";

constexpr std::string_view kTwoBrands = R"({
 "brands":   [{"id": "BRAND-A"}, {"id": "BRAND-B"}],
 "branches": [{"id": "BR-1", "brand_id": "BRAND-A"}, {"id": "BR-2", "brand_id": "BRAND-B"}],
 "products": [{"id": "P-1", "brand_id": "BRAND-A", "price": 1, "branches": ["BR-1"]}],
 "modifiers": []})";

std::string menu_errors(std::string_view text) {
    const pos::ParsedMenuFile parsed = pos::parse_menu_file_text(text);
    CHECK(parsed.menu.has_value() == parsed.errors.empty());
    std::string out;
    for (const auto& error : parsed.errors) {
        out += error + "\n";
    }
    return out;
}

// kTwoBrands with one section replaced.
std::string two_brands_with(std::string_view section, const json::value& value) {
    json::value root = json::parse(kTwoBrands);
    root.as_object()[section] = value;
    return menu_errors(json::serialize(root));
}

}  // namespace

TEST_CASE("the menu file example of product.md loads", "[pos]") {
    const pos::ParsedMenuFile parsed = pos::parse_menu_file_text(kExampleMenu);
    REQUIRE(parsed.errors.empty());
    REQUIRE(parsed.menu);
    const pos::MenuFile& menu = *parsed.menu;
    REQUIRE(menu.brands.size() == 1);
    CHECK(menu.brands[0].id == "BRAND-A");
    CHECK(menu.brands[0].name == "Brand A");
    REQUIRE(menu.branches.size() == 1);
    CHECK(menu.branches[0].id == "BR-1");
    CHECK(menu.branches[0].brand_id == "BRAND-A");
    CHECK(menu.branches[0].name == "Olaya");
    REQUIRE(menu.products.size() == 1);
    CHECK(menu.products[0].id == "P-1");
    CHECK(menu.products[0].brand_id == "BRAND-A");
    CHECK(menu.products[0].name == "Burger");
    CHECK(menu.products[0].price == 20'000);
    CHECK(menu.products[0].branches == std::vector<std::string>{"BR-1"});
    REQUIRE(menu.modifiers.size() == 1);
    CHECK(menu.modifiers[0].id == "M-1");
    CHECK(menu.modifiers[0].name == "Cheese");
    CHECK(menu.modifiers[0].price == 2'500);

    const pos::MenuView view = pos::menu_view_for_brand(menu, "BRAND-A");
    CHECK(view.branches == std::set<std::string>{"BR-1"});
    CHECK(view.products == std::set<std::string>{"P-1"});
    CHECK(view.product_branches.at("P-1") == std::set<std::string>{"BR-1"});
    CHECK(view.modifiers == std::set<std::string>{"M-1"});
    CHECK(pos::menu_view_for_brand(menu, "BRAND-Z").products.empty());
}

TEST_CASE("with one brand, brand_id may be left out and names default to ids", "[pos]") {
    const pos::ParsedMenuFile parsed = pos::parse_menu_file_text(R"({
        "brands": [{"id": "BRAND-A", "extra": [1, 2]}],
        "branches": [{"id": "BR-1"}, {"id": "BR-2", "brand_id": "BRAND-A"}],
        "products": [{"id": "P-1", "price": 1.25, "branches": ["BR-1", "BR-2"], "category": "mains"}],
        "modifiers": [{"id": "M-1", "price": 0}]})");
    REQUIRE(parsed.menu);
    CHECK(parsed.menu->brands[0].name == "BRAND-A");
    CHECK(parsed.menu->branches[0].brand_id == "BRAND-A");
    CHECK(parsed.menu->products[0].brand_id == "BRAND-A");
    CHECK(parsed.menu->products[0].name == "P-1");
    CHECK(parsed.menu->products[0].price == 1'250);
    CHECK(parsed.menu->modifiers[0].brand_id == "BRAND-A");

    CHECK(menu_errors(R"({"brands": [{"id": "A"}]})").empty());
}

TEST_CASE("the same product id may exist in two brands", "[pos]") {
    CHECK(menu_errors(R"({"brands": [{"id": "A"}, {"id": "B"}],
        "branches": [{"id": "BR-1", "brand_id": "A"}, {"id": "BR-2", "brand_id": "B"}],
        "products": [{"id": "P-1", "brand_id": "A", "price": 1, "branches": ["BR-1"]},
                     {"id": "P-1", "brand_id": "B", "price": 2, "branches": ["BR-2"]}],
        "modifiers": [{"id": "M-1", "brand_id": "A", "price": 1},
                      {"id": "M-1", "brand_id": "B", "price": 1}]})")
              .empty());
}

TEST_CASE("menu file structure errors carry their JSON path", "[pos]") {
    CHECK(menu_errors("[]") == "/: must be a JSON object\n");
    CHECK(menu_errors("{\"brands\": ").rfind("/: invalid JSON: ", 0) == 0);
    CHECK(menu_errors("{}") == "/brands: required\n");
    CHECK(menu_errors(R"({"brands": []})") == "/brands: must contain at least one brand\n");
    CHECK(menu_errors(R"({"brands": {}})") == "/brands: must be an array\n");
    CHECK(menu_errors(R"({"brands": ["BRAND-A"]})") == "/brands/0: must be an object\n");
    CHECK(menu_errors(R"({"brands": [{"name": "A"}]})") == "/brands/0/id: required\n");
    CHECK(menu_errors(R"({"brands": [{"id": 5}]})") == "/brands/0/id: must be a string\n");
    CHECK(menu_errors(R"({"brands": [{"id": ""}]})") == "/brands/0/id: must not be empty\n");
    CHECK(menu_errors(R"({"brands": [{"id": "A", "name": 3}]})") == "/brands/0/name: must be a string\n");
    CHECK(menu_errors(R"({"brands": [{"id": ")" + std::string(192, 'a') + R"("}]})") ==
          "/brands/0/id: must be at most 191 characters\n");
    CHECK(two_brands_with("products", json::object{}) == "/products: must be an array\n");
    CHECK(two_brands_with("modifiers", "M-1") == "/modifiers: must be an array\n");
    CHECK(two_brands_with("branches", json::array{1}) ==
          "/branches/0: must be an object\n/products/0/branches/0: unknown branch BR-1\n");
}

TEST_CASE("menu file reference and duplicate errors", "[pos]") {
    CHECK(menu_errors(R"({"brands": [{"id": "A"}, {"id": "A"}]})") == "/brands/1/id: duplicate brand A\n");
    CHECK(two_brands_with("branches", json::parse(R"([{"id": "BR-1", "brand_id": "BRAND-A"},
                                                      {"id": "BR-1", "brand_id": "BRAND-B"}])")) ==
          "/branches/1/id: duplicate branch BR-1\n");
    CHECK(two_brands_with("branches", json::parse(R"([{"id": "BR-1", "brand_id": "BRAND-X"}])")) ==
          "/branches/0/brand_id: unknown brand BRAND-X\n");  // BR-1 exists, so the product is not blamed too
    CHECK(two_brands_with("branches", json::parse(R"([{"id": "BR-1"}])")) ==
          "/branches/0/brand_id: required when the file has more than one brand\n");

    const auto products = [](std::string_view list) { return two_brands_with("products", json::parse(list)); };
    CHECK(products(R"([{"id": "P-1", "brand_id": "BRAND-A", "price": 1, "branches": ["BR-1", "BR-9"]}])") ==
          "/products/0/branches/1: unknown branch BR-9\n");
    CHECK(products(R"([{"id": "P-1", "brand_id": "BRAND-A", "price": 1, "branches": ["BR-2"]}])") ==
          "/products/0/branches/0: branch BR-2 belongs to brand BRAND-B, not BRAND-A\n");
    CHECK(products(R"([{"id": "P-1", "brand_id": "BRAND-A", "price": 1, "branches": ["BR-1", "BR-1"]}])") ==
          "/products/0/branches/1: duplicate branch BR-1\n");
    CHECK(products(R"([{"id": "P-1", "brand_id": "BRAND-A", "price": 1, "branches": ["BR-1", 7]}])") ==
          "/products/0/branches/1: must be a string\n");
    CHECK(products(R"([{"id": "P-1", "brand_id": "BRAND-A", "price": 1}])") == "/products/0/branches: required\n");
    CHECK(products(R"([{"id": "P-1", "brand_id": "BRAND-A", "price": 1, "branches": "BR-1"}])") ==
          "/products/0/branches: must be an array\n");
    CHECK(products(R"([{"id": "P-1", "brand_id": "BRAND-A", "price": 1, "branches": []}])").empty());
    CHECK(products(R"([{"id": "P-1", "price": 1, "branches": ["BR-1"]}])") ==
          "/products/0/brand_id: required when the file has more than one brand\n");
    CHECK(products(R"([{"id": "P-1", "brand_id": "BRAND-Z", "price": 1, "branches": ["BR-1"]}])") ==
          "/products/0/brand_id: unknown brand BRAND-Z\n");
    CHECK(products(R"([{"id": "P-1", "brand_id": "BRAND-A", "price": 1, "branches": ["BR-1"]},
                       {"id": "P-1", "brand_id": "BRAND-A", "price": 2, "branches": ["BR-1"]}])") ==
          "/products/1/id: duplicate product P-1 in brand BRAND-A\n");

    const auto modifiers = [](std::string_view list) { return two_brands_with("modifiers", json::parse(list)); };
    CHECK(modifiers(R"([{"id": "M-1", "brand_id": "BRAND-A", "price": 1},
                        {"id": "M-1", "brand_id": "BRAND-A", "price": 1}])") ==
          "/modifiers/1/id: duplicate modifier M-1 in brand BRAND-A\n");
    CHECK(modifiers(R"([{"id": "M-1", "price": 1}])") ==
          "/modifiers/0/brand_id: required when the file has more than one brand\n");
}

TEST_CASE("menu prices are numbers at least 0", "[pos]") {
    const auto products = [](std::string_view price) {
        return two_brands_with("products", json::parse(R"([{"id": "P-1", "brand_id": "BRAND-A", "branches": [])" +
                                                       std::string(price) + "}]"));
    };
    CHECK(products("") == "/products/0/price: required\n");
    CHECK(products(R"(, "price": "20")") == "/products/0/price: must be a number\n");
    CHECK(products(R"(, "price": -1)") == "/products/0/price: must be at least 0\n");
    CHECK(products(R"(, "price": 1e12)") == "/products/0/price: must be at most 99999999999.999\n");
    CHECK(two_brands_with("modifiers", json::parse(R"([{"id": "M-1", "brand_id": "BRAND-A"}])")) ==
          "/modifiers/0/price: required\n");
}

TEST_CASE("every menu file problem is reported at once", "[pos]") {
    CHECK(menu_errors(R"({"brands": [{"id": "A"}, {"id": "B"}],
        "branches": [{"id": "BR-1", "brand_id": "A"}, {"id": "BR-1", "brand_id": "B"}],
        "products": [{"id": "P-1", "price": -1, "branches": ["BR-9"]}],
        "modifiers": [{"brand_id": "A", "price": 1}]})") ==
          "/branches/1/id: duplicate branch BR-1\n"
          "/products/0/brand_id: required when the file has more than one brand\n"
          "/products/0/price: must be at least 0\n"
          "/products/0/branches/0: unknown branch BR-9\n"
          "/modifiers/0/id: required\n");
}
