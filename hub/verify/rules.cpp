#include "hub/verify/rules.hpp"

#include <algorithm>
#include <array>
#include <boost/json/parse.hpp>
#include <boost/json/serialize.hpp>
#include <boost/json/value.hpp>

#include "common/text/excerpt.hpp"
#include "common/text/names.hpp"
#include "hub/forward/mapping.hpp"
#include "hub/forward/policy.hpp"

namespace hub::verify {
namespace {

using common::http::ClientFailure;

/// Texts quoted from the POS (a `status` text, an order id) are cut to this many bytes, made printable.
constexpr std::size_t kQuoteBytes = 120;

std::string quote(std::string_view text) { return "'" + common::text::excerpt(text, kQuoteBytes) + "'"; }

Judgement passed(std::string detail = {}) { return {Outcome::passed, std::move(detail)}; }
Judgement failed(std::string detail) { return {Outcome::failed, std::move(detail)}; }

Judgement no_answer(const Answer& a) {
    return failed("no HTTP answer: " + std::string(common::http::to_string(a.failure)) + ": " + a.error);
}

std::optional<boost::json::value> json_of(std::string_view body) {
    boost::system::error_code ec;
    auto v = boost::json::parse(body, ec);
    if (ec) return std::nullopt;
    return v;
}

/// The `status` string of a JSON object body, if any.
std::optional<std::string> status_text(std::string_view body) {
    auto v = json_of(body);
    const auto* o = v ? v->if_object() : nullptr;
    const auto* s = o ? o->if_contains("status") : nullptr;
    if (s == nullptr || !s->is_string()) return std::nullopt;
    return std::string(s->get_string());
}

bool mentions(std::string_view text, std::string_view word) {
    std::string lower(text);
    std::transform(lower.begin(), lower.end(), lower.begin(),
                   [](unsigned char c) { return static_cast<char>(c >= 'A' && c <= 'Z' ? c + 32 : c); });
    return lower.find(word) != std::string::npos;
}

/// What the hub would do with an answer that is not the expected one, in words.
std::string hub_reading(unsigned status) {
    if (status >= 200 && status < 300) return "the hub would count it accepted";
    if (status == 401) return "the hub would read it as a refused token";
    if (status == 408 || status == 429 || status >= 500) return "the hub would retry it";
    if (status < 400) return "a redirect or informational answer, which the hub does not follow: a rejection";
    return "the hub would read it as a rejection";
}

Judgement expect_status(const Answer& a, unsigned status) {
    if (a.failure != ClientFailure::none) return no_answer(a);
    if (a.status == status) return passed();
    return failed(hub_reading(a.status));
}

/// A 4xx the forwarder reads as a rejection, with a JSON body that does not claim success.
Judgement expect_rejection(const Answer& a) {
    if (a.failure != ClientFailure::none) return no_answer(a);
    const bool rejection = a.status >= 400 && a.status < 500 && a.status != 401 && a.status != 408 && a.status != 429;
    if (!rejection) return failed("not a 4xx rejection: " + hub_reading(a.status));
    auto v = json_of(a.body);
    if (!v) return failed("the body is not JSON (interface 2: all bodies are JSON)");
    const auto* o = v->if_object();
    const auto* s = o ? o->if_contains("success") : nullptr;
    if (s != nullptr && s->is_bool() && s->get_bool()) return failed("the body says success: true");
    return passed();
}

Judgement expect_wrong_credentials(const Answer& a) {
    if (a.failure != ClientFailure::none) return no_answer(a);
    if (a.status != 401) return failed("not 401");
    auto text = status_text(a.body);
    if (!text) return failed("no JSON `status` text");
    if (!mentions(*text, "credential") || !mentions(*text, "match"))
        return failed("the `status` text " + quote(*text) + " does not say that the credentials do not match");
    return passed("status " + quote(*text));
}

// --- judges -------------------------------------------------------------------------------------------------

Judgement judge_login_ok(const Answer& a, const Facts&) {
    if (a.failure != ClientFailure::none) return no_answer(a);
    if (forward::classify_login(a.status, a.body, false, "").token) return passed("an access_token");
    if (a.status != 200) return failed("not 200");
    return failed("no non-empty `access_token` string in a JSON object");
}

Judgement judge_wrong_password(const Answer& a, const Facts&) { return expect_wrong_credentials(a); }

Judgement judge_unknown_email(const Answer& a, const Facts& f) {
    if (a.failure != ClientFailure::none) return no_answer(a);
    if (!f.wrong_password || f.wrong_password->failure != ClientFailure::none) return expect_wrong_credentials(a);
    const Answer& w = *f.wrong_password;
    const auto mine = status_text(a.body);
    const auto theirs = status_text(w.body);
    if (a.status == w.status && mine && theirs && *mine == *theirs && (a.status < 200 || a.status >= 300))
        return passed("the same answer as a wrong password");
    return failed("a wrong password got " + std::to_string(w.status) + " with status " +
                  (theirs ? quote(*theirs) : "(none)") + ", an unknown e-mail " + std::to_string(a.status) +
                  " with status " + (mine ? quote(*mine) : "(none)") + ": the answer tells whether an account exists");
}

Judgement judge_unauthorized(const Answer& a, const Facts&) { return expect_status(a, 401); }
Judgement judge_forbidden(const Answer& a, const Facts&) { return expect_status(a, 403); }
Judgement judge_rejection(const Answer& a, const Facts&) { return expect_rejection(a); }

Judgement judge_valid(const Answer& a, const Facts&) {
    if (a.failure != ClientFailure::none) return no_answer(a);
    auto c = forward::classify_response(a.status, a.body, std::nullopt);
    if (c.verdict == forward::Verdict::delivered) return passed("order_id " + quote(c.pos_order_id));
    if (a.status >= 200 && a.status < 300) return failed("no `success: true` with an `order_id`");
    return failed(hub_reading(a.status));
}

Judgement judge_repeat(const Answer& a, const Facts& f) {
    if (a.failure != ClientFailure::none) return no_answer(a);
    auto c = forward::classify_response(a.status, a.body, std::nullopt);
    if (c.verdict != forward::Verdict::delivered) {
        if (a.status >= 200 && a.status < 300) return failed("no `success: true` with an `order_id`");
        return failed(hub_reading(a.status) + "; a resent order must be answered, not refused");
    }
    const std::string first = f.first_order_id.value_or("");
    if (c.pos_order_id != first)
        return failed("a second order_id " + quote(c.pos_order_id) + " (the first was " + quote(first) +
                      "): the POS made the order twice");
    return passed("the same order_id " + quote(first) +
                  "; not verifiable through the interface: that the POS keeps one order and not two (it offers no "
                  "way to list orders: look for " +
                  f.reference_prefix + "-order in the POS)");
}

// --- learners -----------------------------------------------------------------------------------------------

void learn_token(const Answer& a, Facts& f) {
    if (a.failure == ClientFailure::none) f.token = forward::classify_login(a.status, a.body, false, "").token;
}

void learn_wrong_password(const Answer& a, Facts& f) { f.wrong_password = a; }

void learn_order_id(const Answer& a, Facts& f) {
    if (a.failure != ClientFailure::none) return;
    auto c = forward::classify_response(a.status, a.body, std::nullopt);
    if (c.verdict == forward::Verdict::delivered) f.first_order_id = c.pos_order_id;
}

// --- builders -----------------------------------------------------------------------------------------------

constexpr std::string_view kLogin = "/api/login";
constexpr std::string_view kOrders = "/api/orders";

std::string wrong_password(const Settings& s) { return "orderhub-verify-wrong-password-" + s.run_id; }

Built login(std::string_view email, std::string_view password) {
    return {Request{std::string(kLogin), std::nullopt,
                    boost::json::serialize(boost::json::object{{"email", email}, {"password", password}})},
            {}};
}

Built order(std::string body, std::optional<std::string> authorization) {
    return {Request{std::string(kOrders), std::move(authorization), std::move(body)}, {}};
}

/// The order with the access token of login.ok, or not checked without one.
Built with_token(const Facts& f, std::string body) {
    if (!f.token) return {std::nullopt, "no access token: login.ok did not pass"};
    return order(std::move(body), "Bearer " + *f.token);
}

std::string order_body(const Settings& s, std::string_view suffix, const std::string& product,
                       const std::string& modifier) {
    forward::PosSource src;
    src.pos_branch_id = s.branch;
    src.brand_id = s.brand;
    src.partner_label = std::string(kReferenceLabel);
    src.external_id = s.run_id + "-" + std::string(suffix);
    src.note = "TEST ORDER from orderhub pos verify (run " + s.run_id + "): do not prepare";
    src.subtotal = 1000;  // 1.000: the interface does not ask the POS to check totals against its menu prices
    src.total = 1000;
    src.items.push_back({.id = product, .quantity = 1, .price = 1000, .note = "", .options = {}});
    src.items.back().options.push_back({.id = modifier, .price = 0, .quantity = 1});
    return forward::pos_order_json(src);
}

/// A valid test order changed by `edit` (a field removed or given the wrong type).
template <typename Edit>
std::string edited_order(const Settings& s, std::string_view suffix, Edit edit) {
    auto v = boost::json::parse(test_order(s, suffix));
    edit(v.as_object());
    return boost::json::serialize(v);
}

Built build_login_ok(const Settings& s, const Facts&) { return login(s.email, s.password); }
Built build_wrong_password(const Settings& s, const Facts&) { return login(s.email, wrong_password(s)); }
Built build_unknown_email(const Settings& s, const Facts&) {
    return login("orderhub-verify-" + s.run_id + "@unknown.invalid", wrong_password(s));
}
Built build_no_token(const Settings& s, const Facts&) { return order(test_order(s, "no-token"), std::nullopt); }
Built build_malformed_token(const Settings& s, const Facts&) {
    return order(test_order(s, "malformed-token"), "Bearer this is not a token");
}
Built build_wrong_token(const Settings& s, const Facts&) {
    return order(test_order(s, "wrong-token"), "Bearer orderhub-verify-unknown-token-" + s.run_id);
}
Built build_other_brand(const Settings& s, const Facts&) {
    if (!s.other_brand_token) return {std::nullopt, "--other-brand-token not given"};
    return order(test_order(s, "other-brand"), "Bearer " + *s.other_brand_token);
}
Built build_valid(const Settings& s, const Facts& f) { return with_token(f, test_order(s, "order")); }
Built build_repeat(const Settings& s, const Facts& f) {
    if (!f.first_order_id) return {std::nullopt, "orders.valid did not pass: there is no order to send again"};
    return with_token(f, test_order(s, "order"));
}
Built build_unknown_product(const Settings& s, const Facts& f) {
    return with_token(f, order_body(s, "unknown-product", "orderhub-verify-no-such-product-" + s.run_id, s.modifier));
}
Built build_unknown_modifier(const Settings& s, const Facts& f) {
    return with_token(f, order_body(s, "unknown-modifier", s.product, "orderhub-verify-no-such-modifier-" + s.run_id));
}
Built build_unavailable(const Settings& s, const Facts& f) {
    if (!s.unavailable_product) return {std::nullopt, "--unavailable-product not given"};
    return with_token(f, order_body(s, "unavailable-product", *s.unavailable_product, s.modifier));
}
Built build_missing_field(const Settings& s, const Facts& f) {
    return with_token(f, edited_order(s, "missing-field", [](boost::json::object& o) { o.erase("products"); }));
}
Built build_mistyped_field(const Settings& s, const Facts& f) {
    return with_token(f, edited_order(s, "mistyped-field", [](boost::json::object& o) {
                          o["products"].as_array()[0].as_object()["quantity"] = "two";
                      }));
}

}  // namespace

std::string_view to_string(Outcome outcome) {
    static constexpr std::array<std::string_view, 3> kNames = {"passed", "failed", "not_checked"};
    return common::text::name_of(kNames, outcome);
}

std::string reference_prefix(const Settings& s) { return std::string(kReferenceLabel) + ":" + s.run_id; }

std::string test_order(const Settings& s, std::string_view suffix) {
    return order_body(s, suffix, s.product, s.modifier);
}

bool unreachable(ClientFailure failure) {
    switch (failure) {
        case ClientFailure::bad_url:
        case ClientFailure::resolve:
        case ClientFailure::connect_refused:
        case ClientFailure::connect_timeout:
        case ClientFailure::tls_handshake:
        case ClientFailure::tls_verify: return true;
        default: return false;
    }
}

const std::vector<Rule>& rules() {
    static const std::vector<Rule> kRules = {
        {"login.ok", "4.2, 5.3", "POST /api/login with the right e-mail and password", "200 with a JSON `access_token`",
         build_login_ok, judge_login_ok, learn_token},
        {"login.wrong_password", "4.2, 5.5, 7", "POST /api/login with the right e-mail and a wrong password",
         "401 with a JSON `status` text saying the credentials do not match", build_wrong_password,
         judge_wrong_password, learn_wrong_password},
        {"login.unknown_email", "4.2, 5.5, 7", "POST /api/login with an e-mail that has no account",
         "the same answer as a wrong password (status code and `status` text)", build_unknown_email,
         judge_unknown_email, nullptr},
        {"orders.no_token", "4.1 rule 5, 5.2, 7", "POST /api/orders without an Authorization header", "401",
         build_no_token, judge_unauthorized, nullptr},
        {"orders.malformed_token", "4.1 rule 5, 5.1, 5.2, 7", "POST /api/orders with a malformed bearer token", "401",
         build_malformed_token, judge_unauthorized, nullptr},
        {"orders.wrong_token", "4.1 rule 5, 5.2, 7", "POST /api/orders with a well-formed but unknown token", "401",
         build_wrong_token, judge_unauthorized, nullptr},
        {"orders.other_brand", "5.4", "POST /api/orders with the token of another brand (--other-brand-token)", "403",
         build_other_brand, judge_forbidden, nullptr},
        {"orders.valid", "4.1 rule 1, 2.2", "POST /api/orders with a valid test order",
         "2xx with `success: true` and an `order_id`", build_valid, judge_valid, learn_order_id},
        {"orders.repeat", "1 (retry), 2.1 partner_reference, 4.1 rule 1",
         "the same test order again (same partner_reference)", "2xx with `success: true` and the same `order_id`",
         build_repeat, judge_repeat, nullptr},
        {"orders.unknown_product", "4.1 rule 2, 7", "POST /api/orders with a product id the POS does not have",
         "a 4xx validation error with a JSON body (not 5xx, not success)", build_unknown_product, judge_rejection,
         nullptr},
        {"orders.unknown_modifier", "4.1 rule 4, 7", "POST /api/orders with a modifier id the POS does not have",
         "a 4xx validation error with a JSON body (not 5xx, not success)", build_unknown_modifier, judge_rejection,
         nullptr},
        {"orders.unavailable_product", "4.1 rule 3, 7",
         "POST /api/orders with a product not sold in the branch (--unavailable-product)",
         "a 4xx rejection with a JSON body (not 5xx, not success)", build_unavailable, judge_rejection, nullptr},
        {"orders.missing_field", "2.1, 4.1", "POST /api/orders without `products`",
         "a 4xx validation error with a JSON body", build_missing_field, judge_rejection, nullptr},
        {"orders.mistyped_field", "2.1, 4.1", "POST /api/orders with `products[0].quantity` a string",
         "a 4xx validation error with a JSON body", build_mistyped_field, judge_rejection, nullptr},
    };
    return kRules;
}

const Rule* find_rule(std::string_view id) {
    for (const auto& r : rules())
        if (r.id == id) return &r;
    return nullptr;
}

}  // namespace hub::verify
