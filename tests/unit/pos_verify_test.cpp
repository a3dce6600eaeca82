// `orderhub pos verify`: the rule table's requests and the pure judging of answers (hub/verify/rules.hpp), and
// the report's renderings (hub/verify/report.hpp). No sockets: tests/e2e/test_pos_verify.py runs the real thing.
#include <boost/json.hpp>
#include <catch2/catch.hpp>

#include "hub/verify/report.hpp"
#include "hub/verify/rules.hpp"

using namespace hub::verify;
using common::http::ClientFailure;
using namespace std::chrono_literals;

namespace {

Settings verify_settings() {
    Settings s;
    s.base_url = "http://127.0.0.1:9";
    s.email = "owner@brand.example";
    s.password = "s3cret-pass";
    s.branch = "BR-1";
    s.brand = "BRAND-A";
    s.product = "P-1";
    s.modifier = "M-1";
    s.run_id = "run42";
    return s;
}

Answer answer(unsigned status, std::string body, std::chrono::milliseconds latency = 5ms) {
    Answer a;
    a.status = status;
    a.body = std::move(body);
    a.latency = latency;
    return a;
}

Answer no_answer(ClientFailure failure, std::string error) {
    Answer a;
    a.failure = failure;
    a.error = std::move(error);
    return a;
}

const Rule& rule(std::string_view id) {
    const Rule* r = find_rule(id);
    REQUIRE(r != nullptr);
    return *r;
}

Outcome judged(std::string_view id, const Answer& a, const Facts& f = {}) { return rule(id).judge(a, f).outcome; }

Facts with_token() {
    Facts f;
    f.token = "tok-123";
    return f;
}

boost::json::object body_of(const Built& b) {
    REQUIRE(b.request);
    return boost::json::parse(b.request->body).as_object();
}

const std::string kCreatedAnswer = R"({"success":true,"message":"Order created","order_id":"77"})";
const std::string kInvalid = R"({"success":false,"message":"invalid","errors":{"products.0.id":["bad"]}})";
const std::string kMismatch = R"({"status":"These credentials do not match our records."})";

}  // namespace

TEST_CASE("verify: every rule has an id, a section, what it sends and expects, a builder and a judge", "[verify]") {
    std::vector<std::string_view> ids;
    for (const auto& r : rules()) {
        CHECK(!r.id.empty());
        CHECK(!r.section.empty());
        CHECK(!r.sends.empty());
        CHECK(!r.expected.empty());
        CHECK(r.build != nullptr);
        CHECK(r.judge != nullptr);
        ids.push_back(r.id);
    }
    const std::vector<std::string_view> expected = {"login.ok",
                                                    "login.wrong_password",
                                                    "login.unknown_email",
                                                    "orders.no_token",
                                                    "orders.malformed_token",
                                                    "orders.wrong_token",
                                                    "orders.other_brand",
                                                    "orders.valid",
                                                    "orders.repeat",
                                                    "orders.unknown_product",
                                                    "orders.unknown_modifier",
                                                    "orders.unavailable_product",
                                                    "orders.missing_field",
                                                    "orders.mistyped_field"};
    CHECK(ids == expected);
    CHECK(find_rule("no.such") == nullptr);
}

TEST_CASE("verify: test orders say so and reuse the forwarder's POS body", "[verify]") {
    const auto s = verify_settings();
    CHECK(reference_prefix(s) == "orderhub-verify:run42");
    auto o = boost::json::parse(test_order(s, "order")).as_object();
    CHECK(o.at("partner_reference") == "orderhub-verify:run42-order");
    CHECK(o.at("branch_id") == "BR-1");
    CHECK(o.at("brand_id") == "BRAND-A");
    CHECK(o.at("status") == "PENDING");
    CHECK(std::string(o.at("note").as_string()).find("TEST ORDER") != std::string::npos);
    auto& line = o.at("products").as_array().at(0).as_object();
    CHECK(line.at("id") == "P-1");
    CHECK(line.at("quantity") == 1);
    CHECK(line.at("modifiers").as_array().at(0).at("id") == "M-1");
}

