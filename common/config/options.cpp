#include "common/config/options.hpp"

#include <charconv>
#include <cstdlib>
#include <sstream>

namespace common::config {

EnvLookup process_env() {
    return [](const std::string& name) -> std::optional<std::string> {
        const char* v = std::getenv(name.c_str());
        if (v == nullptr) return std::nullopt;
        return std::string(v);
    };
}

std::vector<OptionSpec> option_specs(std::span<const OptionRow> rows, std::string_view env_prefix) {
    std::vector<OptionSpec> specs;
    specs.reserve(rows.size());
    for (const auto& row : rows) {
        OptionSpec& spec = specs.emplace_back();
        spec.name = row.name;
        if (!row.env.empty()) spec.env = std::string(env_prefix).append(1, '_').append(row.env);
        spec.help = row.help;
        spec.placeholder = row.placeholder;
        if (row.default_value) spec.default_value = std::string(*row.default_value);
    }
    return specs;
}

std::optional<std::string> ParsedArgs::get(const std::string& name) const {
    auto it = values.find(name);
    if (it == values.end() || it->second.empty()) return std::nullopt;
    return it->second.back();
}

std::vector<std::string> ParsedArgs::all(const std::string& name) const {
    auto it = values.find(name);
    return it == values.end() ? std::vector<std::string>{} : it->second;
}

bool ParsedArgs::has(const std::string& name) const { return values.contains(name); }

std::variant<ParsedArgs, std::string> parse_args(std::span<const std::string> args, const std::vector<OptionSpec>& spec,
                                                 const EnvLookup& env) {
    ParsedArgs out;
    auto find = [&](std::string_view name) -> const OptionSpec* {
        for (const auto& o : spec)
            if (o.name == name) return &o;
        return nullptr;
    };
    for (std::size_t i = 0; i < args.size(); ++i) {
        const std::string& a = args[i];
        if (a == "--help" || a == "-h") {
            out.help = true;
            continue;
        }
        if (a.size() < 3 || a.rfind("--", 0) != 0) {
            if (!a.empty() && a[0] == '-') return "unknown option '" + a + "'";
            out.positional.push_back(a);
            continue;
        }
        std::string name = a.substr(2);
        std::optional<std::string> inline_value;
        if (auto eq = name.find('='); eq != std::string::npos) {
            inline_value = name.substr(eq + 1);
            name.resize(eq);
        }
        const OptionSpec* o = find(name);
        if (o == nullptr) return "unknown option '--" + name + "'";
        if (o->is_switch()) {
            if (inline_value) return "option '--" + name + "' takes no value";
            out.values[name] = {};
            continue;
        }
        std::string value;
        if (inline_value) {
            value = *inline_value;
        } else {
            if (i + 1 >= args.size()) return "option '--" + name + "' needs a value (" + o->placeholder + ")";
            value = args[++i];
        }
        auto& slot = out.values[name];
        if (!o->repeatable && !slot.empty()) return "option '--" + name + "' given twice";
        slot.push_back(std::move(value));
    }
    for (const auto& o : spec) {
        if (out.values.contains(o.name)) continue;
        if (!o.env.empty()) {
            if (auto v = env(o.env); v && !v->empty()) {
                if (o.is_switch()) {
                    if (*v == "1" || *v == "true" || *v == "yes")
                        out.values[o.name] = {};
                    else if (*v != "0" && *v != "false" && *v != "no")
                        return o.env + " must be 1/true/yes or 0/false/no";
                } else {
                    out.values[o.name] = {*v};
                }
                continue;
            }
        }
        if (o.default_value) out.values[o.name] = {*o.default_value};
    }
    return out;
}

std::string render_help(std::string_view usage, std::string_view summary, const std::vector<OptionSpec>& spec) {
    std::ostringstream s;
    s << "Usage: " << usage << "\n\n" << summary << "\n";
    if (!spec.empty()) s << "\nOptions:\n";
    for (const auto& o : spec) {
        std::string left = "  --" + o.name + (o.is_switch() ? "" : " " + o.placeholder);
        s << left;
        if (left.size() < 30)
            s << std::string(30 - left.size(), ' ');
        else
            s << "\n" << std::string(30, ' ');
        s << o.help;
        if (!o.env.empty()) s << " [env " << o.env << "]";
        if (o.default_value) s << " (default " << *o.default_value << ")";
        if (o.repeatable) s << " (repeatable)";
        s << "\n";
    }
    s << "  --help                      this text\n";
    return s.str();
}

std::optional<std::uint64_t> parse_uint(std::string_view text, std::uint64_t min, std::uint64_t max,
                                        std::string_view what, std::string& error) {
    std::uint64_t v = 0;
    auto [ptr, ec] = std::from_chars(text.data(), text.data() + text.size(), v);
    if (text.empty() || ec != std::errc() || ptr != text.data() + text.size()) {
        error = std::string(what) + " must be a whole number, got '" + std::string(text) + "'";
        return std::nullopt;
    }
    if (v < min || v > max) {
        error = std::string(what) + " must be between " + std::to_string(min) + " and " + std::to_string(max);
        return std::nullopt;
    }
    return v;
}

std::optional<std::chrono::seconds> parse_duration(std::string_view text, std::chrono::seconds min,
                                                   std::chrono::seconds max, std::string_view what,
                                                   std::string& error) {
    std::uint64_t unit = 1;
    std::string_view digits = text;
    if (!text.empty()) {
        switch (text.back()) {
            case 's': unit = 1; break;
            case 'm': unit = 60; break;
            case 'h': unit = 3600; break;
            default: unit = 0; break;
        }
        if (unit != 0)
            digits.remove_suffix(1);
        else
            unit = 1;
    }
    std::uint64_t v = 0;
    auto [ptr, ec] = std::from_chars(digits.data(), digits.data() + digits.size(), v);
    if (digits.empty() || ec != std::errc() || ptr != digits.data() + digits.size() ||
        v > static_cast<std::uint64_t>(max.count())) {
        error = std::string(what) + " must be a duration such as 90s, 30m or 2h, got '" + std::string(text) + "'";
        return std::nullopt;
    }
    const auto seconds = static_cast<std::int64_t>(v * unit);
    if (seconds < min.count() || seconds > max.count()) {
        error = std::string(what) + " must be between " + std::to_string(min.count()) + " and " +
                std::to_string(max.count()) + " seconds";
        return std::nullopt;
    }
    return std::chrono::seconds(seconds);
}

std::optional<HostPort> parse_host_port(std::string_view text, std::string& error) {
    HostPort hp;
    std::string_view port;
    if (!text.empty() && text.front() == '[') {
        auto close = text.find(']');
        if (close == std::string_view::npos || close + 1 >= text.size() || text[close + 1] != ':') {
            error = "listen address '" + std::string(text) + "' must look like [::1]:8080";
            return std::nullopt;
        }
        hp.host = std::string(text.substr(1, close - 1));
        port = text.substr(close + 2);
    } else {
        auto colon = text.rfind(':');
        if (colon == std::string_view::npos || colon == 0 || text.find(':') != colon) {
            error = "address '" + std::string(text) + "' must look like HOST:PORT, e.g. 127.0.0.1:8080";
            return std::nullopt;
        }
        hp.host = std::string(text.substr(0, colon));
        port = text.substr(colon + 1);
    }
    if (hp.host.empty()) {
        error = "address '" + std::string(text) + "' has no host";
        return std::nullopt;
    }
    auto p = parse_uint(port, 0, 65535, "port", error);
    if (!p) return std::nullopt;
    hp.port = static_cast<std::uint16_t>(*p);
    return hp;
}

}  // namespace common::config
