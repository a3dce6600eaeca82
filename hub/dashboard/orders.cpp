#include "hub/dashboard/orders.hpp"

#include <boost/json.hpp>
#include <charconv>
#include <chrono>
#include <pqxx/pqxx>
#include <regex>

#include "hub/dashboard/auth.hpp"
#include "hub/dashboard/problems.hpp"
#include "hub/dashboard/queries.hpp"
#include "hub/db/order_items.hpp"
#include "hub/forward/job_state.hpp"

namespace hub::dashboard {
namespace {

boost::json::value nullable(const pqxx::field& f) {
    return f.is_null() ? boost::json::value(nullptr) : boost::json::value(f.c_str());
}

/// The number in submatch `m` (digits only, by the pattern), or 0 when it did not take part.
int number(const std::csub_match& m) {
    int v = 0;
    if (m.matched) std::from_chars(m.first, m.second, v);
    return v;
}

/// The status log of an order, oldest first.
boost::json::array timeline_json(pqxx::transaction_base& tx, const std::string& order_id) {
    boost::json::array out;
    for (const auto& s : exec(tx, sql::kOrderTimeline, order_id))
        out.push_back({{"id", s["id"].as<long long>()},
                       {"status", s["status"].c_str()},
                       {"source", s["source"].c_str()},
                       {"event_time", s["event_time"].c_str()},
                       {"received_at", s["received_at"].c_str()},
                       {"applied", s["applied"].as<bool>()},
                       {"actor", nullable(s["actor"])},
                       {"detail", nullable(s["detail"])}});
    return out;
}

/// The POS delivery attempts of an order, oldest first.
boost::json::array attempts_json(pqxx::transaction_base& tx, const std::string& order_id) {
    boost::json::array out;
    for (const auto& a : exec(tx, sql::kOrderAttempts, order_id)) {
        const auto status = a["http_status"];
        out.push_back(
            {{"attempt", a["attempt"].as<int>()},
             {"attempted_at", a["attempted_at"].c_str()},
             {"url", a["url"].c_str()},
             {"http_status", status.is_null() ? boost::json::value(nullptr) : boost::json::value(status.as<int>())},
             {"latency_ms", a["latency_ms"].as<int>()},
             {"outcome", a["outcome"].c_str()},
             {"error", nullable(a["error"])},
             {"response_excerpt", nullable(a["response_excerpt"])}});
    }
    return out;
}

}  // namespace

std::string problem_of(std::string_view job_state, int attempts, std::string_view last_error) {
    using forward::JobState;
    const auto state = forward::job_state_from_text(job_state);  // nullopt: no job yet
    if (!state) return "";
    if (*state == JobState::rejected) return "rejected";
    if (*state == JobState::auth_failed) return "auth_failed";
    if (*state == JobState::dead) return "unreachable";
    if (forward::is_queued(*state) && attempts > 0 && !last_error.empty()) return "unreachable";
    return "";
}

boost::json::object summary_json(const pqxx::row& r) {
    const std::string state = r["forwarding"].c_str();
    const int attempts = r["attempts"].as<int>();
    const std::string last_error = r["last_error"].c_str();
    return {{"id", r["id"].c_str()},
            {"partner", r["label"].c_str()},
            {"external_id", r["external_id"].c_str()},
            {"branch_id", r["branch_id"].c_str()},
            {"order_type", r["order_type"].c_str()},
            {"total", r["total"].c_str()},
            {"delivery_status", r["delivery_status"].c_str()},
            {"forwarding", state},
            {"attempts", attempts},
            {"last_error", last_error},
            {"problem", problem_of(state, attempts, last_error)},
            {"is_schedule", r["is_schedule"].as<bool>()},
            {"schedule_date", nullable(r["schedule_date"])},
            {"created_at", r["created_at"].c_str()},
            {"customer_name", r["customer_name"].c_str()},
            {"item_count", r["item_count"].as<long long>()},
            {"accept_deadline", nullable(r["accept_deadline"])},
            {"accept_seconds_left", r["accept_seconds_left"].is_null()
                                        ? boost::json::value(nullptr)
                                        : boost::json::value(r["accept_seconds_left"].as<long long>())},
            {"test", r["test"].as<bool>()}};
}

std::optional<Filter> parse_filter(std::string_view text) {
    if (text == "" || text == "all") return Filter::all;
    if (text == "today") return Filter::today;
    if (text == "active") return Filter::active;
    if (text == "problems") return Filter::problems;
    return std::nullopt;
}

std::optional<boost::json::object> order_detail(pqxx::transaction_base& tx, const std::string& order_id,
                                                const std::string& user_id, bool reveal_phone) {
    auto o = exec(tx, sql::kOrderDetail, order_id, user_id);
    if (o.empty()) return std::nullopt;
    const auto& r = o[0];
    auto out = summary_json(r);
    for (const char* column : {"payment_method", "note", "subtotal", "tax", "discount"})
        out[column] = r[column].c_str();
    if (r["has_customer"].as<bool>()) {
        const std::string phone = r["customer_phone"].c_str();
        out["customer"] = {{"name", out["customer_name"]},
                           {"phone", reveal_phone ? phone : mask_phone(phone)},
                           {"phone_masked", !reveal_phone},
                           {"address", nullable(r["customer_address"])}};
    } else {
        out["customer"] = nullptr;
    }
    if (r["car_color"].is_null()) {
        out["car_data"] = nullptr;
    } else {
        out["car_data"] = {{"color", r["car_color"].c_str()},
                           {"plate_number", r["car_plate_number"].c_str()},
                           {"plate_letters", r["car_plate_letters"].c_str()},
                           {"car_brand", r["car_brand"].c_str()}};
    }
    out["due_at"] = nullable(r["due_at"]);
    out["pos_order_id"] = nullable(r["pos_order_id"]);
    out["items"] = db::order_items_json(tx, order_id);
    out["timeline"] = timeline_json(tx, order_id);
    out["attempts"] = attempts_json(tx, order_id);
    out["pos_problems"] = pos_problems(tx, order_id, out);
    return out;
}

bool valid_since(std::string_view text) {
    static const std::regex kSince(
        R"((\d{4})-(\d\d)-(\d\d)T(\d\d):(\d\d)(?::(\d\d)(?:\.\d{1,6})?)?(?:Z|[+-](\d\d):(\d\d)))");
    std::cmatch m;
    if (text.size() > 40 || !std::regex_match(text.begin(), text.end(), m, kSince)) return false;
    const std::chrono::year_month_day date{std::chrono::year(number(m[1])),
                                           std::chrono::month(static_cast<unsigned>(number(m[2]))),
                                           std::chrono::day(static_cast<unsigned>(number(m[3])))};
    return number(m[1]) >= 1 && date.ok() && number(m[4]) <= 23 && number(m[5]) <= 59 && number(m[6]) <= 59 &&
           number(m[7]) <= 15 && number(m[8]) <= 59;
}

}  // namespace hub::dashboard
