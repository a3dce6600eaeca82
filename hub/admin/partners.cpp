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

int create(const ParsedArgs& args) {
    PartnerInput in;
    in.name = required(args, "name");
    in.label = args.get("label");
    in.time_zone = args.get("time-zone").value_or("UTC");
    in.signing = args.has("signing");
    // Before anything is written: a signing partner needs ORDERHUB_SECRET_KEY to seal its secret.
    std::optional<common::crypto::SecretBox> box;
    if (in.signing) box = forward::secret_box(args);
    check_partner_input(in, box ? &*box : nullptr);
    auto conn = connect(args);
    pqxx::work tx(*conn);
    IssuedPartner issued = create_partner(tx, box ? &*box : nullptr, in);
    tx.commit();
    boost::json::object out = issued.partner;
    out["webhook_url"] = webhook_url(public_url(args), issued.webhook_key);
    print_object(args, out);
    return 0;
}

int list(const ParsedArgs& args) {
    auto conn = connect(args);
    pqxx::read_transaction tx(*conn);
    boost::json::array rows = list_partners(tx);
    std::reverse(rows.begin(), rows.end());  // the CLI lists the oldest first
    print_rows(args, rows, {"id", "label", "name", "time_zone", "signing", "disabled", "created_at"});
    return 0;
}

int rotate(const ParsedArgs& args) {
    const std::string id = one_positional(args, "partner id");
    auto conn = connect(args);
    pqxx::work tx(*conn);
    IssuedPartner issued = rotate_partner_key(tx, id);
    tx.commit();
    boost::json::object out = issued.partner;
    out["webhook_url"] = webhook_url(public_url(args), issued.webhook_key);
    print_object(args, out);
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
    auto out = rotate_partner_secret(tx, box, id, static_cast<long long>(*grace));
    tx.commit();
    print_object(args, out);
    return 0;
}

int disable(const ParsedArgs& args) {
    const std::string id = one_positional(args, "partner id");
    auto conn = connect(args);
    pqxx::work tx(*conn);
    auto out = disable_partner(tx, id);
    tx.commit();
    print_object(args, out);
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
    auto as_number = [](const std::optional<std::uint64_t>& v) {
        return v ? std::optional<long long>(static_cast<long long>(*v)) : std::nullopt;
    };
    auto out = set_partner_limit(tx, id, as_number(rate), as_number(burst));
    tx.commit();
    print_object(args, out);
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
         with_refusals(create)},
        {{"partner", "rotate-secret"},
         "a new signing secret (shown once); the older ones stay valid for a grace period",
         "ID [--grace-hours N]",
         db_options({{.name = "grace-hours",
                      .help = "hours the older secrets stay valid (0: none)",
                      .placeholder = "N",
                      .default_value = "24"},
                     forward::secret_key_option()}),
         with_refusals(rotate_secret)},
        {{"partner", "list"}, "list partners (never their keys)", "", db_options(), with_refusals(list)},
        {{"partner", "rotate"},
         "issue a new webhook URL; the old one stops working",
         "ID",
         db_options(url_options()),
         with_refusals(rotate)},
        {{"partner", "limit"},
         "a partner's own rate limit (token bucket); --default goes back to the hub's",
         "ID --per-second N [--burst N] | ID --default",
         db_options({{.name = "per-second", .help = "requests per second", .placeholder = "N"},
                     {.name = "burst",
                      .help = "requests at once above the rate (default: twice the rate)",
                      .placeholder = "N"},
                     {.name = "default", .help = "use the hub's default limit again"}}),
         with_refusals(limit)},
        {{"partner", "disable"}, "disable a partner: its URL answers 404", "ID", db_options(), with_refusals(disable)},
    };
}

}  // namespace hub::admin
