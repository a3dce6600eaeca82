#include <catch2/catch.hpp>
#include <map>

#include "common/app/service.hpp"
#include "common/cli/cli.hpp"
#include "common/config/options.hpp"

using namespace common::config;

namespace {

EnvLookup fake_env(std::map<std::string, std::string> vars) {
    return [vars](const std::string& name) -> std::optional<std::string> {
        auto it = vars.find(name);
        if (it == vars.end()) return std::nullopt;
        return it->second;
    };
}

ParsedArgs parse_ok(std::vector<std::string> args, const std::vector<OptionSpec>& spec, const EnvLookup& env) {
    auto r = parse_args(args, spec, env);
    if (auto* e = std::get_if<std::string>(&r)) FAIL("unexpected error: " << *e);
    return std::get<ParsedArgs>(r);
}

std::string parse_error(std::vector<std::string> args, const std::vector<OptionSpec>& spec, const EnvLookup& env) {
    auto r = parse_args(args, spec, env);
    REQUIRE(std::holds_alternative<std::string>(r));
    return std::get<std::string>(r);
}

const std::vector<OptionSpec> kSpec = {
    {.name = "listen", .env = "X_LISTEN", .help = "h", .placeholder = "ADDR", .default_value = "127.0.0.1:8080"},
    {.name = "branch", .help = "h", .placeholder = "B", .repeatable = true},
    {.name = "signing", .env = "X_SIGNING", .help = "h"},
    {.name = "name", .help = "h", .placeholder = "NAME"},
};

}  // namespace

TEST_CASE("config: defaults, environment and flags, flags winning", "[config]") {
    CHECK(parse_ok({}, kSpec, fake_env({})).get("listen") == "127.0.0.1:8080");
    CHECK(parse_ok({}, kSpec, fake_env({{"X_LISTEN", "0.0.0.0:1"}})).get("listen") == "0.0.0.0:1");
    CHECK(parse_ok({"--listen", "127.0.0.1:9"}, kSpec, fake_env({{"X_LISTEN", "0.0.0.0:1"}})).get("listen") ==
          "127.0.0.1:9");
    CHECK(parse_ok({"--listen=127.0.0.1:7"}, kSpec, fake_env({})).get("listen") == "127.0.0.1:7");
    // An empty environment variable counts as unset.
    CHECK(parse_ok({}, kSpec, fake_env({{"X_LISTEN", ""}})).get("listen") == "127.0.0.1:8080");
}

TEST_CASE("config: switches, repeatable options and positionals", "[config]") {
    auto a = parse_ok({"--signing", "--branch", "A", "--branch", "B", "ORDER-1"}, kSpec, fake_env({}));
    CHECK(a.has("signing"));
    CHECK(a.all("branch") == std::vector<std::string>{"A", "B"});
    CHECK(a.positional == std::vector<std::string>{"ORDER-1"});
    CHECK(parse_ok({}, kSpec, fake_env({{"X_SIGNING", "true"}})).has("signing"));
    CHECK_FALSE(parse_ok({}, kSpec, fake_env({{"X_SIGNING", "0"}})).has("signing"));
    CHECK(parse_ok({"--help"}, kSpec, fake_env({})).help);
}

TEST_CASE("config: bad usage is refused with a message", "[config]") {
    CHECK(parse_error({"--nope"}, kSpec, fake_env({})) == "unknown option '--nope'");
    CHECK(parse_error({"--name"}, kSpec, fake_env({})) == "option '--name' needs a value (NAME)");
    CHECK(parse_error({"--name", "a", "--name", "b"}, kSpec, fake_env({})) == "option '--name' given twice");
    CHECK(parse_error({"--signing=1"}, kSpec, fake_env({})) == "option '--signing' takes no value");
    CHECK(parse_error({"-x"}, kSpec, fake_env({})) == "unknown option '-x'");
    CHECK_THAT(parse_error({}, kSpec, fake_env({{"X_SIGNING", "maybe"}})), Catch::Contains("X_SIGNING"));
}

TEST_CASE("config: host and port", "[config]") {
    std::string err;
    auto hp = parse_host_port("127.0.0.1:8080", err);
    REQUIRE(hp);
    CHECK(hp->host == "127.0.0.1");
    CHECK(hp->port == 8080);
    auto v6 = parse_host_port("[::1]:0", err);
    REQUIRE(v6);
    CHECK(v6->host == "::1");
    CHECK(v6->port == 0);
    CHECK_FALSE(parse_host_port("127.0.0.1", err));
    CHECK_THAT(err, Catch::Contains("HOST:PORT"));
    CHECK_FALSE(parse_host_port("127.0.0.1:70000", err));
    CHECK_THAT(err, Catch::Contains("between 0 and 65535"));
    CHECK_FALSE(parse_host_port(":80", err));
    CHECK_FALSE(parse_host_port("host:8x", err));
    CHECK_FALSE(parse_host_port("[::1]8080", err));
}

