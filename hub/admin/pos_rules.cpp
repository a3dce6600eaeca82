#include "hub/admin/pos_rules.hpp"

#include <algorithm>
#include <boost/url/parse.hpp>
#include <cctype>
#include <fstream>
#include <pqxx/pqxx>

#include "hub/admin/branch_rules.hpp"
#include "hub/admin/refusal.hpp"
#include "hub/forward/secrets.hpp"

namespace hub::admin {
namespace {

/// True when the host of `u` is this machine: 127.0.0.0/8, ::1 or localhost.
bool loopback_host(const boost::urls::url_view& u) {
    switch (u.host_type()) {
        case boost::urls::host_type::ipv4: return u.host_ipv4_address().is_loopback();
        case boost::urls::host_type::ipv6: return u.host_ipv6_address().is_loopback();
        case boost::urls::host_type::name: {
            std::string host(u.encoded_host());
            std::transform(host.begin(), host.end(), host.begin(),
                           [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
            return host == "localhost" || host == "localhost.";
        }
        default: return false;
    }
}

void check_connection(const PosConnectionInput& in) {
    const bool environment_ok =
        !in.environment.empty() && in.environment.size() <= 32 &&
        in.environment.find_first_not_of("abcdefghijklmnopqrstuvwxyz0123456789_-") == std::string::npos;
    if (!environment_ok) throw Refusal(Refusal::Kind::invalid, "environment must be 1-32 of a-z 0-9 _ -");
    if (!usable_base_url(in.base_url))
        throw Refusal(Refusal::Kind::invalid,
                      "base_url must be an absolute http:// or https:// URL without user, query or fragment");
    if (!in.allow_insecure_http && insecure_base_url(in.base_url))
        throw Refusal(Refusal::Kind::invalid,
                      "base_url is http:// to a host that is not this machine: the POS token and password would "
                      "cross the network in clear; use https://, or allow insecure http (--allow-insecure-http) "
                      "to accept that");
    if (in.email.has_value() != in.password.has_value())
        throw Refusal(Refusal::Kind::invalid, "email and password go together");
    if (!in.token && !in.email)
        throw Refusal(Refusal::Kind::invalid, "give a token, or an email and a password, or both");
    if (!in.ca_file.empty() && !std::ifstream(in.ca_file).good())
        throw Refusal(Refusal::Kind::invalid, "cannot read the CA file '" + in.ca_file + "'");
}

void check_kind(const std::string& kind) {
    if (kind != "item" && kind != "option") throw Refusal(Refusal::Kind::invalid, "kind must be item or option");
}

boost::json::object mapping_json(const pqxx::row& r) {
    return {{"partner", r["partner_id"].c_str()}, {"partner_label", r["label"].c_str()},
            {"kind", r["kind"].c_str()},          {"external", r["external_id"].c_str()},
            {"pos", r["pos_id"].c_str()},         {"updated_at", r["updated_at"].c_str()}};
}

constexpr std::string_view kMappingColumns =
    "m.partner_id, p.label, m.kind, m.external_id, m.pos_id, "
    "to_char(m.updated_at AT TIME ZONE 'UTC', 'YYYY-MM-DD\"T\"HH24:MI:SS\"Z\"') AS updated_at";

}  // namespace

bool usable_base_url(std::string_view base_url) {
    auto url = boost::urls::parse_absolute_uri(base_url);
    return url && (url->scheme() == "http" || url->scheme() == "https") && !url->host().empty() && !url->has_query() &&
           !url->has_fragment() && !url->has_userinfo();
}

bool insecure_base_url(std::string_view base_url) {
    auto u = boost::urls::parse_absolute_uri(base_url);
    return !u || (u->scheme_id() != boost::urls::scheme::https && !loopback_host(*u));
}

boost::json::object set_pos_connection(pqxx::transaction_base& tx, const common::crypto::SecretBox& box,
                                       const PosConnectionInput& in) {
    check_connection(in);
    ensure_brand(tx, in.brand);
    const std::string token_sealed = in.token ? box.seal(*in.token, forward::token_aad(in.brand, in.environment)) : "";
    const std::string password_sealed =
        in.password ? box.seal(*in.password, forward::password_aad(in.brand, in.environment)) : "";
    tx.exec_params(
        "INSERT INTO hub.pos_connections (brand_id, environment, base_url, token_sealed, email, password_sealed, "
        "ca_file) VALUES ($1, $2, $3, NULLIF($4, ''), NULLIF($5, ''), NULLIF($6, ''), NULLIF($7, '')) "
        "ON CONFLICT (brand_id, environment) DO UPDATE SET base_url = EXCLUDED.base_url, "
        "token_sealed = EXCLUDED.token_sealed, email = EXCLUDED.email, password_sealed = EXCLUDED.password_sealed, "
        "ca_file = EXCLUDED.ca_file, updated_at = now()",
        in.brand, in.environment, in.base_url, token_sealed, in.email.value_or(""), password_sealed, in.ca_file);
    // New credentials give jobs that failed authentication another go.
    auto requeued = tx.exec_params(
        "UPDATE hub.forward_jobs j SET state = 'pending', due_at = now(), due_since = now(), attempts = 0, "
        "updated_at = now() "
        "FROM hub.orders o WHERE o.id = j.order_id AND o.brand_id = $1 AND j.state = 'auth_failed'",
        in.brand);
    return {{"brand", in.brand},
            {"environment", in.environment},
            {"base_url", in.base_url},
            {"token", in.token.has_value()},
            {"credentials", in.email.has_value()},
            {"ca_file", in.ca_file.empty() ? boost::json::value(nullptr) : boost::json::value(in.ca_file)},
            {"insecure", insecure_base_url(in.base_url)},
            {"requeued", requeued.affected_rows()}};
}

boost::json::array list_pos_connections(pqxx::transaction_base& tx) {
    boost::json::array rows;
    for (const auto& r : tx.exec("SELECT brand_id, environment, base_url, token_sealed IS NOT NULL, email IS NOT "
                                 "NULL, nullif(ca_file, '') FROM hub.pos_connections ORDER BY 1, 2"))
        rows.push_back({{"brand", r[0].c_str()},
                        {"environment", r[1].c_str()},
                        {"base_url", r[2].c_str()},
                        {"token", r[3].as<bool>()},
                        {"credentials", r[4].as<bool>()},
                        {"ca_file", r[5].is_null() ? boost::json::value(nullptr) : boost::json::value(r[5].c_str())},
                        {"insecure", insecure_base_url(r[2].c_str())}});
    return rows;
}

boost::json::object set_mapping(pqxx::transaction_base& tx, const std::string& partner, const std::string& kind,
                                const std::string& external, const std::string& pos_id) {
    check_kind(kind);
    require_text("external", external, kMaxIdBytes);
    require_text("pos", pos_id, kMaxIdBytes);
    if (tx.exec_params("SELECT 1 FROM hub.partners WHERE id = $1", partner).empty())
        throw Refusal(Refusal::Kind::not_found, "no partner with id '" + partner + "'");
    tx.exec_params(
        "INSERT INTO hub.item_mappings (partner_id, kind, external_id, pos_id) VALUES ($1, $2, $3, $4) "
        "ON CONFLICT (partner_id, kind, external_id) DO UPDATE SET pos_id = EXCLUDED.pos_id, "
        "updated_at = now()",
        partner, kind, external, pos_id);
    return {{"partner", partner}, {"kind", kind}, {"external", external}, {"pos", pos_id}};
}

boost::json::array list_mappings(pqxx::transaction_base& tx, const std::string& partner, const std::string& kind) {
    if (!kind.empty()) check_kind(kind);
    boost::json::array rows;
    for (const auto& r : tx.exec_params("SELECT " + std::string(kMappingColumns) +
                                            " FROM hub.item_mappings m JOIN hub.partners p ON p.id = m.partner_id "
                                            "WHERE ($1 = '' OR m.partner_id = $1) AND ($2 = '' OR m.kind = $2) "
                                            "ORDER BY p.label, m.kind, m.external_id",
                                        partner, kind))
        rows.push_back(mapping_json(r));
    return rows;
}

boost::json::object delete_mapping(pqxx::transaction_base& tx, const std::string& partner, const std::string& kind,
                                   const std::string& external) {
    check_kind(kind);
    auto r = tx.exec_params(
        "WITH m AS (DELETE FROM hub.item_mappings WHERE partner_id = $1 AND kind = $2 AND "
        "external_id = $3 RETURNING *) SELECT " +
            std::string(kMappingColumns) + " FROM m JOIN hub.partners p ON p.id = m.partner_id",
        partner, kind, external);
    if (r.empty())
        throw Refusal(Refusal::Kind::not_found,
                      "no " + kind + " mapping of '" + external + "' for partner '" + partner + "'");
    return mapping_json(r[0]);
}

}  // namespace hub::admin
