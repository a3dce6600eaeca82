#include <boost/json.hpp>
#include <cctype>
#include <pqxx/pqxx>

#include "common/crypto/uuid.hpp"
#include "hub/admin/admin.hpp"
#include "hub/forward/secrets.hpp"
#include "hub/ingest/partners.hpp"
#include "hub/ingest/signature.hpp"

namespace hub::admin {
namespace {

using common::cli::UserError;
using common::config::ParsedArgs;

std::string public_url(const ParsedArgs& args) {
    if (auto u = args.get("public-url"); u && !u->empty()) {
        std::string s = *u;
        while (!s.empty() && s.back() == '/') s.pop_back();
        return s;
    }
    return "http://" + args.get("listen").value_or("127.0.0.1:8080");
}

std::vector<common::config::OptionSpec> url_options() {
    return {
        {.name = "public-url", .env = "ORDERHUB_PUBLIC_URL", .help = "base of the webhook URL", .placeholder = "URL"},
        {.name = "listen",
         .env = "ORDERHUB_LISTEN",
         .help = "used for the URL when no public URL is set",
         .placeholder = "ADDR",
         .default_value = "127.0.0.1:8080"}};
}

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

int create(const ParsedArgs& args) {
    const std::string name = required(args, "name");
    if (name.size() > 200) throw common::cli::UsageError("--name is longer than 200 characters");
    const std::string label = args.get("label").value_or(label_from(name));
    if (!valid_label(label))
        throw common::cli::UsageError("--label must be 1-64 of A-Z a-z 0-9 _ . - starting with a letter or digit");
    const bool signing = args.has("signing");
    // Before anything is written: a signing partner needs ORDERHUB_SECRET_KEY to seal its secret.
    std::optional<common::crypto::SecretBox> box;
    if (signing) box = forward::secret_box(args);
    const std::string tz = args.get("time-zone").value_or("UTC");
    const std::string key = ingest::new_webhook_key();
    const std::string id = common::crypto::uuid_v7();
    auto conn = connect(args);
    pqxx::work tx(*conn);
    auto zone_ok = tx.exec_params1("SELECT EXISTS (SELECT 1 FROM pg_timezone_names WHERE name = $1)", tz);
    if (!zone_ok[0].as<bool>())
        throw UserError("unknown time zone '" + tz + "' (use an IANA name such as Asia/Riyadh)");
    auto r = tx.exec_params(
        "INSERT INTO hub.partners (id, name, label, key_hash, time_zone, signing) VALUES ($1, $2, $3, $4, $5, $6) "
        "ON CONFLICT (label) DO NOTHING RETURNING id",
        id, name, label, ingest::webhook_key_hash(key), tz, signing);
    if (r.empty()) throw UserError("a partner with label '" + label + "' exists already; choose another --label");
    std::string secret;
    if (signing) {
        secret = ingest::new_signing_secret();
        tx.exec_params("INSERT INTO hub.partner_signing_secrets (partner_id, secret_sealed) VALUES ($1, $2)", id,
                       box->seal(secret, ingest::signing_secret_aad(id)));
    }
    tx.commit();
    boost::json::object out{{"id", id},
                            {"name", name},
                            {"label", label},
                            {"time_zone", tz},
                            {"webhook_url", public_url(args) + "/webhooks/" + key},
                            {"signing", signing}};
    if (signing) out["signing_secret"] = secret;  // shown once: only its sealed form is stored
    print_object(args, out);
    return 0;
}

int list(const ParsedArgs& args) {
    auto conn = connect(args);
    pqxx::read_transaction tx(*conn);
    boost::json::array rows;
    for (const auto& r : tx.exec("SELECT id, name, label, time_zone, signing, disabled_at IS NOT NULL, "
                                 "to_char(created_at AT TIME ZONE 'UTC', 'YYYY-MM-DD\"T\"HH24:MI:SS\"Z\"') "
                                 "FROM hub.partners ORDER BY created_at, id")) {
        rows.push_back({{"id", r[0].c_str()},
                        {"name", r[1].c_str()},
                        {"label", r[2].c_str()},
                        {"time_zone", r[3].c_str()},
                        {"signing", r[4].as<bool>()},
                        {"disabled", r[5].as<bool>()},
                        {"created_at", r[6].c_str()}});
    }
    print_rows(args, rows, {"id", "label", "name", "time_zone", "signing", "disabled", "created_at"});
    return 0;
}

int rotate(const ParsedArgs& args) {
    const std::string id = one_positional(args, "partner id");
    const std::string key = ingest::new_webhook_key();
    auto conn = connect(args);
    pqxx::work tx(*conn);
    auto r =
        tx.exec_params("UPDATE hub.partners SET key_hash = $2, key_rotated_at = now() WHERE id = $1 RETURNING label",
                       id, ingest::webhook_key_hash(key));
    if (r.empty()) throw UserError("no partner with id '" + id + "'");
    tx.commit();
    print_object(args,
                 {{"id", id}, {"label", r[0][0].c_str()}, {"webhook_url", public_url(args) + "/webhooks/" + key}});
    return 0;
}

int rotate_secret(const ParsedArgs& args) {
    const std::string id = one_positional(args, "partner id");
    std::string error;
    auto grace =
        common::config::parse_uint(args.get("grace-hours").value_or("24"), 0, 24 * 366, "--grace-hours", error);
    if (!grace) throw common::cli::UsageError(error);
    auto box = forward::secret_box(args);
    auto conn = connect(args);
    pqxx::work tx(*conn);
    // The partner row is locked so that two rotations of one partner take turns.
    auto p = tx.exec_params("SELECT label, signing FROM hub.partners WHERE id = $1 FOR UPDATE", id);
    if (p.empty()) throw UserError("no partner with id '" + id + "'");
    if (!p[0][1].as<bool>())
        throw UserError("partner '" + id + "' does not sign its webhooks (it was created without --signing)");
    // Older secrets stay valid for the grace period; one that already expires sooner keeps its earlier end.
    auto expiring = tx.exec_params(
        "UPDATE hub.partner_signing_secrets SET expires_at = now() + make_interval(hours => $2::int) "
        "WHERE partner_id = $1 AND (expires_at IS NULL OR expires_at > now() + make_interval(hours => $2::int))",
        id, static_cast<int>(*grace));
    const std::string secret = ingest::new_signing_secret();
    tx.exec_params("INSERT INTO hub.partner_signing_secrets (partner_id, secret_sealed) VALUES ($1, $2)", id,
                   box.seal(secret, ingest::signing_secret_aad(id)));
    auto until = tx.exec_params1(
        "SELECT to_char((now() + make_interval(hours => $1::int)) AT TIME ZONE 'UTC', "
        "'YYYY-MM-DD\"T\"HH24:MI:SS\"Z\"')",
        static_cast<int>(*grace));
    tx.commit();
    print_object(args, {{"id", id},
                        {"label", p[0][0].c_str()},
                        {"signing_secret", secret},
                        {"previous_secrets_expire_at", until[0].c_str()},
                        {"previous_secrets", expiring.affected_rows()}});
    return 0;
}

int disable(const ParsedArgs& args) {
    const std::string id = one_positional(args, "partner id");
    auto conn = connect(args);
    pqxx::work tx(*conn);
    auto r = tx.exec_params(
        "UPDATE hub.partners SET disabled_at = coalesce(disabled_at, now()) WHERE id = $1 "
        "RETURNING label",
        id);
    if (r.empty()) throw UserError("no partner with id '" + id + "'");
    tx.commit();
    print_object(args, {{"id", id}, {"label", r[0][0].c_str()}, {"disabled", true}});
    return 0;
}

int limit(const ParsedArgs& args) {
    const std::string id = one_positional(args, "partner id");
    std::string error;
    const bool clear = args.has("default");
    std::optional<std::uint64_t> rate, burst;
    if (!clear) {
        rate = common::config::parse_uint(required(args, "per-second"), 1, 1'000'000, "--per-second", error);
        if (!rate) throw common::cli::UsageError(error);
        burst = common::config::parse_uint(args.get("burst").value_or(std::to_string(*rate * 2)), 1, 1'000'000,
                                           "--burst", error);
        if (!burst) throw common::cli::UsageError(error);
    }
    auto conn = connect(args);
    pqxx::work tx(*conn);
    auto r = tx.exec_params(
        "UPDATE hub.partners SET rate_per_second = NULLIF($2, '')::numeric, "
        "rate_burst = NULLIF($3, '')::int WHERE id = $1 RETURNING label",
        id, clear ? std::string() : std::to_string(*rate), clear ? std::string() : std::to_string(*burst));
    if (r.empty()) throw UserError("no partner with id '" + id + "'");
    tx.commit();
    print_object(args, {{"id", id},
                        {"label", r[0][0].c_str()},
                        {"per_second", clear ? boost::json::value(nullptr) : boost::json::value(*rate)},
                        {"burst", clear ? boost::json::value(nullptr) : boost::json::value(*burst)}});
    return 0;
}

}  // namespace

std::vector<common::cli::Command> partner_commands() {
    auto create_opts = db_options(url_options());
    create_opts.push_back({.name = "name", .help = "the platform's name", .placeholder = "NAME"});
    create_opts.push_back(
        {.name = "label", .help = "label in partner_reference (default: from the name)", .placeholder = "LABEL"});
    create_opts.push_back({.name = "time-zone",
                           .help = "IANA zone of times without offset",
                           .placeholder = "TZ",
                           .default_value = "UTC"});
    create_opts.push_back({.name = "signing", .help = "require Standard Webhooks signatures (prints the secret once)"});
    create_opts.push_back(forward::secret_key_option());
    return {
        {{"partner", "create"},
         "issue a partner and its webhook URL (shown once)",
         "--name NAME [--label LABEL] [--signing]",
         create_opts,
         create},
        {{"partner", "rotate-secret"},
         "a new signing secret (shown once); the older ones stay valid for a grace period",
         "ID [--grace-hours N]",
         db_options({{.name = "grace-hours",
                      .help = "hours the older secrets stay valid (0: none)",
                      .placeholder = "N",
                      .default_value = "24"},
                     forward::secret_key_option()}),
         rotate_secret},
        {{"partner", "list"}, "list partners (never their keys)", "", db_options(), list},
        {{"partner", "rotate"},
         "issue a new webhook URL; the old one stops working",
         "ID",
         db_options(url_options()),
         rotate},
        {{"partner", "limit"},
         "a partner's own rate limit (token bucket); --default goes back to the hub's",
         "ID --per-second N [--burst N] | ID --default",
         db_options({{.name = "per-second", .help = "requests per second", .placeholder = "N"},
                     {.name = "burst",
                      .help = "requests at once above the rate (default: twice the rate)",
                      .placeholder = "N"},
                     {.name = "default", .help = "use the hub's default limit again"}}),
         limit},
        {{"partner", "disable"}, "disable a partner: its URL answers 404", "ID", db_options(), disable},
    };
}

}  // namespace hub::admin
