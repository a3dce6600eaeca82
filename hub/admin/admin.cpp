#include "hub/admin/admin.hpp"

#include <boost/json/serialize.hpp>
#include <iostream>
#include <pqxx/pqxx>

#include "common/app/service.hpp"
#include "common/text/terminal.hpp"
#include "hub/admin/refusal.hpp"

namespace hub::admin {

std::unique_ptr<pqxx::connection> connect(const common::config::ParsedArgs& args) {
    const std::string url = common::app::require_database_url(args, "ORDERHUB");
    try {
        return std::make_unique<pqxx::connection>(url);
    } catch (const std::exception& e) {
        throw common::cli::UserError(std::string("cannot connect to the database: ") + e.what());
    }
}

std::vector<common::config::OptionSpec> db_options(std::vector<common::config::OptionSpec> more) {
    more.insert(more.begin(), common::app::database_option("ORDERHUB"));
    return more;
}

std::string required(const common::config::ParsedArgs& args, const std::string& name) {
    auto v = args.get(name);
    if (!v || v->empty()) throw common::cli::UsageError("--" + name + " is required");
    return *v;
}

boost::json::value nullable(const pqxx::field& f) {
    return f.is_null() ? boost::json::value(nullptr) : boost::json::value(f.c_str());
}

std::optional<std::string> secret_value(const common::config::ParsedArgs& args, const std::string& name) {
    auto v = args.get(name);
    if (!v) return std::nullopt;
    if (*v != "-") return v;
    std::string line;
    if (!std::getline(std::cin, line))
        throw common::cli::UserError("--" + name + " - expects the value on standard input");
    return line;
}

std::function<int(const common::config::ParsedArgs&)> with_refusals(
    std::function<int(const common::config::ParsedArgs&)> run) {
    return [run = std::move(run)](const common::config::ParsedArgs& args) {
        try {
            return run(args);
        } catch (const Refusal& r) {
            if (r.kind == Refusal::Kind::invalid) throw common::cli::UsageError(r.what());
            throw common::cli::UserError(r.what());
        }
    };
}

std::string one_positional(const common::config::ParsedArgs& args, const std::string& what) {
    if (args.positional.size() != 1) throw common::cli::UsageError("give exactly one " + what);
    return args.positional[0];
}

common::cli::Command db_command(std::vector<std::string> words, std::string summary, std::string usage,
                                std::function<int(const common::config::ParsedArgs&)> run,
                                std::vector<common::config::OptionSpec> options) {
    return {std::move(words), std::move(summary), std::move(usage), db_options(std::move(options)),
            with_refusals(std::move(run))};
}

common::config::OptionSpec ca_file_option() {
    return {.name = "ca-file", .help = "PEM CA bundle to verify the POS (default: system store)", .placeholder = "PEM"};
}

std::uint64_t number_option(const common::config::ParsedArgs& args, const std::string& name, std::uint64_t min,
                            std::uint64_t max, const std::optional<std::string>& fallback) {
    const std::string text = fallback ? args.get(name).value_or(*fallback) : required(args, name);
    std::string error;
    auto v = common::config::parse_uint(text, min, max, "--" + name, error);
    if (!v) throw common::cli::UsageError(error);
    return *v;
}

common::config::OptionSpec limit_option() {
    return {.name = "limit", .help = "at most this many", .placeholder = "N", .default_value = "100"};
}

std::int64_t list_limit(const common::config::ParsedArgs& args) {
    return static_cast<std::int64_t>(number_option(args, "limit", 1, static_cast<std::uint64_t>(kMaxListLimit), "100"));
}

int print_change(const common::config::ParsedArgs& args,
                 const std::function<boost::json::object(pqxx::transaction_base&)>& change) {
    auto conn = connect(args);
    pqxx::work tx(*conn);
    const boost::json::object out = change(tx);
    tx.commit();
    print_object(args, out);
    return 0;
}

std::function<int(const common::config::ParsedArgs&)> change_by_id(
    std::string what, std::function<boost::json::object(pqxx::transaction_base&, const std::string&)> change) {
    return [what = std::move(what), change = std::move(change)](const common::config::ParsedArgs& args) {
        const std::string id = one_positional(args, what);
        return print_change(args, [&](pqxx::transaction_base& tx) { return change(tx, id); });
    };
}

int print_listing(const common::config::ParsedArgs& args, const std::vector<std::string>& columns,
                  const std::function<boost::json::array(pqxx::transaction_base&)>& read) {
    auto conn = connect(args);
    pqxx::read_transaction tx(*conn);
    print_rows(args, read(tx), columns);
    return 0;
}

int print_reading(const common::config::ParsedArgs& args,
                  const std::function<boost::json::object(pqxx::transaction_base&)>& read) {
    auto conn = connect(args);
    pqxx::read_transaction tx(*conn);
    print_object(args, read(tx));
    return 0;
}

namespace {

/// One value as text for a terminal: whatever a webhook put in it is escaped (common/text/terminal.hpp).
std::string text_of(const boost::json::value& v) {
    if (v.is_string()) return common::text::terminal_safe(v.get_string());
    if (v.is_null()) return "-";
    return common::text::terminal_safe_json(boost::json::serialize(v));
}

}  // namespace

void print_object(const common::config::ParsedArgs& args, const boost::json::object& o) {
    if (args.has("json")) {
        std::cout << boost::json::serialize(o) << "\n";
        return;
    }
    for (const auto& [k, v] : o) std::cout << common::text::terminal_safe(k) << ": " << text_of(v) << "\n";
}

void print_rows(const common::config::ParsedArgs& args, const boost::json::array& rows,
                const std::vector<std::string>& columns) {
    if (args.has("json")) {
        std::cout << boost::json::serialize(rows) << "\n";
        return;
    }
    std::vector<std::size_t> width;
    width.reserve(columns.size());
    for (const auto& c : columns) width.push_back(c.size());
    for (const auto& r : rows)
        for (std::size_t i = 0; i < columns.size(); ++i)
            if (const auto* v = r.as_object().if_contains(columns[i]))
                width[i] = std::max(width[i], text_of(*v).size());
    auto line = [&](auto cell) {
        std::string s;
        for (std::size_t i = 0; i < columns.size(); ++i) {
            std::string c = cell(i);
            s += c + (i + 1 < columns.size() ? std::string(width[i] - c.size() + 2, ' ') : "");
        }
        std::cout << s << "\n";
    };
    line([&](std::size_t i) { return columns[i]; });
    for (const auto& r : rows)
        line([&](std::size_t i) {
            const auto* v = r.as_object().if_contains(columns[i]);
            return v ? text_of(*v) : std::string("-");
        });
}

std::string iso_utc(const std::string& column) {
    return "to_char(" + column + R"( AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.US"Z"'))";
}

}  // namespace hub::admin