TEST_CASE("config: numbers", "[config]") {
    std::string err;
    CHECK(parse_uint("42", 1, 100, "n", err) == 42u);
    CHECK_FALSE(parse_uint("0", 1, 100, "n", err));
    CHECK(err == "n must be between 1 and 100");
    CHECK_FALSE(parse_uint("-1", 1, 100, "n", err));
    CHECK_FALSE(parse_uint("1e3", 1, 10000, "n", err));
    CHECK(err == "n must be a whole number, got '1e3'");
    CHECK_FALSE(parse_uint("", 1, 100, "n", err));
    CHECK_FALSE(parse_uint("99999999999999999999999", 1, 100, "n", err));
}

TEST_CASE("config: service limits from flags and environment", "[config][limits]") {
    auto spec = common::app::service_options("ORDERHUB", "127.0.0.1:8080");
    auto env =
        fake_env({{"ORDERHUB_DATABASE_URL", "postgresql://u@127.0.0.1/db"}, {"ORDERHUB_MAX_BODY_BYTES", "2048"}});
    auto c = common::app::service_config(parse_ok({"--request-timeout", "1500"}, spec, env), "ORDERHUB");
    CHECK(c.listen.port == 8080);
    CHECK(c.database_url == "postgresql://u@127.0.0.1/db");
    CHECK(c.limits.max_body == 2048);
    CHECK(c.limits.max_header == 16 * 1024);
    CHECK(c.limits.request_timeout == std::chrono::milliseconds(1500));
    // The contract's defaults.
    auto d = common::app::service_config(parse_ok({}, spec, fake_env({{"ORDERHUB_DATABASE_URL", "x"}})), "ORDERHUB");
    CHECK(d.limits.max_body == 1048576);
    CHECK(d.limits.request_timeout == std::chrono::milliseconds(30'000));
}

TEST_CASE("config: missing database URL and bad limits are one-line user errors", "[config][limits]") {
    auto spec = common::app::service_options("ORDERHUB", "127.0.0.1:8080");
    CHECK_THROWS_WITH(common::app::service_config(parse_ok({}, spec, fake_env({})), "ORDERHUB"),
                      Catch::StartsWith("ORDERHUB_DATABASE_URL is not set"));
    auto env = fake_env({{"ORDERHUB_DATABASE_URL", "x"}});
    CHECK_THROWS_AS(common::app::service_config(parse_ok({"--max-body-bytes", "12"}, spec, env), "ORDERHUB"),
                    common::cli::UserError);
    CHECK_THROWS_AS(common::app::service_config(parse_ok({"--listen", "nowhere"}, spec, env), "ORDERHUB"),
                    common::cli::UserError);
    CHECK_THROWS_AS(common::app::service_config(parse_ok({"--log-format", "xml"}, spec, env), "ORDERHUB"),
                    common::cli::UserError);
    CHECK_THROWS_WITH(common::app::service_config(parse_ok({"--io-uring", "on"}, spec, env), "ORDERHUB"),
                      "--io-uring must be 'auto' or 'off', got 'on'");
}

TEST_CASE("config: io_uring for bursts by default, off by flag or variable", "[config]") {
    auto spec = common::app::service_options("ORDERHUB", "127.0.0.1:8080");
    const auto burst = [&](std::vector<std::string> args, std::map<std::string, std::string> vars) {
        vars["ORDERHUB_DATABASE_URL"] = "x";
        return common::app::service_config(parse_ok(std::move(args), spec, fake_env(vars)), "ORDERHUB")
            .limits.burst_sends;
    };
    CHECK(burst({}, {}));
    CHECK(burst({"--io-uring", "auto"}, {}));
    CHECK_FALSE(burst({"--io-uring", "off"}, {}));
    CHECK_FALSE(burst({}, {{"ORDERHUB_IO_URING", "off"}}));
    CHECK(burst({"--io-uring", "auto"}, {{"ORDERHUB_IO_URING", "off"}}));  // the flag over the variable
}

TEST_CASE("config: help names every option and its variable but no value of a secret", "[config]") {
    auto spec = common::app::service_options("ORDERHUB", "127.0.0.1:8080");
    auto help = render_help("orderhub serve", "run", spec);
    CHECK_THAT(help, Catch::Contains("--listen ADDR"));
    CHECK_THAT(help, Catch::Contains("ORDERHUB_DATABASE_URL"));
    CHECK_THAT(help, Catch::Contains("(default 1048576)"));
}
