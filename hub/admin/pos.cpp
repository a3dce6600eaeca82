#include <algorithm>
#include <boost/json.hpp>
#include <boost/url/parse.hpp>
#include <cctype>
#include <fstream>
#include <iostream>
#include <pqxx/pqxx>

#include "hub/admin/admin.hpp"
#include "hub/forward/resend.hpp"
#include "hub/forward/secrets.hpp"

namespace hub::admin {
namespace {

using common::cli::UsageError;
using common::cli::UserError;
using common::config::ParsedArgs;

/// The value of a secret option; `-` reads one line from standard input (keeps it out of `ps` and history).
std::optional<std::string> secret_value(const ParsedArgs& args, const std::string& name) {
    auto v = args.get(name);
    if (!v) return std::nullopt;
    if (*v != "-") return v;
    std::string line;
    if (!std::getline(std::cin, line)) throw UserError("--" + name + " - expects the value on standard input");
    return line;
}

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

/// True when the POS at `base_url` gets the bearer token and the password in clear over a network: http:// (not
/// https://) to a host that is not loopback. An unreadable URL counts as insecure.
bool insecure_base_url(std::string_view base_url) {
    auto u = boost::urls::parse_absolute_uri(base_url);
    return !u || (u->scheme_id() != boost::urls::scheme::https && !loopback_host(*u));
}

int pos_set(const ParsedArgs& args) {
    const std::string brand = required(args, "brand");
    const std::string env = args.get("environment").value_or("production");
    const std::string base_url = required(args, "base-url");
    auto url = boost::urls::parse_absolute_uri(base_url);
    if (!url || (url->scheme() != "http" && url->scheme() != "https") || url->host().empty() || url->has_query() ||
        url->has_fragment() || url->has_userinfo())
        throw UsageError("--base-url must be an absolute http:// or https:// URL without user, query or fragment");
    const bool insecure = insecure_base_url(base_url);
    if (insecure && !args.has("allow-insecure-http"))
        throw UsageError(
            "--base-url is http:// to a host that is not this machine: the POS token and password would "
            "cross the network in clear; use https://, or give --allow-insecure-http to accept that");
    auto token = secret_value(args, "token");
    auto email = args.get("email");
    auto password = secret_value(args, "password");
    if (email.has_value() != password.has_value()) throw UsageError("--email and --password go together");
    if (!token && !email) throw UsageError("give --token, or --email and --password, or both");
    const std::string ca_file = args.get("ca-file").value_or("");
    if (!ca_file.empty() && !std::ifstream(ca_file).good())
        throw UserError("cannot read the CA file '" + ca_file + "'");
    auto box = forward::secret_box(args);
    auto conn = connect(args);
    pqxx::work tx(*conn);
    if (tx.exec_params("SELECT 1 FROM hub.brands WHERE id = $1", brand).empty())
        throw UserError("no brand '" + brand + "' (brands come into being with `orderhub branch create`)");
    const std::string token_sealed = token ? box.seal(*token, forward::token_aad(brand, env)) : "";
    const std::string password_sealed = password ? box.seal(*password, forward::password_aad(brand, env)) : "";
    tx.exec_params(
        "INSERT INTO hub.pos_connections (brand_id, environment, base_url, token_sealed, email, password_sealed, "
        "ca_file) VALUES ($1, $2, $3, NULLIF($4, ''), NULLIF($5, ''), NULLIF($6, ''), NULLIF($7, '')) "
        "ON CONFLICT (brand_id, environment) DO UPDATE SET base_url = EXCLUDED.base_url, "
        "token_sealed = EXCLUDED.token_sealed, email = EXCLUDED.email, password_sealed = EXCLUDED.password_sealed, "
        "ca_file = EXCLUDED.ca_file, updated_at = now()",
        brand, env, base_url, token_sealed, email.value_or(""), password_sealed, ca_file);
    // New credentials give jobs that failed authentication another go.
    auto requeued = tx.exec_params(
        "UPDATE hub.forward_jobs j SET state = 'pending', due_at = now(), due_since = now(), attempts = 0, "
        "updated_at = now() "
        "FROM hub.orders o WHERE o.id = j.order_id AND o.brand_id = $1 AND j.state = 'auth_failed'",
        brand);
    tx.commit();
    print_object(args, {{"brand", brand},
                        {"environment", env},
                        {"base_url", base_url},
                        {"token", token.has_value()},
                        {"credentials", email.has_value()},
                        {"ca_file", ca_file.empty() ? boost::json::value(nullptr) : boost::json::value(ca_file)},
                        {"insecure", insecure},
                        {"requeued", requeued.affected_rows()}});
    return 0;
}

int pos_list(const ParsedArgs& args) {
    auto conn = connect(args);
    pqxx::read_transaction tx(*conn);
    boost::json::array rows;
    for (const auto& r : tx.exec("SELECT brand_id, environment, base_url, token_sealed IS NOT NULL, email IS NOT "
                                 "NULL, coalesce(ca_file, '') FROM hub.pos_connections ORDER BY 1, 2"))
        rows.push_back({{"brand", r[0].c_str()},
                        {"environment", r[1].c_str()},
                        {"base_url", r[2].c_str()},
                        {"token", r[3].as<bool>()},
                        {"credentials", r[4].as<bool>()},
                        {"ca_file", r[5].c_str()},
                        {"insecure", insecure_base_url(r[2].c_str())}});
    print_rows(args, rows, {"brand", "environment", "base_url", "insecure", "token", "credentials", "ca_file"});
    return 0;
}

int map_set(const ParsedArgs& args) {
    const std::string partner = required(args, "partner");
    const std::string kind = required(args, "kind");
    if (kind != "item" && kind != "option") throw UsageError("--kind must be item or option");
    const std::string external = required(args, "external");
    const std::string pos_id = required(args, "pos");
    auto conn = connect(args);
    pqxx::work tx(*conn);
    if (tx.exec_params("SELECT 1 FROM hub.partners WHERE id = $1", partner).empty())
        throw UserError("no partner with id '" + partner + "'");
    tx.exec_params(
        "INSERT INTO hub.item_mappings (partner_id, kind, external_id, pos_id) VALUES ($1, $2, $3, $4) "
        "ON CONFLICT (partner_id, kind, external_id) DO UPDATE SET pos_id = EXCLUDED.pos_id, "
        "updated_at = now()",
        partner, kind, external, pos_id);
    tx.commit();
    print_object(args, {{"partner", partner}, {"kind", kind}, {"external", external}, {"pos", pos_id}});
    return 0;
}

int order_resend(const ParsedArgs& args) {
    const std::string id = one_positional(args, "order id");
    auto conn = connect(args);
    pqxx::work tx(*conn);
    const auto outcome = forward::resend_order(tx, id, std::nullopt);
    if (outcome.kind == forward::ResendOutcome::Kind::not_found) throw UserError("no order with id '" + id + "'");
    if (outcome.kind != forward::ResendOutcome::Kind::requeued) throw UserError(outcome.message());
    tx.commit();
    print_object(args, {{"order_id", id}, {"previous_state", outcome.previous_state}, {"state", "pending"}});
    return 0;
}

}  // namespace

std::vector<common::cli::Command> pos_commands() {
    return {
        {{"pos", "set"},
         "the POS connection of a brand: a token, login credentials, or both (secrets sealed at rest)",
         "--brand BRAND [--environment ENV] --base-url URL [--token TOKEN] [--email E --password P] [--ca-file PEM] "
         "[--allow-insecure-http]",
         db_options(
             {{.name = "brand", .help = "the brand", .placeholder = "BRAND"},
              {.name = "environment",
               .help = "the POS environment",
               .placeholder = "ENV",
               .default_value = "production"},
              {.name = "base-url",
               .help = "the POS base URL: https://, or http:// to this machine (127.0.0.0/8, ::1, localhost)",
               .placeholder = "URL"},
              {.name = "allow-insecure-http",
               .help = "take http:// to another host: the token and password then cross the network in clear"},
              {.name = "token", .help = "bearer token; '-' reads it from standard input", .placeholder = "TOKEN"},
              {.name = "email", .help = "login e-mail, used after a 401", .placeholder = "E"},
              {.name = "password", .help = "login password; '-' reads it from standard input", .placeholder = "P"},
              {.name = "ca-file",
               .help = "PEM CA bundle to verify the POS (default: system store)",
               .placeholder = "PEM"},
              forward::secret_key_option()}),
         pos_set},
        {{"pos", "list"},
         "POS connections (never their secrets); `insecure`: http:// to another host (secrets sent in clear)",
         "",
         db_options(),
         pos_list},
        {{"map", "set"},
         "map a platform item or option id to a POS product or modifier id",
         "--partner ID --kind item|option --external EXT --pos POS_ID",
         db_options({{.name = "partner", .help = "partner id", .placeholder = "ID"},
                     {.name = "kind", .help = "item or option", .placeholder = "KIND"},
                     {.name = "external", .help = "the platform's id", .placeholder = "EXT"},
                     {.name = "pos", .help = "the POS's id", .placeholder = "POS_ID"}}),
         map_set},
        {{"order", "resend"},
         "push an order to its POS again (rejected, dead, auth_failed or delivered)",
         "ID",
         db_options(),
         order_resend},
    };
}

}  // namespace hub::admin
