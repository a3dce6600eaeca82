#include "hub/admin/order_create_rules.hpp"

#include <boost/json/serialize.hpp>
#include <chrono>
#include <ctime>
#include <pqxx/pqxx>

#include "common/json/parse.hpp"
#include "hub/admin/admin.hpp"
#include "hub/admin/order_rules.hpp"
#include "hub/admin/refusal.hpp"
#include "hub/ingest/validate.hpp"

namespace hub::admin {
namespace {

/// The forwarding job's states in which the POS has given its last answer (or will never be asked).
constexpr std::string_view kFinalStates[] = {"delivered", "rejected", "auth_failed", "dead", "cancelled"};

bool is_final(std::string_view state) {
    for (auto s : kFinalStates)
        if (s == state) return true;
    return false;
}

/// `note` with the test mark in front (once).
std::string test_note(std::string_view note) {
    if (note.starts_with(kTestNote)) return std::string(note);
    return note.empty() ? std::string(kTestNote) : std::string(kTestNote) + ": " + std::string(note);
}

/// The payload of `request`: its file, or a minimal one; a test order's note marked.
boost::json::object payload_of(const OrderCreateRequest& request, const std::string& external_id) {
    if (request.file.has_value() == !request.items.empty())
        throw Refusal(Refusal::Kind::invalid, "give either a file (an order_created payload) or items, not both");
    if (!request.file) {
        if (request.items.size() > ingest::kMaxItems)
            throw Refusal(Refusal::Kind::invalid,
                          "an order holds at most " + std::to_string(ingest::kMaxItems) + " items");
        for (const auto& item : request.items) require_text("item", item, ingest::kMaxIdBytes);
        return minimal_payload(request.items, external_id, request.test);
    }
    const boost::json::object* file = request.file->if_object();
    if (file == nullptr)
        throw Refusal(Refusal::Kind::invalid,
                      "the file must hold a JSON object: an order_created payload "
                      "(interface section 2.5, without the envelope)");
    boost::json::object payload = *file;
    if (request.test) {
        const auto* note = payload.if_contains("note");
        if (note == nullptr || note->is_null()) {
            payload["note"] = test_note("");
        } else if (note->is_string()) {
            payload["note"] = test_note(std::string_view(note->get_string()));
        }  // another type: validation names it
    }
    return payload;
}

}  // namespace

boost::json::object minimal_payload(const std::vector<std::string>& items, const std::string& external_id, bool test) {
    boost::json::array lines;
    for (const auto& id : items)
        lines.push_back({{"id", id}, {"quantity", 1}, {"price", 0}, {"note", ""}, {"options", boost::json::array()}});
    return {{"id", external_id},
            {"payment_method", "other"},
            {"order_type", "PICK-UP"},
            {"note", test ? std::string(kTestNote) : std::string("Pushed by an operator")},
            {"subtotal", 0},
            {"tax", 0},
            {"discount", 0},
            {"total", 0},
            {"is_schedule", 0},
            {"schedule_date", nullptr},
            {"car_data", nullptr},
            {"customer", nullptr},
            {"items", std::move(lines)}};
}

std::string operator_body(const OrderCreateRequest& request, const std::string& external_id,
                          const std::string& event_time) {
    require_text("branch", request.branch, ingest::kMaxIdBytes);
    boost::json::object body{{"event", ingest::kEventOrderCreated},
                             {"event_time", event_time},
                             {"branch_id", request.branch},
                             {"payload", payload_of(request, external_id)}};
    return boost::json::serialize(body);
}

std::string event_time_text(std::int64_t unix_seconds) {
    const auto t = static_cast<std::time_t>(unix_seconds);
    std::tm tm{};
    gmtime_r(&t, &tm);
    char text[32];
    const auto n = std::strftime(text, sizeof text, "%Y-%m-%dT%H:%M:%SZ", &tm);
    return {text, n};
}

ingest::Partner operator_partner(pqxx::transaction_base& tx, const std::string& branch) {
    if (tx.exec_params("SELECT 1 FROM hub.branches WHERE id = $1", branch).empty())
        throw Refusal(Refusal::Kind::not_found, "no branch '" + branch + "'");
    auto rows =
        tx.exec_params("SELECT id, label, time_zone FROM hub.partners WHERE id = $1", std::string(kOperatorPartnerId));
    if (rows.empty())
        throw Refusal(Refusal::Kind::conflict, "the partner of operator orders is missing: run `orderhub migrate`");
    ingest::Partner p;
    p.id = rows[0][0].as<std::string>();
    p.label = rows[0][1].as<std::string>();
    p.time_zone = rows[0][2].as<std::string>();
    return p;
}

void require_same_test_mark(pqxx::transaction_base& tx, const std::string& id, bool test) {
    auto rows = tx.exec_params("SELECT test FROM hub.orders WHERE id = $1", id);
    if (rows.empty() || rows[0][0].as<bool>() == test) return;
    throw Refusal(Refusal::Kind::conflict, "this payload id was stored before as " +
                                               std::string(test ? "a real" : "a test") + " order (" + id +
                                               "); give the order another payload id");
}

std::optional<boost::json::object> delivery_answer(pqxx::transaction_base& tx, const std::string& id) {
    const pqxx::row r = order_row(
        tx,
        "SELECT j.state, j.pos_order_id, j.last_error, a.http_status, a.response_excerpt FROM hub.forward_jobs j "
        "LEFT JOIN LATERAL (SELECT http_status, response_excerpt FROM hub.pos_delivery_attempts x "
        "WHERE x.order_id = j.order_id ORDER BY x.attempted_at DESC, x.id DESC LIMIT 1) a ON true "
        "WHERE j.order_id = $1",
        id);
    const auto state = r[0].as<std::string>();
    if (!is_final(state)) return std::nullopt;
    boost::json::value answer = nullptr;
    if (!r[4].is_null()) {
        auto parsed = common::json::parse_strict(r[4].c_str());
        answer = parsed.value ? std::move(*parsed.value) : boost::json::value(r[4].c_str());
    }
    return boost::json::object{{"order_id", id},
                               {"forwarding", state},
                               {"pos_order_id", nullable(r[1])},
                               {"pos_http_status", r[3].is_null() ? boost::json::value(nullptr) : r[3].as<int>()},
                               {"pos_answer", std::move(answer)},
                               {"last_error", nullable(r[2])}};
}

}  // namespace hub::admin
