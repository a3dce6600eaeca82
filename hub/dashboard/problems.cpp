#include "hub/dashboard/problems.hpp"

#include <algorithm>
#include <boost/json.hpp>
#include <charconv>
#include <optional>
#include <pqxx/pqxx>
#include <regex>

namespace hub::dashboard {
namespace {

namespace json = boost::json;

/// Where an `errors` key of the POS points: products.N[.modifiers|options.M].FIELD, or another key.
struct Key {
    std::string text;
    int line = -1;
    int option = -1;
    std::string field;  ///< "id", "quantity", … ("" for a key not about a line)
};

int to_int(const std::csub_match& m) {
    int v = -1;
    if (m.matched && m.length() < 7) std::from_chars(m.first, m.second, v);
    return v;
}

Key parse_key(std::string_view key) {
    static const std::regex kLine(R"(products\.(\d+)\.(?:(?:modifiers|options)\.(\d+)\.)?([A-Za-z_]+))");
    Key k{std::string(key), -1, -1, ""};
    std::cmatch m;
    if (std::regex_match(key.begin(), key.end(), m, kLine)) {
        k.line = to_int(m[1]);
        k.option = m[2].matched ? to_int(m[2]) : -1;
        k.field = m[3].str();
    }
    return k;
}

/// The `errors` of the answer as (key, messages joined), in the answer's order; nullopt when it is not JSON.
std::optional<std::vector<std::pair<std::string, std::string>>> errors_of(std::string_view body) {
    boost::system::error_code ec;
    const auto v = json::parse(body, ec);
    if (ec) return std::nullopt;
    std::vector<std::pair<std::string, std::string>> out;
    const auto* o = v.if_object();
    const auto* errors = o ? o->if_contains("errors") : nullptr;
    if (errors == nullptr || !errors->is_object()) return out;
    for (const auto& [key, messages] : errors->get_object()) {
        std::string joined;
        const auto add = [&joined](const json::value& m) {
            if (!m.is_string()) return;
            if (!joined.empty()) joined += ' ';
            joined += m.get_string();
        };
        if (messages.is_array())
            for (const auto& m : messages.get_array()) add(m);
        else
            add(messages);
        out.emplace_back(std::string(key), std::move(joined));
    }
    return out;
}

/// The keys named in an answer that is not JSON (cut short): `"products.0.id":`, `"branch_id":`, without messages.
std::vector<std::pair<std::string, std::string>> keys_in_text(std::string_view body) {
    static const std::regex kKey(R"re("(products\.\d+\.(?:(?:modifiers|options)\.\d+\.)?[A-Za-z_]+|branch_id)"\s*:)re");
    std::vector<std::pair<std::string, std::string>> out;
    for (std::cregex_iterator it(body.begin(), body.end(), kKey), end; it != end; ++it) {
        std::string key = (*it)[1].str();
        if (std::none_of(out.begin(), out.end(), [&key](const auto& e) { return e.first == key; }))
            out.emplace_back(std::move(key), "");
    }
    return out;
}

std::string quoted(std::string_view id) { return "“" + std::string(id) + "”"; }

/// A problem about line `k.line` (and option `k.option`) of the order.
PosProblem line_problem(const Key& k, const std::string& message, const std::vector<OrderLine>& lines,
                        std::string_view partner) {
    PosProblem p;
    p.line = k.line;
    p.option = k.option;
    p.pos_message = message;
    const OrderLine* line = k.line >= 0 && static_cast<std::size_t>(k.line) < lines.size() ? &lines[k.line] : nullptr;
    const LineOption* option = line && k.option >= 0 && static_cast<std::size_t>(k.option) < line->options.size()
                                   ? &line->options[k.option]
                                   : nullptr;
    const std::string where = "line " + std::to_string(k.line + 1);
    const std::string and_resend = ", then send the order again.";
    if (k.option >= 0) {
        p.kind = k.field == "id" ? "option" : "other";
        p.external_id = option ? option->id : "";
        p.pos_id = option ? option->pos_id : "";
        const std::string item = line ? " (item " + quoted(line->id) + ")" : "";
        const std::string sent = option && option->pos_id != option->id ? ", mapped to " + quoted(option->pos_id) : "";
        if (p.kind == "option") {
            p.text = "The POS does not know the option " + quoted(p.external_id) + sent + " on " + where + item + ".";
            p.fix = "Map it with `orderhub map set --partner " + std::string(partner) + " --kind option --external " +
                    p.external_id + " --pos POS_MODIFIER_ID` or add " + quoted(p.pos_id) + " to the POS menu" +
                    and_resend;
        } else {
            p.text = "The POS refused the option " + quoted(p.external_id) + " on " + where + item + ": " + message;
        }
        return p;
    }
    p.external_id = line ? line->id : "";
    p.pos_id = line ? line->pos_id : "";
    const std::string sent = line && line->pos_id != line->id ? ", mapped to " + quoted(line->pos_id) : "";
    if (k.field != "id") {
        p.kind = "other";
        p.text = "The POS refused the item " + quoted(p.external_id) + " on " + where + ": " + message;
    } else if (message.find("not available") != std::string::npos) {
        p.kind = "item_unavailable";
        p.text = "The POS has the item " + quoted(p.external_id) + sent + " (" + where + ") but not in this branch.";
        p.fix = "Make " + quoted(p.pos_id) + " available for the branch in the POS, or map " + quoted(p.external_id) +
                " to another product with `orderhub map set --partner " + std::string(partner) +
                " --kind item --external " + p.external_id + " --pos POS_PRODUCT_ID`" + and_resend;
    } else {
        p.kind = "item";
        p.text = "The POS does not know the item " + quoted(p.external_id) + sent + " (" + where + ").";
        p.fix = "Map it with `orderhub map set --partner " + std::string(partner) + " --kind item --external " +
                p.external_id + " --pos POS_PRODUCT_ID` or add " + quoted(p.pos_id) + " to the POS menu" + and_resend;
    }
    return p;
}

}  // namespace

std::vector<PosProblem> explain_rejection(int http_status, std::string_view body, const std::vector<OrderLine>& lines,
                                          std::string_view partner_id, std::string_view branch_id) {
    std::vector<PosProblem> out;
    if (http_status < 400 || http_status > 499) return out;
    const auto parsed = errors_of(body);
    for (const auto& [key_text, message] : parsed ? *parsed : keys_in_text(body)) {
        const Key k = parse_key(key_text);
        if (k.line >= 0) {
            out.push_back(line_problem(k, message, lines, partner_id));
        } else if (k.text == "branch_id") {
            PosProblem p;
            p.kind = "branch";
            p.pos_message = message;
            p.text = "The POS does not know the branch the hub sent for " + quoted(branch_id) + ".";
            p.fix = "Set the branch's POS id with `orderhub branch update --id " + std::string(branch_id) +
                    " --pos-branch-id POS_BRANCH_ID`, then send the order again.";
            out.push_back(std::move(p));
        } else {
            PosProblem p;
            p.kind = "other";
            p.pos_message = message;
            p.text = "The POS refused " + quoted(k.text) + (message.empty() ? "." : ": " + message);
            out.push_back(std::move(p));
        }
    }
    // The POS lists keys as text ("products.10" before "products.2"): people read them in line order.
    std::stable_sort(out.begin(), out.end(), [](const PosProblem& a, const PosProblem& b) {
        return std::pair(a.line, a.option) < std::pair(b.line, b.option);
    });
    return out;
}

json::array problems_json(const std::vector<PosProblem>& problems) {
    json::array out;
    const auto one_based = [](int n) { return n < 0 ? json::value(nullptr) : json::value(n + 1); };
    for (const auto& p : problems)
        out.push_back({{"kind", p.kind},
                       {"line", one_based(p.line)},
                       {"option", one_based(p.option)},
                       {"external_id", p.external_id},
                       {"pos_id", p.pos_id},
                       {"pos_message", p.pos_message},
                       {"text", p.text},
                       {"fix", p.fix}});
    return out;
}

json::array pos_problems(pqxx::transaction_base& tx, const std::string& order_id, const json::object& detail) {
    const auto* forwarding = detail.if_contains("forwarding");
    const auto* attempts = detail.if_contains("attempts");
    if (!forwarding || !forwarding->is_string() || forwarding->get_string() != "rejected" || !attempts ||
        !attempts->is_array())
        return {};
    const json::object* last = nullptr;
    for (const auto& a : attempts->get_array())
        if (a.is_object() && a.get_object().at("http_status").is_int64()) last = &a.get_object();
    if (!last || !last->at("response_excerpt").is_string()) return {};
    // The lines as the forwarder sends them (hub/db/queries.hpp kClaimJobs): line order, mapped ids.
    std::vector<OrderLine> lines;
    std::string partner;
    std::string branch;
    for (const auto& r :
         tx.exec_params("SELECT o.partner_id, o.branch_id, i.line_no, i.item_id, coalesce(mi.pos_id, i.item_id) "
                        "FROM hub.orders o JOIN hub.order_items i ON i.order_id = o.id LEFT JOIN hub.item_mappings mi "
                        "ON mi.partner_id = o.partner_id AND mi.kind = 'item' AND mi.external_id = i.item_id "
                        "WHERE o.id = $1 ORDER BY i.line_no",
                        order_id)) {
        partner = r[0].c_str();
        branch = r[1].c_str();
        OrderLine line{r[3].c_str(), r[4].c_str(), {}};
        for (const auto& op :
             tx.exec_params("SELECT x.option_id, coalesce(mo.pos_id, x.option_id) FROM hub.orders o "
                            "JOIN hub.order_item_options x ON x.order_id = o.id LEFT JOIN hub.item_mappings mo "
                            "ON mo.partner_id = o.partner_id AND mo.kind = 'option' AND mo.external_id = x.option_id "
                            "WHERE o.id = $1 AND x.line_no = $2 ORDER BY x.option_no",
                            order_id, r[2].as<int>()))
            line.options.push_back({op[0].c_str(), op[1].c_str()});
        lines.push_back(std::move(line));
    }
    const auto status = static_cast<int>(last->at("http_status").get_int64());
    return problems_json(explain_rejection(status, last->at("response_excerpt").get_string(), lines, partner, branch));
}

}  // namespace hub::dashboard
