#include "hub/verify/command.hpp"

#include <boost/json/serialize.hpp>
#include <fstream>
#include <iostream>

#include "common/crypto/encoding.hpp"
#include "common/crypto/random.hpp"
#include "hub/admin/admin.hpp"
#include "hub/admin/pos_rules.hpp"
#include "hub/verify/runner.hpp"

namespace hub::verify {
namespace {

using common::cli::UsageError;
using common::cli::UserError;
using common::config::ParsedArgs;
using hub::admin::required;
using hub::admin::secret_value;

Settings settings_of(const ParsedArgs& args) {
    Settings s;
    s.base_url = required(args, "base-url");
    // The same rule as `pos set`: what the forwarder can be pointed at.
    if (!admin::usable_base_url(s.base_url))
        throw UsageError("--base-url must be an absolute http:// or https:// URL without user, query or fragment");
    s.email = required(args, "email");
    if (args.get("password").value_or("") == "-" && args.get("other-brand-token").value_or("") == "-")
        throw UsageError("only one of --password and --other-brand-token can be read from standard input");
    s.password = secret_value(args, "password").value_or("");
    if (s.password.empty()) throw UsageError("--password is required");
    s.branch = required(args, "branch");
    s.brand = required(args, "brand");
    s.product = required(args, "product");
    s.modifier = required(args, "modifier");
    s.unavailable_product = args.get("unavailable-product");
    if (s.unavailable_product && s.unavailable_product->empty()) throw UsageError("--unavailable-product is empty");
    s.other_brand_token = secret_value(args, "other-brand-token");
    if (s.other_brand_token && s.other_brand_token->empty()) throw UsageError("--other-brand-token is empty");
    s.run_id = common::crypto::hex_encode(common::crypto::random_bytes(8));
    return s;
}

int pos_verify(const ParsedArgs& args) {
    const Settings settings = settings_of(args);
    RunOptions options;
    std::string error;
    auto timeout = common::config::parse_uint(args.get("forward-timeout-ms").value_or(""), 100, 120'000,
                                              "--forward-timeout-ms", error);
    if (!timeout) throw UsageError(error);
    options.forward_timeout = std::chrono::milliseconds(*timeout);
    options.ca_file = args.get("ca-file").value_or("");
    if (!options.ca_file.empty() && !std::ifstream(options.ca_file).good())
        throw UserError("cannot read the CA file '" + options.ca_file + "'");
    const Report report = run(settings, options);
    if (args.has("json"))
        std::cout << boost::json::serialize(render_json(report)) << "\n";
    else
        std::cout << render_text(report);
    return exit_code(report);
}

}  // namespace

std::vector<common::cli::Command> verify_commands() {
    return {
        {{"pos", "verify"},
         "check a POS against the interface (login, tokens, orders, validation) with test orders; exit 0 only when "
         "every checked rule passed",
         "--base-url URL --email E --password P --branch POS_BRANCH --brand BRAND --product ID --modifier ID "
         "[--unavailable-product ID] [--other-brand-token T] [--ca-file PEM] [--forward-timeout-ms MS]",
         {{.name = "base-url", .help = "the POS base URL (http:// or https://)", .placeholder = "URL"},
          {.name = "email", .help = "login e-mail of a POS user of the brand", .placeholder = "E"},
          {.name = "password", .help = "its password; '-' reads it from standard input", .placeholder = "P"},
          {.name = "branch", .help = "the POS branch id the test orders go to", .placeholder = "POS_BRANCH"},
          {.name = "brand", .help = "brand_id of the test orders (the user's brand)", .placeholder = "BRAND"},
          {.name = "product", .help = "a POS product id sold in that branch", .placeholder = "ID"},
          {.name = "modifier", .help = "a POS modifier id of the brand", .placeholder = "ID"},
          {.name = "unavailable-product",
           .help = "a product of the brand NOT sold in that branch (else that rule is not checked)",
           .placeholder = "ID"},
          {.name = "other-brand-token",
           .help = "a valid token of another brand, expected 403; '-' reads it from standard input",
           .placeholder = "T"},
          admin::ca_file_option(),
          {.name = "forward-timeout-ms",
           .env = "ORDERHUB_FORWARD_TIMEOUT_MS",
           .help = "the hub's forward time-out: slower answers are flagged",
           .placeholder = "MS",
           .default_value = "15000"}},
         pos_verify},
    };
}

}  // namespace hub::verify
