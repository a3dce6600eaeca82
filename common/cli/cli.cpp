#include "common/cli/cli.hpp"

#include <exception>
#include <iostream>

#include "common/text/terminal.hpp"

namespace common::cli {
namespace {

std::string joined(const std::vector<std::string>& words) {
    std::string s;
    for (const auto& w : words) s += (s.empty() ? "" : " ") + w;
    return s;
}

void print_overview(std::ostream& out, std::string_view program, std::string_view about,
                    const std::vector<Command>& commands) {
    out << "Usage: " << program << " COMMAND [OPTIONS]\n\n" << about << "\n\nCommands:\n";
    for (const auto& c : commands) {
        std::string left = "  " + joined(c.words);
        out << left << std::string(left.size() < 26 ? 26 - left.size() : 1, ' ') << c.summary << "\n";
    }
    out << "\nRun '" << program << " COMMAND --help' for the options of a command.\n";
}

}  // namespace

int dispatch(std::string_view program, std::string_view about, const std::vector<Command>& commands, int argc,
             char** argv, const config::EnvLookup& env) {
    std::vector<std::string> args(argv + 1, argv + argc);
    if (args.empty() || args[0] == "--help" || args[0] == "-h" || args[0] == "help") {
        print_overview(args.empty() ? std::cerr : std::cout, program, about, commands);
        return args.empty() ? 2 : 0;
    }
    const Command* best = nullptr;
    for (const auto& c : commands) {
        if (c.words.size() > args.size()) continue;
        if (!std::equal(c.words.begin(), c.words.end(), args.begin())) continue;
        if (best == nullptr || c.words.size() > best->words.size()) best = &c;
    }
    if (best == nullptr) {
        std::cerr << program << ": unknown command '" << args[0] << "'\n";
        print_overview(std::cerr, program, about, commands);
        return 2;
    }
    const std::string name = std::string(program) + " " + joined(best->words);
    auto options = best->options;
    options.push_back({.name = "json", .help = "machine-readable output"});
    std::span<const std::string> rest(args.data() + best->words.size(), args.size() - best->words.size());
    auto parsed = config::parse_args(rest, options, env);
    if (auto* err = std::get_if<std::string>(&parsed)) {
        std::cerr << name << ": " << *err << "\nTry '" << name << " --help'.\n";
        return 2;
    }
    auto& pa = std::get<config::ParsedArgs>(parsed);
    if (pa.help) {
        std::cout << config::render_help(name + (best->usage.empty() ? "" : " " + best->usage), best->summary, options);
        return 0;
    }
    try {
        return best->run(pa);
    } catch (const UsageError& e) {
        // Messages may quote stored or given text: escaped like every other text output.
        std::cerr << name << ": " << text::terminal_safe(e.what()) << "\nTry '" << name << " --help'.\n";
        return 2;
    } catch (const UserError& e) {
        std::cerr << name << ": " << text::terminal_safe(e.what()) << "\n";
        return 1;
    } catch (const std::exception& e) {
        std::cerr << name << ": " << text::terminal_safe(e.what(), text::LineBreaks::keep) << "\n";
        return 1;
    }
}

}  // namespace common::cli
