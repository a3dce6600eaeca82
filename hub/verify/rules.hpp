#pragma once

// The conformance rules of `orderhub pos verify`: what a POS must answer to each request of the interface
// (sections 4.1, 4.2, 5 and 7 of order-integration-interface.md; the answers product.md section 7 names). Pure:
// the request of a rule is built from the settings and what earlier answers taught (Facts), and an answer is
// judged without I/O; hub/verify/runner.cpp sends the requests.
//
// Decisions:
//   - Every rule is one row of rules(): id, interface section, what is sent, what is expected, a request builder
//     and an answer predicate. The rows run in table order; a row whose builder has no request is "not checked"
//     with the builder's reason (an option not given, an earlier rule that gave no token or order id).
//   - Test orders say so: partner_reference `orderhub-verify:<run id>-<rule>` (the forwarder's
//     `<label>:<order id>` shape, built by hub/forward/mapping), a note saying it is a test order, status PENDING.
//     Each rule has its own reference, so a POS that wrongly accepts one cannot answer another by idempotency;
//     the valid order and its repeat share one.
//   - login.ok passes when the forwarder would take the answer's token (forward::classify_login); orders.valid and
//     orders.repeat pass when the forwarder would count the order delivered (forward::classify_response).
//   - Wrong password: 401 with a JSON `status` string that says the credentials do not match (it mentions
//     "credential" and "match", any case). Unknown e-mail: the same status code and the same `status` text as the
//     wrong password, so that the answer does not tell whether an account exists.
//   - No, malformed or unknown token: 401. Another brand's token (--other-brand-token): 403.
//   - Unknown product or modifier, missing or mistyped field: a validation error, i.e. a 4xx that the forwarder
//     reads as a rejection (not 401, 408 or 429), with a JSON body (interface 2: all bodies are JSON) that does
//     not say `success: true`. A product not sold in the branch: the same.
//   - An answer that did not arrive (refused, TLS verification, time-out) fails its rule with the client's reason.
#include <chrono>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "common/http/client.hpp"

namespace hub::verify {

/// What the operator named on the command line.
struct Settings {
    std::string base_url;
    std::string email;
    std::string password;
    std::string branch;  ///< the POS branch id the test orders go to
    std::string brand;   ///< brand_id of the test orders (the brand the credentials belong to)
    std::string product;
    std::string modifier;
    std::optional<std::string> unavailable_product;
    std::optional<std::string> other_brand_token;
    std::string run_id;  ///< random; makes every partner_reference of this run unique
};

/// The `orderhub-verify` label of every test order's partner_reference.
inline constexpr std::string_view kReferenceLabel = "orderhub-verify";

/// `orderhub-verify:<run id>`: the prefix of every partner_reference this run sends.
std::string reference_prefix(const Settings& settings);

/// One request to the POS; `authorization` is the whole header value, nullopt for no header.
struct Request {
    std::string path;  ///< "/api/login" or "/api/orders"
    std::optional<std::string> authorization;
    std::string body;
};

/// What came back for one request.
struct Answer {
    unsigned status = 0;  ///< 0: no HTTP answer (see failure)
    std::string body;
    common::http::ClientFailure failure = common::http::ClientFailure::none;
    std::string error;  ///< the client's reason when failure is not none
    std::chrono::milliseconds latency{0};
};

/// What earlier answers taught the later rules.
struct Facts {
    std::string reference_prefix;               ///< reference_prefix() of the run, known from the start
    std::optional<std::string> token;           ///< from login.ok
    std::optional<Answer> wrong_password;       ///< the answer of login.wrong_password
    std::optional<std::string> first_order_id;  ///< from orders.valid
};

enum class Outcome { passed, failed, not_checked };

/// "passed", "failed", "not_checked".
std::string_view to_string(Outcome outcome);

/// The judgement of one answer: passed or failed, with what was found (shown after the expectation).
struct Judgement {
    Outcome outcome = Outcome::failed;
    std::string detail;
};

/// A request to send, or the reason why the rule cannot be checked.
struct Built {
    std::optional<Request> request;
    std::string not_checked;
};

/// One rule of the interface.
struct Rule {
    std::string_view id;        ///< "orders.wrong_token"
    std::string_view section;   ///< "4.1 rule 5, 5.2, 7" of the interface
    std::string_view sends;     ///< what is sent, in words
    std::string_view expected;  ///< what a conforming POS answers, in words
    Built (*build)(const Settings&, const Facts&);
    Judgement (*judge)(const Answer&, const Facts&);
    void (*learn)(const Answer&, Facts&);  ///< may be null
};

/// Every rule, in the order they run.
const std::vector<Rule>& rules();

/// The rule with this id, or null.
const Rule* find_rule(std::string_view id);

/// True when a failure means the POS cannot be reached at all (bad URL, name resolution, refused or timed-out
/// connect, TLS handshake or verification): the rules still to come are not checked.
bool unreachable(common::http::ClientFailure failure);

/// The body of a valid test order for `settings` with partner_reference `<prefix>-<suffix>`, made by the
/// forwarder's mapping: one `product` with one `modifier`, a note saying it is a test order, status PENDING.
std::string test_order(const Settings& settings, std::string_view suffix);

}  // namespace hub::verify
