#include "hub/admin/inbox_rules.hpp"

#include <boost/json/parse.hpp>
#include <pqxx/pqxx>

#include "common/crypto/encoding.hpp"
#include "common/text/utf8.hpp"
#include "hub/admin/admin.hpp"
#include "hub/admin/refusal.hpp"

namespace hub::admin {
namespace {

const std::string kEventColumns = "i.id, " + iso_utc("i.received_at") +
                                  " AS received_at, p.label, i.partner_id, i.event, i.external_id, i.branch_id, "
                                  "i.order_id, i.http_status, i.outcome, i.error_code, i.replay_of, i.request_id";

boost::json::object entry_json(const pqxx::row& r) {
    return {{"id", r["id"].as<long long>()},
            {"received_at", r["received_at"].c_str()},
            {"partner", r["label"].c_str()},
            {"partner_id", r["partner_id"].c_str()},
            {"event", nullable(r["event"])},
            {"external_id", nullable(r["external_id"])},
            {"branch_id", nullable(r["branch_id"])},
            {"order_id", nullable(r["order_id"])},
            {"http_status", r["http_status"].as<int>()},
            {"outcome", r["outcome"].c_str()},
            {"error_code", nullable(r["error_code"])},
            {"replay_of", r["replay_of"].is_null() ? boost::json::value(nullptr) : r["replay_of"].as<long long>()},
            {"request_id", r["request_id"].c_str()}};
}

void require_event_id(const std::string& id) {
    if (id.empty() || id.size() > 18 || id.find_first_not_of("0123456789") != std::string::npos)
        throw Refusal(Refusal::Kind::invalid, "an event id is a number (see `orderhub events list`)");
}

}  // namespace

boost::json::array list_events(pqxx::transaction_base& tx, const InboxFilter& filter) {
    if (filter.limit < 1 || filter.limit > kMaxListLimit)
        throw Refusal(Refusal::Kind::invalid, "limit must be between 1 and " + std::to_string(kMaxListLimit));
    boost::json::array rows;
    for (const auto& r : tx.exec_params("SELECT " + kEventColumns +
                                            " FROM hub.inbox i JOIN hub.partners p ON p.id = i.partner_id "
                                            "WHERE (NOT $1 OR i.http_status NOT BETWEEN 200 AND 299) "
                                            "AND ($2 = '' OR i.external_id = $2) AND ($4 = 0 OR i.id < $4) "
                                            "ORDER BY i.id DESC LIMIT $3",
                                        filter.failed, filter.external_id, static_cast<long long>(filter.limit),
                                        static_cast<long long>(filter.before_id)))
        rows.push_back(entry_json(r));
    return rows;
}

boost::json::object show_event(pqxx::transaction_base& tx, const std::string& id) {
    require_event_id(id);
    auto rows = tx.exec_params("SELECT " + kEventColumns +
                                   ", i.headers::text AS headers, i.body FROM hub.inbox i "
                                   "JOIN hub.partners p ON p.id = i.partner_id WHERE i.id = $1::bigint",
                               id);
    if (rows.empty()) throw Refusal(Refusal::Kind::not_found, "no event with id " + id);
    boost::json::object out = entry_json(rows[0]);
    out["headers"] = boost::json::parse(rows[0]["headers"].c_str());
    const pqxx::binarystring raw(rows[0]["body"]);
    const std::string body = raw.str();
    const bool text = common::text::is_utf8(body);
    out["body_size"] = body.size();
    out["body_encoding"] = text ? "utf-8" : "base64";
    out["body"] = text ? body : common::crypto::base64_encode(body);
    return out;
}

ReplaySource replay_source(pqxx::transaction_base& tx, const std::string& id) {
    require_event_id(id);
    auto rows = tx.exec_params(
        "SELECT i.body, i.headers::text, p.id, p.label, p.time_zone, p.signing, p.disabled_at IS NOT NULL, "
        "coalesce(i.error_code, '') LIKE 'signature\\_%' "
        "FROM hub.inbox i JOIN hub.partners p ON p.id = i.partner_id WHERE i.id = $1::bigint",
        id);
    if (rows.empty()) throw Refusal(Refusal::Kind::not_found, "no event with id " + id);
    if (rows[0][6].as<bool>()) throw Refusal(Refusal::Kind::conflict, "the event's partner is disabled");
    if (rows[0][7].as<bool>())
        throw Refusal(Refusal::Kind::conflict,
                      "the event was refused for its signature; it cannot be replayed (ask the platform to send it "
                      "again, signed)");
    ReplaySource out;
    const pqxx::binarystring raw(rows[0][0]);
    out.body = raw.str();
    out.headers = rows[0][1].as<std::string>();
    out.partner.id = rows[0][2].as<std::string>();
    out.partner.label = rows[0][3].as<std::string>();
    out.partner.time_zone = rows[0][4].as<std::string>();
    out.partner.signing = rows[0][5].as<bool>();
    return out;
}

}  // namespace hub::admin
