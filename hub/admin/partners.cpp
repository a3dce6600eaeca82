#include <boost/json.hpp>
#include <cctype>
#include <pqxx/pqxx>

#include "common/crypto/uuid.hpp"
#include "hub/admin/admin.hpp"
#include "hub/ingest/partners.hpp"

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
    return {{.name = "public-url", .env = "ORDERHUB_PUBLIC_URL", .help = "base of the webhook URL",
             .placeholder = "URL"},
            {.name = "listen", .env = "ORDERHUB_LISTEN", .help = "used for the URL when no public URL is set",
             .placeholder = "ADDR", .default_value = "127.0.0.1:8080"}};
}

std::string label_from(const std::string& name) {
    std::string out;
    for (unsigned char c : name) {
        if (std::isalnum(c)) out += static_cast<char>(std::tolower(c));
        else if (!out.empty() && out.back() != '-') out += '-';
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
    if (args.has("signing"))
        throw UserError("signed webhooks (--signing) are not available in this version yet; create the partner "
                        "without --signing");
    const std::string tz = args.get("time-zone").value_or("UTC");
    const std::string key = ingest::new_webhook_key();
    const std::string id = common::crypto::uuid_v7();
    auto conn = connect(args);
    pqxx::work tx(*conn);
    auto zone_ok = tx.exec_params1("SELECT EXISTS (SELECT 1 FROM pg_timezone_names WHERE name = $1)", tz);
    if (!zone_ok[0].as<bool>()) throw UserError("unknown time zone '" + tz + "' (use an IANA name such as Asia/Riyadh)");
    auto r = tx.exec_params(
        "INSERT INTO hub.partners (id, name, label, key_hash, time_zone) VALUES ($1, $2, $3, $4, $5) "
        "ON CONFLICT (label) DO NOTHING RETURNING id",
        id, name, label, ingest::webhook_key_hash(key), tz);
    if (r.empty()) throw UserError("a partner with label '" + label + "' exists already; choose another --label");
    tx.commit();
    print_object(args, {{"id", id},
                        {"name", name},
                        {"label", label},
                        {"time_zone", tz},
                        {"webhook_url", public_url(args) + "/webhooks/" + key}});
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
    print_rows(args, rows, {"id", "label", "name", "time_zone", "disabled", "created_at"});
    return 0;
}

int rotate(const ParsedArgs& args) {
    const std::string id = one_positional(args, "partner id");
    const std::string key = ingest::new_webhook_key();
    auto conn = connect(args);
    pqxx::work tx(*conn);
    auto r = tx.exec_params("UPDATE hub.partners SET key_hash = $2, key_rotated_at = now() WHERE id = $1 RETURNING label",
                            id, ingest::webhook_key_hash(key));
    if (r.empty()) throw UserError("no partner with id '" + id + "'");
    tx.commit();
    print_object(args, {{"id", id}, {"label", r[0][0].c_str()}, {"webhook_url", public_url(args) + "/webhooks/" + key}});
    return 0;
}

int disable(const ParsedArgs& args) {
    const std::string id = one_positional(args, "partner id");
    auto conn = connect(args);
    pqxx::work tx(*conn);
    auto r = tx.exec_params("UPDATE hub.partners SET disabled_at = coalesce(disabled_at, now()) WHERE id = $1 "
                            "RETURNING label",
                            id);
    if (r.empty()) throw UserError("no partner with id '" + id + "'");
    tx.commit();
    print_object(args, {{"id", id}, {"label", r[0][0].c_str()}, {"disabled", true}});
    return 0;
}

}  // namespace

std::vector<common::cli::Command> partner_commands() {
    auto create_opts = db_options(url_options());
    create_opts.push_back({.name = "name", .help = "the platform's name", .placeholder = "NAME"});
    create_opts.push_back({.name = "label", .help = "label in partner_reference (default: from the name)",
                           .placeholder = "LABEL"});
    create_opts.push_back({.name = "time-zone", .help = "IANA zone of times without offset", .placeholder = "TZ",
                           .default_value = "UTC"});
    create_opts.push_back({.name = "signing", .help = "require Standard Webhooks signatures"});
    return {
        {{"partner", "create"}, "issue a partner and its webhook URL (shown once)", "--name NAME [--label LABEL]",
         create_opts, create},
        {{"partner", "list"}, "list partners (never their keys)", "", db_options(), list},
        {{"partner", "rotate"}, "issue a new webhook URL; the old one stops working", "ID", db_options(url_options()),
         rotate},
        {{"partner", "disable"}, "disable a partner: its URL answers 404", "ID", db_options(), disable},
    };
}

}  // namespace hub::admin