TEST_CASE("verify: each rule's request", "[verify]") {
    const auto s = verify_settings();
    const Facts none;
    const Facts f = with_token();

    auto login = rule("login.ok").build(s, none);
    REQUIRE(login.request);
    CHECK(login.request->path == "/api/login");
    CHECK(!login.request->authorization);
    CHECK(body_of(login).at("password") == "s3cret-pass");
    auto wrong = body_of(rule("login.wrong_password").build(s, none));
    CHECK(wrong.at("email") == "owner@brand.example");
    CHECK(wrong.at("password") != "s3cret-pass");
    auto unknown = body_of(rule("login.unknown_email").build(s, none));
    CHECK(unknown.at("email") != "owner@brand.example");
    CHECK(unknown.at("password") == wrong.at("password"));

    // The token rules need no login; each sends a valid order with its own reference.
    auto no_token = rule("orders.no_token").build(s, none);
    REQUIRE(no_token.request);
    CHECK(no_token.request->path == "/api/orders");
    CHECK(!no_token.request->authorization);
    CHECK(body_of(no_token).at("partner_reference") == "orderhub-verify:run42-no-token");
    CHECK(rule("orders.malformed_token").build(s, none).request->authorization == "Bearer this is not a token");
    CHECK(rule("orders.wrong_token").build(s, none).request->authorization ==
          "Bearer orderhub-verify-unknown-token-run42");

    auto valid = rule("orders.valid").build(s, f);
    CHECK(valid.request->authorization == "Bearer tok-123");
    CHECK(body_of(valid).at("partner_reference") == "orderhub-verify:run42-order");
    CHECK(body_of(rule("orders.unknown_product").build(s, f)).at("products").at(0).at("id") ==
          "orderhub-verify-no-such-product-run42");
    CHECK(body_of(rule("orders.unknown_modifier").build(s, f)).at("products").at(0).at("modifiers").at(0).at("id") ==
          "orderhub-verify-no-such-modifier-run42");
    CHECK(!body_of(rule("orders.missing_field").build(s, f)).contains("products"));
    CHECK(body_of(rule("orders.mistyped_field").build(s, f)).at("products").at(0).at("quantity") == "two");
}

TEST_CASE("verify: rules that cannot be checked say why", "[verify]") {
    auto s = verify_settings();
    const Facts none;
    auto reason = [&](std::string_view id, const Facts& f) {
        auto b = rule(id).build(s, f);
        CHECK(!b.request);
        return b.not_checked;
    };
    CHECK(reason("orders.other_brand", none) == "--other-brand-token not given");
    CHECK(reason("orders.unavailable_product", with_token()) == "--unavailable-product not given");
    CHECK(reason("orders.valid", none).find("login.ok") != std::string::npos);
    CHECK(reason("orders.unknown_modifier", none).find("login.ok") != std::string::npos);
    CHECK(reason("orders.repeat", with_token()).find("orders.valid") != std::string::npos);

    s.other_brand_token = "other-tok";
    s.unavailable_product = "P-2";
    CHECK(rule("orders.other_brand").build(s, none).request->authorization == "Bearer other-tok");
    CHECK(body_of(rule("orders.unavailable_product").build(s, with_token())).at("products").at(0).at("id") == "P-2");
    Facts ordered = with_token();
    ordered.first_order_id = "77";
    CHECK(body_of(rule("orders.repeat").build(s, ordered)).at("partner_reference") == "orderhub-verify:run42-order");
}

