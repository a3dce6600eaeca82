#pragma once

#include <boost/json/value.hpp>
#include <initializer_list>
#include <span>
#include <string>
#include <string_view>
#include <type_traits>
#include <utility>

namespace common::log {

enum class Level { debug, info, warn, error };
enum class Format { json, text };

/// Chooses the line format for the whole process (ORDERHUB_LOG_FORMAT); thread-safe.
void set_format(Format format);

/// Parses "json" or "text".
bool parse_format(std::string_view text, Format& out);

/// A field value: strings, numbers, booleans or JSON.
struct Value {
    Value(const std::string& s) : json(std::string_view(s)) {}
    Value(std::string_view s) : json(s) {}
    Value(const char* s) : json(s) {}
    template <class T>
    requires std::is_arithmetic_v<T> Value(T n) : json(n) {}
    Value(boost::json::value j) : json(std::move(j)) {}
    boost::json::value json;
};

using Fields = std::initializer_list<std::pair<std::string_view, Value>>;

/// One line without its line feed: a JSON object {time, level, msg, fields...}, or for humans
/// `TIME LEVEL message key=value ...` (values with spaces, quotes, `=` or control characters are JSON-quoted).
std::string format_line(Format format, std::string_view time, Level level, std::string_view message, Fields fields);

/// Text fields known only at run time (an access line's fields that a handler set), written after the fixed ones.
using MoreFields = std::span<const std::pair<std::string_view, std::string>>;

/// format_line with `more` after `fields`.
std::string format_line(Format format, std::string_view time, Level level, std::string_view message, Fields fields,
                        MoreFields more);

/// Writes one line to stderr: time, level, message and fields. Never pass secrets, bodies or full phones.
void write(Level level, std::string_view message, Fields fields = {});
/// write with `more` after `fields`.
void write(Level level, std::string_view message, Fields fields, MoreFields more);

inline void info(std::string_view message, Fields fields = {}) { write(Level::info, message, fields); }
inline void warn(std::string_view message, Fields fields = {}) { write(Level::warn, message, fields); }
inline void error(std::string_view message, Fields fields = {}) { write(Level::error, message, fields); }

}  // namespace common::log
