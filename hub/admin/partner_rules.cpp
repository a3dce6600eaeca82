#include "hub/admin/partner_rules.hpp"

#include <cctype>
#include <pqxx/pqxx>

#include "common/crypto/uuid.hpp"
#include "hub/admin/admin.hpp"
#include "hub/admin/order_create_rules.hpp"
#include "hub/admin/refusal.hpp"
#include "hub/ingest/partners.hpp"
#include "hub/ingest/signature.hpp"

namespace hub::admin {
namespace {

constexpr long long kMaxGraceHours = 24LL * 366;

std::string label_from(const std::string& name) {
    std::string out;
    for (unsigned char c : name) {
        if (std::isalnum(c))
            out += static_cast<char>(std::tolower(c));
        else if (!out.empty() && out.back() != '-')
            out += '-';
    }
    while (!out.empty() && out.back() == '-') out.pop_back();
    return out.substr(0, 64);
}

bool valid_label(const std::string& l) {
    if (l.empty() || l.size() > 64 || !std::isalnum(static_cast<unsigned char>(l[0]))) return false;
    for (unsigned char c : l)
        if (!std::isalnum(c) && c != '_' && c != '.' && c != '-') return false;
    return true;
}

std::string not_found_message(const std::string& id) { return "no partner with id '" + id + "'"; }

const std::string kPartnerColumns =
    "id, name, label, time_zone, signing, disabled_at IS NOT NULL, " + iso_utc("created_at");

boost::json::object partner_json(const pqxx::row& r) {
    return {{"id", r[0].c_str()},        {"name", r[1].c_str()},       {"label", r[2].c_str()},
            {"time_zone", r[3].c_str()}, {"signing", r[4].as<bool>()}, {"disabled", r[5].as<bool>()},
            {"created_at", r[6].c_str()}};
}

}  // namespace

std::string webhook_url(std::string base, const std::string& key) {
    while (!base.empty() && base.back() == '/') base.pop_back();
    return base + "/webhooks/" + key;
}

void check_partner_input(const PartnerInput& in, const common::crypto::SecretBox* box) {
    require_text("name", in.name, 200);
    const std::string label = in.label.value_or(label_from(in.name));
    if (!valid_label(label))
        throw Refusal(Refusal::Kind::invalid,
                      "label must be 1-64 of A-Z a-z 0-9 _ . - starting with a letter or digit");
    require_text("time_zone", in.time_zone, 64);
    if (in.signing && box == nullptr)
        throw Refusal(Refusal::Kind::invalid, "a signing partner needs the hub's secret key (ORDERHUB_SECRET_KEY)");
}

IssuedPartner create_partner(pqxx::transaction_base& tx, const common::crypto::SecretBox* box, const PartnerInput& in) {
    check_partner_input(in, box);
    const std::string label = in.label.value_or(label_from(in.name));
    auto zone_ok = tx.exec_params1("SELECT EXISTS (SELECT 1 FROM pg_timezone_names WHERE name = $1)", in.time_zone);
    if (!zone_ok[0].as<bool>())
        throw Refusal(Refusal::Kind::invalid,
                      "unknown time zone '" + in.time_zone + "' (use an IANA name such as Asia/Riyadh)");
    const std::string key = ingest::new_webhook_key();
    const std::string id = common::crypto::uuid_v7();
    auto r = tx.exec_params(
        "INSERT INTO hub.partners (id, name, label, key_hash, time_zone, signing) VALUES ($1, $2, $3, $4, $5, $6) "
        "ON CONFLICT (label) DO NOTHING RETURNING id",
        id, in.name, label, ingest::webhook_key_hash(key), in.time_zone, in.signing);
    if (r.empty())
        throw Refusal(Refusal::Kind::conflict,
                      "a partner with label '" + label + "' exists already; choose another label");
    IssuedPartner out{
        {{"id", id}, {"name", in.name}, {"label", label}, {"time_zone", in.time_zone}, {"signing", in.signing}}, key};
    if (in.signing) {
        const std::string secret = ingest::new_signing_secret();
        tx.exec_params("INSERT INTO hub.partner_signing_secrets (partner_id, secret_sealed) VALUES ($1, $2)", id,
                       box->seal(secret, ingest::signing_secret_aad(id)));
        out.partner["signing_secret"] = secret;  // shown once: only its sealed form is stored
    }
    return out;
}

boost::json::array list_partners(pqxx::transaction_base& tx) {
    boost::json::array rows;
    // The built-in partner of operator orders (hub/admin/order_create_rules.hpp) takes no webhooks: not listed.
    for (const auto& r : tx.exec_params(
             "SELECT " + kPartnerColumns + " FROM hub.partners WHERE id <> $1 ORDER BY created_at DESC, id DESC",
             std::string(kOperatorPartnerId)))
        rows.push_back(partner_json(r));
    return rows;
}

boost::json::object show_partner(pqxx::transaction_base& tx, const std::string& id) {
    auto r = tx.exec_params("SELECT " + kPartnerColumns + " FROM hub.partners WHERE id = $1", id);
    if (r.empty()) throw Refusal(Refusal::Kind::not_found, not_found_message(id));
    return partner_json(r[0]);
}

IssuedPartner rotate_partner_key(pqxx::transaction_base& tx, const std::string& id) {
    const std::string key = ingest::new_webhook_key();
    auto r =
        tx.exec_params("UPDATE hub.partners SET key_hash = $2, key_rotated_at = now() WHERE id = $1 RETURNING label",
                       id, ingest::webhook_key_hash(key));
    if (r.empty()) throw Refusal(Refusal::Kind::not_found, not_found_message(id));
    return {{{"id", id}, {"label", r[0][0].c_str()}}, key};
}

boost::json::object rotate_partner_secret(pqxx::transaction_base& tx, const common::crypto::SecretBox& box,
                                          const std::string& id, long long grace_hours) {
    if (grace_hours < 0 || grace_hours > kMaxGraceHours)
        throw Refusal(Refusal::Kind::invalid, "grace hours must be between 0 and " + std::to_string(kMaxGraceHours));
    // The partner row is locked so that two rotations of one partner take turns.
    auto p = tx.exec_params("SELECT label, signing FROM hub.partners WHERE id = $1 FOR UPDATE", id);
    if (p.empty()) throw Refusal(Refusal::Kind::not_found, not_found_message(id));
    if (!p[0][1].as<bool>())
        throw Refusal(Refusal::Kind::conflict,
                      "partner '" + id + "' does not sign its webhooks (it was created without --signing)");
    // Older secrets stay valid for the grace period; one that already expires sooner keeps its earlier end.
    auto expiring = tx.exec_params(
        "UPDATE hub.partner_signing_secrets SET expires_at = now() + make_interval(hours => $2::int) "
        "WHERE partner_id = $1 AND (expires_at IS NULL OR expires_at > now() + make_interval(hours => $2::int))",
        id, static_cast<int>(grace_hours));
    const std::string secret = ingest::new_signing_secret();
    tx.exec_params("INSERT INTO hub.partner_signing_secrets (partner_id, secret_sealed) VALUES ($1, $2)", id,
                   box.seal(secret, ingest::signing_secret_aad(id)));
    auto until = tx.exec_params1(
        "SELECT to_char((now() + make_interval(hours => $1::int)) AT TIME ZONE 'UTC', "
        "'YYYY-MM-DD\"T\"HH24:MI:SS\"Z\"')",
        static_cast<int>(grace_hours));
    return {{"id", id},
            {"label", p[0][0].c_str()},
            {"signing_secret", secret},
            {"previous_secrets_expire_at", until[0].c_str()},
            {"previous_secrets", expiring.affected_rows()}};
}

boost::json::object set_partner_limit(pqxx::transaction_base& tx, const std::string& id,
                                      std::optional<long long> per_second, std::optional<long long> burst) {
    constexpr long long kMax = 1'000'000;
    if (!per_second && burst) throw Refusal(Refusal::Kind::invalid, "a burst needs a rate (per_second)");
    if (per_second && (*per_second < 1 || *per_second > kMax))
        throw Refusal(Refusal::Kind::invalid, "per_second must be between 1 and " + std::to_string(kMax));
    if (per_second && !burst) burst = *per_second * 2;
    if (burst && (*burst < 1 || *burst > kMax))
        throw Refusal(Refusal::Kind::invalid, "burst must be between 1 and " + std::to_string(kMax));
    auto r = tx.exec_params(
        "UPDATE hub.partners SET rate_per_second = NULLIF($2, '')::numeric, "
        "rate_burst = NULLIF($3, '')::int WHERE id = $1 RETURNING label",
        id, per_second ? std::to_string(*per_second) : std::string(), burst ? std::to_string(*burst) : std::string());
    if (r.empty()) throw Refusal(Refusal::Kind::not_found, not_found_message(id));
    return {{"id", id},
            {"label", r[0][0].c_str()},
            {"per_second", per_second ? boost::json::value(*per_second) : boost::json::value(nullptr)},
            {"burst", burst ? boost::json::value(*burst) : boost::json::value(nullptr)}};
}

boost::json::object disable_partner(pqxx::transaction_base& tx, const std::string& id) {
    auto r = tx.exec_params(
        "UPDATE hub.partners SET disabled_at = coalesce(disabled_at, now()) WHERE id = $1 RETURNING label", id);
    if (r.empty()) throw Refusal(Refusal::Kind::not_found, not_found_message(id));
    return {{"id", id}, {"label", r[0][0].c_str()}, {"disabled", true}};
}

}  // namespace hub::admin
