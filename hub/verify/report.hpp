#pragma once

// The report of `orderhub pos verify`: one result per rule, the exit code, and the text and JSON renderings. Pure.
//
// Decisions:
//   - A body is quoted only through safe_excerpt: the password and every token this run knows are replaced by
//     [redacted], and so is every JSON string under a key that names a token (a login answer's access_token
//     whatever the key's case), before common::text::excerpt makes it printable and short.
//   - An answer slower than the hub's forward time-out is a warning on its line, not a failure: the hub would have
//     given up on it and retried, which the POS's partner_reference idempotency absorbs.
//   - Exit code 0 only when no rule failed; a rule not checked does not fail the run.
#include <boost/json/object.hpp>
#include <chrono>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "hub/verify/rules.hpp"

namespace hub::verify {

/// Longest body excerpt in a report, in bytes.
inline constexpr std::size_t kExcerptBytes = 200;

/// The result of one rule.
struct RuleResult {
    const Rule* rule = nullptr;
    Outcome outcome = Outcome::not_checked;
    std::string detail;            ///< the judgement's detail, or why the rule was not checked
    std::optional<Answer> answer;  ///< when a request was sent (its body is not rendered: see excerpt)
    std::string excerpt;           ///< safe_excerpt of the answer's body
    bool slow = false;             ///< the answer took longer than the hub's forward time-out
};

/// The whole run.
struct Report {
    std::string base_url;
    std::string branch;
    std::string brand;
    std::string reference_prefix;
    std::string transport;  ///< how the connection is checked: plain HTTP, or HTTPS verified against what
    std::chrono::milliseconds forward_timeout{0};
    std::vector<RuleResult> results;
};

/// `body` with each non-empty `secrets` entry and each JSON string under a key containing "token" replaced by
/// [redacted], as printable text of at most kExcerptBytes.
std::string safe_excerpt(std::string_view body, const std::vector<std::string>& secrets);

/// The result of `rule` given `answer` (judged with `facts`, which the rule's learner then updates); the body
/// excerpt is made with `secrets` (and the token learned, if any).
RuleResult judge_answer(const Rule& rule, Answer answer, Facts& facts, const std::vector<std::string>& secrets,
                        std::chrono::milliseconds forward_timeout);

/// A rule not checked, and why.
RuleResult not_checked(const Rule& rule, std::string why);

/// 0 when no rule failed, else 1.
int exit_code(const Report& report);

/// One header line, one line per rule, one summary line.
std::string render_text(const Report& report);

/// {base_url, branch, brand, reference_prefix, transport, forward_timeout_ms, ok, rules: [{id, section, sends,
/// expected, result, detail, status, latency_ms, body_excerpt, error, slow}], summary: {passed, failed,
/// not_checked, slow}}; status, latency_ms, body_excerpt and error are null for a rule that sent nothing.
boost::json::object render_json(const Report& report);

}  // namespace hub::verify
