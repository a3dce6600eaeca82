#include "hub/dashboard/orders.hpp"

#include <boost/json.hpp>
#include <pqxx/pqxx>

#include "hub/dashboard/auth.hpp"
#include "hub/db/order_items.hpp"

namespace hub::dashboard {
namespace {

boost::json::value nullable(const pqxx::field& f) {
    return f.is_null() ? boost::json::value(nullptr) : boost::json::value(f.c_str());
}

}  // namespace

std::string iso(const std::string& column) {
    return "to_char(" + column + " AT TIME ZONE 'UTC', 'YYYY-MM-DD\"T\"HH24:MI:SS.MS\"Z\"')";
}

const std::string kSummaryColumns =
    "o.id, p.label, o.external_id, o.branch_id, o.order_type, o.total::text, o.delivery_status, "
    "coalesce(j.state, ''), coalesce(j.attempts, 0), coalesce(j.last_error, ''), o.is_schedule, " +
    iso("o.schedule_date") + ", " + iso("o.created_at") + ", coalesce(o.customer_name, ''), " +
    "(SELECT coalesce(sum(i.quantity), 0) FROM hub.order_items i WHERE i.order_id = o.id)";

const std::string kSummaryFrom =
    " FROM hub.orders o JOIN hub.partners p ON p.id = o.partner_id LEFT JOIN hub.forward_jobs j ON j.order_id = o.id";

std::string problem_of(std::string_view job_state, int attempts, std::string_view last_error) {
    if (job_state == "rejected") return "rejected";
    if (job_state == "auth_failed") return "auth_failed";
    if (job_state == "dead") return "unreachable";
    if ((job_state == "pending" || job_state == "in_flight") && attempts > 0 && !last_error.empty())
        return "unreachable";
    return "";
}

boost::json::object summary_json(const pqxx::row& r, int first) {
    const auto f = [&](int i) { return r[first + i]; };
    const std::string state = f(7).c_str();
    const int attempts = f(8).as<int>();
    const std::string last_error = f(9).c_str();
    return {{"id", f(0).c_str()},
            {"partner", f(1).c_str()},
            {"external_id", f(2).c_str()},
            {"branch_id", f(3).c_str()},
            {"order_type", f(4).c_str()},
            {"total", f(5).c_str()},
            {"delivery_status", f(6).c_str()},
            {"forwarding", state},
            {"attempts", attempts},
            {"last_error", last_error},
            {"problem", problem_of(state, attempts, last_error)},
            {"is_schedule", f(10).as<bool>()},
            {"schedule_date", nullable(f(11))},
            {"created_at", f(12).c_str()},
            {"customer_name", f(13).c_str()},
            {"item_count", f(14).as<long long>()}};
}

std::string in_scope(const std::string& column, const std::string& user_param) {
    return column +
           " IN (SELECT b.id FROM hub.branches b JOIN hub.dashboard_users u ON u.brand_id = b.brand_id WHERE u.id = " +
           user_param +
           " AND (NOT EXISTS (SELECT 1 FROM hub.dashboard_user_branches ub WHERE ub.user_id = u.id) OR EXISTS "
           "(SELECT 1 FROM hub.dashboard_user_branches ub WHERE ub.user_id = u.id AND ub.branch_id = b.id)))";
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
    auto o = tx.exec_params("SELECT " + kSummaryColumns +
                                ", o.payment_method, o.note, o.subtotal::text, o.tax::text, o.discount::text, "
                                "o.customer_phone, o.customer_address, o.car_color, o.car_plate_number, "
                                "o.car_plate_letters, o.car_brand, o.customer_name IS NOT NULL, " +
                                iso("j.due_at") + ", j.pos_order_id" + kSummaryFrom + " WHERE o.id = $1 AND " +
                                in_scope("o.branch_id", "$2"),
                            order_id, user_id);
    if (o.empty()) return std::nullopt;
    const auto& r = o[0];
    auto out = summary_json(r, 0);
    constexpr int k = kSummaryWidth;
    out["payment_method"] = r[k].c_str();
    out["note"] = r[k + 1].c_str();
    out["subtotal"] = r[k + 2].c_str();
    out["tax"] = r[k + 3].c_str();
    out["discount"] = r[k + 4].c_str();
    if (r[k + 11].as<bool>()) {
        const std::string phone = r[k + 5].c_str();
        out["customer"] = {{"name", out["customer_name"]},
                           {"phone", reveal_phone ? phone : mask_phone(phone)},
                           {"phone_masked", !reveal_phone},
                           {"address", nullable(r[k + 6])}};
    } else {
        out["customer"] = nullptr;
    }
    if (r[k + 7].is_null()) {
        out["car_data"] = nullptr;
    } else {
        out["car_data"] = {{"color", r[k + 7].c_str()},
                           {"plate_number", r[k + 8].c_str()},
                           {"plate_letters", r[k + 9].c_str()},
                           {"car_brand", r[k + 10].c_str()}};
    }
    out["due_at"] = nullable(r[k + 12]);
    out["pos_order_id"] = nullable(r[k + 13]);

    out["items"] = db::order_items_json(tx, order_id);

    boost::json::array timeline;
    for (const auto& s : tx.exec_params("SELECT id, status, source, " + iso("event_time") + ", " + iso("received_at") +
                                            ", applied, actor, detail FROM hub.order_status_log WHERE order_id = $1 "
                                            "ORDER BY received_at, id",
                                        order_id))
        timeline.push_back({{"id", s[0].as<long long>()},
                            {"status", s[1].c_str()},
                            {"source", s[2].c_str()},
                            {"event_time", s[3].c_str()},
                            {"received_at", s[4].c_str()},
                            {"applied", s[5].as<bool>()},
                            {"actor", nullable(s[6])},
                            {"detail", nullable(s[7])}});
    out["timeline"] = std::move(timeline);

    boost::json::array attempts;
    for (const auto& a :
         tx.exec_params("SELECT attempt, " + iso("attempted_at") +
                            ", url, http_status, latency_ms, outcome, error, response_excerpt "
                            "FROM hub.pos_delivery_attempts WHERE order_id = $1 ORDER BY attempted_at, id",
                        order_id))
        attempts.push_back(
            {{"attempt", a[0].as<int>()},
             {"attempted_at", a[1].c_str()},
             {"url", a[2].c_str()},
             {"http_status", a[3].is_null() ? boost::json::value(nullptr) : boost::json::value(a[3].as<int>())},
             {"latency_ms", a[4].as<int>()},
             {"outcome", a[5].c_str()},
             {"error", nullable(a[6])},
             {"response_excerpt", nullable(a[7])}});
    out["attempts"] = std::move(attempts);
    return out;
}

}  // namespace hub::dashboard