TEST_CASE("verify: judging logins", "[verify]") {
    CHECK(judged("login.ok", answer(200, R"({"access_token":"abc"})")) == Outcome::passed);
    CHECK(judged("login.ok", answer(201, R"({"access_token":"abc"})")) == Outcome::failed);
    CHECK(judged("login.ok", answer(200, R"({"access_token":""})")) == Outcome::failed);
    CHECK(judged("login.ok", answer(200, R"({"token":"abc"})")) == Outcome::failed);
    CHECK(judged("login.ok", answer(200, "<html>ok</html>")) == Outcome::failed);
    CHECK(judged("login.ok", no_answer(ClientFailure::tls_verify, "certificate verify failed")) == Outcome::failed);

    CHECK(judged("login.wrong_password", answer(401, kMismatch)) == Outcome::passed);
    CHECK(judged("login.wrong_password", answer(401, R"({"status":"Credentials don't MATCH"})")) == Outcome::passed);
    CHECK(judged("login.wrong_password", answer(200, kMismatch)) == Outcome::failed);
    CHECK(judged("login.wrong_password", answer(422, kMismatch)) == Outcome::failed);
    CHECK(judged("login.wrong_password", answer(401, R"({"status":"error"})")) == Outcome::failed);
    CHECK(judged("login.wrong_password", answer(401, R"({"message":"These credentials do not match"})")) ==
          Outcome::failed);
    CHECK(judged("login.wrong_password", answer(401, "These credentials do not match")) == Outcome::failed);

    Facts f;
    f.wrong_password = answer(401, kMismatch);
    CHECK(judged("login.unknown_email", answer(401, kMismatch), f) == Outcome::passed);
    CHECK(judged("login.unknown_email", answer(404, kMismatch), f) == Outcome::failed);
    CHECK(judged("login.unknown_email", answer(401, R"({"status":"No such user."})"), f) == Outcome::failed);
    // Compared with the wrong password's answer, whatever it was: a wrong text fails only its own rule.
    f.wrong_password = answer(401, R"({"status":"nope"})");
    CHECK(judged("login.unknown_email", answer(401, R"({"status":"nope"})"), f) == Outcome::passed);
    // Without a wrong-password answer to compare with, judged by the wrong-password rule itself.
    f.wrong_password = no_answer(ClientFailure::read_timeout, "timed out");
    CHECK(judged("login.unknown_email", answer(401, kMismatch), f) == Outcome::passed);
    CHECK(judged("login.unknown_email", answer(401, R"({"status":"nope"})"), f) == Outcome::failed);
}

TEST_CASE("verify: judging token refusals", "[verify]") {
    for (auto id : {"orders.no_token", "orders.malformed_token", "orders.wrong_token"}) {
        CHECK(judged(id, answer(401, R"({"success":false})")) == Outcome::passed);
        CHECK(judged(id, answer(401, "")) == Outcome::passed);
        CHECK(judged(id, answer(201, kCreatedAnswer)) == Outcome::failed);
        CHECK(judged(id, answer(403, R"({"success":false})")) == Outcome::failed);
        CHECK(judged(id, answer(500, "")) == Outcome::failed);
    }
    CHECK(judged("orders.other_brand", answer(403, R"({"success":false})")) == Outcome::passed);
    CHECK(judged("orders.other_brand", answer(401, R"({"success":false})")) == Outcome::failed);
    CHECK(judged("orders.other_brand", answer(201, kCreatedAnswer)) == Outcome::failed);
}

TEST_CASE("verify: judging the valid order and its repeat", "[verify]") {
    CHECK(judged("orders.valid", answer(201, kCreatedAnswer)) == Outcome::passed);
    CHECK(judged("orders.valid", answer(200, R"({"success":true,"order_id":77})")) == Outcome::passed);
    CHECK(judged("orders.valid", answer(201, R"({"success":true})")) == Outcome::failed);
    CHECK(judged("orders.valid", answer(200, R"({"success":false,"order_id":"77"})")) == Outcome::failed);
    CHECK(judged("orders.valid", answer(422, kInvalid)) == Outcome::failed);
    CHECK(judged("orders.valid", answer(500, "oops")) == Outcome::failed);

    Facts f;
    f.reference_prefix = "orderhub-verify:run42";
    rule("orders.valid").learn(answer(201, kCreatedAnswer), f);
    REQUIRE(f.first_order_id == "77");
    const auto same = rule("orders.repeat").judge(answer(200, kCreatedAnswer), f);
    CHECK(same.outcome == Outcome::passed);
    CHECK(same.detail.find("not verifiable") != std::string::npos);
    CHECK(same.detail.find("orderhub-verify:run42-order") != std::string::npos);
    const auto second = rule("orders.repeat").judge(answer(201, R"({"success":true,"order_id":"78"})"), f);
    CHECK(second.outcome == Outcome::failed);
    CHECK(second.detail.find("'78'") != std::string::npos);
    CHECK(judged("orders.repeat", answer(409, R"({"success":false})"), f) == Outcome::failed);

    Facts none;
    rule("orders.valid").learn(answer(500, kCreatedAnswer), none);
    CHECK(!none.first_order_id);
}

TEST_CASE("verify: judging validation errors and rejections", "[verify]") {
    for (auto id : {"orders.unknown_product", "orders.unknown_modifier", "orders.unavailable_product",
                    "orders.missing_field", "orders.mistyped_field"}) {
        CHECK(judged(id, answer(422, kInvalid)) == Outcome::passed);
        CHECK(judged(id, answer(400, R"({"error":"bad"})")) == Outcome::passed);
        CHECK(judged(id, answer(404, R"({"message":"no such product"})")) == Outcome::passed);
        CHECK(judged(id, answer(201, kCreatedAnswer)) == Outcome::failed);
        CHECK(judged(id, answer(200, R"({"success":false})")) == Outcome::failed);
        CHECK(judged(id, answer(500, R"({"success":false})")) == Outcome::failed);
        CHECK(judged(id, answer(503, "")) == Outcome::failed);
        CHECK(judged(id, answer(302, R"({"location":"/login"})")) == Outcome::failed);
        CHECK(judged(id, answer(401, R"({"success":false})")) == Outcome::failed);
        CHECK(judged(id, answer(429, R"({"success":false})")) == Outcome::failed);
        CHECK(judged(id, answer(422, "<html><body>The given data was invalid.</body></html>")) == Outcome::failed);
        CHECK(judged(id, answer(422, "")) == Outcome::failed);
        CHECK(judged(id, answer(422, R"({"success":true,"order_id":"1"})")) == Outcome::failed);
        CHECK(judged(id, no_answer(ClientFailure::read_timeout, "timed out")) == Outcome::failed);
    }
}

TEST_CASE("verify: only a POS that cannot be reached at all stops the run", "[verify]") {
    for (auto f : {ClientFailure::bad_url, ClientFailure::resolve, ClientFailure::connect_refused,
                   ClientFailure::connect_timeout, ClientFailure::tls_handshake, ClientFailure::tls_verify})
        CHECK(unreachable(f));
    for (auto f : {ClientFailure::none, ClientFailure::read_timeout, ClientFailure::read, ClientFailure::write,
                   ClientFailure::protocol, ClientFailure::too_large})
        CHECK(!unreachable(f));
}

TEST_CASE("verify: excerpts never carry a secret", "[verify]") {
    CHECK(safe_excerpt(R"({"access_token":"abc"})", {}) == R"({"access_token":"[redacted]"})");
    CHECK(safe_excerpt(R"({"data":{"Token":"abc","n":1}})", {}) == R"({"data":{"Token":"[redacted]","n":1}})");
    CHECK(safe_excerpt("password was s3cret-pass!", {"s3cret-pass"}) == "password was [redacted]!");
    CHECK(safe_excerpt("x", {""}) == "x");
    CHECK(safe_excerpt("line\nbreak\x01", {}) == "line break ");
    CHECK(safe_excerpt(std::string(1000, 'a'), {}).size() == kExcerptBytes);
    // Numbers keep their text unless something had to be redacted.
    CHECK(safe_excerpt(R"({"total":1.000})", {}) == R"({"total":1.000})");
}

TEST_CASE("verify: a judged answer learns, redacts and flags slowness", "[verify]") {
    Facts f;
    auto r = judge_answer(rule("login.ok"), answer(200, R"({"access_token":"tok-9"})", 20ms), f, {"pw"}, 15000ms);
    CHECK(r.outcome == Outcome::passed);
    CHECK(f.token == "tok-9");
    CHECK(r.excerpt.find("tok-9") == std::string::npos);
    CHECK(!r.slow);
    auto echo = judge_answer(rule("orders.valid"), answer(500, "got tok-9 and pw", 16000ms), f, {"pw"}, 15000ms);
    CHECK(echo.outcome == Outcome::failed);
    CHECK(echo.excerpt == "got [redacted] and [redacted]");
    CHECK(echo.slow);
}

TEST_CASE("verify: report exit code, text and JSON", "[verify]") {
    Report report;
    report.base_url = "http://127.0.0.1:9";
    report.branch = "BR-1";
    report.brand = "BRAND-A";
    report.reference_prefix = "orderhub-verify:run42";
    report.transport = "plain HTTP: no certificate to verify";
    report.forward_timeout = 15000ms;
    Facts f;
    report.results.push_back(
        judge_answer(rule("login.ok"), answer(200, R"({"access_token":"tok-abc"})"), f, {}, 15000ms));
    report.results.push_back(not_checked(rule("orders.other_brand"), "--other-brand-token not given"));
    CHECK(exit_code(report) == 0);
    report.results.push_back(
        judge_answer(rule("orders.wrong_token"), answer(201, kCreatedAnswer, 16000ms), f, {}, 15000ms));
    CHECK(exit_code(report) == 1);

    const std::string text = render_text(report);
    CHECK(text.find("passed       login.ok [interface 4.2, 5.3]") != std::string::npos);
    CHECK(text.find("not checked  orders.other_brand [interface 5.4]") != std::string::npos);
    CHECK(text.find("--other-brand-token not given") != std::string::npos);
    CHECK(text.find("FAILED       orders.wrong_token [interface 4.1 rule 5, 5.2, 7]") != std::string::npos);
    CHECK(text.find("expected 401; got 201 in 16000 ms") != std::string::npos);
    CHECK(text.find("WARNING: slower than the hub's forward time-out (15000 ms)") != std::string::npos);
    CHECK(text.find("summary: 3 rules: 1 passed, 1 failed, 1 not checked; 1 answers slower") != std::string::npos);

    const auto j = render_json(report);
    CHECK(j.at("ok") == false);
    CHECK(j.at("reference_prefix") == "orderhub-verify:run42");
    CHECK(j.at("forward_timeout_ms") == 15000);
    CHECK(j.at("summary") == boost::json::parse(R"({"passed":1,"failed":1,"not_checked":1,"slow":1})"));
    const auto& rows = j.at("rules").as_array();
    REQUIRE(rows.size() == 3);
    CHECK(rows[0].at("result") == "passed");
    CHECK(rows[0].at("body_excerpt") == R"({"access_token":"[redacted]"})");
    CHECK(rows[1].at("result") == "not_checked");
    CHECK(rows[1].at("status").is_null());
    CHECK(rows[1].at("latency_ms").is_null());
    CHECK(rows[2].at("result") == "failed");
    CHECK(rows[2].at("status") == 201);
    CHECK(rows[2].at("section") == "4.1 rule 5, 5.2, 7");
    CHECK(rows[2].at("slow") == true);
}
