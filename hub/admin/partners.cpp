#include <algorithm>
#include <boost/json.hpp>
#include <pqxx/pqxx>

#include "hub/admin/admin.hpp"
#include "hub/admin/partner_rules.hpp"
#include "hub/forward/secrets.hpp"

namespace hub::admin {
namespace {

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

/// An issued partner as printed: its row and its webhook URL (the key in it is shown this once).
boost::json::object issued_json(const ParsedArgs& args, const IssuedPartner& issued) {
    boost::json::object out = issued.partner;
    out["webhook_url"] = webhook_url(public_url(args), issued.webhook_key);
    return out;
}

int partner_create(const ParsedArgs& args) {
    PartnerInput in;
    in.name = required(args, "name");
    in.label = args.get("label");
    in.time_zone = args.get("time-zone").value_or("UTC");
    in.signing = args.has("signing");
    // Before anything is written: a signing partner needs ORDERHUB_SECRET_KEY to seal its secret.
    std::optional<common::crypto::SecretBox> box;
    if (in.signing) box = forward::secret_box(args);
    const common::crypto::SecretBox* sealer = box ? &*box : nullptr;
    check_partner_input(in, sealer);
    return print_change(args,
                        [&](pqxx::transaction_base& tx) { return issued_json(args, create_partner(tx, sealer, in)); });
}

int partner_list(const ParsedArgs& args) {
    return print_listing(args, {"id", "label", "name", "time_zone", "signing", "disabled", "created_at"},
                         [](pqxx::transaction_base& tx) {
                             boost::json::array rows = list_partners(tx);
                             std::reverse(rows.begin(), rows.end());  // the CLI lists the oldest first
                             return rows;
                         });
}

int rotate(const ParsedArgs& args) {
    const std::string id = one_positional(args, "partner id");
    return print_change(args,
                        [&](pqxx::transaction_base& tx) { return issued_json(args, rotate_partner_key(tx, id)); });
}

int rotate_secret(const ParsedArgs& args) {
    const std::string id = one_positional(args, "partner id");
    const auto grace = static_cast<long long>(number_option(args, "grace-hours", 0, 24 * 366, "24"));
    auto box = forward::secret_box(args);
    return print_change(args, [&](pqxx::transaction_base& tx) { return rotate_partner_secret(tx, box, id, grace); });
}

int limit(const ParsedArgs& args) {
    const std::string id = one_positional(args, "partner id");
    std::optional<long long> rate, burst;  // none: back to the hub's default
    if (!args.has("default")) {
        rate = static_cast<long long>(number_option(args, "per-second", 1, 1'000'000));
        burst = static_cast<long long>(number_option(args, "burst", 1, 1'000'000, std::to_string(*rate * 2)));
    }
    return print_change(args, [&](pqxx::transaction_base& tx) { return set_partner_limit(tx, id, rate, burst); });
}

}  // namespace

std::vector<common::cli::Command> partner_commands() {
    auto create_opts = url_options();
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
        db_command({"partner", "create"}, "issue a partner and its webhook URL (shown once)",
                   "--name NAME [--label LABEL] [--signing]", partner_create, std::move(create_opts)),
        db_command({"partner", "rotate-secret"},
                   "a new signing secret (shown once); the older ones stay valid for a grace period",
                   "ID [--grace-hours N]", rotate_secret,
                   {{.name = "grace-hours",
                     .help = "hours the older secrets stay valid (0: none)",
                     .placeholder = "N",
                     .default_value = "24"},
                    forward::secret_key_option()}),
        db_command({"partner", "list"}, "list partners (never their keys)", "", partner_list),
        db_command({"partner", "rotate"}, "issue a new webhook URL; the old one stops working", "ID", rotate,
                   url_options()),
        db_command(
            {"partner", "limit"}, "a partner's own rate limit (token bucket); --default goes back to the hub's",
            "ID --per-second N [--burst N] | ID --default", limit,
            {{.name = "per-second", .help = "requests per second", .placeholder = "N"},
             {.name = "burst", .help = "requests at once above the rate (default: twice the rate)", .placeholder = "N"},
             {.name = "default", .help = "use the hub's default limit again"}}),
        db_command({"partner", "disable"}, "disable a partner: its URL answers 404", "ID",
                   change_by_id("partner id", disable_partner)),
    };
}

}  // namespace hub::admin
