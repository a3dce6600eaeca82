#include "hub/dashboard/auth.hpp"

#include <algorithm>
#include <boost/asio/ip/address.hpp>
#include <boost/url/parse.hpp>
#include <boost/url/parse_query.hpp>
#include <cctype>

#include "common/crypto/digest.hpp"

namespace hub::dashboard {

std::string normalize_email(std::string_view email) {
    while (!email.empty() && std::isspace(static_cast<unsigned char>(email.front()))) email.remove_prefix(1);
    while (!email.empty() && std::isspace(static_cast<unsigned char>(email.back()))) email.remove_suffix(1);
    std::string out(email);
    std::transform(out.begin(), out.end(), out.begin(),
                   [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
    return out;
}

bool plausible_email(std::string_view email) {
    if (email.empty() || email.size() > 254) return false;
    const auto at = email.find('@');
    if (at == std::string_view::npos || at == 0 || at + 1 == email.size()) return false;
    if (email.find('@', at + 1) != std::string_view::npos) return false;
    return std::none_of(email.begin(), email.end(), [](unsigned char c) { return std::isspace(c) || std::iscntrl(c); });
}

std::optional<std::string> text_problem(std::string_view text) {
    const std::string not_utf8 = "must be UTF-8";
    std::size_t i = 0;
    while (i < text.size()) {
        const auto lead = static_cast<unsigned char>(text[i]);
        std::uint32_t cp = lead;
        std::size_t len = 1;
        if (lead >= 0xC2 && lead <= 0xDF) {
            cp = lead & 0x1Fu;
            len = 2;
        } else if (lead >= 0xE0 && lead <= 0xEF) {
            cp = lead & 0x0Fu;
            len = 3;
        } else if (lead >= 0xF0 && lead <= 0xF4) {
            cp = lead & 0x07u;
            len = 4;
        } else if (lead >= 0x80) {
            return not_utf8;
        }
        if (len > text.size() - i) return not_utf8;
        for (std::size_t k = 1; k < len; ++k) {
            const auto next = static_cast<unsigned char>(text[i + k]);
            if ((next & 0xC0u) != 0x80u) return not_utf8;
            cp = (cp << 6u) | (next & 0x3Fu);
        }
        const bool overlong = (len == 3 && cp < 0x800) || (len == 4 && cp < 0x10000);
        if (overlong || cp > 0x10FFFF || (cp >= 0xD800 && cp <= 0xDFFF)) return not_utf8;
        if (cp < 0x20 || (cp >= 0x7F && cp <= 0x9F)) return "must not contain control characters";
        i += len;
    }
    return std::nullopt;
}

std::optional<std::string> password_problem(std::string_view password) {
    if (password.size() < 10) return "the password must have at least 10 characters";
    if (password.size() > 1024) return "the password must have at most 1024 characters";
    return std::nullopt;
}

std::optional<std::string> session_token(const common::http::Request& req) {
    for (const auto& [name, value] : req.headers) {
        if (name.size() != 6 || !std::equal(name.begin(), name.end(), "cookie", [](char a, char b) {
                return std::tolower(static_cast<unsigned char>(a)) == b;
            }))
            continue;
        std::string_view rest = value;
        while (!rest.empty()) {
            const auto semi = rest.find(';');
            std::string_view pair = rest.substr(0, semi);
            rest = semi == std::string_view::npos ? std::string_view() : rest.substr(semi + 1);
            while (!pair.empty() && pair.front() == ' ') pair.remove_prefix(1);
            const auto eq = pair.find('=');
            if (eq == std::string_view::npos) continue;
            if (pair.substr(0, eq) == kSessionCookie) {
                std::string_view v = pair.substr(eq + 1);
                while (!v.empty() && v.back() == ' ') v.remove_suffix(1);
                if (!v.empty()) return std::string(v);
            }
        }
    }
    return std::nullopt;
}

std::string session_cookie(std::string_view token, std::chrono::seconds max_age, bool tls) {
    std::string c = std::string(kSessionCookie) + "=" + std::string(token) +
                    "; Path=/; HttpOnly; SameSite=Strict; Max-Age=" + std::to_string(max_age.count());
    if (tls) c += "; Secure";
    return c;
}

std::string cleared_cookie(bool tls) { return session_cookie("", std::chrono::seconds(0), tls); }

std::string token_hash(std::string_view token) { return common::crypto::sha256_hex(token); }

std::string csrf_token(std::string_view session_token) {
    return common::crypto::sha256_hex("orderhub-dashboard-csrf\n" + std::string(session_token));
}

bool csrf_matches(std::string_view session_token, std::string_view header) {
    return common::crypto::constant_time_equals(csrf_token(session_token), header);
}

namespace {

/// The authority (host[:port]) of an absolute URL, or nullopt.
std::optional<std::string> authority_of(std::string_view url) {
    auto u = boost::urls::parse_absolute_uri(url);
    if (!u || !u->has_authority()) return std::nullopt;
    return std::string(u->encoded_host_and_port());
}

}  // namespace

bool same_origin(const common::http::Request& req) {
    const auto host = req.header("Host");
    auto origin = req.header("Origin");
    if (!origin) origin = req.header("Referer");
    if (!origin) return true;
    if (!host) return false;
    const auto authority = authority_of(*origin);
    return authority && *authority == *host;
}

std::string mask_phone(std::string_view phone) {
    std::string out(phone);
    for (std::size_t i = 0; i < out.size(); ++i) {
        if (i < 4 || i + 2 >= out.size()) continue;
        if (std::isdigit(static_cast<unsigned char>(out[i]))) out[i] = '*';
    }
    return out;
}

std::optional<std::string> query_param(std::string_view target, std::string_view name) {
    const auto q = target.find('?');
    if (q == std::string_view::npos) return std::nullopt;
    auto params = boost::urls::parse_query(target.substr(q + 1));
    if (!params) return std::nullopt;
    for (const auto& p : *params) {
        if (p.key == name) {
            boost::urls::encoding_opts opts;
            opts.space_as_plus = true;  // a `+` in a query is a space
            return p.value.decode(opts);
        }
    }
    return std::nullopt;
}

std::optional<std::chrono::seconds> LoginThrottle::blocked(const std::string& email, Clock::time_point now) {
    std::lock_guard lock(mutex_);
    auto it = entries_.find(email);
    if (it == entries_.end()) return std::nullopt;
    if (now - it->second.first >= window_) {
        entries_.erase(it);
        return std::nullopt;
    }
    if (it->second.failures < max_failures_) return std::nullopt;
    const auto left = std::chrono::ceil<std::chrono::seconds>(window_ - (now - it->second.first));
    return std::max(left, std::chrono::seconds(1));
}

void LoginThrottle::failed(const std::string& email, Clock::time_point now) {
    std::lock_guard lock(mutex_);
    auto it = entries_.find(email);
    if (it != entries_.end() && now - it->second.first >= window_) {
        entries_.erase(it);
        it = entries_.end();
    }
    if (it == entries_.end()) {
        if (entries_.size() >= max_entries_) {
            auto oldest = std::min_element(entries_.begin(), entries_.end(), [](const auto& a, const auto& b) {
                return a.second.first < b.second.first;
            });
            entries_.erase(oldest);
        }
        it = entries_.emplace(email, Entry{now, 0}).first;
    }
    ++it->second.failures;
}

void LoginThrottle::succeeded(const std::string& email) {
    std::lock_guard lock(mutex_);
    entries_.erase(email);
}

LoginGate::Entry LoginGate::arrive(const std::string& address) {
    const std::string key = client_key(address);
    std::lock_guard lock(mutex_);
    if (running_ < slots_ && lines_.empty()) {
        ++running_;
        return {Admission::run};
    }
    auto line = std::find_if(lines_.begin(), lines_.end(), [&](const Line& l) { return l.key == key; });
    if (line == lines_.end()) {
        if (lines_.size() >= max_addresses_) return {Admission::busy};
        line = lines_.insert(lines_.end(), Line{key, {}});
    }
    if (line->tickets.size() >= per_address_) return {Admission::busy};
    const Ticket t = next_ticket_++;
    line->tickets.push_back(t);
    grant_next();  // a slot may be free while others wait for their poll
    return {Admission::wait, t};
}

bool LoginGate::granted(Ticket ticket) {
    std::lock_guard lock(mutex_);
    return granted_.erase(ticket) > 0;
}

bool LoginGate::abandon(Ticket ticket) {
    std::lock_guard lock(mutex_);
    if (granted_.erase(ticket) > 0) return true;
    for (auto line = lines_.begin(); line != lines_.end(); ++line) {
        if (std::erase(line->tickets, ticket) == 0) continue;
        if (line->tickets.empty()) lines_.erase(line);
        break;
    }
    return false;
}

void LoginGate::release() {
    std::lock_guard lock(mutex_);
    --running_;
    grant_next();
}

void LoginGate::grant_next() {
    while (running_ < slots_ && !lines_.empty()) {
        Line line = std::move(lines_.front());
        lines_.pop_front();
        granted_.insert(line.tickets.front());
        line.tickets.pop_front();
        ++running_;
        if (!line.tickets.empty()) lines_.push_back(std::move(line));  // its next login waits for its next turn
    }
}

std::string LoginGate::client_key(const std::string& address) {
    boost::system::error_code ec;
    const auto a = boost::asio::ip::make_address(address, ec);
    if (ec || !a.is_v6()) return address;
    const auto v6 = a.to_v6();
    if (v6.is_v4_mapped()) return boost::asio::ip::make_address_v4(boost::asio::ip::v4_mapped, v6).to_string();
    auto bytes = v6.to_bytes();
    std::fill(bytes.begin() + 8, bytes.end(), 0);
    return boost::asio::ip::address_v6(bytes).to_string() + "/64";
}

}  // namespace hub::dashboard
