// Pure parts of the POS's authentication and request handling: bearer headers, the login throttle, login
// bodies, new-user rules, NUL detection and the request draft that lets the menu check report with validation.
#include <catch2/catch.hpp>

#include <boost/json/parse.hpp>
#include <boost/json/value.hpp>
#include <chrono>
#include <string>

#include "common/crypto/digest.hpp"
#include "common/crypto/password.hpp"
#include "common/crypto/random.hpp"
#include "pos/logic/bearer.hpp"
#include "pos/logic/credentials.hpp"
#include "pos/logic/login_throttle.hpp"
#include "pos/logic/menu_check.hpp"
#include "pos/logic/menu_file.hpp"
#include "pos/logic/order_request.hpp"
#include "pos/logic/storable.hpp"

namespace json = boost::json;
using namespace std::chrono_literals;

namespace {

std::string render_errors(const pos::ValidationErrors& errors) {
    std::string out;
    for (const auto& [key, messages] : errors) {
        for (const auto& message : messages) out += key + ": " + message + "\n";
    }
    return out;
}

}  // namespace

TEST_CASE("bearer_token reads `Bearer <token>` and nothing else", "[pos]") {
    CHECK(pos::bearer_token("Bearer abc") == "abc");
    CHECK(pos::bearer_token("bearer abc") == "abc");
    CHECK(pos::bearer_token("BEARER  abc ") == "abc");
    CHECK(pos::bearer_token(" Bearer\tabc-_.~+/=") == "abc-_.~+/=");
    CHECK_FALSE(pos::bearer_token(std::nullopt));
    CHECK_FALSE(pos::bearer_token(""));
    CHECK_FALSE(pos::bearer_token("Bearer"));
    CHECK_FALSE(pos::bearer_token("Bearer "));
    CHECK_FALSE(pos::bearer_token("Bearerabc"));
    CHECK_FALSE(pos::bearer_token("Basic YWxhZGRpbjpvcGVuc2VzYW1l"));
    CHECK_FALSE(pos::bearer_token("Bearer abc def"));
    CHECK_FALSE(pos::bearer_token(std::string("Bearer ab\x01") + "c"));
    CHECK_FALSE(pos::bearer_token("abc"));
    CHECK(pos::bearer_token("Bearer " + std::string(pos::kMaxBearerTokenLength, 'a')));
    CHECK_FALSE(pos::bearer_token("Bearer " + std::string(pos::kMaxBearerTokenLength + 1, 'a')));
}

TEST_CASE("tokens are 256 random bits, stored as their SHA-256 hex", "[pos]") {
    const std::string a = common::crypto::random_token();
    const std::string b = common::crypto::random_token();
    CHECK(a.size() == 43);  // 32 bytes in unpadded base64url
    CHECK(a != b);
    const std::string hash = common::crypto::sha256_hex(a);
    CHECK(hash.size() == 64);
    CHECK(hash.find_first_not_of("0123456789abcdef") == std::string::npos);
    CHECK(hash == common::crypto::sha256_hex(a));
    CHECK(hash != common::crypto::sha256_hex(b));
    CHECK(pos::bearer_token("Bearer " + a) == a);
}

TEST_CASE("login passwords are verified against their salted hash", "[pos]") {
    const std::string hash = common::crypto::hash_password("secret-pass", 1000);
    CHECK(common::crypto::verify_password("secret-pass", hash));
    CHECK_FALSE(common::crypto::verify_password("secret-pasS", hash));
    CHECK_FALSE(common::crypto::verify_password("", hash));
    CHECK(common::crypto::hash_password("secret-pass", 1000) != hash);  // a fresh salt each time
}

TEST_CASE("the login throttle allows five failures, then refuses until the window passes", "[pos]") {
    const pos::LoginThrottleRule rule{.max_failures = 5, .window = 15min};
    // A fresh email: allowed, and the attempt is counted before the password is checked.
    auto d = pos::decide_login_attempt({.count = 0, .since_last = 0s}, rule);
    CHECK(d.allowed);
    CHECK(d.count_to_store == 1);
    d = pos::decide_login_attempt({.count = 4, .since_last = 10s}, rule);
    CHECK(d.allowed);
    CHECK(d.count_to_store == 5);
    // The sixth attempt within the window is refused and does not extend the lock.
    d = pos::decide_login_attempt({.count = 5, .since_last = 10s}, rule);
    CHECK_FALSE(d.allowed);
    CHECK(d.count_to_store == 5);
    d = pos::decide_login_attempt({.count = 5, .since_last = 15min - 1s}, rule);
    CHECK_FALSE(d.allowed);
    // Once the window has passed since the last counted failure, the streak starts again.
    d = pos::decide_login_attempt({.count = 5, .since_last = 15min}, rule);
    CHECK(d.allowed);
    CHECK(d.count_to_store == 1);
    d = pos::decide_login_attempt({.count = 3, .since_last = 20min}, rule);
    CHECK(d.allowed);
    CHECK(d.count_to_store == 1);
    // The default rule is the documented one.
    CHECK(pos::kLoginThrottle.max_failures == 5);
    CHECK(pos::kLoginThrottle.window == 15min);
}

