#include "common/log/log.hpp"

#include <algorithm>
#include <array>
#include <atomic>
#include <boost/json/monotonic_resource.hpp>
#include <boost/json/serialize.hpp>
#include <chrono>
#include <cstdio>
#include <ctime>
#include <mutex>
#include <string>

namespace common::log {
namespace {

std::atomic<Format> g_format{Format::json};

constexpr std::size_t kLineArenaBytes = 2048;
std::mutex g_mutex;

const char* level_name(Level l) {
    switch (l) {
        case Level::debug: return "debug";
        case Level::info: return "info";
        case Level::warn: return "warn";
        case Level::error: return "error";
    }
    return "info";
}

// The time of a line: 2026-11-26T14:02:11.123Z. The text up to the second is made once per second and thread
// (a busy hub writes a line per request).
std::string now_iso() {
    struct Second {
        std::time_t secs = -1;
        std::array<char, 64> text{};
        std::size_t size = 0;
    };
    thread_local Second cached;
    const auto now = std::chrono::system_clock::now();
    const std::time_t secs = std::chrono::system_clock::to_time_t(now);
    const auto ms =
        static_cast<int>(std::chrono::duration_cast<std::chrono::milliseconds>(now.time_since_epoch()).count() % 1000);
    if (secs != cached.secs) {
        std::tm tm{};
        gmtime_r(&secs, &tm);
        const int n = std::snprintf(cached.text.data(), cached.text.size(), "%04d-%02d-%02dT%02d:%02d:%02d.",
                                    tm.tm_year + 1900, tm.tm_mon + 1, tm.tm_mday, tm.tm_hour, tm.tm_min, tm.tm_sec);
        cached.size = n > 0 ? static_cast<std::size_t>(n) : 0;
        cached.secs = secs;
    }
    std::string out(cached.text.data(), cached.size);
    out += static_cast<char>('0' + ms / 100);
    out += static_cast<char>('0' + ms / 10 % 10);
    out += static_cast<char>('0' + ms % 10);
    out += 'Z';
    return out;
}

}  // namespace

void set_format(Format format) { g_format.store(format); }

bool parse_format(std::string_view text, Format& out) {
    if (text == "json")
        out = Format::json;
    else if (text == "text")
        out = Format::text;
    else
        return false;
    return true;
}

std::string format_line(Format format, std::string_view time, Level level, std::string_view message, Fields fields,
                        MoreFields more) {
    if (format == Format::json) {
        // A line's values are copied into a stack arena: no allocation per field.
        std::array<unsigned char, kLineArenaBytes> buffer;
        boost::json::monotonic_resource arena(buffer.data(), buffer.size());
        boost::json::object o(3 + fields.size() + more.size(), &arena);
        o["time"] = time;
        o["level"] = level_name(level);
        o["msg"] = message;
        for (const auto& [k, v] : fields) o[k] = v.json;
        for (const auto& [k, v] : more) o[k] = v;
        return boost::json::serialize(o);
    }
    std::string line = std::string(time) + " " + level_name(level) + " " + std::string(message);
    auto append = [&line](std::string_view k, const boost::json::value& v) {
        line += " ";
        line += k;
        line += "=";
        if (!v.is_string()) {
            line += boost::json::serialize(v);
            return;
        }
        std::string_view text = v.get_string();
        // Quoted when a reader could not tell where the value ends (or when it is empty).
        const bool plain = !text.empty() && std::none_of(text.begin(), text.end(), [](char c) {
            return c == ' ' || c == '"' || c == '=' || static_cast<unsigned char>(c) < 0x20;
        });
        line += plain ? std::string(text) : boost::json::serialize(v);
    };
    for (const auto& [k, v] : fields) append(k, v.json);
    for (const auto& [k, v] : more) append(k, boost::json::value(std::string_view(v)));
    return line;
}

std::string format_line(Format format, std::string_view time, Level level, std::string_view message, Fields fields) {
    return format_line(format, time, level, message, fields, {});
}

void write(Level level, std::string_view message, Fields fields, MoreFields more) {
    std::string line = format_line(g_format.load(), now_iso(), level, message, fields, more);
    line += '\n';
    std::lock_guard lock(g_mutex);
    std::fwrite(line.data(), 1, line.size(), stderr);
}

void write(Level level, std::string_view message, Fields fields) { write(level, message, fields, {}); }

}  // namespace common::log
