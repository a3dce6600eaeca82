#include "hub/verify/report.hpp"

#include <boost/json/parse.hpp>
#include <boost/json/serialize.hpp>
#include <boost/json/value.hpp>

#include "common/text/excerpt.hpp"

namespace hub::verify {
namespace {

constexpr std::string_view kRedacted = "[redacted]";

std::string replace_all(std::string text, std::string_view needle) {
    if (needle.empty()) return text;
    for (auto at = text.find(needle); at != std::string::npos; at = text.find(needle, at + kRedacted.size()))
        text.replace(at, needle.size(), kRedacted);
    return text;
}

bool names_token(std::string_view key) {
    std::string lower(key);
    for (auto& c : lower) c = static_cast<char>(c >= 'A' && c <= 'Z' ? c + 32 : c);
    return lower.find("token") != std::string::npos;
}

/// Replaces every string under a key naming a token; true when something was replaced.
bool redact_tokens(boost::json::value& v) {
    bool changed = false;
    if (auto* o = v.if_object()) {
        for (auto& [key, child] : *o) {
            if (names_token(key) && child.is_string()) {
                child = kRedacted;
                changed = true;
            } else {
                changed = redact_tokens(child) || changed;
            }
        }
    } else if (auto* a = v.if_array()) {
        for (auto& child : *a) changed = redact_tokens(child) || changed;
    }
    return changed;
}

std::string ms(std::chrono::milliseconds d) { return std::to_string(d.count()) + " ms"; }

std::string answered(const RuleResult& r) {
    if (!r.answer) return "";
    if (r.answer->status == 0) return "no answer after " + ms(r.answer->latency);
    return std::to_string(r.answer->status) + " in " + ms(r.answer->latency);
}

std::string line(const RuleResult& r, std::chrono::milliseconds forward_timeout) {
    const Rule& rule = *r.rule;
    const std::string head =
        std::string(rule.id) + " [interface " + std::string(rule.section) + "]: " + std::string(rule.sends);
    std::string s;
    switch (r.outcome) {
        case Outcome::passed:
            s = "passed       " + head + " -> " + answered(r);
            if (!r.detail.empty()) s += ", " + r.detail;
            break;
        case Outcome::failed:
            s = "FAILED       " + head + ": expected " + std::string(rule.expected) + "; got " +
                (r.answer && r.answer->status != 0 ? answered(r) + ": " : "") + r.detail;
            if (r.answer && r.answer->status != 0) s += "; body: " + (r.excerpt.empty() ? "(empty)" : r.excerpt);
            break;
        case Outcome::not_checked: s = "not checked  " + head + ": " + r.detail; break;
    }
    if (r.slow)
        s += "  WARNING: slower than the hub's forward time-out (" + ms(forward_timeout) +
             "): the hub would give up and send it again";
    return s;
}

struct Counts {
    int passed = 0, failed = 0, not_checked = 0, slow = 0;
};

Counts count(const Report& report) {
    Counts c;
    for (const auto& r : report.results) {
        c.passed += r.outcome == Outcome::passed ? 1 : 0;
        c.failed += r.outcome == Outcome::failed ? 1 : 0;
        c.not_checked += r.outcome == Outcome::not_checked ? 1 : 0;
        c.slow += r.slow ? 1 : 0;
    }
    return c;
}

}  // namespace

std::string safe_excerpt(std::string_view body, const std::vector<std::string>& secrets) {
    std::string text(body);
    for (const auto& secret : secrets) text = replace_all(std::move(text), secret);
    boost::system::error_code ec;
    auto v = boost::json::parse(text, ec);
    if (!ec && redact_tokens(v)) text = boost::json::serialize(v);
    return common::text::excerpt(text, kExcerptBytes);
}

RuleResult judge_answer(const Rule& rule, Answer answer, Facts& facts, const std::vector<std::string>& secrets,
                        std::chrono::milliseconds forward_timeout) {
    RuleResult r;
    r.rule = &rule;
    auto judgement = rule.judge(answer, facts);
    if (rule.learn != nullptr) rule.learn(answer, facts);
    auto known = secrets;
    if (facts.token) known.push_back(*facts.token);
    r.outcome = judgement.outcome;
    r.detail = std::move(judgement.detail);
    for (const auto& secret : known) r.detail = replace_all(std::move(r.detail), secret);  // quotes the POS's text
    r.excerpt = safe_excerpt(answer.body, known);
    r.slow = answer.latency > forward_timeout;
    r.answer = std::move(answer);
    return r;
}

RuleResult not_checked(const Rule& rule, std::string why) {
    RuleResult r;
    r.rule = &rule;
    r.outcome = Outcome::not_checked;
    r.detail = std::move(why);
    return r;
}

int exit_code(const Report& report) { return count(report).failed == 0 ? 0 : 1; }

std::string render_text(const Report& report) {
    std::string out = "orderhub pos verify: " + report.base_url + ", branch " + report.branch + ", brand " +
                      report.brand + "; test orders " + report.reference_prefix + "-*\n";
    out += "connection: " + report.transport + "\n";
    for (const auto& r : report.results) out += line(r, report.forward_timeout) + "\n";
    const Counts c = count(report);
    out += "summary: " + std::to_string(report.results.size()) + " rules: " + std::to_string(c.passed) + " passed, " +
           std::to_string(c.failed) + " failed, " + std::to_string(c.not_checked) + " not checked; " +
           std::to_string(c.slow) + " answers slower than the hub's forward time-out (" + ms(report.forward_timeout) +
           ")\n";
    return out;
}

boost::json::object render_json(const Report& report) {
    boost::json::array rules;
    for (const auto& r : report.results) {
        const bool sent = r.answer.has_value();
        const bool http = sent && r.answer->status != 0;
        boost::json::object o{{"id", r.rule->id},
                              {"section", r.rule->section},
                              {"sends", r.rule->sends},
                              {"expected", r.rule->expected},
                              {"result", to_string(r.outcome)},
                              {"detail", r.detail},
                              {"status", http ? boost::json::value(r.answer->status) : nullptr},
                              {"latency_ms", sent ? boost::json::value(r.answer->latency.count()) : nullptr},
                              {"body_excerpt", http ? boost::json::value(r.excerpt) : nullptr},
                              {"error", sent && !http ? boost::json::value(r.answer->error) : nullptr},
                              {"slow", r.slow}};
        rules.push_back(std::move(o));
    }
    const Counts c = count(report);
    return {
        {"base_url", report.base_url},
        {"branch", report.branch},
        {"brand", report.brand},
        {"reference_prefix", report.reference_prefix},
        {"transport", report.transport},
        {"forward_timeout_ms", report.forward_timeout.count()},
        {"ok", c.failed == 0},
        {"rules", std::move(rules)},
        {"summary", {{"passed", c.passed}, {"failed", c.failed}, {"not_checked", c.not_checked}, {"slow", c.slow}}}};
}

}  // namespace hub::verify