TEST_CASE("login bodies need a string email and password", "[pos]") {
    auto parsed = pos::parse_login_request(json::parse(R"({"email": "a@b.c", "password": "pw", "x": 1})"));
    REQUIRE(parsed.request);
    CHECK(parsed.request->email == "a@b.c");
    CHECK(parsed.request->password == "pw");
    CHECK(render_errors(pos::parse_login_request(json::parse("{}")).errors) ==
          "email: The email field is required.\npassword: The password field is required.\n");
    CHECK(render_errors(pos::parse_login_request(json::parse(R"({"email": 5, "password": ["x"]})")).errors) ==
          "email: The email must be a string.\npassword: The password must be a string.\n");
    CHECK(render_errors(pos::parse_login_request(json::parse(R"({"email": "  ", "password": ""})")).errors) ==
          "email: The email field is required.\npassword: The password field is required.\n");
    CHECK(render_errors(pos::parse_login_request(json::parse("[]")).errors) ==
          "body: The request body must be a JSON object.\n");
    json::object long_fields{{"email", std::string(255, 'a')}, {"password", std::string(1025, 'p')}};
    CHECK(render_errors(pos::parse_login_request(long_fields).errors) ==
          "email: The email must not be greater than 254 characters.\n"
          "password: The password must not be greater than 1024 characters.\n");
}

TEST_CASE("user add wants an address-like email and a password of 8 characters or more", "[pos]") {
    CHECK_FALSE(pos::check_new_user("ops@example.com", "12345678"));
    CHECK(pos::check_new_user("ops", "12345678"));
    CHECK(pos::check_new_user("@example.com", "12345678"));
    CHECK(pos::check_new_user("ops@", "12345678"));
    CHECK(pos::check_new_user("o ps@example.com", "12345678"));
    CHECK(pos::check_new_user("a@b@c", "12345678"));
    CHECK(pos::check_new_user("ops@example.com", "1234567"));
    CHECK(pos::check_new_user("ops@example.com", "1234567\n8"));
    CHECK(pos::check_new_user("ops@example.com", std::string(1025, 'p')));
}

TEST_CASE("contains_nul finds NUL characters in strings and keys at any depth", "[pos]") {
    CHECK_FALSE(pos::contains_nul(json::parse(R"({"a": ["b", {"c": "d"}], "e": 1})")));
    CHECK(pos::contains_nul(json::parse(R"({"a": ["b", {"c": "d\u0000"}]})")));
    CHECK(pos::contains_nul(json::parse(R"({"a": [{"c\u0000": 1}]})")));
    CHECK(pos::contains_nul(json::parse(R"("\u0000")")));
}

TEST_CASE("a request with errors keeps a draft so that menu problems come in the same answer", "[pos]") {
    const auto parsed = pos::parse_order_request(json::parse(R"({
        "branch_id": "BR-1", "brand_id": "BRAND-A", "partner_reference": "r", "total": "1", "subtotal": 1, "tax": 1,
        "products": [
            {"id": "P-9", "quantity": 1, "total": 1, "modifiers": [7, {"id": "M-9", "quantity": 1, "total": 1}]},
            "not a line",
            {"quantity": "x", "total": 1, "modifiers": [{"id": "M-1", "quantity": 1, "total": 1}]},
            {"id": "P-2", "quantity": 1, "total": 1}]})"));
    REQUIRE_FALSE(parsed.order);
    CHECK(render_errors(parsed.errors) ==
          "products.0.modifiers.0: The products.0.modifiers.0 must be an object.\n"
          "products.1: The products.1 must be an object.\n"
          "products.2.id: The products.2.id field is required.\n"
          "products.2.quantity: The products.2.quantity must be an integer.\n"
          "total: The total must be a number.\n");
    // Entries keep their request positions; what failed is left empty.
    const pos::OrderRequest& draft = parsed.draft;
    REQUIRE(draft.products.size() == 4);
    CHECK(draft.products[0].id == "P-9");
    REQUIRE(draft.products[0].modifiers.size() == 2);
    CHECK(draft.products[0].modifiers[0].id.empty());
    CHECK(draft.products[0].modifiers[1].id == "M-9");
    CHECK(draft.products[1].id.empty());
    CHECK(draft.products[2].id.empty());
    CHECK(draft.products[3].id == "P-2");

    pos::MenuView menu;
    menu.branches = {"BR-1"};
    menu.products = {"P-1", "P-2"};
    menu.product_branches = {{"P-1", {"BR-1"}}};
    menu.modifiers = {"M-1"};
    CHECK(render_errors(pos::check_order_against_menu(draft, menu)) ==
          "products.0.id: The selected products.0.id is invalid.\n"
          "products.0.modifiers.1.id: The selected products.0.modifiers.1.id is invalid.\n"
          "products.3.id: Product P-2 is not available in branch BR-1.\n");
}

TEST_CASE("the menu check skips an empty branch id that validation reported", "[pos]") {
    pos::OrderRequest order;
    order.products.push_back({.id = "P-1", .quantity = 1, .total = 0, .note = {}, .modifiers = {}});
    pos::MenuView menu;
    menu.products = {"P-1"};
    CHECK(render_errors(pos::check_order_against_menu(order, menu)).empty());
    order.branch_id = "BR-9";
    CHECK(render_errors(pos::check_order_against_menu(order, menu)) ==
          "branch_id: The selected branch id is invalid.\n");
}

TEST_CASE("a menu file with a duplicate key is refused, not read with the last value", "[pos]") {
    const auto parsed = pos::parse_menu_file_text(R"({"brands": [{"id": "A", "id": "B"}]})");
    CHECK_FALSE(parsed.menu);
    REQUIRE(parsed.errors.size() == 1);
    CHECK(parsed.errors[0].rfind("/: invalid JSON: ", 0) == 0);
}
